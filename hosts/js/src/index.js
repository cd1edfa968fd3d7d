// result-sanitizer for JavaScript: the same wasm pipeline as the Rust host,
// transpiled by jco, each call run in a worker thread under a wall-clock
// limit (the worker is terminated on timeout) with both guest memories
// capped. After any timeout or trap the next call gets a fresh worker.
// A tenant's pack is verified (signing.js: signature, key, expiry, WIT
// version, scope, as the Rust host) before it is transpiled or compiled.
import { Worker } from 'node:worker_threads';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { twinRequest, twinOptions } from './options.js';
import { transpilePack } from './transpile.js';
import { verifyPack } from './signing.js';
import { DRAIN_CHUNK, emptyGap, readFileHeadTail } from './file.js';

export { PackRefusedError, verifyPack, parsePublicKey, readPublicKey } from './signing.js';
export { SCAN_BOUND } from './file.js';

const here = dirname(fileURLToPath(import.meta.url));
const DIST = join(here, '..', 'dist');

/** A call did not finish in time; the worker running it was terminated. */
export class TimeoutError extends Error {
  constructor(ms) {
    super(`the pipeline exceeded the time limit of ${ms} ms`);
    this.name = 'TimeoutError';
    this.code = 'timeout';
  }
}

/** The guest trapped (a panic, a memory cap hit); the instance was dropped. */
export class TrapError extends Error {
  constructor(reason) {
    super(`the pipeline trapped: ${reason}`);
    this.name = 'TrapError';
    this.code = 'trap';
  }
}

/**
 * The pipeline refused the call (options, input, pack): a typed error.
 * `code` is the kind: 'invalid options', 'invalid input' or 'invalid rule
 * pack' (the twin's `invalid_options`, `invalid_input`, `invalid_pack`).
 */
export class SanitizeError extends Error {
  constructor(kind, message) {
    super(`${kind}: ${message}`);
    this.name = 'SanitizeError';
    this.code = kind;
  }
}

export class Sanitizer {
  #opts;
  #worker = null;
  #ready = null;
  #pending = new Map();
  #next = 1;

  constructor(opts) {
    this.#opts = opts;
  }

  #spawn() {
    const w = new Worker(new URL('./worker.js', import.meta.url), {
      workerData: {
        pipelineDir: this.#opts.pipelineDir,
        packDir: this.#opts.packDir,
        platformDir: this.#opts.platformDir,
        grant: this.#opts.grant ?? [],
        memoryBytes: this.#opts.memoryMiB * 1024 * 1024,
        packMemoryBytes: this.#opts.packMemoryMiB * 1024 * 1024,
      },
    });
    this.#worker = w;
    this.#ready = new Promise((resolve, reject) => {
      w.once('error', reject);
      w.on('message', (m) => {
        if (m.ready) return resolve();
        const p = this.#pending.get(m.id);
        if (!p) return;
        this.#pending.delete(m.id);
        p.settle(m);
      });
    });
    w.on('error', (e) => this.#fail(w, e));
    w.on('exit', () => this.#fail(w, new TrapError('the worker exited')));
    w.unref();
  }

  #fail(w, e) {
    if (this.#worker !== w) return;
    this.#worker = null;
    for (const p of this.#pending.values()) p.reject(e instanceof Error ? e : new TrapError(String(e)));
    this.#pending.clear();
  }

  async #call(call, arg) {
    if (!this.#worker) this.#spawn();
    const w = this.#worker;
    // An idle worker does not keep the process alive; a busy one does.
    w.ref();
    try {
      await this.#ready;
    } catch (e) {
      if (this.#worker === w) this.#worker = null;
      throw e;
    }
    const id = this.#next++;
    const ms = this.#opts.timeoutMs;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        // The only way to stop a running wasm call: end its thread.
        if (this.#worker === w) this.#worker = null;
        w.terminate();
        reject(new TimeoutError(ms));
      }, ms);
      const idle = () => {
        if (this.#pending.size === 0) w.unref();
      };
      this.#pending.set(id, {
        settle: (m) => {
          clearTimeout(timer);
          idle();
          if (m.trap !== undefined) {
            if (this.#worker === w) this.#worker = null;
            w.terminate();
            reject(new TrapError(m.trap));
          } else resolve(m.ok);
        },
        reject: (e) => {
          clearTimeout(timer);
          idle();
          reject(e);
        },
      });
      w.postMessage({ id, call, arg });
    });
  }

  /** The JSON twin: request string in, response string out (byte-exact). */
  sanitizeJson(request) {
    return this.#call('sanitize', request);
  }

  /**
   * The budget the pipeline applies for `options`; `read_bytes` is how
   * many bytes of the output to read (the cap + 1, the markup budget + 1
   * for declared HTML, the MCP input bound + 1 for MCP input).
   */
  async effectiveBudget(options = {}) {
    const r = JSON.parse(await this.#call('budget', JSON.stringify(twinOptions(options))));
    if (r.Err) throw toError(r.Err);
    return r.Ok;
  }

  /**
   * Sanitizes one tool result. Returns `{ message, record, isError }`;
   * `message` is the tool message as a JSON string, ready to send.
   */
  async sanitize(input, options = {}) {
    const r = JSON.parse(await this.sanitizeJson(twinRequest(input, options)));
    if (r.Err) throw toError(r.Err);
    return { message: r.Ok.message, record: r.Ok.record, isError: r.Ok.is_error };
  }

  /**
   * Reads `source` (an async iterable of bytes: a stream, a socket, an HTTP
   * body) to its end or to `drainLimit` bytes, keeping the first
   * `headBytes` and the last `tailBytes` (the budget's `head_bytes` and
   * `tail_bytes`). The bytes between go through the pipeline's `drain`
   * step once and are not kept. Returns `{ bytes, gap, total, stopped }`:
   * sanitize `bytes` with `gap` in the options (`null` when the output fit).
   */
  async readHeadTail(source, { headBytes, tailBytes, drainLimit = DEFAULT_DRAIN_LIMIT }) {
    const head = [];
    let headLen = 0;
    let ring = [];
    let ringLen = 0;
    let pending = Buffer.alloc(0);
    let gap = null;
    let total = 0;
    let stopped = false;
    const spill = (keep) => {
      // What falls out of the ring (all but its last `keep` bytes) is drained.
      const all = Buffer.concat(ring, ringLen);
      pending = Buffer.concat([pending, all.subarray(0, ringLen - keep)]);
      ring = [all.subarray(ringLen - keep)];
      ringLen = keep;
      gap ??= emptyGap(headLen);
    };
    for await (const chunk of source) {
      let c = Buffer.from(chunk);
      if (c.length > drainLimit - total) {
        // Past the limit: the output goes on; keep what is within it.
        c = c.subarray(0, drainLimit - total);
        stopped = true;
      }
      total += c.length;
      if (headLen < headBytes) {
        const k = Math.min(headBytes - headLen, c.length);
        head.push(c.subarray(0, k));
        headLen += k;
        c = c.subarray(k);
      }
      ring.push(c);
      ringLen += c.length;
      if (ringLen > tailBytes + 65536) spill(tailBytes);
      if (pending.length >= DRAIN_CHUNK) [gap, pending] = await this.#drain(gap, pending, false);
      if (stopped) break;
    }
    if (ringLen > tailBytes) spill(tailBytes);
    if (gap) [gap, pending] = await this.#drain(gap, pending, true);
    // Even with nothing drained (a limit below the cap), the pipeline must
    // know the output went on.
    if (stopped) {
      gap ??= emptyGap(headLen);
      gap.unfinished = true;
    }
    return { bytes: Buffer.concat([...head, ...ring]), gap, total, stopped };
  }

  /**
   * Reads the regular file `file` (a path or an open FileHandle) of `size`
   * bytes as `readHeadTail` reads a stream, but by offset (the Rust host's
   * `io::read_file_head_tail`): the head from offset 0, the tail from
   * `size - tailBytes`, and only the first `scanBound` (SCAN_BOUND, 64 MiB)
   * bytes of the middle drained; the rest of the middle is counted
   * (bytes, newlines) and reported in `gap.unscanned`. A sparse file's
   * holes are read as zeros (src/file.js). Returns `{ bytes, gap, total,
   * stopped }`.
   */
  readFileHeadTail(file, size, { headBytes, tailBytes, scanBound }) {
    return readFileHeadTail(file, size, { headBytes, tailBytes, scanBound }, (g, d, l) => this.#drain(g, d, l));
  }

  async #drain(gap, data, last) {
    const req = JSON.stringify({ gap, data_base64: data.toString('base64'), last });
    const r = JSON.parse(await this.#call('drain', req));
    if (r.Err) throw toError(r.Err);
    const rest = data.subarray(r.Ok.consumed);
    if (!last && rest.length > 2 * DRAIN_CHUNK + (1 << 20)) throw new TrapError('drain step made no progress');
    return [r.Ok.gap, rest];
  }

  /** Ends the worker. */
  async close() {
    const w = this.#worker;
    this.#worker = null;
    if (w) await w.terminate();
  }
}

/** Reading stops after this much by default (a producer that never ends). */
export const DEFAULT_DRAIN_LIMIT = 2 ** 30;

// The twin's `Err` cases (snake_case, as every enum case in its JSON) to
// the kinds SanitizeError carries, the words the Rust CLI prints.
const KINDS = { invalid_options: 'invalid options', invalid_input: 'invalid input', invalid_pack: 'invalid rule pack' };

function toError(err) {
  const [kind, message] = Object.entries(err)[0];
  return new SanitizeError(KINDS[kind] ?? kind, message);
}

/** A pack file larger than this is refused before it is read further (the Rust host's `pack_bytes`). */
const PACK_BYTES_LIMIT = 16 << 20;

/**
 * A sanitizer. `pack`: the tenant's pack component (.wasm bytes or path),
 * verified (verifyPack) and only then transpiled and cached; default: the
 * default pack built with this package (dist/default-pack), not verified,
 * as the Rust host's embedded pack. A given pack must be signed by one of
 * `trustedKeys` (parsePublicKey/readPublicKey, or `.pub` texts) unless
 * `allowUnsigned` (development only); `tenant` is the tenant it serves;
 * `now` (a Date or ms) is the time expiry is checked against; the
 * `may_relax` of its signature is the platform rules it may turn off.
 * `platformPack`: the platform's pack, whose rules apply whatever the
 * tenant's pack says (the operator's own file, not verified; default: the
 * default pack).
 * Limits: `timeoutMs` (5000), `memoryMiB` (256), `packMemoryMiB` (32).
 * Refusals throw PackRefusedError before anything is compiled.
 */
export async function createSanitizer({
  pack,
  platformPack,
  trustedKeys = [],
  allowUnsigned = false,
  tenant,
  now,
  timeoutMs = 5000,
  memoryMiB = 256,
  packMemoryMiB = 32,
} = {}) {
  const read = (p) => {
    const bytes = typeof p === 'string' ? readFileSync(p) : p;
    if (bytes.byteLength > PACK_BYTES_LIMIT) {
      throw new SanitizeError('invalid rule pack', `a pack file of ${bytes.byteLength} bytes is over the limit of ${PACK_BYTES_LIMIT}`);
    }
    return bytes;
  };
  const dist = join(DIST, 'default-pack');
  let packDir = dist;
  let grant = [];
  if (pack !== undefined) {
    const bytes = read(pack);
    const verified = verifyPack(bytes, { trustedKeys, allowUnsigned, tenant, now });
    grant = verified.signed?.may_relax ?? [];
    packDir = await transpilePack(bytes);
  }
  const platformDir = platformPack === undefined ? dist : await transpilePack(read(platformPack));
  return new Sanitizer({ pipelineDir: join(DIST, 'pipeline'), packDir, platformDir, grant, timeoutMs, memoryMiB, packMemoryMiB });
}

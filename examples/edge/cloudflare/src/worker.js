// The result-sanitizer HTTP API (docs/edge.md) as a Cloudflare Worker.
//
// The model: the edge component (pipeline + default pack, `make edge`),
// transpiled by jco and bundled as modules, does all the sanitizing; this
// glue only routes, reads options from the query or `x-sanitize-*` headers
// (the CLI's flag names), reads the body as the pipeline's budget says
// (head + tail with the middle sent through `drain` and dropped, or up to
// `read_bytes`), and answers with the pipeline's message: the bytes
// `result-sanitizer sanitize` prints. The wasi:http component
// (`edge/http/`) serves the same API over the same exports; the tests in
// examples/edge/test/ hold both to the same answers.
//
// The component is instantiated once per isolate, on the first request,
// and kept: its tokenizer tables are built once, not per request.
import { Buffer } from 'node:buffer';
import { instantiate } from './edge.js';
import { modules } from './modules.js';

let api = null;

async function pipeline() {
  if (!api) {
    const root = await instantiate((name) => modules[name], {});
    api = root['result-sanitizer:core/result-sanitizer@0.1.0'];
  }
  return api;
}

/** Bytes asked of the body per read, and per drain and redact step (as the Rust host). */
const DRAIN_CHUNK = 1 << 20;
const REDACT_CHUNK = 1 << 20;
/** A twin request is read whole, up to this (the MCP bound as base64, and room). */
const TWIN_LIMIT = 90 << 20;
/** Default for how much of a body is read (the CLI's `--drain-limit`). */
const DEFAULT_DRAIN_LIMIT = 2 ** 30;
const HEADER_PREFIX = 'x-sanitize-';

/** An RFC 9457 problem; members in the order the wasi:http adapter writes them. */
class Problem extends Error {
  constructor(status, kind, title, detail) {
    super(detail);
    Object.assign(this, { status, kind, title, detail });
  }
  response() {
    const body = JSON.stringify({
      type: `urn:result-sanitizer:problem:${this.kind}`,
      title: this.title,
      status: this.status,
      detail: this.detail,
      kind: this.kind,
    });
    return new Response(body + '\n', { status: this.status, headers: { 'content-type': 'application/problem+json' } });
  }
}
const invalidOptions = (d) => new Problem(400, 'invalid_options', 'invalid options', d);
const KINDS = {
  invalid_options: [400, 'invalid options'],
  invalid_input: [422, 'invalid input'],
  invalid_pack: [500, 'invalid rule pack'],
};
function twinProblem(err) {
  const [kind, msg] = Object.entries(err)[0] ?? [];
  const k = KINDS[kind];
  return k ? new Problem(k[0], kind, k[1], String(msg)) : new Problem(500, 'internal', 'internal error', 'the pipeline returned an unknown error');
}

/** `(name, value)` pairs from the query, then the headers; a name given twice is refused. */
function pairs(url, headers) {
  const out = new Map();
  const add = (k, v) => {
    if (out.has(k)) throw invalidOptions(`option \`${k}\` given twice`);
    out.set(k, v);
  };
  for (const [k, v] of url.searchParams) add(k, v);
  for (const [k, v] of headers) if (k.startsWith(HEADER_PREFIX)) add(k.slice(HEADER_PREFIX.length), v);
  return out;
}

function unsigned(name, v, max) {
  if (!/^\+?[0-9]+$/.test(v) || Number(v) > max) throw invalidOptions(`${name}: expected an unsigned integer`);
  return Number(v);
}
function flag(name, v) {
  if (v === '' || v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw invalidOptions(`${name}: expected true or false`);
}
function choice(name, v, cases) {
  if (!cases.includes(v)) throw invalidOptions(`${name}: expected one of ${cases.join(', ')}`);
  return v;
}
const U32 = 2 ** 32 - 1;
const U64 = Number.MAX_SAFE_INTEGER;

/** The twin's options and the drain limit for `POST /v1/sanitize`. */
function sanitizeOptions(url, headers) {
  // A request body is a stream: nothing of it is kept (as the CLI's stdin).
  const o = { source: 'pipe' };
  let drainLimit = DEFAULT_DRAIN_LIMIT;
  let exitStatus, errorCode, errorMessage;
  for (const [k, v] of pairs(url, headers)) {
    switch (k) {
      case 'tool': o.tool = v; break;
      case 'call-id': o.call_id = v; break;
      case 'format': o.format = choice(k, v, ['mcp', 'openai', 'anthropic']); break;
      case 'input': o.input = choice(k, v, ['raw', 'mcp']); break;
      case 'encoding': o.encoding = choice(k, v, ['o200k_base', 'cl100k_base']); break;
      case 'max-bytes': o.max_bytes = unsigned(k, v, U64); break;
      case 'max-chars': o.max_chars = unsigned(k, v, U32); break;
      case 'head-chars': o.head_chars = unsigned(k, v, U32); break;
      case 'tail-chars': o.tail_chars = unsigned(k, v, U32); break;
      case 'max-tokens': o.max_tokens = unsigned(k, v, U32); break;
      case 'untrusted': o.untrusted = flag(k, v); break;
      case 'lenient': o.lenient = flag(k, v); break;
      case 'content-type': o.content_type = v; break;
      case 'file-name': o.file_name = v; break;
      case 'structured-fit': o.structured_fit = choice(k, v, ['marked', 'schema', 'omitted']); break;
      case 'drain-limit': drainLimit = unsigned(k, v, U64); break;
      case 'exit-status':
        if (!/^[+-]?[0-9]+$/.test(v)) throw invalidOptions(`${k}: expected an integer`);
        exitStatus = Number(v);
        break;
      case 'error-code': errorCode = v; break;
      case 'error-message': errorMessage = v; break;
      default: throw invalidOptions(`unknown option \`${k}\``);
    }
  }
  // A tool error as `run` reports a command's, or as the caller names it.
  if (exitStatus !== undefined && errorCode !== undefined) throw invalidOptions('exit-status and error-code both given');
  if (exitStatus !== undefined && exitStatus !== 0) {
    o.tool_error = { code: `exit-status-${exitStatus}`, message: errorMessage ?? `command exited with status ${exitStatus}` };
  } else if (errorCode !== undefined) {
    o.tool_error = { code: errorCode, message: errorMessage ?? '' };
  } else if (exitStatus === undefined && errorMessage !== undefined) {
    throw invalidOptions('error-message needs error-code or exit-status');
  }
  return { options: o, drainLimit };
}

/** A body read in chunks; `read()` gives up to `max` bytes, empty at the end. */
class Body {
  constructor(stream) {
    this.reader = stream ? stream.getReader() : null;
    this.rest = null;
  }
  async read(max) {
    while (!this.rest || this.rest.length === 0) {
      if (!this.reader) return new Uint8Array(0);
      const { value, done } = await this.reader.read();
      if (done) {
        this.reader = null;
        return new Uint8Array(0);
      }
      this.rest = value;
    }
    const out = this.rest.subarray(0, max);
    this.rest = this.rest.subarray(out.length);
    return out;
  }
  async discard(limit) {
    while (limit > 0) {
      const n = (await this.read(Math.min(limit, 1 << 16))).length;
      if (n === 0) break;
      limit -= n;
    }
  }
}

function twin(response) {
  const r = JSON.parse(response);
  if (r.Err) throw twinProblem(r.Err);
  return r.Ok;
}

const emptyGap = (start) => ({
  start_byte: start, bytes: 0, newlines: 0, ends_line: false,
  error_lines: [], error_lines_seen: 0, redactions: [], unfinished: false,
});

/**
 * Reads the body to its end or to `drainLimit` bytes, keeping the first
 * `head` and the last `tail` bytes; the bytes between go through `drain`
 * once and are dropped (as the hosts' `readHeadTail`).
 */
async function readHeadTail(s, body, head, tail, drainLimit) {
  const kept = [];
  let headLen = 0;
  let ring = [];
  let ringLen = 0;
  let pending = Buffer.alloc(0);
  let gap = null;
  let total = 0;
  let stopped = false;
  const drain = (last) => {
    const step = twin(s.drainJson(JSON.stringify({ gap, data_base64: pending.toString('base64'), last })));
    pending = pending.subarray(step.consumed);
    gap = step.gap;
    if (!last && pending.length > 2 * DRAIN_CHUNK + (1 << 20)) throw new Problem(500, 'internal', 'internal error', 'drain step made no progress');
  };
  const spill = (keep) => {
    const all = Buffer.concat(ring, ringLen);
    pending = Buffer.concat([pending, all.subarray(0, ringLen - keep)]);
    ring = [all.subarray(ringLen - keep)];
    ringLen = keep;
    gap ??= emptyGap(headLen);
  };
  for (;;) {
    const room = Math.min(drainLimit - total, 1 << 16);
    if (room === 0) {
      // At the limit: stopped only if the body goes on.
      stopped = (await body.read(1)).length > 0;
      break;
    }
    let c = await body.read(room);
    if (c.length === 0) break;
    total += c.length;
    if (headLen < head) {
      const k = Math.min(head - headLen, c.length);
      kept.push(c.subarray(0, k));
      headLen += k;
      c = c.subarray(k);
    }
    ring.push(c);
    ringLen += c.length;
    if (ringLen > tail + 65536) spill(tail);
    if (pending.length >= DRAIN_CHUNK) drain(false);
  }
  if (ringLen > tail) spill(tail);
  if (gap) drain(true);
  if (stopped) {
    gap ??= emptyGap(headLen);
    gap.unfinished = true;
  }
  return { bytes: Buffer.concat([...kept, ...ring]), gap };
}

/** The twin request for `bytes`: exact UTF-8 as text, anything else as base64. */
function twinRequest(bytes, options) {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const text = b.toString('utf8');
  const req = Buffer.from(text, 'utf8').equals(b) ? { input: text } : { input_base64: b.toString('base64') };
  req.options = options;
  return JSON.stringify(req);
}

function answer(body, isError) {
  return new Response(body, {
    status: 200,
    headers: { 'content-type': 'application/json', 'x-sanitize-is-error': String(isError) },
  });
}

async function sanitize(request, url) {
  const s = await pipeline();
  const { options, drainLimit } = sanitizeOptions(url, request.headers);
  const budget = twin(s.effectiveBudgetJson(JSON.stringify(options)));
  const body = new Body(request.body);
  let input;
  if (budget.head_bytes > 0) {
    const ht = await readHeadTail(s, body, budget.head_bytes, budget.tail_bytes, drainLimit);
    input = ht.bytes;
    if (ht.gap) options.gap = ht.gap;
  } else {
    // A document read whole, under `read_bytes` (the extra byte tells the
    // pipeline it went on).
    const cap = budget.read_bytes - 1;
    const parts = [];
    let n = 0;
    while (n < budget.read_bytes) {
      const c = await body.read(Math.min(budget.read_bytes - n, 1 << 16));
      if (c.length === 0) break;
      parts.push(c);
      n += c.length;
    }
    if (options.input === 'mcp' && n > cap) throw new Problem(413, 'invalid_input', 'invalid input', `MCP input larger than ${cap} bytes`);
    if (n > cap) await body.discard(drainLimit);
    input = Buffer.concat(parts, n);
  }
  const out = twin(s.sanitizeJson(twinRequest(input, options)));
  return answer(out.message + '\n', out.is_error);
}

async function sanitizeJson(request) {
  const s = await pipeline();
  const body = new Body(request.body);
  const parts = [];
  let n = 0;
  for (;;) {
    const c = await body.read(1 << 16);
    if (c.length === 0) break;
    parts.push(c);
    n += c.length;
    if (n > TWIN_LIMIT) throw new Problem(413, 'invalid_input', 'invalid input', `JSON twin request larger than ${TWIN_LIMIT} bytes`);
  }
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(parts, n));
  } catch {
    throw new Problem(400, 'bad_request', 'bad request', 'the JSON twin request is not UTF-8');
  }
  const response = s.sanitizeJson(text);
  const out = twin(response);
  return answer(response + '\n', out.is_error);
}

/** `POST /v1/redact`: streamed; the first step runs before the status, so its errors are problems. */
async function redact(request, url) {
  const s = await pipeline();
  const req = { data: new Uint8Array(0), last: false, contentType: undefined, untrusted: false, report: false };
  for (const [k, v] of pairs(url, request.headers)) {
    if (k === 'content-type') req.contentType = v;
    else if (k === 'untrusted') req.untrusted = flag(k, v);
    else throw invalidOptions(`unknown option \`${k}\``);
  }
  const body = new Body(request.body);
  const step = async () => {
    const parts = [req.data];
    let filled = 0;
    while (filled < REDACT_CHUNK) {
      const c = await body.read(REDACT_CHUNK - filled);
      if (c.length === 0) {
        req.last = true;
        break;
      }
      parts.push(c);
      filled += c.length;
    }
    req.data = Buffer.concat(parts);
    let resp;
    try {
      resp = s.redact(req);
    } catch (e) {
      const p = e?.payload;
      if (p?.tag) throw twinProblem({ [p.tag.replaceAll('-', '_')]: p.val });
      throw e;
    }
    req.data = req.data.subarray(resp.consumed);
    if (!req.last && req.data.length > REDACT_CHUNK + (1 << 20)) throw new Error('redact step made no progress');
    return resp.output;
  };
  const first = await step();
  const stream = new ReadableStream({
    start(c) {
      c.enqueue(first);
      if (req.last) c.close();
    },
    async pull(c) {
      // A failure after the first byte can only cut the stream.
      try {
        c.enqueue(await step());
        if (req.last) c.close();
      } catch (e) {
        c.error(e);
      }
    },
  });
  return new Response(stream, { status: 200, headers: { 'content-type': 'application/octet-stream' } });
}

const ROUTES = { '/v1/healthz': 'GET', '/v1/sanitize': 'POST', '/v1/sanitize-json': 'POST', '/v1/redact': 'POST' };

export default {
  async fetch(request) {
    const url = new URL(request.url);
    try {
      const method = ROUTES[url.pathname];
      if (!method) throw new Problem(404, 'not_found', 'not found', `no route ${url.pathname.slice(0, 100)}`);
      if (request.method !== method) throw new Problem(405, 'method_not_allowed', 'method not allowed', `${request.method} is not served here`);
      switch (url.pathname) {
        case '/v1/healthz':
          return new Response('{"status":"ok"}\n', { headers: { 'content-type': 'application/json' } });
        case '/v1/sanitize':
          return await sanitize(request, url);
        case '/v1/sanitize-json':
          return await sanitizeJson(request);
        default:
          return await redact(request, url);
      }
    } catch (e) {
      if (e instanceof Problem) return e.response();
      // A trap: the instance may be broken, so the next request gets a new
      // one. Only the error's name and message are logged (never input).
      console.error(`result-sanitizer: ${e?.name}: ${e?.message}`);
      api = null;
      return new Problem(500, 'internal', 'internal error', 'the pipeline trapped').response();
    }
  },
};

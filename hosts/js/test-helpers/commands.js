// The two commands the file and long-JSON tests compare: this host's
// `bin/sanitize.mjs` (a real child process) and the Rust CLI built by
// `make build` (target/release/result-sanitizer, from the repository root).
// Outside test/ so that `node --test test/` does not run it as a test file.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { checkRecord } from './record-schema.js';

const here = dirname(fileURLToPath(import.meta.url));
export const repo = join(here, '..', '..', '..');
export const command = join(here, '..', 'bin', 'sanitize.mjs');
export const rustCli = join(repo, 'target', 'release', 'result-sanitizer');
/** Why the comparisons with the Rust CLI are skipped, or false. */
export const noRust = existsSync(rustCli) ? false : `no Rust CLI at ${rustCli} (run make build)`;

/** A directory of its own under the system's temp dir, removed by `done()`. */
export function scratch(name) {
  const dir = mkdtempSync(join(tmpdir(), `rs-js-${name}-`));
  return { dir, path: (f) => join(dir, f), done: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Runs `bin` (`'js'` or `'rust'`) with `flags`, on `input` as stdin, or on
 * the file `file` (then `input` is not used). Returns stdout as a string
 * after checking the exit status.
 */
export function run(bin, { input, file }, flags) {
  const args = file === undefined ? flags : [file, ...flags];
  const opts = { maxBuffer: 1 << 26, input: file === undefined ? input : undefined, stdio: [file === undefined ? 'pipe' : 'ignore', 'pipe', 'pipe'] };
  const r = bin === 'js' ? spawnSync(process.execPath, [command, ...args], opts) : spawnSync(rustCli, ['sanitize', ...args], opts);
  assert.equal(r.status, 0, `${bin} failed: ${r.stderr}`);
  return r.stdout.toString('utf8');
}

/**
 * This host's message for `input`, from stdin and from a file named
 * `name`, each compared byte for byte with the Rust CLI's (unless it is
 * absent). Calls `check(message, how)` on each parsed message.
 */
export function bothWays(input, name, flags, check) {
  const tmp = scratch('both');
  try {
    const file = tmp.path(name);
    writeFileSync(file, input);
    for (const [how, src] of [['stdin', { input }], ['file', { file }]]) {
      const js = run('js', src, flags);
      if (!noRust) assert.equal(js, run('rust', src, flags), `${name} from ${how}: not the Rust CLI's bytes`);
      const v = JSON.parse(js);
      checkRecord(record(v), `${name} from ${how}`);
      check(v, how);
    }
  } finally {
    tmp.done();
  }
}

/** The text of an MCP message. */
export const text = (v) => v.content[0].text;
/** The record of an MCP message. */
export const record = (v) => v._meta['result-sanitizer/record'];

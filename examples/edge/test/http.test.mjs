// The HTTP API (docs/edge.md) in both edge runtimes, over real HTTP:
// `wasmtime serve` running the wasi:http component and workerd running the
// Cloudflare Worker. Each answer is compared with what the CLI
// (target/release/result-sanitizer) prints for the same input and flags,
// byte for byte: every conformance vector, a 10 MB body read as head +
// tail, redaction streams, and errors (problem+json with the CLI's kinds).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repo, startWasmtime, startWorkerd } from './servers.mjs';

const CLI = join(repo, 'target', 'release', 'result-sanitizer');
const BOOLEAN_FLAGS = new Set(['--untrusted', '--lenient']);

function vectors() {
  const dir = join(repo, 'tests', 'vectors');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')));
}

/** The command's stdin for a vector (as cli/tests/vectors.rs reads it). */
function stdinOf(v) {
  const req = JSON.parse(v.request);
  const src = v.stdin !== undefined || v.stdin_base64 !== undefined ? v : req;
  const text = src.input ?? src.stdin;
  if (text !== undefined) return Buffer.from(text, 'utf8');
  const b64 = src.input_base64 ?? src.stdin_base64;
  return b64 === undefined ? Buffer.alloc(0) : Buffer.from(b64, 'base64');
}

/** CLI flags (`--max-tokens 400`, `--untrusted`) as `[name, value]` options. */
function optionsOf(flags) {
  const out = [];
  for (let i = 0; i < flags.length; i++) {
    const f = flags[i];
    if (BOOLEAN_FLAGS.has(f)) out.push([f.slice(2), 'true']);
    else out.push([f.slice(2), flags[++i]]);
  }
  return out;
}

/** What the CLI prints: `{ status, stdout, stderr }`. */
function cli(args, input) {
  const r = spawnSync(CLI, args, { input, maxBuffer: 64 << 20 });
  assert.equal(r.error, undefined, `${CLI} must be built (make build)`);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr.toString() };
}

/** The problem document an error answer carries, checked for its shape. */
async function problem(r) {
  assert.equal(r.headers.get('content-type'), 'application/problem+json');
  const p = JSON.parse(await r.text());
  assert.deepEqual(Object.keys(p), ['type', 'title', 'status', 'detail', 'kind']);
  assert.equal(p.status, r.status);
  assert.equal(p.type, `urn:result-sanitizer:problem:${p.kind}`);
  return p;
}

/** A 10 MB build log: a secret in its head, its middle and its tail, an error line in the middle. */
function bigLog() {
  const lines = [];
  let n = 0;
  for (let i = 0; n < 10_000_000; i++) {
    let l = `[${String(i).padStart(7, '0')}] compiling crate-${i % 977} v0.${i % 13}.${i % 7} (step ${i})`;
    if (i === 3) l = 'export DB_PASSWORD=Hq7wLm2xPz9kTr4v';
    if (i === 60_000) l = 'error: linking failed: token ghp_Zq8vR2mK7tLw3Yx9bN1cF4hJ6pD0sQ5uG8eT rejected';
    lines.push(l);
    n += l.length + 1;
  }
  lines.push('DB_PASSWORD=Xk9mQ2vLp7zz', 'build finished: 1 error');
  return Buffer.from(lines.join('\n') + '\n');
}

// EDGE_RUNTIMES=workerd (or wasmtime) runs one of them, when debugging.
const only = process.env.EDGE_RUNTIMES;
for (const [runtime, startServer] of [
  ['wasmtime serve', startWasmtime],
  ['workerd', startWorkerd],
].filter(([name]) => !only || name.startsWith(only))) {
  describe(`${runtime}: the HTTP API`, () => {
    let server;
    const url = (path) => `${server.base}${path}`;
    before(async () => {
      server = await startServer();
    });
    after(() => server?.stop());

    test('GET /v1/healthz', async () => {
      const r = await fetch(url('/v1/healthz'));
      assert.equal(r.status, 200);
      assert.deepEqual(await r.json(), { status: 'ok' });
    });

    test('every vector: POST /v1/sanitize answers what the CLI prints, byte for byte', async () => {
      const all = vectors();
      assert.ok(all.length >= 20, `${all.length} vectors`);
      for (const v of all) {
        const stdin = stdinOf(v);
        const expected = cli(['sanitize', ...v.flags], stdin);
        const q = new URLSearchParams(optionsOf(v.flags));
        const r = await fetch(url(`/v1/sanitize?${q}`), { method: 'POST', body: stdin });
        if (expected.status === 0) {
          assert.equal(r.status, 200, v.name);
          assert.equal(r.headers.get('content-type'), 'application/json', v.name);
          const body = Buffer.from(await r.arrayBuffer());
          assert.ok(body.equals(expected.stdout), `${v.name}: the answer differs from the CLI's output`);
          const isError = JSON.parse(JSON.parse(v.response).Ok.message).isError ?? false;
          assert.equal(r.headers.get('x-sanitize-is-error'), String(isError), v.name);
        } else {
          const p = await problem(r);
          assert.equal(`result-sanitizer: error: ${p.title}: ${p.detail}\n`, expected.stderr, v.name);
        }
      }
    });

    test('options as x-sanitize-* headers give the same answer as the query', async () => {
      const v = vectors().find((x) => x.name === 'anthropic' || x.flags.includes('anthropic'));
      const headers = Object.fromEntries(optionsOf(v.flags).map(([k, val]) => [`x-sanitize-${k}`, val]));
      const r = await fetch(url('/v1/sanitize'), { method: 'POST', body: stdinOf(v), headers });
      assert.equal(r.status, 200);
      assert.equal(await r.text(), cli(['sanitize', ...v.flags], stdinOf(v)).stdout.toString());
      // The same option twice (query and header) is refused.
      const twice = await fetch(url('/v1/sanitize?tool=a'), { method: 'POST', body: 'x', headers: { 'x-sanitize-tool': 'b' } });
      assert.equal(twice.status, 400);
      assert.equal((await problem(twice)).detail, 'option `tool` given twice');
    });

    test('every vector: POST /v1/sanitize-json answers the JSON twin response', async () => {
      for (const v of vectors()) {
        const r = await fetch(url('/v1/sanitize-json'), { method: 'POST', body: v.request });
        const resp = JSON.parse(v.response);
        if (resp.Ok) {
          assert.equal(r.status, 200, v.name);
          assert.equal(await r.text(), v.response + '\n', v.name);
        } else {
          const [kind, detail] = Object.entries(resp.Err)[0];
          const p = await problem(r);
          assert.deepEqual([p.kind, p.detail], [kind, detail], v.name);
        }
      }
    });

    test('a 10 MB body is answered within the byte cap, head and tail kept, as the CLI does', async () => {
      const log = bigLog();
      const expected = cli(['sanitize', '--tool', 'build'], log);
      assert.equal(expected.status, 0);
      const r = await fetch(url('/v1/sanitize?tool=build'), { method: 'POST', body: log });
      assert.equal(r.status, 200);
      const body = Buffer.from(await r.arrayBuffer());
      assert.ok(body.equals(expected.stdout), 'the answer differs from the CLI output for the same 10 MB');
      const msg = JSON.parse(body.toString());
      const rec = msg._meta['result-sanitizer/record'];
      assert.equal(rec.original_bytes, log.length);
      assert.ok(rec.input_bytes <= rec.budget.max_bytes, `${rec.input_bytes} bytes kept`);
      assert.equal(rec.truncated, true);
      const text = msg.content.map((c) => c.text ?? '').join('');
      assert.ok(text.includes('[0000000] compiling crate-0'), 'the head is kept');
      assert.ok(text.includes('build finished: 1 error'), 'the tail is kept');
      assert.ok(text.includes('error: linking failed'), "the middle's error line is shown");
      for (const secret of ['Hq7wLm2xPz9kTr4v', 'ghp_Zq8vR2mK7t', 'Xk9mQ2vLp7zz']) {
        assert.ok(!body.includes(secret), 'a secret survived');
      }
    });

    test('bad requests get problem+json with the CLI error kinds', async () => {
      const cases = [
        ['/v1/sanitize?max-tokens=lots', 'POST', 'x', 400, 'invalid_options', 'max-tokens: expected an unsigned integer'],
        ['/v1/sanitize?colour=red', 'POST', 'x', 400, 'invalid_options', 'unknown option `colour`'],
        ['/v1/sanitize?format=yaml', 'POST', 'x', 400, 'invalid_options', 'format: expected one of mcp, openai, anthropic'],
        ['/v1/sanitize', 'GET', undefined, 405, 'method_not_allowed', 'GET is not served here'],
        ['/v2/nothing', 'POST', 'x', 404, 'not_found', 'no route /v2/nothing'],
      ];
      for (const [path, method, body, status, kind, detail] of cases) {
        const r = await fetch(url(path), { method, body });
        assert.equal(r.status, status, path);
        const p = await problem(r);
        assert.deepEqual([p.kind, p.detail], [kind, detail], path);
      }
      // The pipeline's own refusals carry its message, as the CLI prints it.
      for (const [args, body, status] of [
        [['--input', 'mcp', '--tool', 't'], '{"content": 7}', 422],
        [['--max-tokens', '10'], 'hello', 400],
      ]) {
        const expected = cli(['sanitize', ...args], Buffer.from(body));
        assert.notEqual(expected.status, 0);
        const q = new URLSearchParams(optionsOf(args));
        const r = await fetch(url(`/v1/sanitize?${q}`), { method: 'POST', body });
        assert.equal(r.status, status);
        const p = await problem(r);
        assert.equal(`result-sanitizer: error: ${p.title}: ${p.detail}\n`, expected.stderr);
      }
    });

    test('POST /v1/redact streams what `result-sanitizer redact` prints', async () => {
      const small = Buffer.from('token ghp_Zq8vR2mK7tLw3Yx9bN1cF4hJ6pD0sQ5uG8eT and DB_PASSWORD=Xk9mQ2vLp7zz\n');
      // Three MiB: several redact steps, a secret on a step boundary among them.
      const big = Buffer.concat([bigLog().subarray(0, 3 << 20), small]);
      for (const [args, input] of [
        [[], small],
        [['--content-type', 'text/x-python'], Buffer.from('x = 1  # a note\ns = "ghp_Zq8vR2mK7tLw3Yx9bN1cF4hJ6pD0sQ5uG8eT"\n')],
        [[], big],
      ]) {
        const expected = cli(['redact', ...args], input);
        assert.equal(expected.status, 0);
        const q = new URLSearchParams(optionsOf(args));
        const r = await fetch(url(`/v1/redact?${q}`), { method: 'POST', body: input });
        assert.equal(r.status, 200);
        const body = Buffer.from(await r.arrayBuffer());
        assert.ok(body.equals(expected.stdout), `redact ${input.length} bytes: the stream differs from the CLI's`);
        assert.ok(!body.includes('ghp_Zq8vR2mK7t'), 'a secret survived');
      }
    });
  });
}

// One naming convention: options, records and errors in snake_case, the
// budget's `read_bytes` read by the command, and the record schema check
// that every other test relies on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { createSanitizer, SanitizeError } from '../src/index.js';
import { recordErrors, checkSanitized } from '../test-helpers/record-schema.js';

const here = dirname(fileURLToPath(import.meta.url));
const vectors = join(here, '..', '..', '..', 'tests', 'vectors');
const command = join(here, '..', 'bin', 'sanitize.mjs');
const log = Array.from({ length: 400 }, (_, i) => `line ${i}: compiling crate number ${i * 7}\n`).join('');

test('the record check rejects wrong records', () => {
  const good = readdirSync(vectors)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(JSON.parse(readFileSync(join(vectors, f), 'utf8')).response))
    .find((r) => r.Ok?.record.strategy === 'head_tail_lines')?.Ok.record;
  assert.ok(good, 'no vector has strategy head_tail_lines');
  assert.equal(recordErrors(good), null);
  const cases = {
    'an UpperCamelCase strategy': (r) => (r.strategy = 'HeadTailLines'),
    'an UpperCamelCase encoding': (r) => (r.encoding = 'O200kBase'),
    'an UpperCamelCase class': (r) => (r.class = 'Text'),
    'an UpperCamelCase stage': (r) => (r.stages[0].stage = 'Triage'),
    'an unknown field': (r) => (r.cut = true),
    'a missing field': (r) => delete r.truncated,
    'a string for a count': (r) => (r.invalid_utf8 = '0'),
  };
  for (const [name, spoil] of Object.entries(cases)) {
    const bad = structuredClone(good);
    spoil(bad);
    assert.notEqual(recordErrors(bad), null, `${name} is accepted`);
  }
});

test('options are snake_case, passed through; old spellings are refused', async () => {
  const s = await createSanitizer();
  try {
    for (const o of [
      { tool: 'cargo', maxTokens: 300 },
      { tool: 'cargo', format: 'openai', callId: 'call_1', encoding: 'cl100k_base', maxChars: 2000 },
      { tool: 'cargo', format: 'anthropic', callId: 'toolu_1', untrusted: true },
      { tool: 'cargo', maxBytes: 3000, toolError: { code: 'exit-status-1', message: 'failed' } },
    ]) {
      const out = await s.sanitize(log, o);
      checkSanitized(out, JSON.stringify(o));
      assert.equal(out.record.encoding, o.encoding ?? 'o200k_base');
    }
    const mcp = await s.sanitize('{"content":[{"type":"text","text":"hello"}],"isError":true}', { tool: 't', input: 'mcp' });
    assert.equal(mcp.isError, true);
    checkSanitized(mcp, 'MCP input');
    for (const o of [{ format: 'Openai' }, { input: 'Mcp' }, { encoding: 'O200kBase' }]) {
      await assert.rejects(s.sanitize('x', o), TypeError, JSON.stringify(o));
    }
    // Through the JSON twin, an old spelling is the pipeline's typed error.
    const r = JSON.parse(await s.sanitizeJson(JSON.stringify({ input: 'x', options: { format: 'Openai' } })));
    assert.deepEqual(Object.keys(r.Err), ['invalid_options']);
  } finally {
    await s.close();
  }
});

test('typed errors keep their kinds', async () => {
  const s = await createSanitizer();
  try {
    await assert.rejects(
      s.sanitize('x', { maxTokens: 10 }),
      (e) => e instanceof SanitizeError && e.code === 'invalid options' && /^invalid options: max-tokens/.test(e.message),
    );
    await assert.rejects(s.effectiveBudget({ maxTokens: 10 }), (e) => e instanceof SanitizeError && e.code === 'invalid options');
  } finally {
    await s.close();
  }
});

test('the budget says how many bytes to read', async () => {
  const s = await createSanitizer();
  try {
    const raw = await s.effectiveBudget({ tool: 't', maxBytes: 5000 });
    assert.equal(raw.max_bytes, 5000);
    assert.equal(raw.read_bytes, 5001);
    const html = await s.effectiveBudget({ tool: 't', maxBytes: 5000, contentType: 'text/html; charset=utf-8' });
    assert.ok(html.markup_bytes > 5000);
    assert.equal(html.read_bytes, Math.max(html.max_bytes, html.markup_bytes) + 1);
    const mcp = await s.effectiveBudget({ tool: 't', input: 'mcp' });
    assert.equal(mcp.read_bytes, 64 * 1024 * 1024 + 1);
  } finally {
    await s.close();
  }
});

test('the command reads raw input as head + tail, documents under read_bytes, and refuses MCP input that fills it', () => {
  const run = (input, ...args) => spawnSync(process.execPath, [command, ...args], { input, maxBuffer: 1 << 26 });
  // 22 000 bytes, cap 3000: the head and tail on whole lines, the middle
  // drained, the whole size known.
  const lines = Buffer.from('0123456789\n'.repeat(2000));
  const raw = run(lines, '--tool', 't', '--max-bytes', '3000');
  assert.equal(raw.status, 0, raw.stderr.toString());
  const record = JSON.parse(raw.stdout.toString())._meta['result-sanitizer/record'];
  assert.deepEqual([record.input_bytes, record.original_bytes, record.original_lines], [2992, 22000, 2000]);
  assert.deepEqual(record.omitted, [{ start_byte: 2244, end_byte: 21252, start_line: 205, end_line: 1932 }]);
  assert.equal(record.byte_cap_hit, false);
  assert.equal(recordErrors(record), null);
  // At the drain limit reading stops, and the record says the rest is unread.
  const stopped = run(lines, '--tool', 't', '--max-bytes', '3000', '--drain-limit', '5000');
  const r2 = JSON.parse(stopped.stdout.toString())._meta['result-sanitizer/record'];
  assert.deepEqual([r2.byte_cap_hit, r2.original_bytes], [true, 5000]);
  const big = Buffer.concat([Buffer.from('{"content":[{"type":"text","text":"'), Buffer.alloc(64 * 1024 * 1024, 'a')]);
  const mcp = run(big, '--tool', 't', '--input', 'mcp');
  assert.equal(mcp.status, 1);
  assert.equal(mcp.stderr.toString(), 'result-sanitizer: error: invalid input: MCP input larger than 67108864 bytes\n');
  const old = run(Buffer.from('x'), '--tool', 't', '--format', 'Openai');
  assert.equal(old.status, 1);
  assert.match(old.stderr.toString(), /unknown format "Openai"/);
});

test('a long stdin, drained in many steps, gives the Rust CLI\'s bytes', () => {
  // 6 MB: several drain steps, whose boundaries fall where this host's
  // reads put them; error lines and a secret in the middle.
  const lines = [];
  for (let i = 0; i < 240000; i++) {
    if (i % 50000 === 7) lines.push(`error: unit ${i} failed: token ghp_4kLm9Pq2Rt7Vx3Yz6Ab1Cd5Ef0Gh2Ij4Kl6M rejected`);
    else lines.push(`   Compiling unit ${i} (step ${i % 97})`);
  }
  const input = Buffer.from(lines.join('\n') + '\n');
  const flags = ['--tool', 'cargo', '--max-tokens', '2000'];
  const rust = spawnSync(join(here, '..', '..', '..', 'target', 'release', 'result-sanitizer'), ['sanitize', ...flags], {
    input,
    maxBuffer: 1 << 26,
  });
  const js = spawnSync(process.execPath, [command, ...flags], { input, maxBuffer: 1 << 26 });
  assert.equal(rust.status, 0, rust.stderr.toString());
  assert.equal(js.status, 0, js.stderr.toString());
  assert.equal(js.stdout.toString(), rust.stdout.toString());
  const text = JSON.parse(js.stdout.toString()).content[0].text;
  assert.match(text, /\n200008\| error: unit 200007 failed: token \[REDACTED:github-token\] rejected/);
  assert.ok(!text.includes('ghp_'));
});

test('a FILE gives the Rust CLI\'s bytes: its name the content type, its size the output\'s', () => {
  const repo = join(here, '..', '..', '..');
  const cli = join(repo, 'target', 'release', 'result-sanitizer');
  // A log cut as head + tail, a source file (code by its name), an HTML
  // page (a document read whole).
  for (const file of ['examples/build-log.txt', 'guest/src/pipeline.rs', 'examples/page.html']) {
    const flags = [join(repo, file), '--tool', 'read_file', '--max-tokens', '2000'];
    const rust = spawnSync(cli, ['sanitize', ...flags], { maxBuffer: 1 << 26 });
    const js = spawnSync(process.execPath, [command, ...flags], { maxBuffer: 1 << 26 });
    assert.equal(rust.status, 0, rust.stderr.toString());
    assert.equal(js.status, 0, js.stderr.toString());
    assert.equal(js.stdout.toString(), rust.stdout.toString(), file);
  }
  const rs = JSON.parse(spawnSync(process.execPath, [command, join(repo, 'guest/src/pipeline.rs')]).stdout.toString());
  assert.equal(rs._meta['result-sanitizer/record'].class, 'code');
});

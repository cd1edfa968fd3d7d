// A regular FILE is read by offset (#39), as the Rust CLI reads it
// (host/src/io.rs, read_file_head_tail): head from 0, tail from
// len - tail, at most the first 64 MiB of the middle drained, the rest
// counted. Through this host's command (a real child process) against the
// Rust CLI's bytes, and through the library against exact counts.
//
// Sparse files: Node has no lseek(SEEK_DATA / SEEK_HOLE), so this host
// reads a hole as the zeros it holds. The counts stay exact and a file
// with holes only past the bound (the 10 GB log) gives the Rust
// CLI's bytes, but it reads every byte of the holes (seconds, not the
// Rust CLI's milliseconds), and a hole inside the scanned 64 MiB is
// drained as zeros where the Rust CLI skips it (the last test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createReadStream, openSync, closeSync, statSync, writeFileSync, writeSync, ftruncateSync } from 'node:fs';
import { createSanitizer, SCAN_BOUND } from '../src/index.js';
import { noRust, record, run, scratch, text } from '../test-helpers/commands.js';

const flags = ['--max-tokens', '2000'];
const SECRET = 'ghp_4kLm9Pq2Rt7Vx3Yz6Ab1Cd5Ef0Gh2Ij4Kl6M';
if (noRust) console.log(`# the byte comparisons with the Rust CLI are skipped: ${noRust}`);

/** A build log of `n` lines; line k (1-based) is an error line with a secret for each k in `errors`. */
function buildLog(n, errors) {
  const lines = new Array(n);
  for (let i = 0; i < n; i++) {
    lines[i] = errors.includes(i + 1) ? `error: unit ${i} failed: token ${SECRET} rejected` : `   Compiling unit ${i} (step ${i % 97}) ok`;
  }
  return { lines, bytes: Buffer.from(lines.join('\n') + '\n') };
}

const newlines = (b) => {
  let n = 0;
  for (let i = b.indexOf(10); i !== -1; i = b.indexOf(10, i + 1)) n++;
  return n;
};

/** This host's message for `file`, checked against the Rust CLI's bytes; also how long it took. */
function compare(file, what) {
  const t0 = performance.now();
  const js = run('js', { file }, flags);
  const ms = performance.now() - t0;
  if (!noRust) {
    const t1 = performance.now();
    const rust = run('rust', { file }, flags);
    console.log(`# ${what}: this host ${ms.toFixed(0)} ms, the Rust CLI ${(performance.now() - t1).toFixed(0)} ms`);
    assert.equal(js, rust, `${what}: not the Rust CLI's bytes`);
  }
  return JSON.parse(js);
}

test('a file past head + tail + 64 MiB: its middle scanned to the bound, the rest counted, its end shown', async () => {
  const s = await createSanitizer({ timeoutMs: 60000 });
  const { head_bytes: head, tail_bytes: tail } = await s.effectiveBudget({ tool: '', maxTokens: 2000 });
  const tmp = scratch('seek');
  try {
    // About 84 MiB of real lines: an error line with a secret inside the
    // scanned 64 MiB, another past it (counted only, so not shown).
    const n = 2_200_000;
    const { lines, bytes } = buildLog(n, [500_000, 2_000_000]);
    assert.ok(bytes.length > head + tail + SCAN_BOUND + (8 << 20));
    const file = tmp.path('big.log');
    writeFileSync(file, bytes);
    const v = compare(file, `${bytes.length} bytes`);
    const t = text(v);
    const rec = record(v);
    const [midEnd, scanEnd] = [bytes.length - tail, head + SCAN_BOUND];
    assert.deepEqual([rec.original_bytes, rec.original_lines], [bytes.length, n]);
    assert.ok(t.includes(`\n${lines[0]}\n`) || t.startsWith(`${lines[0]}\n`), 'the first line shown');
    const [content, note] = t.split(`${lines.at(-1)}\n`);
    assert.ok(note !== undefined && content.endsWith(`${lines.at(-2)}\n`), 'the last lines shown');
    assert.ok(note.startsWith(`[truncated: bytes ${scanEnd}-${midEnd} of the omitted part were counted, not scanned`), note);
    assert.match(t, new RegExp(`\\n *500000\\| error: unit 499999 failed: token \\[REDACTED:github-token\\] rejected`));
    assert.ok(!t.includes('unit 1999999 failed'), 'an error line past the bound is not scanned');
    assert.ok(!t.includes('ghp_'));
    const last = rec.kept.at(-1);
    assert.deepEqual([last.end_byte, last.end_line], [bytes.length, n]);
    // The library: the gap's counts exact, computed here from the bytes.
    const ht = await s.readFileHeadTail(file, bytes.length, { headBytes: head, tailBytes: tail });
    assert.deepEqual(ht.bytes, Buffer.concat([bytes.subarray(0, head), bytes.subarray(midEnd)]));
    const g = ht.gap;
    assert.deepEqual(
      [g.start_byte, g.bytes, g.newlines, g.ends_line, g.unscanned],
      [head, midEnd - head, newlines(bytes.subarray(head, midEnd)), bytes[midEnd - 1] === 10, midEnd - scanEnd],
    );
    assert.equal(g.error_lines_seen, 1, 'only the error line inside the bound');
    assert.ok(g.json.length > 0 && g.json.every((j) => j.dead), 'JSON scans dead past the bound');
  } finally {
    tmp.done();
    await s.close();
  }
});

test('a file between head + tail and head + tail + 64 MiB: its whole middle drained, as a stream would be', async () => {
  const s = await createSanitizer({ timeoutMs: 60000 });
  const { head_bytes: head, tail_bytes: tail } = await s.effectiveBudget({ tool: '', maxTokens: 2000 });
  const tmp = scratch('mid');
  try {
    // About 6 MiB, not ending in a newline: several drain steps.
    const { lines, bytes: full } = buildLog(160_000, [50_000, 90_000]);
    const bytes = full.subarray(0, full.length - 1);
    const file = tmp.path('mid.log');
    writeFileSync(file, bytes);
    const v = compare(file, `${bytes.length} bytes`);
    const t = text(v);
    assert.deepEqual([record(v).original_bytes, record(v).original_lines], [bytes.length, lines.length]);
    assert.ok(t.includes(`\n${lines.at(-1)}\n[truncated:`) || t.endsWith(lines.at(-1)), 'the last line shown');
    assert.match(t, /\n *90000\| error: unit 89999 failed: token \[REDACTED:github-token\] rejected/);
    assert.ok(!t.includes('counted, not scanned'));
    // The library: read by offset, the same gap as the stream's.
    const byOffset = await s.readFileHeadTail(file, bytes.length, { headBytes: head, tailBytes: tail });
    const streamed = await s.readHeadTail(createReadStream(file), { headBytes: head, tailBytes: tail });
    assert.deepEqual(byOffset.bytes, streamed.bytes);
    assert.deepEqual(byOffset.gap, streamed.gap);
    assert.deepEqual(
      [byOffset.gap.bytes, byOffset.gap.newlines, byOffset.gap.unscanned, byOffset.gap.error_lines_seen],
      [bytes.length - head - tail, newlines(bytes.subarray(head, bytes.length - tail)), 0, 2],
    );
    // A file that fits is read whole, with no gap.
    const small = await s.readFileHeadTail(file, bytes.length, { headBytes: bytes.length - 10, tailBytes: 10 });
    assert.deepEqual([small.bytes.length, small.gap], [bytes.length, null]);
  } finally {
    tmp.done();
    await s.close();
  }
});

/** A sparse file of `len` bytes with `parts` ([offset, text]) written into it, or null when the file system would allocate it. */
function sparseFile(path, len, parts) {
  const fd = openSync(path, 'w');
  try {
    ftruncateSync(fd, len);
    for (const [at, s] of parts) writeSync(fd, Buffer.from(s), 0, Buffer.byteLength(s), at < 0 ? len + at : at);
  } finally {
    closeSync(fd);
  }
  return statSync(path).blocks * 512 < len / 2 ? path : null;
}

const range = (a, b, f) => Array.from({ length: b - a + 1 }, (_, i) => f(a + i)).join('');

// The file is 10 GB (RS_JS_SPARSE_GIB=10): this host reads its
// holes, at the speed the kernel hands out zeros for a file not yet in the
// page cache (here 0.3 to 2 GB/s, so 5 to 30 s), so by default 1 GiB.
const SPARSE_GIB = Number(process.env.RS_JS_SPARSE_GIB ?? 1);

test(`a ${SPARSE_GIB} GiB sparse file (holes past the bound only): the Rust CLI's bytes, its last line and positions exact, its holes read`, (t) => {
  const tmp = scratch('sparse');
  try {
    const len = SPARSE_GIB * 2 ** 30;
    const tail = '\n' + range(1, 100, (i) => `end line ${i}\n`);
    const file = sparseFile(tmp.path('sparse.log'), len, [
      [0, range(1, 100, (i) => `start line ${i}\n`)],
      [-Buffer.byteLength(tail), tail],
    ]);
    if (!file) return t.skip('the temp file system does not keep sparse files');
    const v = compare(file, `${SPARSE_GIB} GiB sparse`);
    const shown = text(v);
    const [content, note] = shown.split('end line 100\n');
    assert.ok(content.includes('end line 99\n') && shown.includes('start line 1\n'));
    // head + 64 MiB to len - tail (head 196608, tail 65536 at 2000 tokens).
    assert.ok(note.startsWith(`[truncated: bytes 67305472-${len - 65536} of the omitted part were counted, not scanned`), note);
    const rec = record(v);
    assert.deepEqual([rec.original_bytes, rec.original_lines], [len, 201]);
    assert.deepEqual([rec.kept.at(-1).end_byte, rec.kept.at(-1).end_line], [len, 201]);
  } finally {
    tmp.done();
  }
});

test('a hole inside the scanned 64 MiB: the counts are the Rust CLI\'s, the line and the JSON across it are not (the documented difference)', { skip: noRust }, (t) => {
  const tmp = scratch('hole');
  try {
    const len = 32 << 20;
    const tailText = range(1, 30000, (i) => `end line ${i}\n`);
    // Text, a 16 MiB hole, an error line at a block boundary, text.
    const file = sparseFile(tmp.path('holey.log'), len, [
      [0, range(1, 29999, (i) => `start line ${i}\n`)],
      [16 << 20, 'error: build failed at step 3\n' + range(0, 1999, (i) => `middle line ${i}\n`)],
      [-Buffer.byteLength(tailText), tailText],
    ]);
    if (!file) return t.skip('the temp file system does not keep sparse files');
    const js = JSON.parse(run('js', { file }, flags));
    const rust = JSON.parse(run('rust', { file }, flags));
    const counts = (v) => [record(v).original_bytes, record(v).original_lines];
    assert.deepEqual(counts(js), counts(rust));
    assert.deepEqual(counts(js), [len, 62000]);
    // The Rust CLI skips the hole and starts a line after it; this host
    // reads the hole's zeros into that line, which so is no error line.
    // If this fails, the JS host sees holes now: update docs/embedding.md.
    assert.match(text(rust), /\n *30000\| error: build failed at step 3\n/);
    assert.doesNotMatch(text(js), /error: build failed/);
    // A JSON array with a hole inside: the Rust CLI no longer knows the
    // nesting (head and tail characters); this host closes it as JSON.
    const items = Array.from({ length: 60000 }, (_, i) => ({ id: i, name: `n${i}` }));
    const [a, b] = [JSON.stringify(items.slice(0, 20000)).slice(0, -1) + ',', JSON.stringify(items.slice(20000)).slice(1)];
    const jlen = (8 << 20) + b.length;
    const doc = sparseFile(tmp.path('holey.json'), jlen, [[0, a], [-b.length, b]]);
    const [jj, rj] = ['js', 'rust'].map((bin) => record(JSON.parse(run(bin, { file: doc }, ['--max-tokens', '1000']))));
    assert.deepEqual([jj.original_bytes, rj.original_bytes], [jlen, jlen]);
    assert.deepEqual([rj.strategy, jj.strategy], ['head_tail_chars', 'json_structure']);
  } finally {
    tmp.done();
  }
});

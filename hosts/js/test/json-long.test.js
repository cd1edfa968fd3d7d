// Structure survives size (#39), through this host's command (a real child
// process and the real component), as cli/tests/json_long.rs checks the
// Rust CLI: a JSON document, JSON lines or CSV over the byte cap, from
// stdin and from a file (read by offset), comes back as a valid document
// (or whole records) with both ends shown and the omitted part counted
// exactly, and its bytes are the Rust CLI's for the same input and flags.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bothWays, noRust, record, text } from '../test-helpers/commands.js';

const flags = ['--max-tokens', '1000'];
if (noRust) console.log(`# the byte comparisons with the Rust CLI are skipped: ${noRust}`);

/**
 * The note element a closed document holds in place of the omitted
 * elements: [omitted, first index, last index, total, start byte, end byte].
 */
function noteNumbers(s) {
  const m = s.match(
    /^\[truncated: (\d+) (?:items|members) omitted \(indexes (\d+)-(\d+) of (\d+); bytes (\d+)-(\d+), lines \d+-\d+ of the output, read once\), not kept\]$/,
  );
  assert.ok(m, `not a gap note: ${s}`);
  return m.slice(1, 7).map(Number);
}

/**
 * The array `shown` (from a closed document) against the original `all`:
 * its first elements are the original's first, its last the original's
 * last, one note between them counts exactly what is missing, and the
 * note's bytes are those the record says were omitted.
 */
function checkArray(shown, all, rec) {
  const at = shown.findIndex((x) => typeof x === 'string' && x.startsWith('[truncated:'));
  assert.ok(at >= 0, 'a note');
  const head = shown.slice(0, at);
  const tail = shown.slice(at + 1);
  assert.ok(head.length > 0 && tail.length > 0, 'both ends shown');
  assert.deepEqual(head, all.slice(0, head.length));
  assert.deepEqual(tail, all.slice(all.length - tail.length));
  const [omitted, first, last, total, sb, eb] = noteNumbers(shown[at]);
  assert.equal(total, all.length);
  assert.equal(omitted, all.length - head.length - tail.length);
  assert.deepEqual([first, last], [head.length, all.length - tail.length - 1]);
  assert.equal(rec.strategy, 'json_structure');
  assert.equal(rec.structure.items, omitted);
  assert.deepEqual([rec.omitted[0].start_byte, rec.omitted[0].end_byte], [sb, eb]);
}

test('an array of 20 000 objects stays JSON with both ends, from stdin and from a file', () => {
  const all = Array.from({ length: 20000 }, (_, i) => ({ id: i, name: `n${i}`, tags: ['a', 'b'] }));
  // One line, and pretty-printed (many lines).
  for (const doc of [JSON.stringify(all) + '\n', JSON.stringify(all, null, 2)]) {
    bothWays(Buffer.from(doc), 'big.json', flags, (v) => checkArray(JSON.parse(text(v)), all, record(v)));
  }
});

test('an object with one huge array is cut inside it', () => {
  const items = Array.from({ length: 30000 }, (_, i) => ({ id: i, path: `/srv/${i}.txt` }));
  const doc = JSON.stringify({ total: 30000, items, next: 'cursor-2' });
  bothWays(Buffer.from(doc), 'page.json', flags, (v) => {
    const shown = JSON.parse(text(v));
    assert.deepEqual([shown.total, shown.next], [30000, 'cursor-2']);
    checkArray(shown.items, items, record(v));
  });
});

test('nested arrays are cut in the array the middle lies in', () => {
  const all = Array.from({ length: 20000 }, (_, i) => [i, [i, i + 1], 'x']);
  bothWays(Buffer.from(JSON.stringify(all)), 'nested.json', flags, (v) => checkArray(JSON.parse(text(v)), all, record(v)));
});

/** [first omitted, last omitted, total] from a records marker. */
function recordsMarker(t) {
  const m = t.match(/\[truncated: omitted records (\d+)-(\d+) of (\d+) \((\d+) records;/);
  assert.ok(m, 'a records marker');
  const [first, last, total, n] = m.slice(1, 5).map(Number);
  assert.equal(n, last - first + 1);
  return [first, last, total];
}

/** Records shown: whole lines of the original, the first and the last ones, the marker's numbers exact. */
function checkRecords(v, lines, header) {
  const t = text(v);
  const [first, last, total] = recordsMarker(t);
  const skip = header ? 1 : 0;
  const records = lines.slice(skip);
  assert.equal(total, records.length);
  const shown = t.split('\n').filter((l) => l !== '' && !l.startsWith('[truncated:'));
  if (header) assert.equal(shown[0], lines[0]);
  const head = first - 1;
  assert.deepEqual(shown.slice(skip, skip + head), records.slice(0, head));
  const tail = shown.slice(skip + head);
  assert.equal(tail.length, total - last, 'records after the marker');
  assert.equal(tail.at(-1), records.at(-1), 'the last record shown');
  assert.deepEqual(tail, records.slice(last));
  assert.equal(record(v).strategy, 'records');
  assert.equal(record(v).structure.total_records, total);
}

test('JSON lines keep whole records at both ends', () => {
  const lines = Array.from({ length: 20000 }, (_, i) => JSON.stringify({ event: i, ok: i % 7 !== 0 }));
  const doc = lines.map((l) => l + '\n').join('');
  bothWays(Buffer.from(doc), 'events.jsonl', flags, (v) => checkRecords(v, lines, false));
});

test('CSV keeps the header and whole records at both ends', () => {
  const lines = ['id,user,amount', ...Array.from({ length: 30000 }, (_, i) => `${i},user${i},${i * 7}.50`)];
  const doc = lines.map((l) => l + '\n').join('');
  bothWays(Buffer.from(doc), 'table.csv', flags, (v) => checkRecords(v, lines, true));
});

// The shared conformance vectors, through the JS host: the JSON twin gives
// every response byte for byte, and `bin/sanitize.mjs` prints every message;
// every record matches docs/record.schema.json.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { createSanitizer } from '../src/index.js';
import { checkRecord, checkResponse, messageRecord } from '../test-helpers/record-schema.js';

const here = dirname(fileURLToPath(import.meta.url));
const dir = join(here, '..', '..', '..', 'tests', 'vectors');
const vectors = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')));

test('there are vectors', () => assert.ok(vectors.length >= 20));

test('every vector holds through the library', async () => {
  const s = await createSanitizer();
  try {
    for (const v of vectors) {
      const got = await s.sanitizeJson(v.request);
      assert.equal(got, v.response, v.name);
      checkResponse(got, v.name);
    }
  } finally {
    await s.close();
  }
});

test('the sanitize command prints each vector\'s message', () => {
  for (const v of vectors) {
    const req = JSON.parse(v.request);
    // The vector's stdin when the request keeps less of it (head + tail).
    const stdin =
      v.stdin !== undefined
        ? Buffer.from(v.stdin, 'utf8')
        : v.stdin_base64 !== undefined
          ? Buffer.from(v.stdin_base64, 'base64')
          : req.input !== undefined
            ? Buffer.from(req.input, 'utf8')
            : Buffer.from(req.input_base64 ?? '', 'base64');
    const r = spawnSync(process.execPath, [join(here, '..', 'bin', 'sanitize.mjs'), ...v.flags], { input: stdin });
    const resp = JSON.parse(v.response);
    if (resp.Ok) {
      assert.equal(r.status, 0, `${v.name}: ${r.stderr}`);
      assert.equal(r.stdout.toString('utf8'), resp.Ok.message + '\n', v.name);
      checkRecord(messageRecord(r.stdout.toString('utf8'), v.name), `${v.name} (command)`);
    } else {
      assert.equal(r.status, 1, v.name);
      assert.match(r.stderr.toString(), /error/, v.name);
    }
  }
});

// The edge build (`make edge`): pipeline and default pack composed into one
// component that imports nothing, transpiled by jco and instantiated with
// no imports at all, gives every vector's response byte for byte.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, mkdtempSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';
import { transpileComponent } from '../src/transpile.js';
import { checkResponse } from '../test-helpers/record-schema.js';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..', '..');

test('the composed edge component runs alone under jco', async () => {
  const out = await transpileComponent(
    readFileSync(join(repo, 'target', 'edge', 'result-sanitizer.wasm')),
    'edge',
    join(mkdtempSync(join(tmpdir(), 'rs-edge-')), 'edge'),
  );
  const { instantiate } = await import(pathToFileURL(join(out, 'edge.js')).href);
  const root = await instantiate(async (p) => WebAssembly.compile(await readFile(join(out, p))), {});
  const api = root['result-sanitizer:core/result-sanitizer@0.1.0'];
  const dir = join(repo, 'tests', 'vectors');
  const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  assert.ok(files.length >= 20);
  for (const f of files) {
    const v = JSON.parse(readFileSync(join(dir, f), 'utf8'));
    const got = api.sanitizeJson(v.request);
    assert.equal(got, v.response, v.name);
    checkResponse(got, v.name);
  }
});

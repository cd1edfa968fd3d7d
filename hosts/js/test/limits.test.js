// Hostile packs under the JS host's limits: a pack that loops is stopped by
// the worker timeout, one that grows its memory by the memory cap; each is
// a clear error and the next call on the same sanitizer succeeds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { createSanitizer, TimeoutError, TrapError } from '../src/index.js';
import { checkSanitized } from '../test-helpers/record-schema.js';

const here = dirname(fileURLToPath(import.meta.url));
const packs = join(here, '..', '..', '..', 'target', 'components', 'test-packs');

test('an infinite loop in a pack is stopped by the worker timeout', async () => {
  const s = await createSanitizer({ pack: join(packs, 'slow.wasm'), allowUnsigned: true, timeoutMs: 1500 });
  try {
    const t0 = Date.now();
    await assert.rejects(s.sanitize('LOOP please', { tool: 'x' }), (e) => e instanceof TimeoutError && /1500 ms/.test(e.message));
    assert.ok(Date.now() - t0 < 10_000);
    const out = await s.sanitize('fine now', { tool: 'x' });
    assert.match(out.message, /fine now/);
    checkSanitized(out, 'the next call');
  } finally {
    await s.close();
  }
});

test('unbounded memory growth in a pack hits the memory cap', async () => {
  const s = await createSanitizer({ pack: join(packs, 'greedy.wasm'), allowUnsigned: true, packMemoryMiB: 16 });
  try {
    await assert.rejects(s.sanitize('MORE memory', { tool: 'x' }), (e) => e instanceof TrapError);
    const out = await s.sanitize('fine now', { tool: 'x' });
    assert.match(out.message, /fine now/);
    checkSanitized(out, 'the next call');
  } finally {
    await s.close();
  }
});

test('typed errors from the pipeline', async () => {
  const s = await createSanitizer();
  try {
    await assert.rejects(s.sanitize('x', { maxTokens: 10 }), (e) => e.code === 'invalid options');
    await assert.rejects(s.sanitize('x', { format: 'xml' }), TypeError);
  } finally {
    await s.close();
  }
});

// The shared signature test packs (target/test-packs, written by `make
// test-packs` with the Rust CLI): every case is refused with the kind the
// Rust and Go hosts give, before anything is transpiled; the good pack
// loads and redacts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync, mkdtempSync, chmodSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { createSanitizer, verifyPack, readPublicKey, parsePublicKey, PackRefusedError, SanitizeError } from '../src/index.js';
import { PACK_CACHE, transpilePack } from '../src/transpile.js';

const here = dirname(fileURLToPath(import.meta.url));
const dir = join(here, '..', '..', '..', 'target', 'test-packs');
if (!existsSync(join(dir, 'cases.json'))) throw new Error(`${dir}/cases.json is missing: run \`make test-packs\``);
const doc = JSON.parse(readFileSync(join(dir, 'cases.json'), 'utf8'));
const trustedKeys = doc.trusted_keys.map((k) => readPublicKey(join(dir, k)));
const outcome = (f) => {
  try {
    f();
    return 'ok';
  } catch (e) {
    if (e instanceof PackRefusedError) return e.code;
    throw e;
  }
};

test('the shared cases get the same verdict as in the Rust host', () => {
  assert.ok(doc.cases.length >= 10);
  for (const c of doc.cases) {
    const bytes = readFileSync(join(dir, c.file));
    const got = outcome(() => verifyPack(bytes, { trustedKeys, allowUnsigned: !!c.allow_unsigned, tenant: doc.tenant }));
    assert.equal(got, c.expect, `${c.file}${c.allow_unsigned ? ' (unsigned allowed)' : ''}`);
  }
});

test('the good pack loads, is verified for its tenant, and redacts', async () => {
  const v = verifyPack(readFileSync(join(dir, 'good.wasm')), { trustedKeys, tenant: doc.tenant });
  assert.equal(v.signed.key_id, trustedKeys[0].keyId);
  assert.equal(v.manifest.name, 'acme');
  const s = await createSanitizer({ pack: join(dir, 'good.wasm'), trustedKeys, tenant: doc.tenant });
  try {
    const out = await s.sanitize(doc.probe.input, { tool: 't' });
    assert.equal(JSON.parse(out.message).content[0].text, doc.probe.output);
    assert.equal(out.record.pack_name, 'acme');
  } finally {
    await s.close();
  }
});

test('the platform floor and a grant give what they give in every host', async () => {
  assert.ok(doc.floor.packs.length >= 2);
  for (const c of doc.floor.packs) {
    const s = await createSanitizer({ pack: join(dir, c.file), trustedKeys, tenant: doc.tenant });
    try {
      const out = await s.sanitize(doc.floor.input, { tool: 't' });
      assert.equal(JSON.parse(out.message).content[0].text, c.output, c.file);
      assert.deepEqual(out.record.relaxed, c.relaxed, c.file);
      assert.equal(out.record.platform_name, 'default');
    } finally {
      await s.close();
    }
  }
});

test('a refused pack is never transpiled', async () => {
  const bytes = readFileSync(join(dir, 'tampered.wasm'));
  const sha = createHash('sha256').update(bytes).digest('hex');
  await assert.rejects(
    createSanitizer({ pack: bytes, trustedKeys, tenant: doc.tenant }),
    (e) => e instanceof PackRefusedError && e.code === 'tampered',
  );
  assert.ok(!existsSync(join(PACK_CACHE, sha)), 'no transpiled output for a refused pack');
});

test('a given pack is refused unsigned by default; the built-in pack needs no signature', async () => {
  await assert.rejects(createSanitizer({ pack: join(dir, 'unsigned.wasm') }), (e) => e.code === 'unsigned');
  // Signed, but no key trusted.
  await assert.rejects(createSanitizer({ pack: join(dir, 'good.wasm') }), (e) => e.code === 'untrusted_key');
  const s = await createSanitizer();
  try {
    const out = await s.sanitize('DB_PASSWORD=Xk9mQ2vLp7zz', { tool: 't' });
    assert.match(out.message, /REDACTED/);
  } finally {
    await s.close();
  }
});

test('expiry is checked against the given time; scope against the tenant asked', () => {
  const bytes = readFileSync(join(dir, 'expired.wasm'));
  assert.equal(outcome(() => verifyPack(bytes, { trustedKeys, tenant: doc.tenant })), 'expired');
  assert.equal(outcome(() => verifyPack(bytes, { trustedKeys, tenant: doc.tenant, now: new Date('2019-12-31T23:59:59Z') })), 'ok');
  const other = readFileSync(join(dir, 'other-tenant.wasm'));
  assert.equal(outcome(() => verifyPack(other, { trustedKeys })), 'ok', 'no tenant asked: any scope');
  assert.equal(outcome(() => verifyPack(other, { trustedKeys, tenant: 'globex' })), 'ok');
});

test('the untrusted key is trusted once listed: keys rotate by listing several', () => {
  const bytes = readFileSync(join(dir, 'untrusted-key.wasm'));
  const both = [...trustedKeys, readPublicKey(join(dir, 'untrusted.pub'))];
  assert.equal(outcome(() => verifyPack(bytes, { trustedKeys: both, tenant: doc.tenant })), 'ok');
});

test('key files: the public tag, lower-case hex, a curve point; errors do not repeat the text', () => {
  const text = readFileSync(join(dir, 'trusted.pub'), 'utf8');
  assert.equal(parsePublicKey(text).keyId, trustedKeys[0].keyId);
  const [tag, hex] = text.trim().split(' ');
  // 02 00…: a y with no x on the curve (the Rust CLI refuses this file too).
  const offCurve = `${tag} 02${'00'.repeat(31)}`;
  for (const bad of [hex, `${tag} ${hex.toUpperCase()}`, `${tag} ${hex.slice(2)}`, `result-sanitizer-ed25519-secret ${hex}`, offCurve]) {
    assert.throws(() => parsePublicKey(bad), (e) => e instanceof TypeError && !e.message.includes(hex.slice(0, 16)));
  }
  const secret = readFileSync(join(dir, 'trusted.key'), 'utf8').trim().split(' ')[1];
  assert.throws(
    () => readPublicKey(join(dir, 'trusted.key')),
    (e) => /trusted\.key is not a public key file/.test(e.message) && !e.message.includes(secret.slice(0, 16)),
  );
});

test('a pack cache others can write to is not used', async () => {
  const d = mkdtempSync(join(tmpdir(), 'rs-cache-'));
  try {
    chmodSync(d, 0o777);
    await assert.rejects(transpilePack(readFileSync(join(dir, 'good.wasm')), d), /not used as the pack cache/);
    assert.deepEqual(readdirSync(d), []);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test('every flipped byte of a signed pack is refused', () => {
  const good = readFileSync(join(dir, 'good.wasm'));
  for (let i = 0; i < good.length; i++) {
    const b = Buffer.from(good);
    b[i] ^= 0x01;
    assert.notEqual(outcome(() => verifyPack(b, { trustedKeys, tenant: doc.tenant })), 'ok', `byte ${i} flipped`);
  }
  for (const cut of [1, 10, 100, good.length >> 1]) {
    const b = good.subarray(0, good.length - cut);
    assert.notEqual(outcome(() => verifyPack(b, { trustedKeys, tenant: doc.tenant })), 'ok', `${cut} bytes cut`);
  }
});

test('the command takes the Rust CLI\'s trust flags', () => {
  const command = join(here, '..', 'bin', 'sanitize.mjs');
  const p = (f) => join(dir, f);
  const run = (...args) => spawnSync(process.execPath, [command, ...args], { input: doc.probe.input });
  let r = run('--pack', p('good.wasm'), '--trusted-key', p('untrusted.pub'), '--trusted-key', p('trusted.pub'), '--tenant', doc.tenant);
  assert.equal(r.status, 0, r.stderr.toString());
  assert.ok(r.stdout.toString().includes(doc.probe.output));
  r = run('--pack', p('unsigned.wasm'));
  assert.equal(r.status, 1);
  assert.match(r.stderr.toString(), /pack refused: unsigned/);
  r = run('--pack', p('unsigned.wasm'), '--allow-unsigned');
  assert.equal(r.status, 0, r.stderr.toString());
  assert.ok(r.stdout.toString().includes(doc.probe.output));
  r = run('--pack', p('other-tenant.wasm'), '--trusted-key', p('trusted.pub'), '--tenant', doc.tenant);
  assert.equal(r.status, 1);
  assert.match(r.stderr.toString(), /pack refused: scoped to tenant `globex`, not `acme`/);
  // The default pack needs no key.
  r = run();
  assert.equal(r.status, 0, r.stderr.toString());
});

test('a pack file over 16 MiB is refused before it is parsed', async () => {
  await assert.rejects(
    createSanitizer({ pack: Buffer.alloc((16 << 20) + 1), allowUnsigned: true }),
    (e) => e instanceof SanitizeError && e.code === 'invalid rule pack' && /over the limit/.test(e.message),
  );
});

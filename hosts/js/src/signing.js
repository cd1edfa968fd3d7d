// Signed packs: every check is the verifier component's (verifier/, the
// Rust `pack-format` crate built for wasm and transpiled by jco into
// dist/verifier), so this host decides and words a refusal exactly as the
// Rust, Go and Python hosts do. Nothing here reads a pack's bytes: they go
// to the verifier whole, before anything is transpiled or compiled.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { instantiate } from '../dist/verifier/verifier.js';

/** The WIT version this host speaks (the version of the interfaces it binds). */
export const WIT_VERSION = '0.1.0';
const VERIFIER = `result-sanitizer:core/pack-verifier@${WIT_VERSION}`;
const DIST = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'verifier');

/**
 * A pack was refused before anything was compiled. `code` is one of
 * malformed, unsigned, incompatible_wit, untrusted_key, tampered, expired,
 * wrong_tenant (the verifier's `refusal` cases, in snake_case), or
 * invalid_trusted_key (a trusted key that is not a key: the host's
 * configuration). `message` is the verifier's sentence.
 */
export class PackRefusedError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'PackRefusedError';
    this.code = code;
  }
}

// One instance, made on first use (synchronously: the verifier is 0.4 MB)
// and dropped after any trap, so the next call gets a fresh one.
let verifier = null;
function call(f) {
  verifier ??= instantiate((name) => new WebAssembly.Module(readFileSync(join(DIST, name))), {})[VERIFIER];
  try {
    return f(verifier);
  } catch (e) {
    if (e instanceof PackRefusedError) throw e;
    verifier = null;
    throw new Error(`the pack verifier trapped (${e?.constructor?.name ?? 'error'})`);
  }
}

/**
 * A trusted key from a `.pub` file's text
 * (`result-sanitizer-ed25519-public <64 hex>`): `{ keyId, text }`.
 * The error never repeats the text.
 */
export function parsePublicKey(text) {
  const keyId = call((v) => v.keyId(String(text)));
  if (keyId === undefined || keyId === null) throw new TypeError('not a result-sanitizer public key file');
  return { keyId, text: String(text) };
}

/** A trusted key from a `.pub` file; the error names the file only. */
export function readPublicKey(path) {
  try {
    return parsePublicKey(readFileSync(path, 'utf8'));
  } catch (e) {
    if (e instanceof TypeError) throw new TypeError(`${path} is not a public key file`);
    throw e;
  }
}

const snake = (tag) => tag.replaceAll('-', '_');
const manifest = (m) => ({ name: m.name, version: m.version, tenant: m.tenant, wit_version: m.witVersion, rule_ids: m.ruleIds, has_detect: m.hasDetect });
const signed = (m) =>
  m && { name: m.name, version: m.version, tenant: m.tenant, wit_version: m.witVersion, expires: m.expires ?? null, key_id: m.keyId, sha256: m.sha256, may_relax: m.mayRelax };

/**
 * Verifies a pack component (bytes) before anything is compiled.
 *
 * - `trustedKeys`: keys from parsePublicKey/readPublicKey, or `.pub` file
 *   texts; several at once for rotation.
 * - `allowUnsigned`: accept unsigned packs (development only).
 * - `tenant`: the tenant that will use it; omitted, any scope passes.
 * - `now`: a Date or ms since the epoch (default: now); expiry is checked
 *   to the second.
 *
 * Returns `{ manifest, signed }` (the pack's manifest; the signed manifest,
 * or null when unsigned and allowed), fields in snake_case as in the Rust
 * host. Throws PackRefusedError.
 */
export function verifyPack(bytes, { trustedKeys = [], allowUnsigned = false, tenant, now = Date.now() } = {}) {
  const policy = { trustedKeys: trustedKeys.map((k) => (typeof k === 'string' ? k : k.text)), allowUnsigned: !!allowUnsigned };
  const seconds = BigInt(Math.max(0, Math.floor(+now / 1000)));
  const pack = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return call((v) => {
    try {
      const ok = v.verify(pack, policy, tenant ?? undefined, seconds);
      return { manifest: manifest(ok.manifest), signed: signed(ok.signed) ?? null };
    } catch (e) {
      // jco throws a `result`'s error case: the `refusal` itself (older
      // releases wrap it in a ComponentError's `payload`).
      const r = e?.payload ?? e;
      if (typeof r?.tag !== 'string') throw e;
      throw new PackRefusedError(snake(r.tag), v.describe(r));
    }
  });
}

// Signed packs, checked as the Rust host checks them (host/src/signing.rs).
//
// A signed pack carries its signature as its last top-level custom section,
// `result-sanitizer:signature`: JSON `{"v", "manifest", "signature"}`. The
// signature is Ed25519 over "result-sanitizer pack signature v1\n" and the
// manifest as serde_json writes it; the manifest holds the sha256 of every
// byte before that section. verifyPack reads bytes and JSON only: nothing is
// transpiled or compiled before a pack passes. The checks, their order and
// the refusal codes are the Rust host's, so every host refuses a pack the
// same way: malformed, unsigned, incompatible_wit, untrusted_key, tampered,
// expired, wrong_tenant.
import { createHash, createPublicKey, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';

export const SIGNATURE_SECTION = 'result-sanitizer:signature';
export const MANIFEST_SECTION = 'result-sanitizer:manifest';
/** The WIT version this host speaks (the version of the interfaces it binds). */
export const WIT_VERSION = '0.1.0';
const CONTEXT = 'result-sanitizer pack signature v1\n';
const PUB_TAG = 'result-sanitizer-ed25519-public';
// SPKI DER of an Ed25519 key is this prefix and the 32 raw bytes.
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/**
 * A pack was refused before anything was compiled. `code` is one of
 * malformed, unsigned, incompatible_wit, untrusted_key, tampered, expired,
 * wrong_tenant (the Rust host's `Refusal` variants, in snake_case).
 */
export class PackRefusedError extends Error {
  constructor(code, reason) {
    super(`pack refused: ${code}: ${reason}`);
    this.name = 'PackRefusedError';
    this.code = code;
    this.reason = reason;
  }
}

const refuse = (code, reason) => new PackRefusedError(code, reason);

// Rust's str::trim: the Unicode White_Space characters (String#trim's set
// differs: it has U+FEFF, not U+0085).
const trim = (s) => s.replace(/^[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g, '');

/** Lower-case hex of exactly `n` bytes, or null (one encoding per value). */
function unhex(s, n) {
  s = trim(s);
  return s.length === 2 * n && /^[0-9a-f]*$/.test(s) ? Buffer.from(s, 'hex') : null;
}

const sha256 = (b) => createHash('sha256').update(b).digest('hex');

const P = 2n ** 255n - 19n;
const modpow = (b, e) => {
  let r = 1n;
  for (b %= P; e > 0n; e >>= 1n, b = (b * b) % P) if (e & 1n) r = (r * b) % P;
  return r;
};
const D = (((-121665n * modpow(121666n, P - 2n)) % P) + P) % P;

/**
 * Whether 32 bytes decompress to an Edwards point, as the Rust host's key
 * parser (ed25519-dalek) asks: x² = (y² - 1) / (d·y² + 1) has a root.
 * Node would accept any 32 bytes as a key, and then verify nothing.
 */
function isPoint(raw) {
  const y = BigInt('0x' + Buffer.from(raw).reverse().toString('hex')) & ((1n << 255n) - 1n);
  const u = (((y * y - 1n) % P) + P) % P;
  const v = (D * y * y + 1n) % P;
  const w = (u * modpow(v, P - 2n)) % P;
  return w === 0n || modpow(w, (P - 1n) / 2n) === 1n;
}

/**
 * A trusted key from a `.pub` file's text
 * (`result-sanitizer-ed25519-public <64 hex>`): `{ keyId, key }`.
 * The error never repeats the text.
 */
export function parsePublicKey(text) {
  const t = trim(String(text));
  const sp = t.indexOf(' ');
  const raw = sp > 0 && t.slice(0, sp) === PUB_TAG ? unhex(t.slice(sp + 1), 32) : null;
  if (!raw || !isPoint(raw)) throw new TypeError('not a result-sanitizer public key file');
  const key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
  return { keyId: sha256(raw).slice(0, 16), key };
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

/** Unsigned LEB128 u32 at `i`: [value, next], or null (as wasmparser reads it). */
function u32(b, i) {
  let v = 0;
  for (let k = 0; k < 5; k++) {
    if (i + k >= b.length) return null;
    const x = b[i + k];
    if (k === 4 && x > 0x0f) return null;
    v += (x & 0x7f) * 2 ** (7 * k);
    if (!(x & 0x80)) return [v, i + k + 1];
  }
  return null;
}

/** Deepest nesting a manifest may have (pack-format's MAX_DEPTH). */
const MAX_DEPTH = 128;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The component's top-level sections: `{ start, end, name, data }` (`name`
 * and `data` for custom sections). Only headers are read: a section's
 * contents are skipped by its size.
 */
function sections(b) {
  if (b.length < 8 || b.readUInt32BE(0) !== 0x0061736d) throw refuse('malformed', 'not a valid wasm binary');
  const version = b.readUInt32LE(4);
  if (version === 1) throw refuse('malformed', 'a core module, not a component');
  if (version !== 0x1000d) throw refuse('malformed', 'not a valid wasm binary: unknown version');
  const out = [];
  let i = 8;
  while (i < b.length) {
    const start = i;
    const id = b[i];
    // Component section ids: 0 custom .. 11 export.
    if (id > 11) throw refuse('malformed', `not a valid wasm binary: unknown section ${id}`);
    const h = u32(b, i + 1);
    if (!h || h[1] + h[0] > b.length) throw refuse('malformed', 'not a valid wasm binary: section past the end');
    const [size, body] = h;
    const end = body + size;
    const s = { start, end, name: null, data: body };
    if (id === 0) {
      const n = u32(b, body);
      if (!n || n[1] + n[0] > end) throw refuse('malformed', 'not a valid wasm binary: bad custom section');
      try {
        s.name = utf8.decode(b.subarray(n[1], n[1] + n[0]));
      } catch {
        throw refuse('malformed', 'not a valid wasm binary: custom section name is not UTF-8');
      }
      s.data = n[1] + n[0];
    }
    out.push(s);
    i = end;
  }
  return out;
}

/**
 * Whether `text` (valid JSON) has what serde_json refuses and JSON.parse
 * does not: a member named in `known` twice in one object (JSON.parse
 * keeps the last), or, with `intV`, a top-level `v` that is not an integer
 * literal (JSON.parse reads 1.0 as 1; serde refuses it for a u32); or
 * nesting deeper than MAX_DEPTH, the bound every host checks. One pass,
 * linear in the text.
 */
function serdeRefuses(text, known, intV) {
  const stack = [];
  const ws = (i) => {
    while (' \t\n\r'.includes(text[i]) && i < text.length) i++;
    return i;
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '{') stack.push(new Set());
    else if (ch === '[') stack.push(null);
    if (stack.length > MAX_DEPTH) return true;
    else if (ch === '}' || ch === ']') stack.pop();
    else if (ch === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const keys = stack.at(-1);
      const colon = ws(j + 1);
      if (keys && text[colon] === ':') {
        const k = JSON.parse(text.slice(i, j + 1));
        if (keys.has(k) && known.includes(k)) return true;
        if (intV && k === 'v' && stack.length === 1) {
          const at = ws(colon + 1);
          const lit = /^(?:0|[1-9][0-9]*)(?![0-9.eE])/.exec(text.slice(at, at + 12));
          if (!lit) return true;
        }
        keys.add(k);
      }
      i = j;
    }
  }
  return false;
}

/**
 * A section's JSON as serde_json reads bytes into a struct with the fields
 * `known`: strict UTF-8, no lone surrogates (checked per field), no known
 * field twice. Otherwise throws `code`.
 */
function parseJson(bytes, code, what, known, intV = false) {
  let text, v;
  try {
    text = utf8.decode(bytes);
    v = JSON.parse(text);
  } catch {
    throw refuse(code, what);
  }
  if (serdeRefuses(text, known, intV)) throw refuse(code, what);
  return v;
}

const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isStr = (v) => typeof v === 'string' && v.isWellFormed();
const isStrList = (v) => Array.isArray(v) && v.every(isStr);

// The signed manifest's fields in serde order (`may_relax` last, written
// only when non-empty), and which may be absent or null.
const SIGNED_FIELDS = ['name', 'version', 'tenant', 'wit_version', 'expires', 'key_id', 'sha256', 'may_relax'];
const SECTION_FIELDS = ['v', 'manifest', 'signature'];
const MANIFEST_FIELDS = ['name', 'version', 'tenant', 'wit_version', 'rule_ids', 'has_detect'];

/** The signature section's JSON, checked as serde's deny_unknown_fields structs are. */
function signatureSection(v) {
  const bad = refuse('tampered', 'signature section is not valid JSON');
  if (!isObj(v) || Object.keys(v).some((k) => !SECTION_FIELDS.includes(k))) throw bad;
  if (!Number.isInteger(v.v) || v.v < 0 || v.v > 0xffffffff || !isStr(v.signature)) throw bad;
  // The format number is not signed: any other value is a changed byte.
  if (v.v !== 1) throw refuse('tampered', 'unknown signature format');
  const m = v.manifest;
  if (!isObj(m) || Object.keys(m).some((k) => !SIGNED_FIELDS.includes(k))) throw bad;
  for (const f of ['name', 'version', 'tenant', 'wit_version', 'key_id', 'sha256']) if (!isStr(m[f])) throw bad;
  if (m.expires !== undefined && m.expires !== null && !isStr(m.expires)) throw bad;
  if (m.may_relax !== undefined && !isStrList(m.may_relax)) throw bad;
  return v;
}

/** The manifest as serde_json writes it. */
function manifestJson(m) {
  // JSON.stringify escapes well-formed strings exactly as serde_json does
  // (", \, \b \t \n \f \r, other controls as lower-case \u00xx; nothing else).
  const parts = SIGNED_FIELDS.slice(0, 7).map((f) => `${JSON.stringify(f)}:${JSON.stringify(m[f] ?? null)}`);
  if (m.may_relax?.length) parts.push(`"may_relax":${JSON.stringify(m.may_relax)}`);
  return '{' + parts.join(',') + '}';
}

/** The message signed: the context line and the manifest as serde_json writes it. */
function message(m) {
  return Buffer.from(CONTEXT + manifestJson(m), 'utf8');
}

/** `n` in its shortest unsigned LEB128. */
function uleb(n) {
  const out = [];
  do {
    out.push((n & 0x7f) | (n >= 0x80 ? 0x80 : 0));
    n = Math.floor(n / 0x80);
  } while (n > 0);
  return out;
}

/**
 * The section has one encoding, the one the Rust signer writes: JSON that
 * parses to the same manifest another way (`\u001F` for `\u001f`, spaces)
 * would be a changed byte that still verifies; so would a size or name
 * length in more LEB128 bytes than it needs. `bytes` is the whole section.
 */
function canonicalSection(bytes, v) {
  const json = Buffer.from(`{"v":1,"manifest":${manifestJson(v.manifest)},"signature":${JSON.stringify(v.signature)}}`, 'utf8');
  const name = Buffer.from(SIGNATURE_SECTION, 'utf8');
  const body = Buffer.concat([Buffer.from(uleb(name.length)), name, json]);
  const one = Buffer.concat([Buffer.from([0, ...uleb(body.length)]), body]);
  if (!one.equals(Buffer.from(bytes))) {
    throw refuse('tampered', 'signature section is not in its one encoding');
  }
  return v;
}

/** The pack's own manifest (`result-sanitizer:manifest`) in `secs`. */
function packManifest(b, secs) {
  const found = secs.filter((s) => s.name === MANIFEST_SECTION);
  if (found.length === 0) throw refuse('malformed', 'no manifest section');
  if (found.length > 1) throw refuse('malformed', `more than one ${MANIFEST_SECTION} section`);
  const s = found[0];
  const m = parseJson(b.subarray(s.data, s.end), 'malformed', 'manifest is not valid JSON', MANIFEST_FIELDS);
  const ok =
    isObj(m) &&
    ['name', 'version', 'tenant', 'wit_version'].every((f) => isStr(m[f])) &&
    isStrList(m.rule_ids) &&
    typeof m.has_detect === 'boolean';
  if (!ok) throw refuse('malformed', 'manifest is not valid JSON');
  return m;
}

/**
 * RFC 3339 time as humantime's parse_rfc3339_weak reads it (the Rust
 * host's parser, quirks included, so that every host reads an expiry
 * alike): ms since the epoch, or null.
 */
export function parseRfc3339Weak(s) {
  const b = Buffer.from(s, 'utf8');
  if (b.length < 19) return null;
  const c = (i) => String.fromCharCode(b[i]);
  if (c(4) !== '-' || c(7) !== '-' || (c(10) !== 'T' && c(10) !== ' ') || c(13) !== ':' || c(16) !== ':') return null;
  const d2 = (i) => (/[0-9]/.test(c(i)) && /[0-9]/.test(c(i + 1)) ? (b[i] - 48) * 10 + (b[i + 1] - 48) : NaN);
  const year = d2(0) * 100 + d2(2);
  const [month, day, hour, minute] = [d2(5), d2(8), d2(11), d2(14)];
  let second = d2(17);
  if ([year, month, day, hour, minute, second].some(Number.isNaN)) return null;
  if (year < 1970 || hour > 23 || minute > 59 || second > 60) return null;
  if (second === 60) second = 59;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const MONTHS = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  if (month < 1 || month > 12 || day === 0 || day > MONTHS[month - 1]) return null;
  let ydays = MONTHS.slice(0, month - 1).reduce((a, x) => a + x, 0) + day - 1;
  const y1 = year - 1;
  const leapYears = Math.floor((y1 - 1968) / 4) - Math.floor((y1 - 1900) / 100) + Math.floor((y1 - 1600) / 400);
  const days = (year - 1970) * 365 + leapYears + ydays;
  let nanos = 0;
  if (b[19] === 0x2e) {
    let mult = 100_000_000;
    for (let i = 20; i < b.length; i++) {
      if (c(i) === 'Z') {
        if (i === b.length - 1) break;
        return null;
      } else if (c(i) === '+') {
        if (i === b.length - 6) break;
        return null;
      }
      if (!/[0-9]/.test(c(i))) return null;
      nanos += mult * (b[i] - 48);
      mult = Math.floor(mult / 10);
    }
  } else if (b.length !== 19 && (b.length > 25 || (c(19) !== 'Z' && b.subarray(19).toString('latin1') !== '+00:00'))) {
    return null;
  }
  const total = second + minute * 60 + hour * 3600 + days * 86400;
  if (total > 253_402_300_799) return null;
  return total * 1000 + nanos / 1e6;
}

/**
 * Verifies a pack component (bytes) before anything is compiled.
 *
 * - `trustedKeys`: keys from parsePublicKey/readPublicKey, or `.pub` file
 *   texts; several at once for rotation.
 * - `allowUnsigned`: accept unsigned packs (development only).
 * - `tenant`: the tenant that will use it; omitted, any scope passes.
 * - `now`: a Date or ms since the epoch (default: now).
 *
 * Returns `{ manifest, signed }` (the pack's manifest; the signed manifest,
 * or null when unsigned and allowed). Throws PackRefusedError.
 */
export function verifyPack(bytes, { trustedKeys = [], allowUnsigned = false, tenant, now = Date.now() } = {}) {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const secs = sections(b);
  const sigs = secs.filter((s) => s.name === SIGNATURE_SECTION);
  if (sigs.length > 1) throw refuse('tampered', 'more than one signature section');
  const sig = sigs[0];
  if (sig && sig.end !== b.length) throw refuse('tampered', 'bytes follow the signature section');
  const section = sig
    ? canonicalSection(
        b.subarray(sig.start, sig.end),
        signatureSection(parseJson(b.subarray(sig.data, sig.end), 'tampered', 'signature section is not valid JSON', [...SECTION_FIELDS, ...SIGNED_FIELDS], true)),
      )
    : null;
  const signedRange = sig ? b.subarray(0, sig.start) : b;
  const manifest = packManifest(b, sig ? secs.slice(0, -1) : secs);
  const scopeOk = (scope) => {
    if (tenant !== undefined && tenant !== null && scope !== '*' && scope !== tenant) {
      throw refuse('wrong_tenant', `scoped to tenant \`${scope}\`, not \`${tenant}\``);
    }
  };
  if (!section) {
    if (!allowUnsigned) throw refuse('unsigned', 'the pack is not signed (allowUnsigned is for development only)');
    if (manifest.wit_version !== WIT_VERSION) {
      throw refuse('incompatible_wit', `built for WIT ${manifest.wit_version}, this host speaks ${WIT_VERSION}`);
    }
    scopeOk(manifest.tenant);
    return { manifest, signed: null };
  }
  const m = section.manifest;
  const keys = trustedKeys.map((k) => (typeof k === 'string' ? parsePublicKey(k) : k));
  const key = keys.find((k) => k.keyId === m.key_id);
  if (!key) throw refuse('untrusted_key', `signed by untrusted key ${m.key_id}`);
  const sigBytes = unhex(section.signature, 64);
  if (!sigBytes) throw refuse('tampered', 'signature is not 64 bytes of hex');
  if (!verify(null, message(m), key.key, sigBytes)) throw refuse('tampered', 'signature does not verify');
  if (sha256(signedRange) !== m.sha256) throw refuse('tampered', 'wasm bytes changed after signing');
  if (['name', 'version', 'tenant', 'wit_version'].some((f) => manifest[f] !== m[f])) {
    throw refuse('tampered', 'pack manifest differs from the signed manifest');
  }
  if (m.expires !== undefined && m.expires !== null) {
    const t = parseRfc3339Weak(m.expires);
    if (t === null) throw refuse('tampered', 'unreadable expiry');
    if (+now >= t) throw refuse('expired', `expired at ${m.expires}`);
  }
  if (m.wit_version !== WIT_VERSION) {
    throw refuse('incompatible_wit', `built for WIT ${m.wit_version}, this host speaks ${WIT_VERSION}`);
  }
  scopeOk(m.tenant);
  return { manifest, signed: m };
}

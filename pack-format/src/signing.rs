//! Signed packs: Ed25519 over the exact wasm bytes and a manifest.
//!
//! # Format
//!
//! The signature is embedded, wasmsign2-style, as the **last** top-level
//! custom section of the component, named [`SECTION`]. Its content is JSON:
//!
//! ```json
//! {"v": 1, "manifest": {"name", "version", "tenant", "wit_version",
//!   "expires": "RFC3339" | null, "key_id", "sha256"}, "signature": "<hex>"}
//! ```
//!
//! The signed range is every byte of the file before that section; its
//! sha256 is in the manifest. The signed message is
//! `"result-sanitizer pack signature v1\n" + canonical manifest JSON`.
//! Embedded rather than detached because a pack then travels as one file:
//! registries, caches and directories of packs never lose the signature,
//! and `pack inspect` shows it. Re-signing replaces the section.
//!
//! Verification reads only bytes and JSON: nothing is compiled before the
//! pack passes. Each refusal is its own [`Refusal`] variant.

use std::fmt;
use std::path::Path;
use std::time::SystemTime;

use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use serde::{Deserialize, Serialize};

use crate::digest::{hex, sha256_hex};
use crate::manifest::Manifest;
use crate::WIT_VERSION;

/// Custom section holding the signature.
pub const SECTION: &str = "result-sanitizer:signature";
const CONTEXT: &[u8] = b"result-sanitizer pack signature v1\n";

/// What the signature covers besides the bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignedManifest {
    /// Pack name.
    pub name: String,
    /// Pack version.
    pub version: String,
    /// Tenant scope (`*` = any tenant).
    pub tenant: String,
    /// WIT version the pack was built for.
    pub wit_version: String,
    /// Expiry (RFC 3339), if any.
    pub expires: Option<String>,
    /// Id of the signing key (first 16 hex digits of sha256 of the public key).
    pub key_id: String,
    /// sha256 (hex) of the signed range.
    pub sha256: String,
    /// Platform rule ids this pack may turn off for its tenant (its rule
    /// set's `relax`): the platform's grant, which only a trusted key can
    /// give. Omitted when empty, so the signed message of a pack without
    /// one is what it was before the field existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub may_relax: Vec<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SignatureSection {
    v: u32,
    manifest: SignedManifest,
    signature: String,
}

/// Why a pack was refused. Checked in this order, before compiling.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Refusal {
    /// Not a wasm component, or its manifest is unreadable.
    #[error("pack refused: malformed: {0}")]
    Malformed(String),
    /// No signature, and unsigned packs are not allowed.
    #[error("pack refused: unsigned (pass --allow-unsigned for development only)")]
    Unsigned,
    /// Built for another WIT version.
    #[error("pack refused: built for WIT {found}, this host speaks {WIT_VERSION}")]
    IncompatibleWit {
        /// Version the pack declares.
        found: String,
    },
    /// Signed by a key that is not trusted.
    #[error("pack refused: signed by untrusted key {key_id}")]
    UntrustedKey {
        /// The key id in the signature.
        key_id: String,
    },
    /// Bytes or manifest changed after signing, or the signature is bad.
    #[error("pack refused: tampered ({0})")]
    Tampered(String),
    /// The signature's expiry has passed.
    #[error("pack refused: expired at {expires}")]
    Expired {
        /// The expiry.
        expires: String,
    },
    /// Scoped to another tenant.
    #[error("pack refused: scoped to tenant `{scope}`, not `{tenant}`")]
    WrongTenant {
        /// The pack's scope.
        scope: String,
        /// The tenant asking.
        tenant: String,
    },
}

impl Refusal {
    /// The case in snake_case: what `cases.json`, every host's error
    /// (`code`, `Kind`, `kind`) and the verifier component's JSON say.
    pub fn kind(&self) -> &'static str {
        match self {
            Refusal::Malformed(_) => "malformed",
            Refusal::Unsigned => "unsigned",
            Refusal::IncompatibleWit { .. } => "incompatible_wit",
            Refusal::UntrustedKey { .. } => "untrusted_key",
            Refusal::Tampered(_) => "tampered",
            Refusal::Expired { .. } => "expired",
            Refusal::WrongTenant { .. } => "wrong_tenant",
        }
    }
}

/// Reads and parses a key file; the error names the file, never its content.
fn read_key_file<K>(path: &Path, kind: &str, parse: fn(&str) -> Option<K>) -> std::io::Result<K> {
    let text = std::fs::read_to_string(path)?;
    parse(&text).ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{} is not a {kind} key file", path.display()))
    })
}

/// A trusted public key.
#[derive(Clone)]
pub struct PublicKey {
    key: VerifyingKey,
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({})", self.key_id())
    }
}

const PUB_TAG: &str = "result-sanitizer-ed25519-public";
const KEY_TAG: &str = "result-sanitizer-ed25519-secret";

fn unhex<const N: usize>(s: &str) -> Option<[u8; N]> {
    let s = s.trim();
    if s.len() != 2 * N {
        return None;
    }
    // Lower case only: one encoding per key or signature, so no byte of a
    // signed pack can change without the pack being refused.
    if !s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    let mut out = [0u8; N];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

fn parse_tagged<const N: usize>(text: &str, tag: &str) -> Option<[u8; N]> {
    let (t, body) = text.trim().split_once(' ')?;
    (t == tag).then(|| unhex::<N>(body)).flatten()
}

impl PublicKey {
    /// Key id: first 16 hex digits of sha256 of the key bytes.
    pub fn key_id(&self) -> String {
        let mut id = sha256_hex(self.key.as_bytes());
        id.truncate(16);
        id
    }

    /// Parses a `.pub` file's text.
    pub fn parse(text: &str) -> Option<Self> {
        let b = parse_tagged::<32>(text, PUB_TAG)?;
        VerifyingKey::from_bytes(&b).ok().map(|key| Self { key })
    }

    /// Reads a `.pub` file.
    pub fn read(path: &Path) -> std::io::Result<Self> {
        read_key_file(path, "public", Self::parse)
    }

    /// The `.pub` file text.
    pub fn to_text(&self) -> String {
        format!("{PUB_TAG} {}\n", hex(self.key.as_bytes()))
    }
}

/// A signing key. Its `Debug` shows the key id only.
pub struct SecretKey {
    key: SigningKey,
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretKey({})", self.public().key_id())
    }
}

impl SecretKey {
    /// A new random key.
    #[cfg(feature = "keygen")]
    pub fn generate() -> Self {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).expect("OS randomness");
        Self { key: SigningKey::from_bytes(&seed) }
    }

    /// Its public half.
    pub fn public(&self) -> PublicKey {
        PublicKey { key: self.key.verifying_key() }
    }

    /// Parses a `.key` file's text.
    pub fn parse(text: &str) -> Option<Self> {
        parse_tagged::<32>(text, KEY_TAG).map(|b| Self { key: SigningKey::from_bytes(&b) })
    }

    /// Reads a `.key` file.
    pub fn read(path: &Path) -> std::io::Result<Self> {
        read_key_file(path, "secret", Self::parse)
    }

    /// The `.key` file text.
    pub fn to_text(&self) -> String {
        format!("{KEY_TAG} {}\n", hex(self.key.as_bytes()))
    }
}

/// Top-level sections: (start, end, custom name if custom).
fn sections(wasm: &[u8]) -> Result<Vec<(usize, usize, Option<String>)>, Refusal> {
    use wasmparser::{Parser, Payload};
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut saw_header = false;
    for p in Parser::new(0).parse_all(wasm) {
        let p = p.map_err(|e| Refusal::Malformed(format!("not a valid wasm binary: {}", e.message())))?;
        match &p {
            Payload::Version { encoding, .. } if depth == 0 && !saw_header => {
                saw_header = true;
                if *encoding != wasmparser::Encoding::Component {
                    return Err(Refusal::Malformed("a core module, not a component".into()));
                }
            }
            Payload::ModuleSection { unchecked_range, .. } | Payload::ComponentSection { unchecked_range, .. } => {
                if depth == 0 {
                    out.push((unchecked_range.start, unchecked_range.end, None));
                }
                depth += 1;
            }
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::CustomSection(c) if depth == 0 => {
                out.push((c.range().start, c.range().end, Some(c.name().to_string())));
            }
            _ => {}
        }
    }
    if !saw_header {
        return Err(Refusal::Malformed("empty file".into()));
    }
    Ok(out)
}

/// Splits a pack into (signed range, signature section) if signed.
fn split_signature(wasm: &[u8]) -> Result<(&[u8], Option<SignatureSection>), Refusal> {
    let secs = sections(wasm)?;
    let sigs: Vec<_> = secs.iter().filter(|s| s.2.as_deref() == Some(SECTION)).collect();
    match sigs.as_slice() {
        [] => Ok((wasm, None)),
        [one] => {
            if one.1 != wasm.len() {
                return Err(Refusal::Tampered("bytes follow the signature section".into()));
            }
            // The section starts with its id byte and size before `range`.
            let data_start = section_header_start(wasm, one.0)?;
            let body = custom_payload(wasm, one.0, one.1)?;
            let sig: SignatureSection = serde_json::from_slice(body)
                .map_err(|_| Refusal::Tampered("signature section is not valid JSON".into()))?;
            // The format number is not signed: any other value is a changed byte.
            if sig.v != 1 {
                return Err(Refusal::Tampered("unknown signature format".into()));
            }
            // The section has one encoding, the one `sign` writes: JSON that
            // parses to the same manifest another way (`\u001F` for
            // `\u001f`, spaces) would be a changed byte that still verifies.
            // Its header too: a size or name length written in more LEB128
            // bytes than it needs would be the same kind of changed byte.
            if serde_json::to_vec(&sig).map_or(true, |c| c != body || section_bytes(&c) != wasm[data_start..]) {
                return Err(Refusal::Tampered("signature section is not in its one encoding".into()));
            }
            Ok((&wasm[..data_start], Some(sig)))
        }
        _ => Err(Refusal::Tampered("more than one signature section".into())),
    }
}

/// The custom section's data (after its name).
fn custom_payload(wasm: &[u8], start: usize, end: usize) -> Result<&[u8], Refusal> {
    let mut r = wasmparser::BinaryReader::new(&wasm[start..end], start);
    let name = r.read_string().map_err(|_| Refusal::Malformed("bad custom section".into()))?;
    let _ = name;
    Ok(&wasm[r.original_position()..end])
}

/// Where the section containing `range_start` begins (its id byte): the id
/// and a LEB128 size precede the range.
fn section_header_start(wasm: &[u8], range_start: usize) -> Result<usize, Refusal> {
    for back in 2..=6 {
        let Some(s) = range_start.checked_sub(back) else { break };
        if wasm[s] != 0 {
            continue;
        }
        let mut r = wasmparser::BinaryReader::new(&wasm[s + 1..range_start], s + 1);
        if let Ok(size) = r.read_var_u32() {
            if r.original_position() == range_start && range_start + size as usize <= wasm.len() {
                return Ok(s);
            }
        }
    }
    Err(Refusal::Malformed("cannot locate the signature section header".into()))
}

fn message(m: &SignedManifest) -> Vec<u8> {
    let mut msg = CONTEXT.to_vec();
    msg.extend_from_slice(&serde_json::to_vec(m).expect("manifest serializes"));
    msg
}

/// Signs `wasm` (replacing any previous signature); `may_relax` grants the
/// pack the right to turn off those platform rules.
pub fn sign(wasm: &[u8], key: &SecretKey, expires: Option<&str>, may_relax: &[String]) -> Result<Vec<u8>, String> {
    let (unsigned, _) = split_signature(wasm).map_err(|e| e.to_string())?;
    let m = Manifest::read(unsigned).map_err(|e| format!("{e:#}"))?.ok_or("the pack has no manifest section")?;
    if let Some(e) = expires {
        humantime::parse_rfc3339_weak(e).map_err(|e| format!("--expires: {e}"))?;
    }
    let manifest = SignedManifest {
        name: m.name,
        version: m.version,
        tenant: m.tenant,
        wit_version: m.wit_version,
        expires: expires.map(str::to_string),
        key_id: key.public().key_id(),
        sha256: sha256_hex(unsigned),
        may_relax: may_relax.to_vec(),
    };
    let signature = hex(&key.key.sign(&message(&manifest)).to_bytes());
    let section = SignatureSection { v: 1, manifest, signature };
    let mut out = unsigned.to_vec();
    out.extend(section_bytes(&serde_json::to_vec(&section).expect("serializes")));
    Ok(out)
}

/// The signature section holding `data`, header included, in its one
/// encoding (the shortest LEB128 for each length).
fn section_bytes(data: &[u8]) -> Vec<u8> {
    use wasm_encoder::{Encode, Section};
    let custom = wasm_encoder::CustomSection { name: SECTION.into(), data: data.into() };
    let mut out = vec![custom.id()];
    custom.encode(&mut out);
    out
}

/// What a host requires of a pack.
#[derive(Debug, Clone)]
pub struct TrustPolicy {
    /// Keys trusted to sign packs (several at once, for rotation).
    pub keys: Vec<PublicKey>,
    /// Accept unsigned packs (development only).
    pub allow_unsigned: bool,
}

/// A pack that passed verification.
#[derive(Debug, Clone)]
pub struct Verified {
    /// The pack's own manifest.
    pub manifest: Manifest,
    /// The signed manifest, when signed.
    pub signed: Option<SignedManifest>,
}

/// Verifies `wasm` for `tenant` (`None`: any scope is acceptable, as for
/// `pack verify` without `--tenant`). Reads bytes only; compiles nothing.
pub fn verify(wasm: &[u8], policy: &TrustPolicy, tenant: Option<&str>, now: SystemTime) -> Result<Verified, Refusal> {
    let (signed_range, sig) = split_signature(wasm)?;
    let manifest = Manifest::read(signed_range)
        .map_err(|e| Refusal::Malformed(format!("{e:#}")))?
        .ok_or_else(|| Refusal::Malformed("no manifest section".into()))?;
    let scope_ok = |scope: &str| -> Result<(), Refusal> {
        match tenant {
            Some(t) if scope != "*" && scope != t => {
                Err(Refusal::WrongTenant { scope: scope.into(), tenant: t.into() })
            }
            _ => Ok(()),
        }
    };
    let Some(sig) = sig else {
        if !policy.allow_unsigned {
            return Err(Refusal::Unsigned);
        }
        if manifest.wit_version != WIT_VERSION {
            return Err(Refusal::IncompatibleWit { found: manifest.wit_version });
        }
        scope_ok(&manifest.tenant)?;
        return Ok(Verified { manifest, signed: None });
    };
    let m = &sig.manifest;
    let key = policy
        .keys
        .iter()
        .find(|k| k.key_id() == m.key_id)
        .ok_or_else(|| Refusal::UntrustedKey { key_id: m.key_id.clone() })?;
    let sig_bytes =
        unhex::<64>(&sig.signature).ok_or_else(|| Refusal::Tampered("signature is not 64 bytes of hex".into()))?;
    key.key
        .verify(&message(m), &Signature::from_bytes(&sig_bytes))
        .map_err(|_| Refusal::Tampered("signature does not verify".into()))?;
    if sha256_hex(signed_range) != m.sha256 {
        return Err(Refusal::Tampered("wasm bytes changed after signing".into()));
    }
    if (manifest.name.as_str(), manifest.version.as_str(), manifest.tenant.as_str(), manifest.wit_version.as_str())
        != (m.name.as_str(), m.version.as_str(), m.tenant.as_str(), m.wit_version.as_str())
    {
        return Err(Refusal::Tampered("pack manifest differs from the signed manifest".into()));
    }
    if let Some(e) = &m.expires {
        let t = humantime::parse_rfc3339_weak(e).map_err(|_| Refusal::Tampered("unreadable expiry".into()))?;
        if now >= t {
            return Err(Refusal::Expired { expires: e.clone() });
        }
    }
    if m.wit_version != WIT_VERSION {
        return Err(Refusal::IncompatibleWit { found: m.wit_version.clone() });
    }
    scope_ok(&m.tenant)?;
    Ok(Verified { manifest, signed: Some(sig.manifest) })
}

/// What the unverified path checks (the operator's own packs, development):
/// a readable manifest, for this WIT version. No signature is read.
pub fn check_manifest(wasm: &[u8]) -> Result<Manifest, Refusal> {
    let manifest = Manifest::read(wasm)
        .map_err(|e| Refusal::Malformed(format!("{e:#}")))?
        .ok_or_else(|| Refusal::Malformed("no manifest section".into()))?;
    if manifest.wit_version != WIT_VERSION {
        return Err(Refusal::IncompatibleWit { found: manifest.wit_version });
    }
    Ok(manifest)
}

/// The signed manifest of a pack, if any, without verifying it (for `inspect`).
pub fn read_signature(wasm: &[u8]) -> Result<Option<SignedManifest>, Refusal> {
    Ok(split_signature(wasm)?.1.map(|s| s.manifest))
}

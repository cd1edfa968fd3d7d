//! The rule-pack checks as a component: `wit/pack-verifier.wit`.
//!
//! Every host refuses a pack before compiling any of it (signature, key,
//! expiry, tenant scope, WIT version, manifest). The Rust host calls
//! [`pack_format::signing::verify`] natively; this crate exports the same
//! function through the component model, so the JavaScript (jco), Go
//! (wazero, through the JSON twin `verify-json`) and Python (wasmtime-py)
//! hosts run that one implementation instead of a port of it. The
//! component imports nothing: it reads no clock (the host passes the time)
//! and no files (the host passes the bytes and the keys' text).
//!
//! Cost: one pass over the pack's top-level sections (wasmparser), a
//! sha256 of the signed range and one Ed25519 verification.

use std::time::{Duration, SystemTime};

use pack_format::signing::{self, PublicKey, Refusal as PackRefusal, TrustPolicy};
use serde::Deserialize;
use serde_json::json;

/// What [`verify`] decides, in this crate's own terms (the WIT types are
/// built from it at the edge).
pub enum Outcome {
    /// The pack passed.
    Passed(Box<signing::Verified>),
    /// Key `i` of the policy is not a public key file's text.
    InvalidKey(u32),
    /// The pack was refused.
    Refused(PackRefusal),
}

/// Verifies `pack` as [`signing::verify`] does, with the trusted keys as
/// text and the time in seconds since the Unix epoch.
pub fn verify(pack: &[u8], keys: &[String], allow_unsigned: bool, tenant: Option<&str>, now: u64) -> Outcome {
    let mut parsed = Vec::with_capacity(keys.len());
    for (i, k) in keys.iter().enumerate() {
        match PublicKey::parse(k) {
            Some(k) => parsed.push(k),
            None => return Outcome::InvalidKey(i as u32),
        }
    }
    let policy = TrustPolicy { keys: parsed, allow_unsigned };
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(now);
    match signing::verify(pack, &policy, tenant, now) {
        Ok(v) => Outcome::Passed(Box::new(v)),
        Err(r) => Outcome::Refused(r),
    }
}

fn invalid_key_message(i: u32) -> String {
    format!("pack refused: trusted key {i} is not a public key file's text")
}

/// The JSON twin's request.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Request {
    #[serde(default)]
    trusted_keys: Vec<String>,
    #[serde(default)]
    allow_unsigned: bool,
    #[serde(default)]
    tenant: Option<String>,
    /// Required for `verify`: a missing time must not pass an expired pack.
    #[serde(default)]
    now_unix_seconds: Option<u64>,
    #[serde(default)]
    manifest_only: bool,
}

/// `verify-json`: the answer as JSON text.
pub fn verify_json(pack: &[u8], request: &str) -> String {
    let err = |kind: &str, message: String| json!({"Err": {"kind": kind, "message": message}});
    let answer = match serde_json::from_str::<Request>(request) {
        // serde's message names the field, never the value of a key.
        Err(e) => err("invalid_request", format!("verify request: {e}")),
        Ok(q) if q.manifest_only => match signing::check_manifest(pack) {
            Ok(m) => json!({"Ok": {"manifest": m, "signed": null}}),
            Err(r) => err(r.kind(), r.to_string()),
        },
        Ok(Request { now_unix_seconds: None, .. }) => {
            err("invalid_request", "verify request: missing field `now_unix_seconds`".into())
        }
        Ok(Request { now_unix_seconds: Some(now), ref trusted_keys, allow_unsigned, ref tenant, .. }) => {
            match verify(pack, trusted_keys, allow_unsigned, tenant.as_deref(), now) {
                Outcome::InvalidKey(i) => err("invalid_trusted_key", invalid_key_message(i)),
                Outcome::Refused(r) => err(r.kind(), r.to_string()),
                Outcome::Passed(v) => json!({"Ok": {
                    "manifest": v.manifest,
                    "signed": v.signed.map(|s| json!({
                        "name": s.name, "version": s.version, "tenant": s.tenant,
                        "wit_version": s.wit_version, "expires": s.expires, "key_id": s.key_id,
                        "sha256": s.sha256, "may_relax": s.may_relax,
                    })),
                }}),
            }
        }
    };
    answer.to_string()
}

/// The component glue, compiled for wasm only (natively the functions
/// above are the API).
#[cfg(target_arch = "wasm32")]
mod component {
    use super::*;
    use pack_format::manifest::Manifest as PackManifest;
    use pack_format::signing::SignedManifest as PackSigned;

    wit_bindgen::generate!({
        path: "../wit",
        world: "verifier",
    });

    use exports::result_sanitizer::core::pack_verifier::{
        Guest, Manifest, Refusal, SignedManifest, TenantMismatch, TrustPolicy as WitPolicy, Verified,
    };

    fn to_wit_refusal(r: PackRefusal) -> Refusal {
        match r {
            PackRefusal::Malformed(s) => Refusal::Malformed(s),
            PackRefusal::Unsigned => Refusal::Unsigned,
            PackRefusal::IncompatibleWit { found } => Refusal::IncompatibleWit(found),
            PackRefusal::UntrustedKey { key_id } => Refusal::UntrustedKey(key_id),
            PackRefusal::Tampered(s) => Refusal::Tampered(s),
            PackRefusal::Expired { expires } => Refusal::Expired(expires),
            PackRefusal::WrongTenant { scope, tenant } => Refusal::WrongTenant(TenantMismatch { scope, tenant }),
        }
    }

    fn from_wit_refusal(r: Refusal) -> Result<PackRefusal, u32> {
        Ok(match r {
            Refusal::InvalidTrustedKey(i) => return Err(i),
            Refusal::Malformed(s) => PackRefusal::Malformed(s),
            Refusal::Unsigned => PackRefusal::Unsigned,
            Refusal::IncompatibleWit(found) => PackRefusal::IncompatibleWit { found },
            Refusal::UntrustedKey(key_id) => PackRefusal::UntrustedKey { key_id },
            Refusal::Tampered(s) => PackRefusal::Tampered(s),
            Refusal::Expired(expires) => PackRefusal::Expired { expires },
            Refusal::WrongTenant(TenantMismatch { scope, tenant }) => PackRefusal::WrongTenant { scope, tenant },
        })
    }

    fn to_wit_manifest(m: PackManifest) -> Manifest {
        Manifest {
            name: m.name,
            version: m.version,
            tenant: m.tenant,
            wit_version: m.wit_version,
            rule_ids: m.rule_ids,
            has_detect: m.has_detect,
        }
    }

    fn to_wit_signed(m: PackSigned) -> SignedManifest {
        SignedManifest {
            name: m.name,
            version: m.version,
            tenant: m.tenant,
            wit_version: m.wit_version,
            expires: m.expires,
            key_id: m.key_id,
            sha256: m.sha256,
            may_relax: m.may_relax,
        }
    }

    struct Component;

    impl Guest for Component {
        fn verify(pack: Vec<u8>, policy: WitPolicy, tenant: Option<String>, now: u64) -> Result<Verified, Refusal> {
            match verify(&pack, &policy.trusted_keys, policy.allow_unsigned, tenant.as_deref(), now) {
                Outcome::Passed(v) => {
                    Ok(Verified { manifest: to_wit_manifest(v.manifest), signed: v.signed.map(to_wit_signed) })
                }
                Outcome::InvalidKey(i) => Err(Refusal::InvalidTrustedKey(i)),
                Outcome::Refused(r) => Err(to_wit_refusal(r)),
            }
        }

        fn check_manifest(pack: Vec<u8>) -> Result<Manifest, Refusal> {
            signing::check_manifest(&pack).map(to_wit_manifest).map_err(to_wit_refusal)
        }

        fn verify_json(pack: Vec<u8>, request: String) -> String {
            verify_json(&pack, &request)
        }

        fn describe(refusal: Refusal) -> String {
            match from_wit_refusal(refusal) {
                Ok(r) => r.to_string(),
                Err(i) => invalid_key_message(i),
            }
        }

        fn key_id(public_key: String) -> Option<String> {
            PublicKey::parse(&public_key).map(|k| k.key_id())
        }
    }

    export!(Component);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn a_request_that_does_not_parse_is_an_error_not_a_panic() {
        let v: Value = serde_json::from_str(&verify_json(b"\0asm", "{")).unwrap();
        assert_eq!(v["Err"]["kind"], "invalid_request");
        let v: Value = serde_json::from_str(&verify_json(b"\0asm", r#"{"now_unix_seconds": 1, "x": 2}"#)).unwrap();
        assert_eq!(v["Err"]["kind"], "invalid_request");
        let v: Value = serde_json::from_str(&verify_json(b"\0asm", r#"{"trusted_keys": []}"#)).unwrap();
        assert_eq!(v["Err"]["kind"], "invalid_request", "no time: refused, not taken as the epoch");
    }

    #[test]
    fn a_bad_trusted_key_is_named_by_index() {
        let q = r#"{"trusted_keys": ["result-sanitizer-ed25519-public 00"], "now_unix_seconds": 1}"#;
        let v: Value = serde_json::from_str(&verify_json(b"\0asm", q)).unwrap();
        assert_eq!(v["Err"]["kind"], "invalid_trusted_key");
        assert_eq!(v["Err"]["message"], invalid_key_message(0));
    }

    #[test]
    fn not_wasm_is_malformed_with_the_rust_hosts_words() {
        let v: Value = serde_json::from_str(&verify_json(b"plain text", r#"{"now_unix_seconds": 1}"#)).unwrap();
        assert_eq!(v["Err"]["kind"], "malformed");
        assert!(v["Err"]["message"].as_str().unwrap().starts_with("pack refused: malformed: "));
    }
}

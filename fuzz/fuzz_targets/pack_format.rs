//! The pack manifest and signature parser, as a host meets a pack file:
//! any bytes are refused with a typed error or accepted, never a panic;
//! and for a pack signed here (random identity, expiry, grant), it
//! verifies, and changing any one of its bytes makes it fail.
#![no_main]

use std::time::{Duration, SystemTime};

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use pack_format::manifest::Manifest;
use pack_format::signing::{self, SecretKey, TrustPolicy};

#[derive(Arbitrary, Debug)]
struct Case {
    /// Bytes read as a pack file.
    raw: Vec<u8>,
    /// Identity of a pack signed here.
    name: String,
    version: String,
    tenant: String,
    rule_ids: Vec<String>,
    expires_in: Option<u32>,
    may_relax: Vec<String>,
    /// Bytes of a component body before the sections.
    body: Vec<u8>,
    /// A byte to change in the signed pack: (offset, xor).
    flip: (u32, u8),
}

fn key() -> SecretKey {
    SecretKey::parse(&format!("result-sanitizer-ed25519-secret {}", "7e".repeat(32))).expect("key")
}

fuzz_target!(|c: Case| {
    let policy = TrustPolicy { keys: vec![key().public()], allow_unsigned: false };
    let now = SystemTime::now();
    // Any bytes: a verdict, no panic; an accepted file has a manifest.
    let _ = Manifest::read(&c.raw);
    let _ = signing::read_signature(&c.raw);
    for tenant in [None, Some("acme")] {
        if let Ok(v) = signing::verify(&c.raw, &policy, tenant, now) {
            assert!(v.signed.is_some(), "accepted unsigned under a policy that refuses it");
        }
    }
    let lenient = TrustPolicy { keys: vec![], allow_unsigned: true };
    let _ = signing::verify(&c.raw, &lenient, Some("acme"), now);

    // A pack signed here verifies, and no single byte of it can change.
    let mut component = b"\0asm\x0d\0\x01\0".to_vec();
    // A custom section of random content stands for the body.
    let body = wasm_encoder::CustomSection { name: "body".into(), data: c.body.as_slice().into() };
    use wasm_encoder::{Encode, Section};
    component.push(body.id());
    body.encode(&mut component);
    let m = Manifest {
        name: c.name,
        version: c.version,
        tenant: c.tenant.clone(),
        wit_version: pack_format::WIT_VERSION.into(),
        rule_ids: c.rule_ids,
        has_detect: false,
    };
    let unsigned = m.append_to(component);
    let expires = c.expires_in.map(|s| {
        let t = now + Duration::from_secs(3600 + u64::from(s));
        humantime::format_rfc3339_seconds(t).to_string()
    });
    let Ok(signed) = signing::sign(&unsigned, &key(), expires.as_deref(), &c.may_relax) else { return };
    let v = signing::verify(&signed, &policy, None, now).expect("a pack signed with a trusted key verifies");
    let sm = v.signed.expect("signed");
    assert_eq!((sm.may_relax, v.manifest.tenant), (c.may_relax, c.tenant));
    let at = c.flip.0 as usize % signed.len();
    let mut changed = signed.clone();
    changed[at] ^= c.flip.1.max(1);
    assert!(signing::verify(&changed, &policy, None, now).is_err(), "byte {at} changed and the pack still verified");
});

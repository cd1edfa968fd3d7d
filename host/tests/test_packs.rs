//! The shared signature test packs (target/test-packs, written by `make
//! test-packs` with this CLI): each case gets the refusal cases.json names,
//! the kind the JS and Go hosts' tests expect of the same file; the good
//! pack loads and redacts.

mod common;

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use result_sanitizer::signing::{self, PublicKey, Refusal, TrustPolicy};
use result_sanitizer::Error;
use serde_json::Value;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("target").join("test-packs")
}

/// cases.json and the trusted keys it names.
fn cases() -> (Value, Vec<PublicKey>) {
    let path = dir().join("cases.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run `make test-packs` first)", path.display()));
    let doc: Value = serde_json::from_str(&text).unwrap();
    let keys = doc["trusted_keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| PublicKey::read(&dir().join(k.as_str().unwrap())).unwrap())
        .collect();
    (doc, keys)
}

/// The spelling every host's tests and cases.json use for a refusal.
fn kind(r: &Refusal) -> &'static str {
    match r {
        Refusal::Malformed(_) => "malformed",
        Refusal::Unsigned => "unsigned",
        Refusal::IncompatibleWit { .. } => "incompatible_wit",
        Refusal::UntrustedKey { .. } => "untrusted_key",
        Refusal::Tampered(_) => "tampered",
        Refusal::Expired { .. } => "expired",
        Refusal::WrongTenant { .. } => "wrong_tenant",
    }
}

#[test]
fn every_shared_case_gets_the_kind_every_host_gives() {
    let (doc, keys) = cases();
    let tenant = doc["tenant"].as_str().unwrap();
    let list = doc["cases"].as_array().unwrap();
    assert!(list.len() >= 10, "{} cases", list.len());
    let s = common::sanitizer();
    for c in list {
        let file = c["file"].as_str().unwrap();
        let policy = TrustPolicy { keys: keys.clone(), allow_unsigned: c["allow_unsigned"].as_bool().unwrap_or(false) };
        let wasm = std::fs::read(dir().join(file)).unwrap();
        let got = match signing::verify(&wasm, &policy, Some(tenant), SystemTime::now()) {
            Ok(_) => "ok",
            Err(r) => kind(&r),
        };
        assert_eq!(got, c["expect"].as_str().unwrap(), "{file} (unsigned allowed: {})", policy.allow_unsigned);
        // The loading API refuses the same way (before compiling).
        let loaded = s.load_pack(&wasm, &policy, Some(tenant), None);
        match loaded {
            Ok(_) => assert_eq!(got, "ok", "{file} loaded"),
            Err(Error::Refused(r)) => assert_eq!(kind(&r), got, "{file} through load_pack"),
            Err(e) => panic!("{file}: not a refusal: {e}"),
        }
    }
}

#[test]
fn the_good_shared_pack_redacts_with_its_rule() {
    let (doc, keys) = cases();
    let policy = TrustPolicy { keys, allow_unsigned: false };
    let s = common::sanitizer();
    let wasm = std::fs::read(dir().join("good.wasm")).unwrap();
    let pack = s.load_pack(&wasm, &policy, doc["tenant"].as_str(), None).unwrap();
    assert_eq!(pack.manifest().name, "acme");
    let out = s.sanitize_with(&pack, doc["probe"]["input"].as_str().unwrap().as_bytes(), &common::opts("t")).unwrap();
    let v: Value = serde_json::from_str(&out.message).unwrap();
    assert_eq!(v["content"][0]["text"], doc["probe"]["output"]);
}

#[test]
fn the_platform_floor_and_a_grant_give_what_they_give_in_every_host() {
    let (doc, keys) = cases();
    let policy = TrustPolicy { keys, allow_unsigned: false };
    let s = common::sanitizer();
    let floor = &doc["floor"];
    let packs = floor["packs"].as_array().unwrap();
    assert!(packs.len() >= 2);
    for c in packs {
        let file = c["file"].as_str().unwrap();
        let wasm = std::fs::read(dir().join(file)).unwrap();
        let pack = s.load_pack(&wasm, &policy, doc["tenant"].as_str(), None).unwrap();
        let out = s.sanitize_with(&pack, floor["input"].as_str().unwrap().as_bytes(), &common::opts("t")).unwrap();
        let v = common::json(&out);
        assert_eq!(v["content"][0]["text"], c["output"], "{file}");
        assert_eq!(common::message_record(&v)["relaxed"], c["relaxed"], "{file}");
        assert_eq!(out.record.platform_name, "default");
    }
}

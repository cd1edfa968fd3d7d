//! The shared signature test packs (target/test-packs, written by `make
//! test-packs` with this CLI): each case gets the refusal cases.json names,
//! the kind the JS and Go hosts' tests expect of the same file; the good
//! pack loads and redacts.

mod common;

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use result_sanitizer_host::signing::{self, PublicKey, TrustPolicy};
use result_sanitizer_host::Error;
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
            Err(r) => r.kind(),
        };
        assert_eq!(got, c["expect"].as_str().unwrap(), "{file} (unsigned allowed: {})", policy.allow_unsigned);
        // The loading API refuses the same way (before compiling).
        let loaded = s.load_pack(&wasm, &policy, Some(tenant), None);
        match loaded {
            Ok(_) => assert_eq!(got, "ok", "{file} loaded"),
            Err(Error::Refused(r)) => assert_eq!(r.kind(), got, "{file} through load_pack"),
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

/// The verifier component (what the JS, Go and Python hosts run) gives
/// every shared case the native verdict and the native sentence: the same
/// code, built for wasm, run here in wasmtime through its JSON twin.
#[test]
fn the_verifier_component_gives_every_case_the_native_verdict_and_words() {
    use wasmtime::component::{Component, Linker};
    use wasmtime::{Engine, Store};

    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/components/verifier.wasm");
    let engine = Engine::default();
    let component = Component::from_file(&engine, &path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut store = Store::new(&engine, ());
    let instance = Linker::<()>::new(&engine).instantiate(&mut store, &component).expect("imports nothing");
    let iface = instance.get_export_index(&mut store, None, "result-sanitizer:core/pack-verifier@0.1.0").unwrap();
    let index = instance.get_export_index(&mut store, Some(&iface), "verify-json").unwrap();
    let verify_json = instance.get_typed_func::<(&[u8], &str), (String,)>(&mut store, &index).unwrap();

    let (doc, _) = cases();
    let tenant = doc["tenant"].as_str().unwrap();
    let key_texts: Vec<String> = doc["trusted_keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| std::fs::read_to_string(dir().join(k.as_str().unwrap())).unwrap())
        .collect();
    let keys: Vec<PublicKey> = key_texts.iter().map(|t| PublicKey::parse(t).unwrap()).collect();
    let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs();
    let mut checked = 0;
    for c in doc["cases"].as_array().unwrap() {
        let file = c["file"].as_str().unwrap();
        let allow_unsigned = c["allow_unsigned"].as_bool().unwrap_or(false);
        let wasm = std::fs::read(dir().join(file)).unwrap();
        let request = serde_json::json!({
            "trusted_keys": key_texts, "allow_unsigned": allow_unsigned,
            "tenant": tenant, "now_unix_seconds": now,
        })
        .to_string();
        let (answer,) = verify_json.call(&mut store, (&wasm, &request)).unwrap();
        let answer: Value = serde_json::from_str(&answer).unwrap();
        let policy = TrustPolicy { keys: keys.clone(), allow_unsigned };
        match signing::verify(&wasm, &policy, Some(tenant), SystemTime::now()) {
            Ok(v) => {
                assert_eq!(answer["Ok"]["manifest"], serde_json::to_value(&v.manifest).unwrap(), "{file}");
                assert_eq!(c["expect"], "ok", "{file}");
            }
            Err(r) => {
                assert_eq!(answer["Err"]["kind"], r.kind(), "{file}");
                assert_eq!(answer["Err"]["message"], r.to_string(), "{file}");
                assert_eq!(c["expect"], r.kind(), "{file}");
            }
        }
        checked += 1;
    }
    assert!(checked >= 10, "{checked} cases");
}

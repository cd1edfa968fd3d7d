//! Tenant packs: signing, every refusal, rotation, scoping, the registry,
//! a pack with code, isolation.

mod common;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use result_sanitizer_host::manifest::Manifest;
use result_sanitizer_host::registry::{Registry, RegistryConfig};
use result_sanitizer_host::signing::{self, Refusal, SecretKey, TrustPolicy};
use result_sanitizer_host::{Error, Limits, Sanitizer};
use result_sanitizer_pack_build::{self as pack_build, DetectCode, RulesFile};
use wasm_encoder::{BlockType, Instruction as I};

fn rules_for(tenant: &str, token_prefix: &str) -> String {
    format!(
        "[pack]\nname = \"{tenant}\"\nversion = \"1.0.0\"\ntenant = \"{tenant}\"\n\n[[rules]]\nid = \"{tenant}-token\"\n\
         regex = '\\b({token_prefix}_[a-f0-9]{{32}})\\b'\nkeywords = [\"{token_prefix}_\"]\nsecret_group = 1\n\
         examples = [\"t={token_prefix}_0123456789abcdef0123456789abcdef\"]\ncounter_examples = [\"{token_prefix}_x\"]\n"
    )
}

fn pack(tenant: &str, prefix: &str) -> Vec<u8> {
    let rf = RulesFile::parse("t.toml", &rules_for(tenant, prefix)).unwrap().over_defaults().unwrap();
    let id = rf.identity(None, None, None).unwrap();
    pack_build::build(&rf, &id).unwrap()
}

fn policy(keys: &[&SecretKey]) -> TrustPolicy {
    TrustPolicy { keys: keys.iter().map(|k| k.public()).collect(), allow_unsigned: false }
}

fn now() -> SystemTime {
    SystemTime::now()
}

#[test]
fn every_refusal_is_distinct_typed_and_happens_before_compiling() {
    let key = SecretKey::generate();
    let other = SecretKey::generate();
    let p = pack("acme", "acme");
    let signed = signing::sign(&p, &key, None, &[]).unwrap();
    let pol = policy(&[&key]);
    assert!(signing::verify(&signed, &pol, Some("acme"), now()).is_ok());

    // unsigned
    assert_eq!(signing::verify(&p, &pol, Some("acme"), now()).unwrap_err(), Refusal::Unsigned);
    let dev = TrustPolicy { allow_unsigned: true, ..pol.clone() };
    assert!(signing::verify(&p, &dev, Some("acme"), now()).is_ok(), "allowed explicitly for development");
    // tampered: one byte of the code
    let mut t = signed.clone();
    t[100] ^= 1;
    assert!(matches!(
        signing::verify(&t, &pol, Some("acme"), now()),
        Err(Refusal::Tampered(_) | Refusal::Malformed(_))
    ));
    // tampered: the signed manifest (tenant widened to "*")
    let mut w = signed.clone();
    let pat = b"\"tenant\":\"acme\",\"wit_version\"";
    let pos = signed.windows(pat.len()).rposition(|x| x == pat).unwrap();
    w.splice(pos..pos + "\"tenant\":\"acme\"".len(), b"\"tenant\":\"*\"   ".iter().copied());
    assert!(matches!(
        signing::verify(&w, &pol, Some("globex"), now()),
        Err(Refusal::Tampered(_) | Refusal::Malformed(_))
    ));
    // untrusted key
    let by_other = signing::sign(&p, &other, None, &[]).unwrap();
    assert!(matches!(signing::verify(&by_other, &pol, Some("acme"), now()), Err(Refusal::UntrustedKey { .. })));
    // another tenant
    assert_eq!(
        signing::verify(&signed, &pol, Some("globex"), now()).unwrap_err(),
        Refusal::WrongTenant { scope: "acme".into(), tenant: "globex".into() }
    );
    // expired
    let exp = signing::sign(&p, &key, Some("2026-01-01T00:00:00Z"), &[]).unwrap();
    assert!(matches!(signing::verify(&exp, &pol, Some("acme"), now()), Err(Refusal::Expired { .. })));
    let later = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000); // 2023
    assert!(signing::verify(&exp, &pol, Some("acme"), later).is_ok());
    // incompatible WIT version: rebuild the manifest section
    let m = Manifest::read(&p).unwrap().unwrap();
    let tail = m.append_to(Vec::new()).len();
    let mut old = m.clone();
    old.wit_version = "9.9.9".into();
    let wrong_wit = signing::sign(&old.append_to(p[..p.len() - tail].to_vec()), &key, None, &[]).unwrap();
    assert_eq!(
        signing::verify(&wrong_wit, &pol, Some("acme"), now()).unwrap_err(),
        Refusal::IncompatibleWit { found: "9.9.9".into() }
    );
    // garbage
    assert!(matches!(signing::verify(b"not wasm", &pol, None, now()), Err(Refusal::Malformed(_))));

    // Messages: one line each, all different.
    let msgs: Vec<String> = [
        Refusal::Unsigned,
        Refusal::Tampered("x".into()),
        Refusal::UntrustedKey { key_id: "k".into() },
        Refusal::WrongTenant { scope: "a".into(), tenant: "b".into() },
        Refusal::Expired { expires: "e".into() },
        Refusal::IncompatibleWit { found: "9".into() },
    ]
    .iter()
    .map(|r| r.to_string())
    .collect();
    assert!(msgs.iter().all(|m| !m.contains('\n')));
    let unique: std::collections::BTreeSet<_> = msgs.iter().collect();
    assert_eq!(unique.len(), msgs.len());

    // The host refuses the same way through its loading API.
    let s = common::sanitizer();
    let e = s.load_pack(&by_other, &pol, Some("acme"), None).unwrap_err();
    assert!(matches!(e, Error::Refused(Refusal::UntrustedKey { .. })), "{e}");
}

#[test]
fn several_trusted_keys_for_rotation() {
    let (k1, k2) = (SecretKey::generate(), SecretKey::generate());
    let p = pack("acme", "acme");
    let pol = policy(&[&k1, &k2]);
    for k in [&k1, &k2] {
        assert!(signing::verify(&signing::sign(&p, k, None, &[]).unwrap(), &pol, Some("acme"), now()).is_ok());
    }
    // Re-signing replaces the old signature.
    let twice = signing::sign(&signing::sign(&p, &k1, None, &[]).unwrap(), &k2, None, &[]).unwrap();
    assert_eq!(signing::read_signature(&twice).unwrap().unwrap().key_id, k2.public().key_id());
}

#[test]
fn registry_scopes_packs_caches_compiles_and_keeps_the_good_pack_on_a_bad_update() {
    let key = SecretKey::generate();
    let dir = common::tmpdir("registry");
    let cache = common::tmpdir("cache");
    std::fs::write(dir.join("acme.wasm"), signing::sign(&pack("acme", "acme"), &key, None, &[]).unwrap()).unwrap();
    std::fs::write(dir.join("globex.wasm"), signing::sign(&pack("globex", "globex"), &key, None, &[]).unwrap())
        .unwrap();
    let s = Arc::new(Sanitizer::new(Limits::default()).unwrap());
    let cfg = RegistryConfig { dir: dir.clone(), policy: policy(&[&key]), cache_dir: Some(cache.clone()), capacity: 1 };
    let reg = Registry::open(s.clone(), cfg.clone()).unwrap();
    assert_eq!(reg.tenants(), 2);
    let acme_token = "acme_0123456789abcdef0123456789abcdef";
    let globex_token = "globex_0123456789abcdef0123456789abcdef";
    let input = format!("{acme_token} {globex_token} AKIAQ3EGRTZ7MBXK4WNP");
    let o = common::opts("x");
    let a = reg.sanitize("acme", input.as_bytes(), &o).unwrap().message;
    assert!(a.contains("[REDACTED:acme-token]") && a.contains(globex_token), "acme's pack, acme's format only");
    assert!(a.contains("[REDACTED:aws-access-key-id]"), "tenant packs extend the defaults");
    let g = reg.sanitize("globex", input.as_bytes(), &o).unwrap().message;
    assert!(g.contains(acme_token) && g.contains("[REDACTED:globex-token]"), "no acme rule reaches globex");
    // A tenant without a pack gets the default pack.
    let d = reg.sanitize("initech", input.as_bytes(), &o).unwrap().message;
    assert!(d.contains(acme_token) && d.contains(globex_token) && d.contains("[REDACTED:aws-access-key-id]"));
    // Compiled once, cached on disk by sha256 under an engine-keyed directory.
    let cached: Vec<_> = walk(&cache).into_iter().filter(|p| p.extension().is_some_and(|e| e == "cwasm")).collect();
    assert_eq!(cached.len(), 2, "{cached:?}");
    // A second host reuses the cache (capacity 1 also evicted and reloaded above).
    let reg2 = Registry::open(s.clone(), cfg).unwrap();
    assert!(reg2.sanitize("acme", input.as_bytes(), &o).unwrap().message.contains("[REDACTED:acme-token]"));

    // A refused update leaves the previous good pack active.
    let mut bad = signing::sign(&pack("acme", "zzz"), &key, None, &[]).unwrap();
    let n = bad.len();
    bad[n / 2] ^= 0x55;
    assert!(reg.update("acme", &bad).is_err());
    let expired = signing::sign(&pack("acme", "zzz"), &key, Some("2020-01-01T00:00:00Z"), &[]).unwrap();
    assert!(matches!(reg.update("acme", &expired), Err(Error::Refused(Refusal::Expired { .. }))));
    assert!(reg.sanitize("acme", input.as_bytes(), &o).unwrap().message.contains("[REDACTED:acme-token]"));
    // A good update takes over.
    reg.update("acme", &signing::sign(&pack("acme", "zzz"), &key, None, &[]).unwrap()).unwrap();
    let a2 = reg.sanitize("acme", b"zzz_0123456789abcdef0123456789abcdef", &o).unwrap().message;
    assert!(a2.contains("[REDACTED:acme-token]"));
}

fn walk(d: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(d).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_trap_in_one_tenants_pack_does_not_touch_another() {
    let key = SecretKey::generate();
    let dir = common::tmpdir("isolation");
    let rf = RulesFile::parse("h.toml", "[pack]\nname='spinner'\nversion='1'\ntenant='evil'\n").unwrap();
    let id = rf.identity(None, None, None).unwrap();
    let body = vec![I::Loop(BlockType::Empty), I::Br(0), I::End, I::Unreachable, I::End];
    let hostile = pack_build::build_with_code(&rf, &id, Some(DetectCode { locals: vec![], body })).unwrap();
    std::fs::write(dir.join("evil.wasm"), signing::sign(&hostile, &key, None, &[]).unwrap()).unwrap();
    std::fs::write(dir.join("acme.wasm"), signing::sign(&pack("acme", "acme"), &key, None, &[]).unwrap()).unwrap();
    let s = Arc::new(Sanitizer::new(Limits { pack_fuel: 10_000_000, ..Limits::default() }).unwrap());
    let reg = Registry::open(s, RegistryConfig { dir, policy: policy(&[&key]), cache_dir: None, capacity: 8 }).unwrap();
    let o = common::opts("x");
    std::thread::scope(|sc| {
        for i in 0..4 {
            let (reg, o) = (&reg, o.clone());
            sc.spawn(move || {
                let e = reg.sanitize("evil", b"text", &o).unwrap_err();
                assert!(matches!(e, Error::Fuel { .. }), "{e}");
                let ok =
                    reg.sanitize("acme", format!("{i} acme_0123456789abcdef0123456789abcdef").as_bytes(), &o).unwrap();
                assert!(ok.message.contains("[REDACTED:acme-token]"));
                assert!(!ok.message.contains("spinner"), "no state from another tenant");
            });
        }
    });
}

#[test]
fn a_pack_with_code_from_the_rust_template() {
    let core = common::pack_template_core();
    let s = common::sanitizer();
    let wasm = s.wrap_pack_core(&core).unwrap();
    let m = Manifest::read(&wasm).unwrap().unwrap();
    assert!(m.has_detect && m.tenant == "acme" && m.name == "acme-code");
    let key = SecretKey::generate();
    let pack =
        s.load_pack(&signing::sign(&wasm, &key, None, &[]).unwrap(), &policy(&[&key]), Some("acme"), None).unwrap();
    let head = "acme_live_ABCDEFGHIJKLMNOPQRSTUVWX";
    let good = format!("{head}{:08x}", crc32(head.as_bytes()));
    let bad = format!("{head}deadbeef");
    let out = s.sanitize_with(&pack, format!("good {good} bad {bad}").as_bytes(), &common::opts("x")).unwrap();
    let text = common::visible_text(&out, result_sanitizer_host::api::OutputFormat::Mcp);
    assert_eq!(text, format!("good [REDACTED:acme-live-token] bad {bad}"));
}

/// One pack on both imports (no tenant pack: the CLI's default; an
/// operator's pack serving as its own tenant) is one layer. The host
/// answers the tenant import as an empty layer instead of lifting the rule
/// set a second time; the result is byte for byte the one the pipeline
/// makes when it finds the same pack on both imports itself (a signed
/// copy: other bytes, the same rules and code). A pack of rules and one of
/// code.
#[test]
fn one_pack_on_both_imports_is_one_layer() {
    let core = common::pack_template_core();
    let mut s = Sanitizer::new(Limits::default()).unwrap();
    let rf = RulesFile::defaults().unwrap();
    let rules = pack_build::build(&rf, &rf.identity(None, None, None).unwrap()).unwrap();
    let code = s.wrap_pack_core(&core).unwrap();
    let head = "acme_live_ABCDEFGHIJKLMNOPQRSTUVWX";
    let input = format!(
        "live {head}{:08x}\naws AKIA{}\nDB_PASSWORD={}\n",
        crc32(head.as_bytes()),
        "Z7QX4MBN2KT5WYHR",
        "Xk9mQ2vLp7zzR4"
    );
    let key = SecretKey::generate();
    for (wasm, name, found) in [(rules, "default", "aws-access-key-id"), (code, "acme-code", "acme-live-token")] {
        let platform = Arc::new(s.load_pack_unverified(&wasm).unwrap());
        s.set_platform_pack(platform.clone());
        let copy = s.load_pack(&signing::sign(&wasm, &key, None, &[]).unwrap(), &policy(&[&key]), Some("acme"), None);
        let copy = copy.unwrap();
        let one = s.sanitize_with(&platform, input.as_bytes(), &common::opts("x")).unwrap();
        let two = s.sanitize_with(&copy, input.as_bytes(), &common::opts("x")).unwrap();
        assert_eq!(common::json(&one), common::json(&two), "{name}");
        assert_eq!((one.record.pack_name.as_str(), one.record.platform_name.as_str()), (name, name));
        let text = common::visible_text(&one, result_sanitizer_host::api::OutputFormat::Mcp);
        assert_eq!(text.matches(&format!("[REDACTED:{found}]")).count(), 1, "{name}: {text}");
    }
}

/// The platform's pack answers `info`, `rules` and `has-detect` once; a
/// later tenant's instance is made without an instance of it, unless it has
/// `detect`: then every tenant's instance has one, and its `detect` runs for
/// each. Three tenants in turn under a platform pack with code, and under one
/// of data alone (the default pack).
#[test]
fn a_platform_packs_answers_serve_every_tenant_and_its_detect_runs_for_each() {
    let core = common::pack_template_core();
    let key = SecretKey::generate();
    let head = "acme_live_ABCDEFGHIJKLMNOPQRSTUVWX";
    let input = format!("live {head}{:08x}\naws AKIA{}\n", crc32(head.as_bytes()), "Z7QX4MBN2KT5WYHR");
    for code in [true, false] {
        let mut s = Sanitizer::new(Limits::default()).unwrap();
        if code {
            let wasm = s.wrap_pack_core(&core).unwrap();
            s.set_platform_pack(Arc::new(s.load_pack_unverified(&wasm).unwrap()));
        }
        for (i, tenant) in ["t-one", "t-two", "t-three"].into_iter().enumerate() {
            let wasm = signing::sign(&pack(tenant, &format!("x{i}")), &key, None, &[]).unwrap();
            let p = s.load_pack(&wasm, &policy(&[&key]), Some(tenant), None).unwrap();
            let out = s.sanitize_with(&p, input.as_bytes(), &common::opts("x")).unwrap();
            let text = common::visible_text(&out, result_sanitizer_host::api::OutputFormat::Mcp);
            let found = if code { "acme-live-token" } else { "aws-access-key-id" };
            assert!(text.contains(&format!("[REDACTED:{found}]")), "{tenant}, code {code}: {text}");
            assert_eq!(out.record.platform_name, if code { "acme-code" } else { "default" });
        }
    }
}

/// The embedded default pack's sha256, computed when the binary is built
/// (its identity as a platform pack), is its bytes'.
#[test]
fn the_embedded_default_packs_hash_is_its_bytes() {
    let art = result_sanitizer_host::artifacts().expect("components embedded by `make build`");
    assert_eq!(art.pack_wasm_sha, result_sanitizer_host::digest::sha256_hex(art.pack_wasm));
}

/// CRC-32 (IEEE), bitwise: an independent check of the template's checksum.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

#[test]
fn no_single_byte_change_of_a_signed_pack_is_accepted_or_panics() {
    let key = SecretKey::generate();
    let signed = signing::sign(&pack("acme", "acme"), &key, None, &[]).unwrap();
    let pol = policy(&[&key]);
    for (i, bit) in (0..signed.len()).flat_map(|i| [(i, 0x01), (i, 0x20)]) {
        let mut t = signed.clone();
        t[i] ^= bit;
        assert!(
            signing::verify(&t, &pol, Some("acme"), now()).is_err(),
            "byte {i} of {} changed and the pack verified: {:?}",
            signed.len(),
            String::from_utf8_lossy(&signed[i.saturating_sub(20)..(i + 20).min(signed.len())])
        );
    }
    for cut in [1, 10, 100, signed.len() / 2] {
        assert!(signing::verify(&signed[..signed.len() - cut], &pol, Some("acme"), now()).is_err());
    }
}

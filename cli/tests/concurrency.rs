//! Concurrency: 8 threads × 50 tenants × thousands of calls through one
//! host, no errors, no cross-tenant data, stable memory. In its own test
//! binary so that no other test's allocations move the RSS it measures.

mod common;

use std::sync::Arc;

use result_sanitizer_host::registry::{Registry, RegistryConfig};
use result_sanitizer_host::signing::{self, SecretKey, TrustPolicy};
use result_sanitizer_host::{Limits, Sanitizer};
use result_sanitizer_pack_build::{self as pack_build, RulesFile};

#[test]
fn eight_threads_fifty_tenants_no_cross_tenant_data_and_stable_memory() {
    let key = SecretKey::generate();
    let dir = std::env::temp_dir().join(format!("rs-concurrency-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    const TENANTS: usize = 50;
    for t in 0..TENANTS {
        let rules = format!(
            "[pack]\nname = \"t{t}\"\nversion = \"1\"\ntenant = \"t{t}\"\n\n[[rules]]\nid = \"t{t}-token\"\n\
             regex = '\\b(tk{t}x[a-f0-9]{{32}})\\b'\nkeywords = [\"tk{t}x\"]\nsecret_group = 1\n\
             examples = [\"tk{t}x0123456789abcdef0123456789abcdef\"]\ncounter_examples = [\"tk{t}x\"]\n"
        );
        let rf = RulesFile::parse("t.toml", &rules).unwrap();
        let id = rf.identity(None, None, None).unwrap();
        let wasm = signing::sign(&pack_build::build(&rf, &id).unwrap(), &key, None, &[]).unwrap();
        std::fs::write(dir.join(format!("t{t}.wasm")), wasm).unwrap();
    }
    let s = Arc::new(Sanitizer::new(Limits::default()).unwrap());
    let cfg = RegistryConfig {
        dir,
        policy: TrustPolicy { keys: vec![key.public()], allow_unsigned: false },
        cache_dir: None,
        capacity: TENANTS,
    };
    let reg = Registry::open(s, cfg).unwrap();
    let round = |calls: usize| {
        std::thread::scope(|sc| {
            for th in 0..8 {
                let reg = &reg;
                sc.spawn(move || {
                    for i in 0..calls {
                        let t = (th * 7 + i) % TENANTS;
                        let other = (t + 1) % TENANTS;
                        let input = format!("mine tk{t}x0123456789abcdef0123456789abcdef theirs tk{other}x0123456789abcdef0123456789abcdef call {i}");
                        let out = reg.sanitize(&format!("t{t}"), input.as_bytes(), &common::opts("x")).unwrap();
                        assert!(out.message.contains(&format!("[REDACTED:t{t}-token]")), "own rule applies");
                        assert!(out.message.contains(&format!("tk{other}x0123")), "another tenant's rule does not");
                        assert!(!out.message.contains(&format!("t{other}-token")));
                    }
                });
            }
        })
    };
    // Each tenant's pool grows to the most calls it ever served at once
    // (at most 8 here), so memory settles once the pools have: warm up,
    // then compare two equal rounds. An instance holds the platform's
    // rules as well as the tenant's, so a pool growing late costs more
    // than a leak would: the warm-up is long.
    round(100);
    round(400);
    round(400);
    round(400);
    // A leak of a few KiB per call would show as tens of MiB in each
    // round of 3 200 calls. A pool that grows late (two threads meeting at
    // a tenant for the first time, which timing decides) grows it in one
    // round only, by an instance or a few: a round is measured up to three
    // times, and one under the bound settles it.
    let mut grew = Vec::new();
    for _ in 0..3 {
        let before = rss_kib();
        round(400);
        let after = rss_kib();
        if after < before + 16 * 1024 {
            return;
        }
        grew.push((before, after));
    }
    panic!("RSS grew by 16 MiB or more in each of three rounds of 3200 calls (KiB before, after): {grew:?}");
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

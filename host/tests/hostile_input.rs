//! Hostile and odd input through the real pipeline component, and many
//! tenants hammering one host from several threads.

mod common;

use std::sync::Arc;

use common::*;
use result_sanitizer::api::{InputKind, OutputFormat};
use result_sanitizer::pack_build::{self, RulesFile};
use result_sanitizer::registry::{Registry, RegistryConfig};
use result_sanitizer::signing::{self, SecretKey, TrustPolicy};
use result_sanitizer::{Error, Limits, Sanitizer};

#[test]
fn deeply_nested_and_huge_mcp_json_are_typed_errors_or_bounded() {
    let mut o = opts("x");
    o.input = InputKind::Mcp;
    let deep = format!("{{\"content\": [{{\"type\": \"text\", \"text\": \"a\"}}], \"structuredContent\": {}{}}}", "[".repeat(100_000), "]".repeat(100_000));
    let e = sanitizer().sanitize(deep.as_bytes(), &o).unwrap_err();
    assert!(matches!(e, Error::InvalidInput(_)), "{e}");
    let items: Vec<String> = (0..1_000_000).map(|i| i.to_string()).collect();
    let big = format!("{{\"content\": [{{\"type\": \"text\", \"text\": \"ok\"}}], \"structuredContent\": {{\"items\": [{}]}}}}", items.join(","));
    let out = sanitizer().sanitize(big.as_bytes(), &o).unwrap();
    let v = json(&out);
    // Over its share of the budget: thinned, still JSON, first and last kept.
    let items = v["structuredContent"]["items"].as_array().expect("still an array");
    assert_eq!((items.first(), items.last()), (Some(&serde_json::json!(0)), Some(&serde_json::json!(999_999))));
    let note = items[items.len() - 2].as_str().unwrap();
    assert!(note.starts_with("[truncated: ") && note.contains("items omitted"), "{note}");
    assert!(v["content"][0]["text"].as_str().unwrap().contains("structuredContent thinned"));
    let cut = out.record.structure.as_ref().unwrap().items;
    assert_eq!(cut as usize, 1_000_000 - (items.len() - 1));
}

#[test]
fn crlf_mixed_newlines_and_nul_heavy_input() {
    let input = "line one\r\nline two\rline three\nDB_PASSWORD=Zq8vR2mK7tLw\r\n";
    let out = sanitizer().sanitize(input.as_bytes(), &opts("x")).unwrap();
    let text = visible_text(&out, OutputFormat::Mcp);
    assert!(!text.contains("Zq8vR2mK7tLw") && text.contains("line one\r\nline two\rline three\n"));
    let mut bin = vec![0u8; 10_000];
    bin.extend_from_slice(b"AKIAQ3EGRTZ7MBXK4WNP");
    let out = sanitizer().sanitize(&bin, &opts("x")).unwrap();
    assert!(out.is_error && !out.message.contains("AKIA"));
}

#[test]
fn zero_width_and_bidi_characters_do_not_break_the_pipeline() {
    // Invisible characters inside a secret do not split it for matching.
    let input = "token ghp_4kLm9Pq2Rt7Vx3Yz\u{200B}6Ab1Cd5Ef0Gh2Ij4Kl6M \u{202E}desrever\u{202C} ok and A\u{200D}KIAQ3EGRTZ7MBXK\u{2060}4WNP";
    let out = sanitizer().sanitize(input.as_bytes(), &opts("x")).unwrap();
    assert!(!out.is_error);
    let text = visible_text(&out, OutputFormat::Mcp);
    assert_eq!(text, "token [REDACTED:github-token] \u{202E}desrever\u{202C} ok and [REDACTED:aws-access-key-id]");
    // Streaming redaction too.
    let s = sanitizer();
    let mut out = Vec::new();
    result_sanitizer::io::redact_stream(s, s.default_pack(), input.as_bytes(), &mut out, 1 << 16).unwrap();
    assert!(!String::from_utf8_lossy(&out).contains("6Ab1Cd5Ef0Gh2Ij4Kl6M"));
}

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
        let wasm = signing::sign(&pack_build::build(&rf, &id).unwrap(), &key, None).unwrap();
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
    round(100); // warm every tenant's instance
    let before = rss_kib();
    round(400);
    let after = rss_kib();
    assert!(after < before + before / 5, "RSS grew from {before} KiB to {after} KiB over 3200 calls");
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

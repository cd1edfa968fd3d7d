//! Shared pieces of the fuzz targets: the real default rules, planted
//! secrets, and the invariants every target asserts.
//!
//! The rules are the default pack's, as `xtask` writes them to
//! `target/components/default-rules.json` (run `make build` first; the
//! `fuzz` make target does).

use std::sync::OnceLock;

use result_sanitizer_rule_engine::api::{OutputFormat, Sanitized};
use result_sanitizer_rule_engine::pack_api::{PackInfo, RuleSet};
use result_sanitizer_rule_engine::{CompiledPack, StaticRules};

/// Synthetic secrets in real provider formats that the default pack
/// redacts wherever they stand between separators. Plants are always
/// surrounded by a space and a newline, so word boundaries hold.
pub const SECRETS: &[&str] = &[
    "AKIAQ3EGRTZ7MBXK4WNP",
    "ghp_4kLm9Pq2Rt7Vx3Yz6Ab1Cd5Ef0Gh2Ij4Kl6M",
    "sk_live_51Hq8vR2mK7tLw3Yx9bN1cF4hJ6pD0",
    "xoxb-2Tq9mV4kL7pR3wX8zN1cF5hJ",
];

/// The default pack, compiled once per fuzzing process.
pub fn pack() -> &'static CompiledPack {
    static PACK: OnceLock<CompiledPack> = OnceLock::new();
    PACK.get_or_init(|| {
        let json = include_str!("../../target/components/default-rules.json");
        let rules: RuleSet = serde_json::from_str(json).expect("default-rules.json is a rule-set");
        let info = PackInfo {
            name: "default".into(),
            version: "fuzz".into(),
            tenant: "*".into(),
            wit_version: "0.1.0".into(),
            description: String::new(),
        };
        CompiledPack::new(Box::new(StaticRules { info, rules })).expect("default rules compile")
    })
}

/// Inserts secrets into `data` at the given positions (taken modulo the
/// length), each as ` SECRET\n`. Returns the new bytes.
pub fn plant(data: &[u8], at: &[(u16, u8)]) -> Vec<u8> {
    let mut points: Vec<(usize, &str)> =
        at.iter().take(8).map(|&(p, k)| (p as usize % (data.len() + 1), SECRETS[k as usize % SECRETS.len()])).collect();
    points.sort();
    let mut out = Vec::with_capacity(data.len() + points.len() * 48);
    let mut pos = 0;
    for (p, s) in points {
        out.extend_from_slice(&data[pos..p]);
        out.extend_from_slice(format!(" {s}\n").as_bytes());
        pos = p;
    }
    out.extend_from_slice(&data[pos..]);
    out
}

/// Text blocks a model would see in a message.
pub fn visible(message: &str, format: OutputFormat) -> String {
    let v: serde_json::Value = serde_json::from_str(message).expect("the message is JSON");
    let blocks = match format {
        OutputFormat::Mcp => &v["content"],
        OutputFormat::Openai => return v["message"]["content"].as_str().expect("content string").to_string(),
        OutputFormat::Anthropic => &v["message"]["content"],
    };
    blocks.as_array().expect("content array").iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n")
}

/// The invariants of one sanitized message: valid JSON of the requested
/// shape, the exact token count of what the model sees within the budget
/// applied (and that within the budget asked for), and no secret.
pub fn check_sanitized(out: &Sanitized, format: OutputFormat, asked_tokens: Option<u32>) {
    let text = visible(&out.message, format);
    let budget = out.record.budget.max_tokens;
    if let Some(t) = asked_tokens {
        assert!(budget <= t, "budget {budget} > asked {t}");
    }
    let n = tiktoken_rs::o200k_base_singleton().encode_ordinary(&text).len();
    assert!(n <= budget as usize, "{n} tokens > budget {budget}");
    if let Some(counted) = out.record.output_tokens {
        assert!(counted <= u64::from(budget));
    }
    for s in SECRETS {
        assert!(!standalone(&out.message, s), "a planted secret survived");
    }
}

/// Whether `secret` occurs in `text` as a token of its own. The fuzzer also
/// writes the secrets glued into words (`emAKIA…s`, learnt from the
/// comparisons it traces); rules match provider formats at word boundaries,
/// as gitleaks does, so such a string is not that secret. Planted secrets
/// (` SECRET\n`) always stand alone.
pub fn standalone(text: &str, secret: &str) -> bool {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    text.match_indices(secret)
        .any(|(i, _)| !word(text[..i].chars().next_back()) && !word(text[i + secret.len()..].chars().next()))
}

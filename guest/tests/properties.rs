//! Properties of the pipeline's native build, for any input and policy:
//! no panic, valid UTF-8 and JSON out, the token budget holds (exact
//! count), no planted secret survives, streaming equals one-shot redaction.

use proptest::prelude::*;
use result_sanitizer_pipeline::api::{Encoding, OutputFormat, RedactRequest};
use result_sanitizer_pipeline::options::default_options;
use result_sanitizer_pipeline::pack::{CompiledPack, StaticRules};
use result_sanitizer_pipeline::pack_api::{PackInfo, Rule, RuleKind, RuleSet};
use result_sanitizer_pipeline::{sanitize, stream};

const SECRET: &str = "ghp_4kLm9Pq2Rt7Vx3Yz6Ab1Cd5Ef0Gh2Ij4Kl6M";

fn pack() -> CompiledPack {
    let rule = |id: &str, regex: &str, kw: &str| Rule {
        id: id.into(),
        description: String::new(),
        kind: RuleKind::Secret,
        regex: regex.into(),
        keywords: vec![kw.into()],
        secret_group: 1,
        entropy: None,
        window: 0,
        allow_regexes: vec![],
        stopwords: vec![],
        strict_only: false,
    };
    let rules = RuleSet {
        rules: vec![
            rule("github-token", r"\b(ghp_[A-Za-z0-9]{36})\b", "ghp_"),
            rule("password", r"(?i)password=(\S{6,})", "password"),
        ],
        allow_regexes: vec![],
        stopwords: vec![],
        path_roots: vec![],
        budgets: vec![],
        lenient_tools: vec![],
    };
    let info = PackInfo { name: "p".into(), version: "1".into(), tenant: "*".into(), wit_version: "0.1.0".into(), description: String::new() };
    CompiledPack::new(Box::new(StaticRules { info, rules })).unwrap()
}

fn visible(message: &str, format: OutputFormat) -> String {
    let v: serde_json::Value = serde_json::from_str(message).expect("valid JSON");
    let content = match format {
        OutputFormat::Mcp => &v["content"],
        OutputFormat::Openai => return v["message"]["content"].as_str().unwrap().to_string(),
        OutputFormat::Anthropic => &v["message"]["content"],
    };
    content.as_array().unwrap().iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n")
}

fn text_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..6000),
        "[a-z0-9 \\n€😀=_]{0,9000}".prop_map(String::into_bytes),
        ("[a-z \\n]{0,3000}", "[a-z \\n]{0,3000}", 1usize..5).prop_map(|(a, b, n)| {
            let mut s = a;
            for _ in 0..n {
                s.push_str(" ");
                s.push_str(SECRET);
                s.push_str(" password=hunter2hunter2 ");
            }
            s.push_str(&b);
            s.into_bytes()
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn sanitize_holds_its_invariants(
        input in text_strategy(),
        max_tokens in 256u32..3000,
        max_chars in 1024u32..20000,
        max_bytes in 1024u64..20000,
        format in prop_oneof![Just(OutputFormat::Mcp), Just(OutputFormat::Openai), Just(OutputFormat::Anthropic)],
        untrusted in any::<bool>(),
    ) {
        let p = pack();
        let mut o = default_options();
        o.tool = "t".into();
        o.max_tokens = Some(max_tokens);
        o.max_chars = Some(max_chars);
        o.max_bytes = Some(max_bytes);
        o.format = format;
        o.untrusted = untrusted;
        let out = sanitize(&input, &o, &p).expect("valid options always produce a message");
        let text = visible(&out.message, format);
        let n = tiktoken_rs::o200k_base_singleton().encode_ordinary(&text).len();
        prop_assert!(n <= max_tokens as usize, "{} tokens > {}", n, max_tokens);
        prop_assert!(!out.message.contains(SECRET));
        prop_assert!(!out.message.contains("hunter2hunter2"));
        prop_assert_eq!(out.record.encoding, Encoding::O200kBase);
    }

    #[test]
    fn streaming_redaction_equals_one_shot(input in text_strategy(), cuts in proptest::collection::vec(1usize..200_000, 0..6)) {
        let p = pack();
        let one = stream::step(&RedactRequest { data: input.clone(), last: true }, &p).unwrap().output;
        let mut out = Vec::new();
        let mut carry = Vec::new();
        let mut pos = 0;
        let mut points: Vec<usize> = cuts.into_iter().map(|c| c % (input.len() + 1)).collect();
        points.sort();
        points.push(input.len());
        for (i, &end) in points.iter().enumerate() {
            let end = end.max(pos);
            carry.extend_from_slice(&input[pos..end]);
            pos = end;
            let last = i + 1 == points.len();
            let r = stream::step(&RedactRequest { data: carry.clone(), last }, &p).unwrap();
            out.extend_from_slice(&r.output);
            carry.drain(..r.consumed as usize);
        }
        prop_assert!(out == one, "chunked output differs");
        prop_assert!(!String::from_utf8_lossy(&out).contains(SECRET));
    }
}

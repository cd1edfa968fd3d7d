//! Properties of the pipeline's native build, for any input and policy:
//! no panic, valid UTF-8 and JSON out, the token budget holds (exact
//! count), no planted secret survives, streaming equals one-shot redaction,
//! head + tail with a drained middle keeps the whole output's positions.

use proptest::prelude::*;
use result_sanitizer_pipeline::api::{Encoding, OutputFormat, RedactRequest};
use result_sanitizer_pipeline::pack_api::{PackInfo, Rule, RuleKind, RuleSet};
use result_sanitizer_pipeline::{default_options, redact_request};
use result_sanitizer_pipeline::{drain_step, redact_step, sanitize};
use result_sanitizer_pipeline::{CompiledPack, StaticRules};

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
        errors_only: false,
        replacement: None,
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
        generic: Default::default(),
        scrub_tools: vec![],
        readable_roots: vec![],
        relax: vec![],
        pii_tools: vec![],
    };
    let info = PackInfo {
        name: "p".into(),
        version: "1".into(),
        tenant: "*".into(),
        wit_version: "0.1.0".into(),
        description: String::new(),
    };
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
                s.push(' ');
                s.push_str(SECRET);
                s.push_str(" password=hunter2hunter2 ");
            }
            s.push_str(&b);
            s.into_bytes()
        }),
        // Source code past the 16 KiB a sniffing stream reads first.
        (300usize..900, 0usize..300).prop_map(|(n, at)| {
            let mut s = String::new();
            for i in 0..n {
                s.push_str(&format!("fn f{i}(x: u32) -> u32 {{\n    let y = x + {i};\n    y\n}}\n"));
                if i == at {
                    s.push_str(&format!("const KEY: &str = \"{SECRET}\";\n"));
                }
            }
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
    fn streaming_redaction_equals_one_shot(input in text_strategy(), cuts in proptest::collection::vec(1usize..200_000, 0..6), sniff in any::<bool>()) {
        let p = pack();
        // With `sniff`, the host carries the judgment as the WIT says: the
        // output must not depend on where the chunks end either.
        let one = redact_step(&RedactRequest { sniff, ..redact_request(input.clone(), true) }, &p).unwrap().output;
        let mut out = Vec::new();
        let mut carry = Vec::new();
        let mut pos = 0;
        let mut points: Vec<usize> = cuts.into_iter().map(|c| c % (input.len() + 1)).collect();
        points.sort();
        points.push(input.len());
        let (mut sniffing, mut content_type) = (sniff, None);
        for (i, &end) in points.iter().enumerate() {
            let end = end.max(pos);
            carry.extend_from_slice(&input[pos..end]);
            pos = end;
            let last = i + 1 == points.len();
            let req = RedactRequest { sniff: sniffing, content_type: content_type.clone(), ..redact_request(carry.clone(), last) };
            let r = redact_step(&req, &p).unwrap();
            if let Some(t) = r.content_type {
                sniffing = false;
                content_type = Some(t).filter(|t| !t.is_empty());
            }
            out.extend_from_slice(&r.output);
            carry.drain(..r.consumed as usize);
        }
        prop_assert!(out == one, "chunked output differs");
        prop_assert!(!String::from_utf8_lossy(&out).contains(SECRET));
    }
}

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::{json, Value};
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "[a-zA-Z0-9 ,:\\[\\]{}\"\\\\é😀]{0,300}".prop_map(Value::String),
        Just(Value::String(format!("key {SECRET} here"))),
    ];
    leaf.prop_recursive(6, 3000, 40, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..120).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z_]{1,12}", inner, 0..30)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Any JSON document comes out as valid JSON within the token budget,
    /// with no planted secret, whatever it had to cut.
    #[test]
    fn any_json_input_yields_valid_json_within_the_budget(
        v in json_value(),
        max_tokens in 256u32..2500,
        pretty in any::<bool>(),
    ) {
        let p = pack();
        let mut o = default_options();
        o.tool = "api".into();
        o.max_tokens = Some(max_tokens);
        o.max_bytes = Some(8 << 20);
        let input = if pretty { serde_json::to_vec_pretty(&v).unwrap() } else { serde_json::to_vec(&v).unwrap() };
        let out = sanitize(&input, &o, &p).expect("a message");
        let text = visible(&out.message, OutputFormat::Mcp);
        let back: serde_json::Value = serde_json::from_str(&text).map_err(|e| TestCaseError::fail(format!("not JSON: {e}\n{text}")))?;
        let _ = back;
        let n = tiktoken_rs::o200k_base_singleton().encode_ordinary(&text).len();
        prop_assert!(n <= max_tokens as usize, "{} tokens > {}", n, max_tokens);
        prop_assert!(!out.message.contains(SECRET));
    }
}

/// Text built from the characters that decide piece and token boundaries:
/// letters of both cases, digits (ASCII and of other scripts), apostrophes
/// (contractions), spaces and newlines, punctuation and multi-byte text,
/// in runs long enough to cross the tokenizer's chunk size.
fn token_text() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        "[a-z]{1,12}",
        "[A-Z]{1,12}",
        "[0-9]{1,9}",
        Just("'".to_string()),
        Just("'t".to_string()),
        Just("'RE".to_string()),
        "[ \n\t]{1,4}",
        "[-_./:=,;\\[\\]{}()\"]{1,3}",
        "[²٣½é中😀]{1,2}",
    ];
    proptest::collection::vec(atom, 0..2500).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// The bound that lets the pipeline skip tokenizing never undercounts.
    #[test]
    fn token_bound_is_never_below_the_count(s in token_text()) {
        use result_sanitizer_pipeline::{count_tokens, token_upper_bound as upper_bound};
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let n = count_tokens(enc, &s);
            let b = upper_bound(enc, &s);
            prop_assert!(n <= b, "{enc:?}: count {n} > bound {b}");
            prop_assert!(b <= s.len());
        }
    }

    /// Proving a fit reads only part of a text, and answers as the whole
    /// bound does, split anywhere and around the bound.
    #[test]
    fn token_bound_fits_answers_as_the_bound(s in token_text(), cut in 0usize..5000, off in 0usize..60) {
        use result_sanitizer_pipeline::{token_bound_fits, token_upper_bound as upper_bound};
        let at = (0..=cut.min(s.len())).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
        let parts = [&s[..at], &s[at..]];
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let sum = upper_bound(enc, parts[0]) + upper_bound(enc, parts[1]);
            for budget in [sum.saturating_sub(off), sum + off] {
                prop_assert_eq!(token_bound_fits(enc, &parts, budget), sum <= budget, "{:?}, budget {}", enc, budget);
            }
        }
    }
}

/// A long log: lines of varied length and alphabet (multi-byte, invalid
/// bytes), error lines and secrets here and there, maybe no final newline.
fn long_log() -> impl Strategy<Value = Vec<u8>> {
    (200usize..12_000, any::<u64>(), any::<bool>()).prop_map(|(lines, seed, final_nl)| {
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut out = Vec::new();
        for i in 0..lines {
            match next() % 40 {
                0 => out.extend_from_slice(format!("error: step {i} failed, token {SECRET}").as_bytes()),
                1 => out.extend_from_slice("thread panicked: é€😀".as_bytes()),
                2 => out.extend_from_slice(b"raw \xff\xfe bytes"),
                3 => out.extend_from_slice(&vec![b'x'; (next() % 3000) as usize]),
                _ => out.extend_from_slice(format!("   Compiling unit {i} ({})", next() % 1000).as_bytes()),
            }
            if i + 1 < lines || final_nl {
                out.push(b'\n');
            }
        }
        out
    })
}

/// Line number (from 1) of byte `at` of `input`.
fn line_at(input: &[u8], at: u64) -> u64 {
    input[..at as usize].iter().filter(|&&b| b == b'\n').count() as u64 + 1
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// A host reads head + tail and drains the middle in steps of any size:
    /// the kept and omitted spans tile the whole output exactly, their line
    /// numbers are the output's, and no secret of the middle shows.
    #[test]
    fn head_tail_positions_are_those_of_the_whole_output(
        input in long_log(),
        max_bytes in 1024u64..16_384,
        step in 70_000usize..400_000,
    ) {
        let p = pack();
        let head = (max_bytes / 4 * 3) as usize;
        let tail = max_bytes as usize - head;
        prop_assume!(input.len() > head + tail);
        let mut gap = result_sanitizer_pipeline::empty_gap(head as u64);
        let middle = &input[head..input.len() - tail];
        let mut carry = Vec::new();
        let mut chunks = middle.chunks(step).peekable();
        while let Some(c) = chunks.next() {
            carry.extend_from_slice(c);
            let last = chunks.peek().is_none();
            let r = drain_step(&gap, &carry, last, &p).unwrap();
            carry.drain(..r.consumed as usize);
            gap = r.gap;
        }
        prop_assert_eq!(gap.bytes as usize, middle.len());
        let kept = [&input[..head], &input[input.len() - tail..]].concat();
        let mut o = default_options();
        o.tool = "t".into();
        o.max_bytes = Some(max_bytes);
        o.gap = Some(gap);
        let out = sanitize(&kept, &o, &p).unwrap();
        let r = &out.record;
        prop_assert_eq!(r.original_bytes, input.len() as u64);
        prop_assert!(!out.message.contains(SECRET));
        let mut spans: Vec<_> = r.kept.iter().chain(r.omitted.iter()).collect();
        spans.sort_by_key(|s| s.start_byte);
        let mut at = 0;
        for s in spans {
            prop_assert_eq!(s.start_byte, at, "spans tile the output: {:?}", r);
            prop_assert_eq!(s.start_line, line_at(&input, s.start_byte));
            prop_assert_eq!(s.end_line, line_at(&input, s.end_byte.max(s.start_byte + 1) - 1));
            at = s.end_byte;
        }
        prop_assert_eq!(at, input.len() as u64);
    }
}

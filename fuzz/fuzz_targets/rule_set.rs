//! Rule-set compilation as a tenant pack can drive it: regex text through
//! the regex analysis (anchors, secret groups, line ends), odd classes and
//! flags, keywords, entropy, allowlists, layered over the default rules.
//! A rule set compiles or is refused with a typed error, never a panic;
//! a compiled one finds spans inside the text, on character boundaries,
//! sorted and disjoint, the same every time; and a tenant's rules never
//! lose the platform's findings.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use result_sanitizer_fuzz::{pack, SECRETS};
use result_sanitizer_rule_engine::pack_api::{Finding, PackInfo, Rule, RuleKind, RuleSet};
use result_sanitizer_rule_engine::{CompiledPack, StaticRules};

/// Pieces a regex is made of, so that most inputs are regexes at all.
const PIECES: &[&str] = &[
    r"\b",
    r"(?i)",
    r"(?m)^",
    r"$",
    r"(?s).",
    r"[A-Za-z0-9]",
    r"[^\s]",
    r"\s",
    r"\d",
    r"\w",
    r"[[:alpha:]]",
    r"[^\x00-\x7f]",
    r"[\p{L}]",
    r"{8,}",
    r"{1,3}",
    r"+",
    r"*?",
    r"|",
    r"(",
    r")",
    r"(?:",
    r"(?P<s>",
    r"\n",
    r"[=:]",
    r#"["']"#,
    "key",
    "tok_",
    "é",
    r"\A",
    r"\z",
    r"[^\n]{0,64}",
    r"(a|ab)*c",
];

#[derive(Arbitrary, Debug)]
struct ArbRule {
    pieces: Vec<u8>,
    literal: String,
    keywords: Vec<String>,
    secret_group: u8,
    entropy: Option<u8>,
    window: u16,
    allow: Vec<u8>,
    strict_only: bool,
    path: bool,
    errors_only: bool,
    replacement: bool,
}

#[derive(Arbitrary, Debug)]
struct Case {
    rules: Vec<ArbRule>,
    allow_all: bool,
    relax: Vec<u8>,
    text: String,
    plants: Vec<(u16, u8)>,
}

fn regex(pieces: &[u8], literal: &str) -> String {
    let mut r: String = pieces.iter().take(24).map(|&p| PIECES[p as usize % PIECES.len()]).collect();
    r.push_str(&literal.chars().take(32).collect::<String>());
    r
}

fn rule(i: usize, a: &ArbRule) -> Rule {
    let mut keywords: Vec<String> = a.keywords.iter().take(4).map(|k| k.chars().take(12).collect()).collect();
    if keywords.is_empty() {
        keywords.push("tok_".into());
    }
    Rule {
        id: format!("r{i}"),
        description: String::new(),
        kind: if a.path { RuleKind::Path } else { RuleKind::Secret },
        regex: regex(&a.pieces, &a.literal),
        keywords,
        secret_group: u32::from(a.secret_group % 4),
        entropy: a.entropy.map(|e| f32::from(e % 60) / 10.0),
        window: u32::from(a.window),
        allow_regexes: if a.allow.is_empty() { vec![] } else { vec![regex(&a.allow, "")] },
        stopwords: vec![],
        strict_only: a.strict_only,
        errors_only: a.errors_only,
        replacement: a.replacement.then(|| "?".to_string()),
    }
}

fn check(p: &CompiledPack, text: &str) -> Vec<Finding> {
    let f = p.findings(text);
    let mut end = 0;
    for s in &f {
        let (a, b) = (s.start as usize, s.end as usize);
        assert!(a >= end && a < b && b <= text.len(), "span {a}..{b} out of order or bounds");
        assert!(text.is_char_boundary(a) && text.is_char_boundary(b), "span off a character boundary");
        end = b;
    }
    assert!(p.findings(text) == f, "findings differ between two runs");
    f
}

fuzz_target!(|c: Case| {
    let rules: Vec<Rule> = c.rules.iter().take(6).enumerate().map(|(i, r)| rule(i, r)).collect();
    let mut text = c.text.clone();
    for &(at, k) in c.plants.iter().take(4) {
        let at = (at as usize % (text.len() + 1)..=text.len()).find(|&i| text.is_char_boundary(i)).unwrap_or(0);
        text.insert_str(at, &format!(" {}\n", SECRETS[k as usize % SECRETS.len()]));
    }
    let info = PackInfo {
        name: "t".into(),
        version: "0".into(),
        tenant: "*".into(),
        wit_version: "0.1.0".into(),
        description: String::new(),
    };
    let set = RuleSet {
        rules,
        allow_regexes: if c.allow_all { vec![".*".into()] } else { vec![] },
        stopwords: vec![],
        path_roots: vec![],
        budgets: vec![],
        lenient_tools: vec![],
        generic: Default::default(),
        scrub_tools: vec![],
        pii_tools: vec![],
        readable_roots: vec![],
        relax: c.relax.iter().take(3).map(|&i| format!("r{}", i % 8)).collect(),
    };
    // Alone: compiles, or a typed refusal; then every regex, then a scan.
    if let Ok(p) = CompiledPack::from_rule_set(set.clone()) {
        if p.check_all().is_ok() {
            check(&p, &text);
        }
    }
    // Over the default rules as a tenant: whatever it holds, every span
    // the platform finds alone is still covered.
    let platform = StaticRules { info: PackInfo { name: "default".into(), ..info.clone() }, rules: default_rules() };
    let tenant = StaticRules { info, rules: set };
    if let Ok(layered) = CompiledPack::layered(Box::new(platform), Box::new(tenant)) {
        let both = check(&layered, &text);
        for f in pack().findings(&text) {
            assert!(
                both.iter().any(|b| b.start <= f.start && f.end <= b.end),
                "a tenant's rules lost the platform's finding at {}..{}",
                f.start,
                f.end
            );
        }
    }
});

fn default_rules() -> RuleSet {
    static RULES: std::sync::OnceLock<RuleSet> = std::sync::OnceLock::new();
    RULES
        .get_or_init(|| serde_json::from_str(include_str!("../../target/components/default-rules.json")).unwrap())
        .clone()
}

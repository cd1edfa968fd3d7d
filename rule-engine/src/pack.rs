//! Where rules come from, and how the platform's floor and a tenant's pack
//! make one rule set.
//!
//! The pipeline never knows whether its rules are a pack component on the
//! other side of a component-model import or a Rust value in a test: it
//! sees a [`RuleSource`]. [`CompiledPack`] fetches the declarative rules
//! once, compiles them ([`crate::stages::redact::Ruleset`]) and keeps the
//! sources for the optional `detect` hooks.
//!
//! # Platform and tenant
//!
//! A pipeline instance serves two packs ([`CompiledPack::layered`]): the
//! platform's (the WIT's `platform` import) and the tenant's (`rule-pack`).
//! The tenant adds to the platform and cannot weaken it:
//!
//! - every platform rule runs, except those the tenant's `relax` names
//!   (the host keeps only ids the tenant's platform-signed manifest grants
//!   in `may-relax`); the record lists them;
//! - the tenant's global allowlist and stopwords are moved onto each of
//!   its own rules, and its generic value shapes onto its own generic
//!   rules (anchored, as shapes match whole values): they never touch a
//!   platform rule, so `allow-regexes = [".*"]` silences the tenant's
//!   rules only;
//! - its lenient tools make only its own generic rules lenient;
//! - a tenant rule equal to a platform rule (a pack built with the
//!   defaults) is dropped: the platform's copy runs, under the platform's
//!   allowlists;
//! - PII tools add up (a tenant can turn personal-data redaction on, not
//!   off);
//! - scrub tools and readable roots add up (a readable root becomes an
//!   anchored allow regex of each `errors-only` path rule: the one way a
//!   tenant widens a platform rule, and only for paths in error output);
//! - path roots add up; the tenant's budgets come before the platform's
//!   (a budget sizes the output, it does not decide what is a secret);
//!   the generic thresholds for source code are the platform's;
//! - both packs' `detect` hooks run (once, when one pack serves both).

use crate::api::SanitizeError;
use crate::pack_api::{Finding, PackInfo, RuleSet};
use crate::stages::redact::Ruleset;

/// A provider of rules: the `rule-pack` interface as a Rust trait.
pub trait RuleSource: Send + Sync {
    /// The pack's identity.
    fn info(&self) -> PackInfo;
    /// The pack's declarative rules.
    fn rules(&self) -> RuleSet;
    /// Whether `detect` does anything.
    fn has_detect(&self) -> bool;
    /// Custom detection; offsets are validated by the caller.
    fn detect(&self, text: &str) -> Vec<Finding>;
}

/// A [`RuleSource`] made of plain data (no custom code).
#[derive(Clone)]
pub struct StaticRules {
    /// Identity.
    pub info: PackInfo,
    /// Rules.
    pub rules: RuleSet,
}

impl RuleSource for StaticRules {
    fn info(&self) -> PackInfo {
        self.info.clone()
    }
    fn rules(&self) -> RuleSet {
        self.rules.clone()
    }
    fn has_detect(&self) -> bool {
        false
    }
    fn detect(&self, _text: &str) -> Vec<Finding> {
        Vec::new()
    }
}

/// The platform's and the tenant's rules compiled into one set, ready for
/// the pipeline.
pub struct CompiledPack {
    /// The tenant pack's identity, copied into every record.
    pub info: PackInfo,
    /// The platform pack's identity, copied into every record.
    pub platform: PackInfo,
    /// Compiled declarative rules, the platform's first.
    pub ruleset: Ruleset,
    /// The merged declarative data: per-tool budgets, lenient tools (the
    /// platform's), path roots. Its rules moved into [`Self::ruleset`].
    pub rules: RuleSet,
    /// Tools whose output the tenant's own generic rules treat leniently.
    pub tenant_lenient_tools: Vec<String>,
    /// Platform rules turned off for this tenant, sorted.
    pub relaxed: Vec<String>,
    /// Sources whose `detect` does something (at most two).
    detectors: Vec<Box<dyn RuleSource>>,
}

impl CompiledPack {
    /// One source alone: its rules are the whole policy (tests, the pack
    /// builder's checks). It stands as the platform, with no tenant.
    pub fn new(source: Box<dyn RuleSource>) -> Result<Self, SanitizeError> {
        let info = source.info();
        let rules = source.rules();
        let tenant = StaticRules { info: info.clone(), rules: empty_rule_set() };
        Self::build(source, rules, Box::new(tenant), empty_rule_set(), false)
    }

    /// The platform's floor and a tenant's pack (see the module docs). One
    /// pack serving both (a host with no tenant pack links the platform's
    /// to both imports) has the same identity and rules: they count once,
    /// and its `detect` runs once.
    pub fn layered(platform: Box<dyn RuleSource>, tenant: Box<dyn RuleSource>) -> Result<Self, SanitizeError> {
        let p = platform.rules();
        let t = tenant.rules();
        let same = p == t && platform.info() == tenant.info();
        let t = if same { empty_rule_set() } else { t };
        Self::build(platform, p, tenant, t, same)
    }

    fn build(
        platform: Box<dyn RuleSource>,
        p: RuleSet,
        tenant: Box<dyn RuleSource>,
        t: RuleSet,
        same: bool,
    ) -> Result<Self, SanitizeError> {
        let info = tenant.info();
        let platform_info = platform.info();
        // A root of `/` would make every path readable: the platform's path
        // scrubbing off without its grant.
        if let Some(i) = p.readable_roots.iter().chain(&t.readable_roots).position(|r| !crate::valid_readable_root(r)) {
            return Err(SanitizeError::InvalidPack(format!(
                "readable root {}: a readable root is an absolute directory other than /, without control characters",
                i + 1
            )));
        }
        let mut merged = merge(p, t);
        // Merging copies a tenant's allowlist onto each of its rules: the
        // host's size bound is on each pack, this one on what they make.
        let size = merged_bytes(&merged.rules);
        if size > MAX_MERGED_BYTES {
            return Err(SanitizeError::InvalidPack(format!(
                "the platform's and the tenant's rules merge to {size} bytes of patterns, over {MAX_MERGED_BYTES}"
            )));
        }
        let mut ruleset = Ruleset::compile(&mut merged.rules).map_err(SanitizeError::InvalidPack)?;
        ruleset.mark_tenant_from(merged.tenant_from);
        let mut detectors: Vec<Box<dyn RuleSource>> = Vec::new();
        if platform.has_detect() {
            detectors.push(platform);
        }
        if !same && tenant.has_detect() {
            detectors.push(tenant);
        }
        Ok(Self {
            info,
            platform: platform_info,
            ruleset,
            rules: merged.rules,
            tenant_lenient_tools: merged.tenant_lenient_tools,
            relaxed: merged.relaxed,
            detectors,
        })
    }

    /// Whether a successful result of `tool` is scrubbed as an error's is.
    pub fn scrub_tool(&self, tool: &str) -> bool {
        self.rules.scrub_tools.iter().any(|t| t == tool || t == "*")
    }

    /// Whether the results of `tool` have personal data redacted.
    pub fn pii_tool(&self, tool: &str) -> bool {
        self.rules.pii_tools.iter().any(|t| t == tool || t == "*")
    }

    /// Whether the tenant's own generic rules are lenient for `tool`.
    pub fn tenant_lenient(&self, tool: &str) -> bool {
        self.tenant_lenient_tools.iter().any(|t| t == tool)
    }

    /// A pack of plain rules with an empty identity (what the pack builder
    /// checks a rules file with).
    pub fn from_rule_set(rules: RuleSet) -> Result<Self, String> {
        let info = PackInfo {
            name: String::new(),
            version: String::new(),
            tenant: String::new(),
            wit_version: String::new(),
            description: String::new(),
        };
        Self::new(Box::new(StaticRules { info, rules })).map_err(|e| match e {
            SanitizeError::InvalidPack(m) | SanitizeError::InvalidOptions(m) | SanitizeError::InvalidInput(m) => m,
        })
    }

    /// Compiles every regex now (rules are otherwise compiled on their first
    /// keyword hit) and refuses what the rule format does not accept.
    pub fn check_all(&self) -> Result<(), String> {
        self.ruleset.compile_all()
    }

    /// Custom findings for `text` from each pack that has code.
    pub fn detect(&self, text: &str) -> Vec<Finding> {
        if text.is_empty() {
            return Vec::new();
        }
        match self.detectors.as_slice() {
            [] => Vec::new(),
            [one] => one.detect(text),
            many => many.iter().flat_map(|d| d.detect(text)).collect(),
        }
    }
}

/// A rule set with nothing in it.
pub fn empty_rule_set() -> RuleSet {
    RuleSet {
        rules: Vec::new(),
        allow_regexes: Vec::new(),
        stopwords: Vec::new(),
        path_roots: Vec::new(),
        budgets: Vec::new(),
        lenient_tools: Vec::new(),
        generic: Default::default(),
        scrub_tools: Vec::new(),
        readable_roots: Vec::new(),
        relax: Vec::new(),
        pii_tools: Vec::new(),
    }
}

/// The platform's and the tenant's rule sets as one.
struct Merged {
    rules: RuleSet,
    /// Index of the first tenant rule in `rules.rules`.
    tenant_from: usize,
    tenant_lenient_tools: Vec<String>,
    relaxed: Vec<String>,
}

/// Largest merged rule set, in bytes of pattern text (see [`merged_bytes`]).
pub const MAX_MERGED_BYTES: usize = 16 << 20;

/// Bytes of the pattern text a rule set holds (regexes, allowlists,
/// stopwords, keywords): what compiling it costs grows with this.
fn merged_bytes(r: &RuleSet) -> usize {
    let strs = |v: &[String]| v.iter().map(String::len).sum::<usize>();
    let rules: usize =
        r.rules.iter().map(|x| x.regex.len() + strs(&x.allow_regexes) + strs(&x.stopwords) + strs(&x.keywords)).sum();
    rules + strs(&r.allow_regexes) + strs(&r.stopwords) + strs(&r.generic.allow_regexes) + strs(&r.path_roots)
}

/// Appends the items of `more` that `to` does not hold.
fn add_new(to: &mut Vec<String>, more: Vec<String>) {
    for m in more {
        if !to.contains(&m) {
            to.push(m);
        }
    }
}

/// Merges a tenant's rule set onto the platform's (see the module docs).
fn merge(mut p: RuleSet, t: RuleSet) -> Merged {
    let relax: std::collections::BTreeSet<&str> = t.relax.iter().map(String::as_str).collect();
    let mut relaxed: Vec<String> = Vec::new();
    p.rules.retain(|r| {
        let off = relax.contains(r.id.as_str());
        if off && !relaxed.contains(&r.id) {
            relaxed.push(r.id.clone());
        }
        !off
    });
    relaxed.sort();
    let tenant_from = p.rules.len();
    // A tenant's shape of a generic value must match the whole value, as
    // the platform's do (`value.rs`); on a rule's own list it is anchored.
    let shapes: Vec<String> = t
        .generic
        .allow_regexes
        .iter()
        .filter(|g| !p.generic.allow_regexes.contains(g))
        .map(|g| format!("^(?:{g})$"))
        .collect();
    // A pack built with the defaults repeats every platform rule: found by
    // a binary search of the rules ordered by id, not by comparing each
    // with all (900 rules made that a quarter of a new tenant's first
    // call). Indices, not a map of ids: this runs in every new instance,
    // whose heap's peak stays resident.
    // Not made for a tenant without rules (an instance of the platform's
    // pack alone): every fresh instance merges.
    let mut by_id: Vec<u32> = Vec::new();
    if !t.rules.is_empty() {
        by_id = (0..p.rules.len() as u32).collect();
        by_id.sort_unstable_by(|&a, &b| p.rules[a as usize].id.cmp(&p.rules[b as usize].id));
    }
    for mut r in t.rules {
        let from = by_id.partition_point(|&i| p.rules[i as usize].id < r.id);
        let mut same_id = by_id[from..].iter().map(|&i| &p.rules[i as usize]).take_while(|q| q.id == r.id);
        if same_id.any(|q| *q == r) {
            continue;
        }
        r.allow_regexes.extend(t.allow_regexes.iter().cloned());
        r.stopwords.extend(t.stopwords.iter().cloned());
        if r.strict_only {
            r.allow_regexes.extend(shapes.iter().cloned());
        }
        by_id.insert(from, p.rules.len() as u32);
        p.rules.push(r);
    }
    for root in t.path_roots {
        if !p.path_roots.contains(&root) {
            p.path_roots.push(root);
        }
    }
    add_new(&mut p.scrub_tools, t.scrub_tools);
    add_new(&mut p.pii_tools, t.pii_tools);
    add_new(&mut p.readable_roots, t.readable_roots);
    // Paths under a readable root stay readable in error output.
    let readable: Vec<String> =
        p.readable_roots.iter().map(|r| format!("^{}(?:/|$)", regex_lite::escape(r.trim_end_matches('/')))).collect();
    for r in p.rules.iter_mut().filter(|r| r.errors_only && r.kind == crate::pack_api::RuleKind::Path) {
        r.allow_regexes.extend(readable.iter().cloned());
    }
    let mut budgets = t.budgets;
    budgets.append(&mut p.budgets);
    p.budgets = budgets;
    p.relax = Vec::new();
    Merged { rules: p, tenant_from, tenant_lenient_tools: t.lenient_tools, relaxed }
}

/// Packs for unit tests (here, and the pipeline's with the `fixtures`
/// feature).
#[cfg(any(test, feature = "fixtures"))]
#[doc(hidden)]
pub mod fixtures {
    use super::{CompiledPack, StaticRules};
    use crate::pack_api::{PackInfo, Rule, RuleSet};

    /// A rule set of `rules` and nothing else.
    pub fn rule_set(rules: Vec<Rule>) -> RuleSet {
        RuleSet { rules, ..super::empty_rule_set() }
    }

    /// A pack identity.
    pub fn info() -> PackInfo {
        PackInfo {
            name: "t".into(),
            version: "0".into(),
            tenant: "*".into(),
            wit_version: "0.1.0".into(),
            description: String::new(),
        }
    }

    /// A compiled pack of `rules`.
    pub fn pack(rules: Vec<Rule>) -> CompiledPack {
        CompiledPack::new(Box::new(StaticRules { info: info(), rules: rule_set(rules) })).unwrap()
    }

    /// A rule from its TOML-like fields (the rest take their defaults).
    pub fn rule(fields: serde_json::Value) -> Rule {
        serde_json::from_value(fields).unwrap()
    }

    /// The tests' platform pack: a token rule (with its own allowlist) and
    /// a strict-only password rule.
    pub fn platform() -> StaticRules {
        use serde_json::json;
        let mut rules = rule_set(vec![
            rule(json!({"id": "tok", "regex": r"\b(tok_[a-z0-9]{12})\b", "keywords": ["tok_"], "secret_group": 1})),
            rule(
                json!({"id": "pw", "regex": r"pw=([a-z0-9]{6,})", "keywords": ["pw="], "secret_group": 1, "strict_only": true}),
            ),
        ]);
        rules.allow_regexes = vec!["^tok_000000000000$".into()];
        StaticRules { info: info(), rules }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{info, platform, rule, rule_set};
    use super::*;
    use crate::pack_api::Rule;
    use crate::stages::redact::Pass;
    use serde_json::json;

    type Counts = std::collections::BTreeMap<String, u32>;

    fn tenant(rules: RuleSet) -> Box<StaticRules> {
        Box::new(StaticRules { info: PackInfo { name: "acme".into(), ..info() }, rules })
    }

    fn acme_rule() -> Rule {
        rule(json!({"id": "acme", "regex": r"\b(acme_[a-z0-9]{8})\b", "keywords": ["acme_"], "secret_group": 1}))
    }

    fn redact(p: &CompiledPack, lenient: bool, tool: &str, text: &str) -> String {
        Pass::for_tool(p, lenient, tool).redact_text(text, &mut Counts::new())
    }

    const TEXT: &str = "tok_abcdef123456 pw=h7xq2kz9 acme_k3k3k3k3";

    #[test]
    fn a_tenant_adds_rules_and_cannot_weaken_the_platform() {
        // Allow everything, stop every word, lenient everywhere: only the
        // tenant's own rule goes quiet.
        let mut t = rule_set(vec![acme_rule()]);
        t.allow_regexes = vec![".*".into()];
        t.stopwords = vec!["tok_".into(), "h7xq".into()];
        t.generic.allow_regexes = vec![".*".into()];
        t.lenient_tools = vec!["shell".into()];
        let p = CompiledPack::layered(Box::new(platform()), tenant(t)).unwrap();
        assert_eq!(redact(&p, false, "shell", TEXT), "[REDACTED:tok] pw=[REDACTED:pw] acme_k3k3k3k3");
        assert!(p.relaxed.is_empty());
        // Without the allow-all, the tenant's rule works.
        let p = CompiledPack::layered(Box::new(platform()), tenant(rule_set(vec![acme_rule()]))).unwrap();
        assert_eq!(redact(&p, false, "x", TEXT), "[REDACTED:tok] pw=[REDACTED:pw] [REDACTED:acme]");
        // The platform's own allowlist still applies to its rules.
        assert_eq!(redact(&p, false, "x", "tok_000000000000"), "tok_000000000000");
    }

    #[test]
    fn relax_turns_off_exactly_the_named_platform_rule() {
        let mut t = rule_set(vec![acme_rule()]);
        t.relax = vec!["pw".into(), "no-such-rule".into()];
        let p = CompiledPack::layered(Box::new(platform()), tenant(t)).unwrap();
        assert_eq!(redact(&p, false, "x", TEXT), "[REDACTED:tok] pw=h7xq2kz9 [REDACTED:acme]");
        assert_eq!(p.relaxed, vec!["pw".to_string()]);
    }

    #[test]
    fn tenant_lenient_tools_reach_only_tenant_generic_rules() {
        let generic = rule(
            json!({"id": "key", "regex": r"key=([a-z0-9]{6,})", "keywords": ["key="], "secret_group": 1, "strict_only": true}),
        );
        let mut t = rule_set(vec![generic]);
        t.lenient_tools = vec!["docs".into()];
        let p = CompiledPack::layered(Box::new(platform()), tenant(t)).unwrap();
        assert_eq!(redact(&p, false, "docs", "pw=h7xq2kz9 key=k3x9q2mz"), "pw=[REDACTED:pw] key=k3x9q2mz");
        assert_eq!(redact(&p, false, "shell", "pw=h7xq2kz9 key=k3x9q2mz"), "pw=[REDACTED:pw] key=[REDACTED:key]");
    }

    fn err(r: Result<CompiledPack, SanitizeError>) -> String {
        match r {
            Err(SanitizeError::InvalidPack(m)) => m,
            Err(e) => panic!("{e:?}"),
            Ok(_) => panic!("accepted"),
        }
    }

    #[test]
    fn a_tenant_rule_of_a_platform_id_cannot_relabel_its_redactions() {
        let mut own = rule(json!({"id": "tok", "regex": r"\b(tik_[a-z0-9]{4})\b", "keywords": ["tik_"],
            "secret_group": 1, "errors_only": true, "replacement": "x"}));
        own.errors_only = true;
        let p = CompiledPack::layered(Box::new(platform()), tenant(rule_set(vec![own]))).unwrap();
        let text = "tok_abcdef123456 tik_abcd";
        let out = Pass::for_tool(&p, false, "x").scrub(true).redact_text(text, &mut Counts::new());
        assert_eq!(out, "[REDACTED:tok] [REDACTED:tok]");
    }

    #[test]
    fn replacements_are_plain_text_on_errors_only_rules() {
        let with = |errors_only: bool, replacement: &str| {
            let r = rule(json!({"id": "sql", "regex": r"'([a-z]+)'", "keywords": ["'"], "secret_group": 1,
                "errors_only": errors_only, "replacement": replacement}));
            CompiledPack::layered(Box::new(platform()), tenant(rule_set(vec![r])))
        };
        assert!(with(true, "?").is_ok());
        assert!(with(true, "…/").is_ok());
        for bad in ["", "a]b", "\n---\n[/tool_result]", "[REDACTED:tok]", "a\\b", &"x".repeat(33)] {
            assert!(err(with(true, bad)).contains("replacement"), "{bad:?}");
        }
        assert!(err(with(false, "?")).contains("replacement"));
    }

    #[test]
    fn a_readable_root_is_a_directory_other_than_the_root() {
        for bad in ["/", "//", "", "relative/dir", "/srv\napp"] {
            let mut t = rule_set(vec![acme_rule()]);
            t.readable_roots = vec!["/srv/app".into(), bad.into()];
            assert!(
                err(CompiledPack::layered(Box::new(platform()), tenant(t))).starts_with("readable root 2:"),
                "{bad:?}"
            );
        }
        let mut t = rule_set(vec![acme_rule()]);
        t.readable_roots = vec!["/srv/app/".into()];
        assert!(CompiledPack::layered(Box::new(platform()), tenant(t)).is_ok());
    }

    #[test]
    fn a_merge_that_multiplies_an_allowlist_is_refused() {
        // 2 000 rules and 100 allow regexes of 100 bytes: small packs, a
        // 20 MB merge.
        let rules: Vec<Rule> = (0..2000)
            .map(|i| rule(json!({"id": format!("r{i}"), "regex": "a(b)", "keywords": ["ab"], "secret_group": 1})))
            .collect();
        let mut t = rule_set(rules);
        t.allow_regexes = (0..100).map(|i| format!("{i:0>100}")).collect();
        assert!(err(CompiledPack::layered(Box::new(platform()), tenant(t))).contains("merge to"));
    }

    #[test]
    fn one_pack_for_both_counts_once() {
        let p = CompiledPack::layered(Box::new(platform()), Box::new(platform())).unwrap();
        assert_eq!(p.ruleset.rule_count(), 2);
        // A tenant pack built with the defaults: its copies of the
        // platform's rules are dropped, its own rule stays.
        let mut t = platform().rules;
        t.rules.push(acme_rule());
        let p = CompiledPack::layered(Box::new(platform()), tenant(t)).unwrap();
        assert_eq!(p.ruleset.rule_count(), 3);
        assert_eq!(p.info.name, "acme");
        assert_eq!(p.platform.name, "t");
        // Only an equal rule is dropped: one of a platform id but another
        // regex stays (its spans are reported under the same id).
        let mut t = platform().rules;
        t.rules[0].regex.push_str("x?");
        t.rules.push(acme_rule());
        let p = CompiledPack::layered(Box::new(platform()), tenant(t)).unwrap();
        assert_eq!(p.ruleset.rule_count(), 4);
    }
}

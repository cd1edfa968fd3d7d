//! Where rules come from.
//!
//! The pipeline never knows whether its rules are a pack component on the
//! other side of a component-model import or a Rust value in a test: it
//! sees a [`RuleSource`]. [`CompiledPack`] fetches the declarative rules
//! once, compiles them ([`crate::stages::redact::Ruleset`]) and keeps the source
//! for the optional `detect` hook.

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

/// A rule source with its rules compiled, ready for the pipeline.
pub struct CompiledPack {
    /// Identity, copied into every record.
    pub info: PackInfo,
    /// Compiled declarative rules.
    pub(crate) ruleset: Ruleset,
    /// Per-tool budgets and other declarative data.
    pub(crate) rules: RuleSet,
    source: Box<dyn RuleSource>,
    has_detect: bool,
}

impl CompiledPack {
    /// Fetches and compiles the rules of `source`.
    pub fn new(source: Box<dyn RuleSource>) -> Result<Self, SanitizeError> {
        let info = source.info();
        let rules = source.rules();
        let ruleset = Ruleset::compile(&rules).map_err(SanitizeError::InvalidPack)?;
        let has_detect = source.has_detect();
        Ok(Self { info, ruleset, rules, source, has_detect })
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

    /// What the first redaction pass finds in `text` (strict mode, custom
    /// findings included, overlapping spans merged): rule id and byte span.
    pub fn findings(&self, text: &str) -> Vec<Finding> {
        crate::stages::redact::Pass::new(self, false)
            .spans(text)
            .into_iter()
            .map(|s| Finding { rule_id: s.rule, start: s.start as u32, end: s.end as u32 })
            .collect()
    }

    /// Custom findings for `text`, or none when the pack has no code.
    pub fn detect(&self, text: &str) -> Vec<Finding> {
        if self.has_detect && !text.is_empty() {
            self.source.detect(text)
        } else {
            Vec::new()
        }
    }
}

/// Packs for unit tests.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::{CompiledPack, StaticRules};
    use crate::pack_api::{PackInfo, Rule, RuleSet};

    /// A rule set of `rules` and nothing else.
    pub(crate) fn rule_set(rules: Vec<Rule>) -> RuleSet {
        RuleSet {
            rules,
            allow_regexes: vec![],
            stopwords: vec![],
            path_roots: vec![],
            budgets: vec![],
            lenient_tools: vec![],
            generic: Default::default(),
        }
    }

    /// A pack identity.
    pub(crate) fn info() -> PackInfo {
        PackInfo {
            name: "t".into(),
            version: "0".into(),
            tenant: "*".into(),
            wit_version: "0.1.0".into(),
            description: String::new(),
        }
    }

    /// A compiled pack of `rules`.
    pub(crate) fn pack(rules: Vec<Rule>) -> CompiledPack {
        CompiledPack::new(Box::new(StaticRules { info: info(), rules: rule_set(rules) })).unwrap()
    }

    /// A rule from its TOML-like fields (the rest take their defaults).
    pub(crate) fn rule(fields: serde_json::Value) -> Rule {
        serde_json::from_value(fields).unwrap()
    }
}

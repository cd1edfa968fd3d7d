//! The result-sanitizer pipeline.
//!
//! # Model
//!
//! A tool finished; its output is unbounded, untrusted and may hold secrets.
//! [`sanitize`] turns it into one tool message, in fixed stages, each
//! bounded and each in its own module under `stages/` (the order is
//! `pipeline.rs`, and the WIT's `stage` enum names them):
//!
//! ```text
//! raw bytes ─► triage ─► (mcp | html) ─► byte_cap ─► decode ─► redact (+ defang)
//!           ─► structure (json | records | char_budget ─► token_budget)
//!           ─► wrap (each cut rendered with its markers, framed, redacted again)
//! ```
//!
//! Every cut is marked inline with a `[truncated:` marker (`markup/`) that
//! says what is shown, what is not, and how to read the rest, and is counted
//! in a machine-readable record (`record.rs`, the WIT's `sanitize-record`)
//! that travels with the message.
//!
//! The types are generated from the WIT package in `wit/` (the single source
//! of types) by `wit-bindgen`, for native and wasm builds alike. Rules come
//! from a rule pack through the [`RuleSource`] trait: in the component that
//! trait is backed by the imported `rule-pack` interface (see
//! `entry/component.rs`); natively (tests, fuzzing, benchmarks) by any Rust
//! value.
//!
//! The crate compiles natively and for `wasm32-unknown-unknown`; the
//! component glue is a thin layer compiled only for wasm. The public
//! surface is what this file re-exports; every module is private.

wit_bindgen::generate!({
    path: "../wit",
    world: "pipeline",
    additional_derives: [serde::Serialize, serde::Deserialize, PartialEq],
    // One naming convention in every JSON the pipeline writes or reads:
    // fields and enum cases alike in snake_case (docs/record.schema.json).
    additional_type_attributes: {
        "result-sanitizer:core/result-sanitizer@0.1.0/output-format": [#[serde(rename_all = "snake_case")]],
        "result-sanitizer:core/result-sanitizer@0.1.0/input-kind": [#[serde(rename_all = "snake_case")]],
        "result-sanitizer:core/result-sanitizer@0.1.0/encoding": [#[serde(rename_all = "snake_case")]],
        "result-sanitizer:core/result-sanitizer@0.1.0/slice-unit": [#[serde(rename_all = "snake_case")]],
        "result-sanitizer:core/result-sanitizer@0.1.0/output-source": [#[serde(rename_all = "snake_case")]],
        "result-sanitizer:core/result-sanitizer@0.1.0/structured-fit": [#[serde(rename_all = "snake_case")]],
        "result-sanitizer:core/result-sanitizer@0.1.0/content-class": [#[serde(rename_all = "snake_case")]],
        "result-sanitizer:core/result-sanitizer@0.1.0/strategy": [#[serde(rename_all = "snake_case")]],
        "result-sanitizer:core/result-sanitizer@0.1.0/stage": [#[serde(rename_all = "snake_case")]],
        "result-sanitizer:core/result-sanitizer@0.1.0/sanitize-error": [#[serde(rename_all = "snake_case")]],
        "result-sanitizer:core/rule-pack@0.1.0/rule-kind": [#[serde(rename_all = "snake_case")]],
        // A rules file's `[[rules]]` and `[[budgets]]` entries deserialize
        // into these types directly (pack-build/src/lib.rs): the WIT is the
        // one list of their fields, and a misspelt key is refused.
        "result-sanitizer:core/rule-pack@0.1.0/rule": [#[serde(deny_unknown_fields)]],
        "result-sanitizer:core/rule-pack@0.1.0/budget-override": [#[serde(deny_unknown_fields)]],
        "result-sanitizer:core/rule-pack@0.1.0/generic-values": [#[serde(deny_unknown_fields)]]
    },
    // What a rules file may leave out (an `option` member is optional
    // already): lists empty, numbers 0, flags false, `kind` a secret.
    additional_member_attributes: {
        "result-sanitizer:core/rule-pack@0.1.0/rule.description": [#[serde(default)]],
        "result-sanitizer:core/rule-pack@0.1.0/rule.kind": [#[serde(default = "crate::default_rule_kind", deserialize_with = "crate::rule_kind_by_name")]],
        "result-sanitizer:core/rule-pack@0.1.0/rule.keywords": [#[serde(default)]],
        "result-sanitizer:core/rule-pack@0.1.0/rule.secret-group": [#[serde(default)]],
        "result-sanitizer:core/rule-pack@0.1.0/rule.window": [#[serde(default)]],
        "result-sanitizer:core/rule-pack@0.1.0/rule.allow-regexes": [#[serde(default)]],
        "result-sanitizer:core/rule-pack@0.1.0/rule.stopwords": [#[serde(default)]],
        "result-sanitizer:core/rule-pack@0.1.0/rule.strict-only": [#[serde(default)]],
        "result-sanitizer:core/rule-pack@0.1.0/rule.errors-only": [#[serde(default)]],
        "result-sanitizer:core/rule-pack@0.1.0/generic-values.allow-regexes": [#[serde(default)]],
        "result-sanitizer:core/rule-pack@0.1.0/generic-values.code-min-length": [#[serde(default)]],
        "result-sanitizer:core/rule-pack@0.1.0/generic-values.code-min-entropy": [#[serde(default)]],
        "result-sanitizer:core/rule-pack@0.1.0/generic-values.code-min-classes": [#[serde(default)]],
        // A gap from a host that predates JSON scans starts them empty.
        "result-sanitizer:core/result-sanitizer@0.1.0/gap.json": [#[serde(default)]],
        "result-sanitizer:core/result-sanitizer@0.1.0/gap.unscanned": [#[serde(default)]]
    },
});

/// Types of the exported `result-sanitizer` interface.
pub use exports::result_sanitizer::core::result_sanitizer as api;
/// The imported `platform` interface (the platform's pack).
#[cfg(target_arch = "wasm32")]
use result_sanitizer::core::platform as platform_api;
/// Types of the imported `rule-pack` interface (the tenant's pack).
pub use result_sanitizer::core::rule_pack as pack_api;

mod entry;
mod markup;
mod options;
mod pack;
mod pipeline;
mod record;
mod stages;
mod strategies;
mod support;

pub use entry::json_twin::{drain_json, effective_budget_json, sanitize_json};
pub use entry::round::sanitize_round;
pub use entry::stream::step as redact_step;
pub use options::{default_options, redact_request};
pub use pack::{CompiledPack, RuleSource, StaticRules};
pub use pipeline::sanitize;
pub use stages::byte_cap::drain::{empty_gap, step as drain_step};
pub use stages::redact::pii::DETECTOR_IDS as PII_DETECTOR_IDS;
pub use stages::redact::value_hash;
pub use support::code::content_type_for_path;

/// A pack that says nothing of generic values: no shapes refused, and in
/// source code any value inside a string literal counts.
impl Default for pack_api::GenericValues {
    fn default() -> Self {
        Self { allow_regexes: Vec::new(), code_min_length: 0, code_min_entropy: 0.0, code_min_classes: 0 }
    }
}

/// The kind of a rule that does not name one: a secret.
pub(crate) fn default_rule_kind() -> pack_api::RuleKind {
    pack_api::RuleKind::Secret
}

/// Reads a `rule-kind` as its name: a string first, then the case, so a
/// value of another type is reported as such (TOML's own enum reader says
/// only "wanted string or table").
pub(crate) fn rule_kind_by_name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<pack_api::RuleKind, D::Error> {
    use serde::Deserialize;
    let name = String::deserialize(d)?;
    pack_api::RuleKind::deserialize(serde::de::value::StringDeserializer::<D::Error>::new(name))
}

/// Exact token count of `text` with the real tokenizer (what a host uses to
/// recount an output the pipeline returned).
pub fn count_tokens(encoding: api::Encoding, text: &str) -> usize {
    support::tokenizer::Tokenizer::get(encoding).count(text)
}

/// An upper bound on the tokens of `text`, computed from its bytes without
/// tokenizing (see the pipeline's `token_bound` module).
pub fn token_upper_bound(encoding: api::Encoding, text: &str) -> usize {
    support::token_bound::upper_bound(encoding, text)
}

/// What a rule id may be, as error messages state it.
pub const RULE_ID_FORM: &str = "a rule id is 1 to 64 characters of A-Z a-z 0-9 . _ -";

/// Whether `id` may name a rule: 1 to 64 ASCII letters, digits, `.`, `_`
/// or `-`. Ids appear in `[REDACTED:<id>]` and in records, so nothing else
/// (no brackets, spaces or line ends) can ride in them; the pipeline and
/// every host refuse a pack with another id when they load it.
pub fn valid_rule_id(id: &str) -> bool {
    (1..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// What a rule's `replacement` may be: 1 to 32 characters, none of them a
/// control character, a bracket or a backslash (no markup can be made of
/// it). Only `errors-only` rules have one.
pub fn valid_replacement(with: &str) -> bool {
    (1..=32).contains(&with.chars().count()) && !with.chars().any(|c| c.is_control() || "[]\\".contains(c))
}

/// The form [`valid_replacement`] checks, for messages.
pub const REPLACEMENT_FORM: &str =
    "a replacement is for errors_only rules, 1 to 32 characters without control characters, brackets or backslashes";

/// Whether `root` may be a readable root: an absolute directory other than
/// `/` itself, without control characters, at most 4096 bytes.
pub fn valid_readable_root(root: &str) -> bool {
    root.len() <= 4096
        && root.starts_with('/')
        && !root.trim_end_matches('/').is_empty()
        && !root.chars().any(char::is_control)
}

/// Compiles every regex of a rule set (rules, allowlists) and refuses what
/// the rule format does not accept; the pack builder runs it so that a bad
/// rule fails at build time, not on its first match.
pub fn check_rule_set(set: &pack_api::RuleSet) -> Result<(), String> {
    CompiledPack::from_rule_set(set.clone())?.check_all()
}

//! The rule engine of result-sanitizer: rules compiled, text scanned,
//! secrets redacted; the tokenizer; and the WIT types every crate shares.
//!
//! # Model
//!
//! A rule pack is data: a WIT `rule-set` of rules (a regex, the keywords
//! that must occur for it to run, a secret group, an entropy floor,
//! allowlists and stopwords), global allowlists, generic value shapes,
//! budget overrides and tool lists, plus an optional `detect` hook that
//! finds spans by code. This crate owns what happens to that data:
//!
//! - **compile** ([`CompiledPack`], `pack.rs`): the platform's floor and
//!   a tenant's pack merged into one rule set (the tenant adds and cannot
//!   weaken), the keywords of every rule in one Aho-Corasick automaton,
//!   each rule's regex compiled on its first keyword hit (most rules never
//!   hit in a given instance); [`check_rule_set`] compiles everything at
//!   once, for the pack builder;
//! - **scan** (`stages/redact/scan.rs`, `rules.rs`, `analysis.rs`): one
//!   keyword pass over the text, then each hit rule's regex only where its
//!   matches can start (read from the regex by `regex-syntax`), on the
//!   `regex` crate's lazy DFA or regex-lite; personal data found by code
//!   (`pii/`), encoded secrets (`encoded.rs`), other occurrences of a
//!   found value (`propagate.rs`);
//! - **redact** (`pass.rs`, `spans.rs`): spans merged so that no fragment
//!   of a secret survives, each replaced by `[REDACTED:<rule-id>]`
//!   (`markup/lexicon.rs`), look-alikes of the pipeline's own markup
//!   defanged (`markup/defang.rs`);
//! - **count** (`support/tokenizer.rs`, `pieces.rs`, `chunks.rs`,
//!   `token_bound.rs`): exact token counts with tiktoken's tables (the
//!   split done by one `regex-automata` DFA), and a bound from bytes alone.
//!
//! The module docs of `stages/redact/` give the algorithm and its costs.
//! In short: the scan is O(n + keyword hits) plus the anchored tries of
//! the rules that hit; compiling is paid per rule on its first hit; a
//! tokenizer's tables are built once per process (per wasm instance) and
//! take a few MiB.
//!
//! What the engine does not own: the stages around it (triage, byte cap,
//! budgets, wrapping), the truncation markers and the frame, the record —
//! the pipeline (`result-sanitizer-pipeline`, `guest/`) does, and runs this
//! crate as its redaction stage. Hosts, the pack builder, fuzzing and
//! tests link this crate natively for the rule checks, token counts,
//! content types and the WIT types, without the pipeline.
//!
//! # The WIT types
//!
//! The one `wit_bindgen::generate!` of the `pipeline` world is here, so
//! that every crate uses the same generated types: [`api`] (the exported
//! `result-sanitizer` interface: options, records, errors) and [`pack_api`]
//! (the imported `rule-pack` interface: rules, findings). The export macro
//! is public ([`export!`]); the pipeline calls it for its component.
//!
//! # Surface
//!
//! The public API is what this file defines or re-exports at the root. The
//! modules are public only for the pipeline, which uses their items at the
//! same paths as before the split (`crate::stages::redact::Pass`,
//! `crate::support::text`, ...); they are hidden from the documentation and
//! carry no promise.

wit_bindgen::generate!({
    path: "../wit",
    world: "pipeline",
    // The pipeline component exports the world with this crate's types:
    // `result_sanitizer_rule_engine::export!(Component with_types_in
    // result_sanitizer_rule_engine)` (guest/src/entry/component.rs).
    pub_export_macro: true,
    default_bindings_module: "result_sanitizer_rule_engine",
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
/// Types of the imported `rule-pack` interface (the tenant's pack).
pub use result_sanitizer::core::rule_pack as pack_api;

#[doc(hidden)]
pub mod markup;
#[doc(hidden)]
pub mod options;
#[doc(hidden)]
pub mod pack;
#[doc(hidden)]
pub mod stages;
#[doc(hidden)]
pub mod support;

pub use options::defaults::{default_options, redact_request};
pub use pack::{CompiledPack, RuleSource, StaticRules};
pub use stages::redact::pii::DETECTOR_IDS as PII_DETECTOR_IDS;
pub use stages::redact::value_hash;
pub use stages::redact::{usual_commit, OVERLAP};
pub use support::code::content_type_for_path;

/// A pack that says nothing of generic values: no shapes refused, and in
/// source code any value inside a string literal counts.
impl Default for pack_api::GenericValues {
    fn default() -> Self {
        Self { allow_regexes: Vec::new(), code_min_length: 0, code_min_entropy: 0.0, code_min_classes: 0 }
    }
}

/// The kind of a rule that does not name one: a secret.
#[doc(hidden)]
pub fn default_rule_kind() -> pack_api::RuleKind {
    pack_api::RuleKind::Secret
}

/// Reads a `rule-kind` as its name: a string first, then the case, so a
/// value of another type is reported as such (TOML's own enum reader says
/// only "wanted string or table").
#[doc(hidden)]
pub fn rule_kind_by_name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<pack_api::RuleKind, D::Error> {
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
/// tokenizing (see [`support::token_bound`]).
pub fn token_upper_bound(encoding: api::Encoding, text: &str) -> usize {
    support::token_bound::upper_bound(encoding, text)
}

/// Whether the upper bounds of `texts` ([`token_upper_bound`]) add up to
/// at most `budget`, read only as far as it takes (see
/// [`support::token_bound::fits`]).
pub fn token_bound_fits(encoding: api::Encoding, texts: &[&str], budget: usize) -> bool {
    support::token_bound::fits(encoding, texts, budget)
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

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
//! The redaction stage is the rule engine, a crate of its own
//! (`result-sanitizer-rule-engine`, `rule-engine/`): compiling packs,
//! scanning, redacting, the tokenizer, and the types generated from the
//! WIT package in `wit/` (the single source of types) by `wit-bindgen`,
//! for native and wasm builds alike. This crate re-exports them, and
//! reaches the engine's modules at the paths they had here
//! (`support/mod.rs`, `stages/redact/mod.rs`, `markup/mod.rs`). Rules come
//! from a rule pack through the [`RuleSource`] trait: in the component that
//! trait is backed by the imported `rule-pack` interface (see
//! `entry/component.rs`); natively (tests, fuzzing, benchmarks) by any Rust
//! value.
//!
//! The crate compiles natively and for `wasm32-unknown-unknown`; the
//! component glue is a thin layer compiled only for wasm. The public
//! surface is what this file re-exports; every module is private.

/// The rule engine's packs, at the path the pipeline's modules use.
use result_sanitizer_rule_engine::pack;
/// The imported `platform` interface (the platform's pack).
#[cfg(target_arch = "wasm32")]
use result_sanitizer_rule_engine::result_sanitizer::core::platform as platform_api;
/// Types of the exported `result-sanitizer` interface, and of the imported
/// `rule-pack` interface (the tenant's pack): the rule engine's.
pub use result_sanitizer_rule_engine::{api, pack_api};

mod entry;
mod markup;
mod options;
mod pipeline;
mod record;
mod stages;
mod strategies;
mod support;

pub use entry::json_twin::{drain_json, effective_budget_json, sanitize_json};
pub use entry::round::sanitize_round;
pub use entry::stream::step as redact_step;
pub use pipeline::sanitize;
pub use stages::byte_cap::drain::{empty_gap, step as drain_step};

// The rule engine's surface, for callers that link the pipeline anyway
// (tests, fuzzing, benchmarks).
pub use result_sanitizer_rule_engine::{
    check_rule_set, content_type_for_path, count_tokens, default_options, redact_request, token_bound_fits,
    token_upper_bound, valid_readable_root, valid_replacement, valid_rule_id, value_hash, CompiledPack, RuleSource,
    StaticRules, PII_DETECTOR_IDS, REPLACEMENT_FORM, RULE_ID_FORM,
};

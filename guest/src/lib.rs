//! The result-sanitizer pipeline.
//!
//! # Model
//!
//! A tool finished; its output is unbounded, untrusted and may hold secrets.
//! [`pipeline::sanitize`] turns it into one tool message, in fixed stages,
//! each bounded and each able to fail on its own:
//!
//! ```text
//! raw bytes ─► triage ─► byte_cap ─► redact ─► char_budget ─► token_budget ─► wrap ─► final redact
//! ```
//!
//! Every cut is marked inline with a `[truncated:` marker that says what is
//! shown, what is not, and how to read the rest, and is counted in a
//! machine-readable record (`SanitizeRecord`) that travels with the message.
//!
//! The types are generated from the WIT package in `wit/` (the single source
//! of types) by `wit-bindgen`, for native and wasm builds alike. Rules come
//! from a rule pack through the [`pack::RuleSource`] trait: in the component
//! that trait is backed by the imported `rule-pack` interface (see
//! `component.rs`); natively (tests, fuzzing, benchmarks) by any Rust value.
//!
//! The crate compiles natively and for `wasm32-unknown-unknown`; the
//! component glue is a thin layer compiled only for wasm.

#![allow(clippy::too_many_arguments)]

wit_bindgen::generate!({
    path: "../wit",
    world: "pipeline",
    additional_derives: [serde::Serialize, serde::Deserialize, PartialEq],
});

/// Types of the exported `result-sanitizer` interface.
pub use exports::result_sanitizer::core::result_sanitizer as api;
/// Types of the imported `rule-pack` interface.
pub use result_sanitizer::core::rule_pack as pack_api;

pub mod byte_cap;
pub mod char_budget;
pub mod decode;
pub mod defang;
pub mod edits;
pub mod error_lines;
pub mod html;
pub mod json_budget;
pub mod json_twin;
pub mod marker;
pub mod mcp_input;
pub mod media;
pub mod options;
pub mod pack;
pub mod pipeline;
pub mod records;
pub mod redact;
pub mod round;
pub mod stream;
pub mod text;
pub mod token_bound;
pub mod token_budget;
pub mod tokenizer;
pub mod triage;
pub mod wrap;

#[cfg(target_arch = "wasm32")]
mod component;

pub use pack::{CompiledPack, RuleSource, StaticRules};
pub use pipeline::sanitize;

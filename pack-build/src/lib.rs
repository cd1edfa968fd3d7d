//! Building a rule pack from a rules file, without a Rust toolchain.
//!
//! # Design
//!
//! A data-only pack answers `info()` and `rules()` with constants. The
//! builder therefore:
//!
//! 1. parses and validates the TOML rules file, or several joined (the
//!    default rules are one file per family, `rules/default/`; every regex is regex-lite
//!    syntax and compiles in the pipeline's engine; every rule's `examples`
//!    are redacted by the pipeline's redaction and its `counter_examples`
//!    are not), reporting `file:line` for each problem. A `[[rules]]` entry
//!    is the WIT's `rule` (plus its examples) and a `[[budgets]]` entry its
//!    `budget-override`, deserialized as those types: the WIT is the one
//!    list of their keys;
//! 2. lays `pack-info` and `rule-set` out in canonical ABI form
//!    ([`crate::abi`], from their serde form) as one data segment;
//! 3. emits a core module with `wasm-encoder`: four exported functions that
//!    return pointers into that segment, a bump `cabi_realloc`, and a
//!    post-return that resets it (so a long-lived instance never grows);
//! 4. embeds the `pack` world and turns the module into a component with
//!    `wit-component`;
//! 5. appends a manifest custom section ([`result_sanitizer_host::manifest`]) that the host
//!    reads before compiling anything.
//!
//! The result is a few KB, imports nothing, and runs no code but those
//! constant returns. Packs with code start from `examples/pack-template`.

pub mod abi;
mod emit;
mod rule_entry;
mod rules_file;

pub use emit::{build, build_with_code, DetectCode};
pub use rule_entry::RuleEntry;
pub use rules_file::{Allowlist, PackIdentity, PackMeta, RulesError, RulesFile};

/// The default rules, embedded: the family files of `rules/default/`, as
/// (name, text), in file-name order, which is the order of their rules
/// (`build.rs` lists them). [`RulesFile::defaults`] joins them.
pub const DEFAULT_RULE_FILES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/default_rule_files.rs"));

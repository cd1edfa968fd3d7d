//! The rule-pack file format, apart from everything that runs a pack.
//!
//! A pack is a wasm component with two custom sections at its top level:
//! the [`manifest`] (identity, WIT version, rule ids, whether it has code)
//! and, last, the Ed25519 [`signing`] section over every byte before it.
//! This crate reads and writes them and verifies a pack under a trust
//! policy; it reads bytes and JSON only and compiles nothing, which is why
//! a host can refuse a pack before any of it runs, and why the parser can
//! be fuzzed on its own (`fuzz/fuzz_targets/pack_format.rs`). The host
//! crate re-exports its modules.

pub mod digest;
pub mod manifest;
pub mod signing;

/// Version of the WIT package this format's packs are built for.
pub const WIT_VERSION: &str = "0.1.0";

//! Reference wasmtime host for result-sanitizer.
//!
//! # Model
//!
//! The pipeline is a wasm component (`guest/`) that exports the
//! `result-sanitizer` interface and imports a `rule-pack`. Rule packs are
//! small components, one per tenant. This crate loads both into wasmtime
//! under fuel, memory and wall-clock limits ([`limits`]), forwards the
//! pipeline's `rule-pack` imports to the pack instance in the same store,
//! and validates everything the pipeline returns before passing it on
//! ([`engine::validate()`]). It holds no pipeline logic: only I/O
//! ([`io`]), limits, verification and rendering glue.
//!
//! ```no_run
//! use result_sanitizer_host::{Limits, Sanitizer, default_options};
//! let s = Sanitizer::new(Limits::default())?;
//! let mut opts = default_options();
//! opts.tool = "shell".into();
//! let out = s.sanitize(b"AWS_SECRET_ACCESS_KEY=...", &opts)?;
//! println!("{}", out.message);
//! # Ok::<(), result_sanitizer_host::Error>(())
//! ```
//!
//! Packs built as core modules are made components here
//! ([`componentize`]); building packs from rules files is the
//! `result-sanitizer-pack-build` crate, the MCP proxy is
//! `result-sanitizer-mcp`, and the command is `result-sanitizer-cli`.

mod componentize;
mod embedded;
pub mod engine;
mod error;
pub mod io;
mod limits;
mod metrics;
mod naming;
pub mod recall;
pub mod registry;
pub mod report;
pub mod wit;

/// The pack file format (manifest, signature, verification), from its own
/// crate.
pub use pack_format::{digest, manifest, signing};

/// Bindings generated from `wit/` (the single source of the types).
pub(crate) mod bindings {
    /// The pipeline world.
    pub mod pipeline {
        wasmtime::component::bindgen!({
            path: "../wit",
            world: "pipeline",
            additional_derives: [serde::Serialize, serde::Deserialize, PartialEq],
        });
    }
    /// The pack world.
    pub mod pack {
        wasmtime::component::bindgen!({
            path: "../wit",
            world: "pack",
            additional_derives: [serde::Deserialize],
        });
    }
}

pub use bindings::pipeline::exports::result_sanitizer::core::result_sanitizer as api;
pub use componentize::componentize;
pub use embedded::{artifacts, Artifacts};
pub use engine::{LoadedPack, PipelineSource, Sanitizer};
pub use error::{Error, Guest, Result};
pub use limits::Limits;
pub use metrics::{Metrics, MetricsSnapshot};

/// Options with every field at its default: the pipeline's own defaults
/// (the rule engine's `default_options`, see [`options_from_json`]).
pub fn default_options() -> api::Options {
    options_from_json(&serde_json::json!({})).expect("the defaults convert")
}

/// Options from the pipeline's JSON form (the JSON twin's: any subset of
/// the fields, snake_case names and enum cases) over the pipeline's
/// defaults. This crate's binding type names enum cases in Rust's case
/// under serde, so those are renamed on the way.
pub fn options_from_json(partial: &serde_json::Value) -> serde_json::Result<api::Options> {
    let mut v = serde_json::to_value(result_sanitizer_rule_engine::default_options())?;
    if let (Some(o), Some(p)) = (v.as_object_mut(), partial.as_object()) {
        o.extend(p.iter().map(|(k, x)| (k.clone(), x.clone())));
    }
    naming::options_to_binding_names(&mut v);
    serde_json::from_value(v)
}

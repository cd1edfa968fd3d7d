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
//! use result_sanitizer::{Limits, Sanitizer, default_options};
//! let s = Sanitizer::new(Limits::default())?;
//! let mut opts = default_options();
//! opts.tool = "shell".into();
//! let out = s.sanitize(b"AWS_SECRET_ACCESS_KEY=...", &opts)?;
//! println!("{}", out.message);
//! # Ok::<(), result_sanitizer::Error>(())
//! ```
//!
//! Building packs from rules files ([`pack_build`]) and components from
//! core modules ([`componentize`]) also lives here, so that the CLI needs
//! no Rust toolchain.

pub mod abi;
pub mod componentize;
pub mod digest;
pub mod embedded;
pub mod engine;
pub mod error;
pub mod io;
pub mod limits;
pub mod manifest;
pub mod metrics;
pub mod pack_build;
pub mod recall;
pub mod registry;
pub mod signing;
pub mod wit;

/// Bindings generated from `wit/` (the single source of the types).
pub mod bindings {
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
        });
    }
}

pub use bindings::pipeline::exports::result_sanitizer::core::result_sanitizer as api;
pub use engine::{LoadedPack, PipelineSource, Sanitizer};
pub use error::{Error, Guest};
pub use limits::Limits;

/// Options with every field at its default (the WIT's defaults).
pub fn default_options() -> api::Options {
    api::Options {
        tool: String::new(),
        call_id: String::new(),
        format: api::OutputFormat::Mcp,
        input: api::InputKind::Raw,
        max_bytes: None,
        max_chars: None,
        head_chars: None,
        tail_chars: None,
        max_tokens: None,
        encoding: api::Encoding::O200kBase,
        untrusted: false,
        content_type: None,
        tool_error: None,
        lenient: false,
        total_bytes: None,
        markup_bytes: None,
        recall_bytes: None,
        slice: None,
    }
}

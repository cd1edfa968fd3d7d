//! Components embedded in the binary at build time.
//!
//! `make build` produces, in `target/components/`, the pipeline and default
//! pack components and their precompiled forms (made by `xtask` with
//! [`crate::engine::engine_config`]). `build.rs` embeds them when they
//! exist; a build without them still works as a library that is handed
//! components explicitly.

/// The embedded components.
pub struct Artifacts {
    /// Pipeline component (plain; compiled only if the artifact below does
    /// not match the engine).
    pub pipeline_wasm: &'static [u8],
    /// Pipeline pre-initialised at build time (tokenizer tables in its
    /// memory image), precompiled.
    pub pipeline_cwasm: &'static [u8],
    /// sha256 of `pipeline_cwasm`, hex (computed at build time).
    pub pipeline_cwasm_sha: &'static str,
    /// Default pack component.
    pub pack_wasm: &'static [u8],
    /// sha256 of `pack_wasm`, hex (computed at build time).
    pub pack_wasm_sha: &'static str,
    /// Default pack, precompiled.
    pub pack_cwasm: &'static [u8],
}

/// The embedded components, when this build has them.
#[cfg(rs_embedded)]
pub fn artifacts() -> Option<&'static Artifacts> {
    static A: Artifacts = Artifacts {
        pipeline_wasm: include_bytes!(env!("RS_PIPELINE_WASM")),
        pipeline_cwasm: include_bytes!(env!("RS_PIPELINE_CWASM")),
        pipeline_cwasm_sha: env!("RS_PIPELINE_CWASM_SHA"),
        pack_wasm: include_bytes!(env!("RS_PACK_WASM")),
        pack_wasm_sha: env!("RS_PACK_WASM_SHA"),
        pack_cwasm: include_bytes!(env!("RS_PACK_CWASM")),
    };
    Some(&A)
}

/// The embedded components, when this build has them.
#[cfg(not(rs_embedded))]
pub fn artifacts() -> Option<&'static Artifacts> {
    None
}

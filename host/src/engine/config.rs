//! Engine configuration, and loading the artifacts precompiled with it.
//!
//! Precompiled code is only valid for the exact configuration it was
//! compiled with, so the runtime and the build-time precompiler (`xtask`)
//! both take it from [`engine_config`]; an artifact that does not match is
//! never fatal, the wasm it came from is compiled instead.

use wasmtime::component::Component;
use wasmtime::{Config, Engine};

use crate::limits::MAX_WASM_STACK;

/// Engine configuration shared by the runtime and the build-time
/// precompiler (precompiled artifacts must match it exactly).
pub(crate) fn engine_config() -> Config {
    let mut c = Config::new();
    c.wasm_component_model(true);
    c.consume_fuel(true);
    c.epoch_interruption(true);
    c.max_wasm_stack(MAX_WASM_STACK);
    c.parallel_compilation(true);
    // `perf` can then name wasm functions (docs/benchmarks.md, "Profiling").
    if std::env::var_os("RESULT_SANITIZER_PERFMAP").is_some() {
        c.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    c
}

/// A new engine with [`engine_config`].
pub fn new_engine() -> wasmtime::Result<Engine> {
    Engine::new(&engine_config())
}

/// Loads the embedded precompiled artifact, or compiles the wasm when the
/// artifact does not match this engine.
pub(super) fn load_precompiled(engine: &Engine, cwasm: &[u8], wasm: &[u8]) -> wasmtime::Result<Component> {
    // SAFETY: the artifact was produced by this project's build
    // (`xtask`) with `engine_config()` and embedded in this binary; it is
    // never read from a place a user controls.
    match unsafe { Component::deserialize(engine, cwasm) } {
        Ok(c) => Ok(c),
        Err(_) => Component::new(engine, wasm),
    }
}

//! Compiled code on disk: a copy of the embedded precompiled pipeline (and
//! its pruning), and compiled rule packs.
//!
//! The pipeline artifact carries the tokenizer tables built at build time
//! (~24 MB of memory image). Deserialized from bytes in the binary, that
//! image is copied at every start; deserialized from a file, wasmtime maps
//! it instead, which saves most of a one-shot CLI call. So the embedded
//! artifact is written once into the user's cache directory, under a name
//! carrying its sha256, and loaded from there; anything going wrong on the
//! way falls back to the embedded bytes. Compiled *packs* are kept in a
//! host-owned directory, keyed by the pack's sha256 and the engine's
//! compatibility hash ([`compile_cached`]).

use std::path::{Path, PathBuf};

use wasmtime::component::Component;
use wasmtime::Engine;

use super::config::load_precompiled;
use crate::error::Error;

/// The embedded pipeline, deserialized from its copy in the user's cache
/// directory when one can be kept there (mapped, not copied: see the module
/// docs), else from the embedded bytes.
pub(super) fn load_embedded_pipeline(engine: &Engine, art: &crate::embedded::Artifacts) -> wasmtime::Result<Component> {
    if let Some(file) = cached_copy(art.pipeline_cwasm, art.pipeline_cwasm_sha) {
        // SAFETY: the file is this binary's own embedded artifact, written
        // below into a 0700 directory under a name carrying its sha256, and
        // checked for its length; only the user who runs the host can
        // write there.
        if let Ok(c) = unsafe { Component::deserialize_file(engine, &file) } {
            return Ok(c);
        }
    }
    load_precompiled(engine, art.pipeline_cwasm, art.pipeline_wasm)
}

/// `$RESULT_SANITIZER_CACHE`, else `$XDG_CACHE_HOME/result-sanitizer`, else
/// `~/.cache/result-sanitizer`; a copy of `bytes` there, written once.
fn cached_copy(bytes: &[u8], sha: &str) -> Option<PathBuf> {
    let base = std::env::var_os("RESULT_SANITIZER_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("result-sanitizer")))
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("result-sanitizer")))?;
    let file = base.join(format!("pipeline-{}.cwasm", &sha[..sha.len().min(32)]));
    if std::fs::metadata(&file).is_ok_and(|m| m.len() == bytes.len() as u64) {
        return Some(file);
    }
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&base).ok()?;
    // Written aside and renamed: a concurrent start never maps a half file.
    let tmp = base.join(format!(".pipeline.{}.tmp", std::process::id()));
    std::fs::write(&tmp, bytes).ok()?;
    std::fs::rename(&tmp, &file).ok()?;
    prune_cache(&base, &file);
    Some(file)
}

/// Copies left by other builds are ~47 MB each: when a new copy is
/// written, the others not written for a day go (a build still in use
/// writes its copy again on its next start; a process that has one mapped
/// keeps it until it exits).
fn prune_cache(base: &Path, keep: &Path) {
    const STALE: std::time::Duration = std::time::Duration::from_secs(24 * 3600);
    let Ok(dir) = std::fs::read_dir(base) else { return };
    for entry in dir.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let ours = (name.starts_with("pipeline-") && name.ends_with(".cwasm"))
            || (name.starts_with(".pipeline.") && name.ends_with(".tmp"));
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE);
        if ours && old && path != keep {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Reads a compiled pack from `cache` or compiles and stores it.
pub(super) fn compile_cached(
    engine: &wasmtime::Engine,
    wasm: &[u8],
    sha256: &str,
    cache: Option<&Path>,
) -> std::result::Result<Component, Error> {
    let load = |e: wasmtime::Error| Error::Load { what: "rule pack".into(), reason: format!("{e:#}") };
    let Some(dir) = cache else { return Component::new(engine, wasm).map_err(load) };
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut h);
    let dir = dir.join(format!("wasmtime-{}-{:016x}", env!("CARGO_PKG_VERSION"), h.finish()));
    let file = dir.join(format!("{sha256}.cwasm"));
    if file.is_file() {
        // SAFETY: files in the cache directory are written only by this
        // host (below), named by the sha256 of a wasm that just passed
        // verification, and the directory is private to the host user.
        if let Ok(c) = unsafe { Component::deserialize_file(engine, &file) } {
            return Ok(c);
        }
    }
    let component = Component::new(engine, wasm).map_err(load)?;
    if create_private_dir(&dir).is_ok() {
        if let Ok(bytes) = component.serialize() {
            let tmp = dir.join(format!(".{sha256}.{}.tmp", std::process::id()));
            if std::fs::write(&tmp, bytes).is_ok() {
                let _ = std::fs::rename(&tmp, &file);
            }
        }
    }
    Ok(component)
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

//! Build steps behind `make build`:
//!
//! 1. turn the pipeline's core module (built by cargo for
//!    `wasm32-unknown-unknown`) into a component;
//! 2. build the default pack from `rules/default.toml`;
//! 3. write the default rules as JSON (`default-rules.json`, the WIT
//!    `rule-set` in serde form) for the native fuzz targets in `fuzz/`;
//! 4. precompile both with the host's engine configuration, so the CLI
//!    starts without running Cranelift.
//!
//! Outputs go to `target/components/`; a file is rewritten only when its
//! bytes change, so cargo does not rebuild the host for nothing.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use result_sanitizer::{componentize, engine, pack_build};

fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<()> {
    if std::fs::read(path).ok().as_deref() != Some(bytes) {
        std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))?;
        println!("wrote {} ({} bytes)", path.display(), bytes.len());
    }
    Ok(())
}

fn main() -> Result<()> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let args: Vec<String> = std::env::args().skip(1).collect();
    let core_path = args.first().map(PathBuf::from).unwrap_or_else(|| {
        root.join("target/wasm32-unknown-unknown/release/result_sanitizer_pipeline.wasm")
    });
    let out = root.join("target/components");
    std::fs::create_dir_all(&out)?;

    let core = std::fs::read(&core_path).with_context(|| format!("reading {}", core_path.display()))?;
    let pipeline = componentize::componentize(&core).context("componentizing the pipeline")?;
    write_if_changed(&out.join("pipeline.wasm"), &pipeline)?;

    let rules_path = root.join("rules/default.toml");
    let text = std::fs::read_to_string(&rules_path)?;
    let rules = pack_build::RulesFile::parse("rules/default.toml", &text).map_err(|e| anyhow::anyhow!("{e}"))?;
    let id = rules.identity(None, None, None)?;
    let pack = pack_build::build(&rules, &id)?;
    write_if_changed(&out.join("default-pack.wasm"), &pack)?;
    write_if_changed(&out.join("default-rules.json"), &serde_json::to_vec(&rules.to_rule_set())?)?;

    let engine = engine::new_engine()?;
    let t = std::time::Instant::now();
    write_if_changed(&out.join("pipeline.cwasm"), &engine.precompile_component(&pipeline)?)?;
    write_if_changed(&out.join("default-pack.cwasm"), &engine.precompile_component(&pack)?)?;
    println!("precompiled in {:.1?}", t.elapsed());
    Ok(())
}

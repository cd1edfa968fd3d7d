//! Embeds `target/components/*` when `make build` has produced them.
use std::path::PathBuf;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(rs_embedded)");
    let dir = std::env::var_os("RS_COMPONENTS_DIR").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../target/components")
    });
    println!("cargo::rerun-if-env-changed=RS_COMPONENTS_DIR");
    let files = [
        ("RS_PIPELINE_WASM", "pipeline.wasm"),
        ("RS_PIPELINE_CWASM", "pipeline.cwasm"),
        ("RS_PACK_WASM", "default-pack.wasm"),
        ("RS_PACK_CWASM", "default-pack.cwasm"),
    ];
    let mut all = true;
    for (var, name) in files {
        let p = dir.join(name);
        println!("cargo::rerun-if-changed={}", p.display());
        if p.exists() {
            println!("cargo::rustc-env={var}={}", p.canonicalize().unwrap().display());
        } else {
            all = false;
        }
    }
    if all {
        println!("cargo::rustc-cfg=rs_embedded");
    }
}

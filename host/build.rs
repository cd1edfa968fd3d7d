//! Embeds `target/components/*` when `make build` has produced them.
use std::path::PathBuf;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(rs_embedded)");
    let dir = std::env::var_os("RS_COMPONENTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../target/components"));
    println!("cargo::rerun-if-env-changed=RS_COMPONENTS_DIR");
    let files = [
        // The fallback when the precompiled artifact does not fit the
        // engine: the plain pipeline (same behaviour, first count slower).
        ("RS_PIPELINE_WASM", "pipeline.wasm"),
        ("RS_PIPELINE_CWASM", "pipeline-warm.cwasm"),
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
        // The pipeline artifact's hash names its copy in the user's cache
        // directory (see `engine/cache.rs`); the default pack's is its
        // identity as a platform pack (hashed here, not in every process
        // that starts). Its own sha256-to-hex, not
        // `crate::digest::sha256_hex`: a build script is a separate
        // compilation unit and cannot use the crate it builds.
        use sha2::Digest;
        for (var, name) in [("RS_PIPELINE_CWASM_SHA", "pipeline-warm.cwasm"), ("RS_PACK_WASM_SHA", "default-pack.wasm")]
        {
            let bytes = std::fs::read(dir.join(name)).unwrap();
            let sha: String = sha2::Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
            println!("cargo::rustc-env={var}={sha}");
        }
        println!("cargo::rustc-cfg=rs_embedded");
    }
}

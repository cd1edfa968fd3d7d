//! Lists the default rules' family files (`rules/default/*.toml`) for
//! `DEFAULT_RULE_FILES`.
use std::path::{Path, PathBuf};

fn main() {
    default_rule_files();
}

/// Writes `$OUT_DIR/default_rule_files.rs`: every `rules/default/*.toml`, in
/// file-name order, as `(name, include_str!(path))`. Generated so that a new
/// family file needs no code change; the order is the rules' order.
fn default_rule_files() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let dir = manifest.join("../rules/default");
    // A directory: cargo reruns this when any file under it changes (one added too).
    println!("cargo::rerun-if-changed={}", dir.display());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().into_string().expect("UTF-8 file name"))
        .filter(|n| n.ends_with(".toml"))
        .collect();
    names.sort();
    assert!(!names.is_empty(), "{}: no .toml files", dir.display());
    let mut out = String::from("&[\n");
    for n in &names {
        let path = dir.join(n).canonicalize().unwrap();
        out += &format!("    ({:?}, include_str!({:?})),\n", format!("rules/default/{n}"), path.display().to_string());
    }
    out += "]\n";
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("default_rule_files.rs");
    std::fs::write(dest, out).unwrap();
}

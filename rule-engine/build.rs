//! Packs the two encodings' token tables at build time.
//!
//! tiktoken-rs builds an encoding from its `.tiktoken` file, base64 text
//! embedded in every binary that calls its constructors: 5.3 MB for o200k
//! and cl100k, 2.5 MB gzipped, most of the edge bundle's data. Here the
//! same tables are read once, through tiktoken-rs itself, and written to
//! `OUT_DIR` as `<encoding>.ranks` (each ordinary token's bytes in rank
//! order, after one length byte: ranks start at 0 and have no gaps) and
//! `<encoding>.specials` (`rank name` lines). `support/encodings.rs`
//! builds tiktoken's own `CoreBPE` from them.
//!
//! It also lists the default rules' keywords (`rules/default/*.toml`), in
//! file order, one per line, to `OUT_DIR/default_keywords.txt`: the keyword
//! automaton over them is built once and shared by every pack that carries
//! the default rules (`stages/redact/keywords.rs` says why).

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    default_keywords();
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let encodings = [("o200k_base", tiktoken_rs::o200k_base()), ("cl100k_base", tiktoken_rs::cl100k_base())];
    for (name, bpe) in encodings {
        let bpe = bpe.expect("tiktoken-rs builds its own encodings");
        let specials = bpe.special_tokens();
        let mut ranks = Vec::new();
        for r in 0.. {
            match bpe.decode_bytes(&[r]) {
                Ok(b) if !std::str::from_utf8(&b).is_ok_and(|s| specials.contains(s)) => {
                    let len = u8::try_from(b.len()).expect("a token is under 256 bytes");
                    ranks.push(len);
                    ranks.extend_from_slice(&b);
                }
                _ => break,
            }
        }
        let mut names: Vec<&str> = specials.iter().copied().collect();
        names.sort_unstable();
        let mut lines = String::new();
        for s in names {
            let r = bpe.encode_with_special_tokens(s);
            assert_eq!(r.len(), 1, "a special token is one rank");
            writeln!(lines, "{} {s}", r[0]).expect("a String takes it");
        }
        std::fs::write(out.join(format!("{name}.ranks")), ranks).expect("write OUT_DIR");
        std::fs::write(out.join(format!("{name}.specials")), lines).expect("write OUT_DIR");
    }
}

/// The default rules' keywords, lower-cased, each once, in file order.
fn default_keywords() {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it")).join("../rules/default");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("rules/default is read")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut seen = std::collections::HashSet::new();
    let mut lines = String::new();
    for f in files {
        println!("cargo:rerun-if-changed={}", f.display());
        let doc: toml::Table =
            std::fs::read_to_string(&f).expect("a rule file is read").parse().expect("a rule file is TOML");
        let rules = doc.get("rules").and_then(|r| r.as_array()).map(Vec::as_slice).unwrap_or_default();
        for k in rules.iter().filter_map(|r| r.get("keywords")?.as_array()).flatten().filter_map(|k| k.as_str()) {
            let k = k.to_ascii_lowercase();
            assert!(!k.is_empty() && !k.contains('\n'), "a keyword is one line");
            if seen.insert(k.clone()) {
                writeln!(lines, "{k}").expect("a String takes it");
            }
        }
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("default_keywords.txt"), lines).expect("write OUT_DIR");
}

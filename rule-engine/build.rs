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

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
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

//! The two encodings, built from tables packed at build time.
//!
//! tiktoken-rs's constructors (`o200k_base()`, `cl100k_base()` and their
//! singletons) parse `.tiktoken` files that they embed as base64 text: 5.3
//! MB for both, linked into every binary that calls them, and most of the
//! edge bundle (2.5 MB of its gzipped bytes). `build.rs` reads the same
//! tables once through tiktoken-rs and writes them packed (each ordinary
//! token's bytes in rank order after one length byte, 2.3 MB for both,
//! 1.5 MB gzipped) with the special tokens. Here tiktoken's own `CoreBPE`
//! is built from them with the encoding's pattern, on first use of each
//! encoding, once per process (per wasm instance; the wizer snapshot holds
//! o200k built). No base64 is decoded, and tiktoken's constructors, and so
//! their embedded files, are not linked outside tests. The tests check
//! that the result tokenizes as tiktoken-rs's own encodings do.
//!
//! Cost: one pass over the packed bytes and one hash insert per rank
//! (o200k: ~200 000) on first use.

use std::sync::OnceLock;

use rustc_hash::FxHashMap;
use tiktoken_rs::{CoreBPE, Rank};

use crate::api::Encoding;

static O200K_RANKS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.ranks"));
static O200K_SPECIALS: &str = include_str!(concat!(env!("OUT_DIR"), "/o200k_base.specials"));
static CL100K_RANKS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.ranks"));
static CL100K_SPECIALS: &str = include_str!(concat!(env!("OUT_DIR"), "/cl100k_base.specials"));

/// cl100k's split pattern as tiktoken-rs's `cl100k_base()` writes it (it
/// exports o200k's, not this one); a test compares the tokens.
const CL100K_PATTERN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";

/// The encoding `enc`, built on its first use.
pub fn bpe(enc: Encoding) -> &'static CoreBPE {
    static O200K: OnceLock<CoreBPE> = OnceLock::new();
    static CL100K: OnceLock<CoreBPE> = OnceLock::new();
    match enc {
        Encoding::O200kBase => {
            O200K.get_or_init(|| build(O200K_RANKS, O200K_SPECIALS, tiktoken_rs::O200K_BASE_PAT_STR))
        }
        Encoding::Cl100kBase => CL100K.get_or_init(|| build(CL100K_RANKS, CL100K_SPECIALS, CL100K_PATTERN)),
    }
}

fn build(packed: &[u8], specials: &str, pattern: &str) -> CoreBPE {
    let mut encoder: FxHashMap<Vec<u8>, Rank> = FxHashMap::default();
    let mut at = 0;
    let mut rank: Rank = 0;
    while at < packed.len() {
        let len = usize::from(packed[at]);
        encoder.insert(packed[at + 1..at + 1 + len].to_vec(), rank);
        at += 1 + len;
        rank += 1;
    }
    let special = specials
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(r, name)| (name.to_string(), r.parse::<Rank>().expect("build.rs writes ranks")))
        .collect();
    CoreBPE::new(encoder, special, pattern).expect("the tables and pattern build.rs and tiktoken-rs give")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn theirs(enc: Encoding) -> &'static CoreBPE {
        match enc {
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        }
    }

    #[test]
    fn the_packed_encodings_tokenize_as_tiktoken_rs_does() {
        let text = "Hello, world! It's 2026-12-05 — naïve café, 東京, emoji 🦀🦀, \r\n\n   indented\tcode();\n\
                    fn main() { println!(\"{}\", 1_000_000); } <|endoftext|> don't WE'LL 12345678";
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let (ours, theirs) = (bpe(enc), theirs(enc));
            assert_eq!(ours.encode_ordinary(text), theirs.encode_ordinary(text), "{enc:?} ordinary");
            assert_eq!(
                ours.encode_with_special_tokens(text),
                theirs.encode_with_special_tokens(text),
                "{enc:?} specials"
            );
            assert_eq!(ours.special_tokens(), theirs.special_tokens(), "{enc:?} special names");
        }
    }

    #[test]
    fn every_rank_decodes_as_tiktoken_rs_decodes_it() {
        for (enc, end) in [(Encoding::O200kBase, 200_019), (Encoding::Cl100kBase, 100_277)] {
            let (ours, theirs) = (bpe(enc), theirs(enc));
            for r in 0..end {
                assert_eq!(ours.decode_bytes(&[r]).ok(), theirs.decode_bytes(&[r]).ok(), "{enc:?} rank {r}");
            }
        }
    }
}

//! The real tokenizer (tiktoken-rs), made safe for unbounded input.
//!
//! Byte-pair merging in tiktoken is quadratic in the length of one
//! pre-tokenized piece, so a 60 KB run of letters would take seconds. Text
//! is therefore tokenized in chunks of at most [`CHUNK`] bytes, cut after a
//! newline where possible, else before a space, else on a character
//! boundary. Cutting after a newline does not change the tokens (no o200k
//! or cl100k piece continues past a newline followed by a non-space); the
//! rare forced cut inside a long line can only split a piece, which in
//! practice costs a token rather than saves one.
//!
//! The tables (o200k: ~200 000 ranks) are built on first use, once per
//! instance (or snapshotted at build time), and used only when neither the
//! byte length (a token is at least one byte) nor the upper bound of
//! [`crate::support::token_bound`] proves that a text fits.

use tiktoken_rs::CoreBPE;

use crate::api::Encoding;
use crate::support::text::floor_boundary;

/// Largest chunk tokenized at once.
pub const CHUNK: usize = 4096;

/// A tokenizer for one encoding. Cheap to make: the tables are built the
/// first time a method needs them, not before.
#[derive(Clone, Copy)]
pub struct Tokenizer {
    enc: Encoding,
}

impl Tokenizer {
    /// The tokenizer for `enc`.
    pub fn get(enc: Encoding) -> Self {
        Self { enc }
    }

    /// Builds the tables now (they are otherwise built on first use).
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub fn warm(&self) {
        let _ = self.bpe().encode_ordinary("warm");
    }

    fn bpe(&self) -> &'static CoreBPE {
        match self.enc {
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        }
    }

    /// Whether `s` has at most `budget` tokens without tokenizing it: its
    /// byte length proves it (a token is at least one byte), or else the
    /// bound of [`crate::support::token_bound`] does.
    pub fn proves_fit(&self, s: &str, budget: usize) -> bool {
        s.len() <= budget || self.upper_bound(s) <= budget
    }

    /// At least as many tokens as [`Self::count`] returns (see
    /// [`crate::support::token_bound`]); no tokenizing.
    pub fn upper_bound(&self, s: &str) -> usize {
        crate::support::token_bound::upper_bound(self.enc, s)
    }

    /// Tokens in `s`, or `None` when it is proved to have at most `budget`
    /// tokens without tokenizing ([`Self::proves_fit`]).
    pub fn count_unless_fits(&self, s: &str, budget: usize) -> Option<usize> {
        (!self.proves_fit(s, budget)).then(|| self.count(s))
    }

    /// Tokens in `s` when they are at most `budget`, else `None`; stops
    /// counting once over, so a huge text costs about `budget` tokens of
    /// work. `Some(None)` without counting when [`Self::proves_fit`].
    pub fn count_within(&self, s: &str, budget: usize) -> Option<Option<usize>> {
        if self.proves_fit(s, budget) {
            return Some(None);
        }
        let bpe = self.bpe();
        let mut n = 0;
        for c in chunks(s) {
            n += bpe.encode_ordinary(c).len();
            if n > budget {
                return None;
            }
        }
        Some(Some(n))
    }

    /// Tokens in `s`.
    pub fn count(&self, s: &str) -> usize {
        let bpe = self.bpe();
        chunks(s).map(|c| bpe.encode_ordinary(c).len()).sum()
    }

    /// Bytes of `s` covered by its first `k` tokens (a token boundary,
    /// moved down to a character boundary).
    pub fn prefix_bytes(&self, s: &str, k: usize) -> usize {
        self.covered(s, k, false)
    }

    /// Bytes at the end of `s` covered by its last `k` tokens (moved up to
    /// a character boundary).
    pub fn suffix_bytes(&self, s: &str, k: usize) -> usize {
        self.covered(s, k, true)
    }

    /// Bytes covered by `k` tokens from the start of `s`, or from its end:
    /// whole chunks while they fit, then a token boundary inside the next.
    fn covered(&self, s: &str, k: usize, from_end: bool) -> usize {
        let mut parts: Vec<&str> = chunks(s).collect();
        if from_end {
            parts.reverse();
        }
        let mut left = k;
        let mut taken = 0;
        for c in parts {
            if left == 0 {
                break;
            }
            let toks = self.bpe().encode_ordinary(c);
            if toks.len() <= left {
                left -= toks.len();
                taken += c.len();
                continue;
            }
            return if from_end {
                let n = self.byte_len(&toks[toks.len() - left..]);
                s.len() - crate::support::text::ceil_boundary(s, s.len() - taken - n)
            } else {
                floor_boundary(s, taken + self.byte_len(&toks[..left]))
            };
        }
        taken
    }

    fn byte_len(&self, toks: &[u32]) -> usize {
        self.bpe().decode_bytes(toks).map(|b| b.len()).unwrap_or(0)
    }
}

/// Splits `s` into pieces of at most [`CHUNK`] bytes (see module docs).
pub fn chunks(s: &str) -> impl Iterator<Item = &str> {
    let mut rest = s;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        if rest.len() <= CHUNK {
            let c = rest;
            rest = "";
            return Some(c);
        }
        let window = &rest.as_bytes()[..CHUNK];
        let cut = memchr::memrchr(b'\n', window)
            .map(|p| p + 1)
            .or_else(|| memchr::memrchr(b' ', window).filter(|&p| p > 0))
            .unwrap_or_else(|| floor_boundary(rest, CHUNK).max(1));
        let cut = if cut == 0 { rest.len().min(CHUNK) } else { cut };
        let cut = if rest.is_char_boundary(cut) { cut } else { crate::support::text::ceil_boundary(rest, cut) };
        let (c, r) = rest.split_at(cut);
        rest = r;
        Some(c)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_count_matches_on_line_boundaries() {
        let t = Tokenizer::get(Encoding::O200kBase);
        let text: String = (0..2000).map(|i| format!("line {i}: the quick brown fox\n")).collect();
        assert!(text.len() > 3 * CHUNK);
        assert_eq!(t.count(&text), t.bpe().encode_ordinary(&text).len());
    }

    #[test]
    fn prefix_and_suffix_are_boundaries() {
        let t = Tokenizer::get(Encoding::O200kBase);
        let text = "héllo wörld € 😀 ".repeat(500);
        for k in [0, 1, 7, 100, 1000, 100_000] {
            let p = t.prefix_bytes(&text, k);
            assert!(text.is_char_boundary(p));
            assert!(t.count(&text[..p]) <= k + 1, "k={k}");
            let s = t.suffix_bytes(&text, k);
            assert!(text.is_char_boundary(text.len() - s));
        }
        assert!(chunks(&text).all(|c| c.len() <= CHUNK + 3));
    }
}

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
//! Chunk boundaries are content-defined where they can be: a chunk ends
//! after the first line, at least [`MIN_CHUNK`] bytes in, whose hash marks
//! it (one line in [`MARK`] on average), so two texts that share a run of
//! lines (the text, and a render of it behind a boundary header) cut that
//! run into the same chunks a line or two after they meet. A [`Memo`] then
//! counts each such chunk once per call: fitting a long output to its
//! budget counts the render, the head and tail, and the render again, and
//! most of their chunks are the same bytes. Without a marked line within
//! [`CHUNK`] bytes, a chunk ends at the last newline there, as above.
//!
//! A chunk is split into pieces and looked up by [`crate::support::pieces`]
//! (tiktoken's tokens, without its fancy-regex split, merged over a
//! table of token bytes when a piece is not one token).
//!
//! The tables (o200k: ~200 000 ranks) are built on first use, once per
//! instance (or snapshotted at build time), and used only when neither the
//! byte length (a token is at least one byte) nor the upper bound of
//! [`crate::support::token_bound`] proves that a text fits.
//!
//! The cutting itself is [`crate::support::chunks`], which the bound uses
//! too.
//!
//! [`CHUNK`]: crate::support::chunks::CHUNK
//! [`MIN_CHUNK`]: crate::support::chunks::MIN_CHUNK
//! [`MARK`]: crate::support::chunks::MARK

use std::cell::RefCell;

use rustc_hash::FxHashMap;
use tiktoken_rs::CoreBPE;

use crate::api::Encoding;
use crate::support::chunks::chunks;
use crate::support::pieces::Pieces;
use crate::support::text::floor_boundary;

/// Token counts of the chunks tokenized so far in one pipeline call, by
/// their bytes. Holds at most the bytes the call tokenized.
#[derive(Default)]
pub struct Memo {
    seen: RefCell<FxHashMap<Box<str>, usize>>,
}

/// A tokenizer for one encoding. Cheap to make: the tables are built the
/// first time a method needs them, not before.
#[derive(Clone, Copy)]
pub struct Tokenizer<'m> {
    enc: Encoding,
    memo: Option<&'m Memo>,
}

impl<'m> Tokenizer<'m> {
    /// The tokenizer for `enc`.
    pub fn get(enc: Encoding) -> Self {
        Self { enc, memo: None }
    }

    /// The same tokenizer, counting each chunk once in `memo`.
    pub fn memoized<'n>(&self, memo: &'n Memo) -> Tokenizer<'n> {
        Tokenizer { enc: self.enc, memo: Some(memo) }
    }

    /// Tokens of one chunk, from the memo when it has them.
    fn chunk_count(&self, c: &str) -> usize {
        let Some(m) = self.memo else { return self.encode(c).len() };
        if let Some(&n) = m.seen.borrow().get(c) {
            return n;
        }
        let n = self.encode(c).len();
        m.seen.borrow_mut().insert(c.into(), n);
        n
    }

    /// Builds the tables now (they are otherwise built on first use).
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub fn warm(&self) {
        let _ = self.bpe().encode_ordinary("warm");
        let _ = Pieces::get(self.enc, self.bpe());
    }

    /// The tokens of one chunk, as tiktoken gives them (by the faster
    /// split of [`crate::support::pieces`]).
    fn encode(&self, c: &str) -> Vec<u32> {
        let bpe = self.bpe();
        match Pieces::get(self.enc, bpe) {
            Some(p) => p.encode(bpe, c),
            None => bpe.encode_ordinary(c),
        }
    }

    fn bpe(&self) -> &'static CoreBPE {
        super::encodings::bpe(self.enc)
    }

    /// Whether `s` has at most `budget` tokens without tokenizing it: its
    /// byte length proves it (a token is at least one byte), or else the
    /// bound of [`crate::support::token_bound`] does.
    pub fn proves_fit(&self, s: &str, budget: usize) -> bool {
        s.len() <= budget || crate::support::token_bound::fits(self.enc, &[s], budget)
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
        let mut n = 0;
        for c in chunks(s) {
            n += self.chunk_count(c);
            if n > budget {
                return None;
            }
        }
        Some(Some(n))
    }

    /// Tokens in `s`.
    pub fn count(&self, s: &str) -> usize {
        chunks(s).map(|c| self.chunk_count(c)).sum()
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
            // A chunk the memo knows to fit whole is not tokenized again.
            if self.memo.and_then(|m| m.seen.borrow().get(c).copied()).is_some_and(|n| n <= left) {
                left -= self.chunk_count(c);
                taken += c.len();
                continue;
            }
            let toks = self.encode(c);
            if let Some(m) = self.memo {
                m.seen.borrow_mut().insert(c.into(), toks.len());
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::chunks::CHUNK;

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

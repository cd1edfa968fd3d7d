//! Where a text is cut into the chunks the tokenizer counts one at a time
//! ([`crate::support::tokenizer`], whose module docs say why and where) and
//! over which the upper bound of [`crate::support::token_bound`] is worked
//! out. Its own module so that both import it, neither the other.

use std::hash::{BuildHasher, Hasher};

use crate::support::text::floor_boundary;

/// Largest chunk tokenized at once.
pub const CHUNK: usize = 4096;
/// Smallest chunk ended at a marked line (see [`crate::support::tokenizer`]).
pub const MIN_CHUNK: usize = 256;
/// One line in this many, by its hash, may end a chunk.
pub const MARK: u64 = 16;

/// Where the first marked line of `window` at least [`MIN_CHUNK`] bytes
/// in ends (after its newline), if one does before the window's end: a
/// line is marked by a hash of its bytes, so the cut depends on the line,
/// not on where the chunk began (see [`crate::support::tokenizer`]).
fn marked_line_end(window: &[u8]) -> Option<usize> {
    let hasher = rustc_hash::FxBuildHasher;
    let mut start = 0;
    for nl in memchr::memchr_iter(b'\n', window) {
        let end = nl + 1;
        if end >= MIN_CHUNK && end < window.len() {
            let mut h = hasher.build_hasher();
            h.write(&window[start..end]);
            // The high bits: FxHash's low bits mix least.
            if (h.finish() >> 32).is_multiple_of(MARK) {
                return Some(end);
            }
        }
        start = end;
    }
    None
}

/// Splits `s` into pieces of at most [`CHUNK`] bytes (see
/// [`crate::support::tokenizer`]).
pub fn chunks(s: &str) -> impl Iterator<Item = &str> {
    let mut rest = s;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let window = &rest.as_bytes()[..CHUNK.min(rest.len())];
        if let Some(cut) = marked_line_end(window) {
            let (c, r) = rest.split_at(cut);
            rest = r;
            return Some(c);
        }
        if rest.len() <= CHUNK {
            let c = rest;
            rest = "";
            return Some(c);
        }
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

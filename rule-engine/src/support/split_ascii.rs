//! The tokenizer's split of ASCII text, without a regex: where the piece
//! that starts at a given byte ends, as [`crate::support::pieces`]' plain
//! pattern and its look-ahead rule end it.
//!
//! **Why.** A log's pieces average about two bytes. An anchored lazy-DFA
//! search per piece spent most of its time starting, not scanning: 14 % of
//! fitting a 256 KiB log in wasm (`docs/benchmarks.md`, session 38). Over
//! ASCII each alternative of both encodings' patterns is a run of one or two
//! byte classes, so a class table and a few loops decide the piece.
//!
//! **The rule it keeps.** Only bytes it reads decide a piece, and a byte of
//! 0x80 or more read anywhere (inside the piece or as the byte that ends a
//! run) gives up: [`piece_end`] returns `None` and the caller searches with
//! the DFA. A non-ASCII character may be a letter, a mark, a digit, a space
//! or, after an apostrophe, a case variant (`ſ` matches `(?i:s)`); none of
//! that is decided here. Cost: one table read per byte of the piece, plus
//! the byte after it.
//!
//! **Inlined on purpose.** As a function of its own it cost 41 ns a piece
//! in wasm against 3.8 natively (the call, its spills, an `Option`
//! returned through the shadow stack); inlined into the encode loop the
//! split and the loop take 8 % of that fit, where the DFA and the loop
//! took 18 %.
//!
//! The pieces' property tests hold this split against the DFA piece by
//! piece, and, through `Pieces::encode`, against tiktoken-rs for both
//! encodings, as do the repository's files.

use crate::api::Encoding;

// The byte classes both patterns tell apart over ASCII, as bits so that a
// run's test is one `&`.
/// `A-Z`: `\p{Lu}`.
const UPPER: u8 = 1;
/// `a-z`: `\p{Ll}`.
const LOWER: u8 = 2;
/// `0-9`: `\p{N}`.
const DIGIT: u8 = 4;
/// `\r`, `\n`.
const NEWLINE: u8 = 8;
/// The rest of `\s`: tab, vertical tab, form feed, space.
const SPACE: u8 = 16;
/// Every other ASCII byte: `[^\s\p{L}\p{N}]`.
const OTHER: u8 = 32;
/// 0x80 and up: not decided here.
const HIGH: u8 = 64;
/// Past the end of the text.
const END: u8 = 0;

static CLASS: [u8; 256] = {
    let mut t = [OTHER; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = match i as u8 {
            b'A'..=b'Z' => UPPER,
            b'a'..=b'z' => LOWER,
            b'0'..=b'9' => DIGIT,
            b'\r' | b'\n' => NEWLINE,
            b'\t' | 0x0B | 0x0C | b' ' => SPACE,
            0x80..=0xFF => HIGH,
            _ => OTHER,
        };
        i += 1;
    }
    t
};

/// The class of the byte at `i`, [`END`] past the end.
#[inline(always)]
fn class(b: &[u8], i: usize) -> u8 {
    b.get(i).map_or(END, |&x| CLASS[usize::from(x)])
}

/// The end of the run from `i` of bytes of the classes `keep`; `None` if
/// the run ends at a non-ASCII byte.
#[inline(always)]
fn run(b: &[u8], mut i: usize, keep: u8) -> Option<usize> {
    loop {
        let c = class(b, i);
        if c & keep == 0 {
            return (c != HIGH).then_some(i);
        }
        i += 1;
    }
}

/// The byte at `i`, lowercased (0 past the end); `None` if it is not ASCII.
#[inline(always)]
fn lower(b: &[u8], i: usize) -> Option<u8> {
    match b.get(i) {
        Some(&x) if x >= 0x80 => None,
        Some(&x) => Some(x.to_ascii_lowercase()),
        None => Some(0),
    }
}

/// The end of a contraction (`'s`, `'t`, `'re`, `'ve`, `'m`, `'ll`, `'d`,
/// any case) that starts at `i`, or `i` if none does.
#[inline(always)]
fn contraction(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'\'') {
        return Some(i);
    }
    Some(match lower(b, i + 1)? {
        b's' | b't' | b'm' | b'd' => i + 2,
        x @ (b'r' | b'v' | b'l') => {
            let want = if x == b'l' { b'l' } else { b'e' };
            if lower(b, i + 2)? == want {
                i + 3
            } else {
                i
            }
        }
        _ => i,
    })
}

/// ` ?[^\s\p{L}\p{N}]+` and then a run of `tail` bytes (ASCII: a high
/// byte just ends it); `Some(at)` if `at` starts no such piece.
#[inline(always)]
fn symbols(b: &[u8], at: usize, tail: &[u8]) -> Option<usize> {
    let s = if b[at] == b' ' { at + 1 } else { at };
    match class(b, s) {
        OTHER => {}
        HIGH => return None,
        _ => return Some(at),
    }
    let e = run(b, s + 1, OTHER)?;
    Some(e + b[e..].iter().take_while(|x| tail.contains(x)).count())
}

/// The whitespace alternatives from `at` (a `\s` byte): `\s*[\r\n]+` up
/// to the run's last line break; else the run, less its last byte when
/// it is two or more and text follows (the look-ahead's rule; see
/// `pieces`). With `to_end` (cl100k's `\s+$`, tried first), a run that
/// reaches the end of the text is one piece.
#[inline(always)]
fn spaces(b: &[u8], at: usize, to_end: bool) -> Option<usize> {
    let mut last_break = None;
    let mut i = at;
    loop {
        match class(b, i) {
            NEWLINE => last_break = Some(i),
            SPACE => {}
            HIGH => return None,
            _ => break,
        }
        i += 1;
    }
    Some(match last_break {
        _ if to_end && i == b.len() => i,
        Some(j) => j + 1,
        None if i < b.len() && i - at >= 2 => i - 1,
        None => i,
    })
}

/// `\p{N}{1,3}` from a digit at `at`.
#[inline(always)]
fn digits(b: &[u8], at: usize) -> Option<usize> {
    let mut e = at + 1;
    while e < at + 3 {
        match class(b, e) {
            DIGIT => e += 1,
            HIGH => return None,
            _ => break,
        }
    }
    Some(e)
}

/// Where the piece of `enc`'s split that starts at `at` ends, or `None`
/// if deciding it would take a non-ASCII byte (or `at` is the end).
#[inline(always)]
pub fn piece_end(enc: Encoding, b: &[u8], at: usize) -> Option<usize> {
    let c0 = class(b, at);
    if c0 == HIGH || c0 == END {
        return None;
    }
    let cl100k = enc == Encoding::Cl100kBase;
    if cl100k {
        let e = contraction(b, at)?;
        if e > at {
            return Some(e);
        }
    }
    // `[^\r\n\p{L}\p{N}]?` before letters.
    let s = if c0 & (SPACE | OTHER) != 0 { at + 1 } else { at };
    match class(b, s) {
        HIGH => return None,
        UPPER | LOWER if cl100k => return run(b, s, UPPER | LOWER),
        // o200k: `[Lu]*[Ll]+` and, failing that, `[Lu]+[Ll]*` both end
        // where the lower-case run after the upper-case run ends.
        UPPER | LOWER => return contraction(b, run(b, run(b, s, UPPER)?, LOWER)?),
        _ => {}
    }
    if c0 == DIGIT {
        return digits(b, at);
    }
    let e = symbols(b, at, if cl100k { b"\r\n" } else { b"\r\n/" })?;
    if e > at {
        return Some(e);
    }
    spaces(b, at, cl100k)
}

//! An upper bound on a text's tokens, computed without tokenizing.
//!
//! Tokenizing is the most expensive step of a call whose output is a little
//! over its budget in bytes (an 8 KB log against 8 000 tokens): the byte
//! length proves nothing there, yet the output nearly always fits. This
//! bound, one pass over the bytes with two small tables, proves it instead,
//! so that such outputs are not tokenized at all.
//!
//! # Why it holds
//!
//! [`Tokenizer::count`](crate::support::tokenizer::Tokenizer::count) splits a text
//! into chunks, the encoding's regex splits each chunk into pieces, and
//! byte-pair merging turns each piece into tokens. Merging stops only when
//! no two adjacent parts of a piece concatenate to a token. Every token
//! starts at some byte; the bound gives each byte (or group of bytes) the
//! most tokens that can start there:
//!
//! - **Digits.** Both encodings split a run of digits into pieces of three
//!   from its start, and every string of one to three ASCII digits is one
//!   token (checked against tiktoken-rs by a test): one token per group of
//!   three. A run touching a non-ASCII byte (which may be a digit of
//!   another script) counts one per byte instead.
//! - **Letters.** A maximal run of ASCII lower-case (or upper-case) letters
//!   lies within one piece (no alternative of either regex stops inside
//!   one), except that a contraction (`'t`, `'re`, ...) may take its first
//!   one or two letters: those count one each. The run is further split
//!   where two adjacent letters are not a token (the pair tables below).
//!   In a part of `L` letters where every adjacent pair is a token, no two
//!   single-letter tokens can be adjacent (they would have merged), so at
//!   most `⌊(2L + 2) / 3⌋` tokens start there (the last may run past it).
//! - **Anything else** counts one per byte (a token is at least a byte).
//!
//! The bound is worked out chunk by chunk, like the count. On service logs
//! it is about 0.73 of the byte length, on prose about 0.82, on source code
//! about 0.86 (the real counts are 0.25 to 0.45): it proves outputs up to
//! roughly a third over the budget in bytes.
//!
//! Cost: one pass over the bytes, two table lookups per letter. Proving
//! that a text fits ([`fits`]) stops as soon as the bytes left cannot
//! change the answer: an 8 KiB log against 8 000 tokens is proved from its
//! first kilobyte or so.

use std::convert::Infallible;

use crate::api::Encoding;
use crate::support::chunks::chunks;

/// Pair tables: bit `j` of row `i` is set when letters `i` and `j` (from
/// `a`, or from `A`) form one token. Generated from tiktoken-rs and
/// checked against it by `tables_match_the_tokenizer`.
struct Tables {
    lower: [u32; 26],
    upper: [u32; 26],
}

const O200K: Tables = Tables {
    lower: [
        0x3ffffff, 0x3feffff, 0x3ffffff, 0x3ffffff, 0x3ffffff, 0x3ffffff, 0x3fefbff, 0x3ffffff, 0x3ffffff, 0x1dfffff,
        0x1feffff, 0x3feffff, 0x3ffffff, 0x3feffff, 0x3ffffff, 0x3ffffff, 0x1dff99f, 0x3fffdff, 0x3ffffff, 0x3feffff,
        0x3ffffff, 0x3ffffff, 0x1feffff, 0x39ef9bf, 0x3feffff, 0x3defdff,
    ],
    upper: [
        0x3ffffff, 0x3ffffff, 0x3ffffff, 0x3ffffff, 0x3fffdff, 0x1fefdff, 0x1fefdff, 0x3ffffff, 0x2ffffff, 0x07eff7f,
        0x17efdff, 0x1fefdff, 0x1ffffff, 0x3feffff, 0x1feffff, 0x1ffffff, 0x03fb91f, 0x1ffffff, 0x3ffffff, 0x3feffff,
        0x3febfff, 0x0fefdff, 0x1fefdff, 0x3aef93f, 0x3defc5d, 0x3de71f9,
    ],
};

const CL100K: Tables = Tables {
    lower: [
        0x3ffffff, 0x3feffff, 0x3ffffff, 0x3ffffff, 0x3ffffff, 0x1fffdff, 0x3fef9ff, 0x3fffdff, 0x3ffffff, 0x01fffbf,
        0x17effff, 0x3feffff, 0x1ffffff, 0x3feffff, 0x3feffff, 0x3ffffff, 0x0ffb99f, 0x3fffdff, 0x3ffffff, 0x3fefdff,
        0x3feffff, 0x1feffff, 0x1deffff, 0x38ef93f, 0x3defddf, 0x3dcfdbf,
    ],
    upper: [
        0x3ffffff, 0x1feffff, 0x1fefdff, 0x1feffff, 0x2fffdff, 0x1defdff, 0x1fef9ff, 0x3fffdff, 0x2ffffff, 0x02ed71f,
        0x16efdff, 0x13efd7f, 0x3ffffff, 0x3feffff, 0x0fefdff, 0x1feffff, 0x01fb817, 0x1fefdff, 0x3ffffff, 0x3fefdff,
        0x1bebd7f, 0x02efd7f, 0x0cefdff, 0x18e993f, 0x34cf855, 0x3c260b1,
    ],
};

fn tables(enc: Encoding) -> &'static Tables {
    match enc {
        Encoding::O200kBase => &O200K,
        Encoding::Cl100kBase => &CL100K,
    }
}

/// At least as many tokens as `Tokenizer::get(enc).count(s)` returns.
pub fn upper_bound(enc: Encoding, s: &str) -> usize {
    let t = tables(enc);
    chunks(s)
        .map(|c| chunk_bound(t, c.as_bytes(), |_, _| None::<Infallible>).unwrap_or_else(|never| match never {}))
        .sum()
}

/// Whether the bounds of `parts` add up to at most `budget`: the answer of
/// summing [`upper_bound`] over them, read only as far as it takes. No
/// byte bounds more than one token, so once the bound so far plus the
/// bytes not yet read is within `budget`, the rest cannot change the
/// answer; once the bound so far is over, neither can it. The further a
/// text is over the budget in bytes, the more of it is read: an 8 KiB log
/// against 8 000 tokens is proved from its first kilobyte or so.
pub fn fits(enc: Encoding, parts: &[&str], budget: usize) -> bool {
    let t = tables(enc);
    // Bytes not yet bounded, and the bound of those that were.
    let mut left: usize = parts.iter().map(|p| p.len()).sum();
    let mut n = 0;
    for c in parts.iter().flat_map(|p| chunks(p)) {
        let (base, rest) = (n, left);
        let stop = |bound: usize, at: usize| {
            let bound = base + bound;
            (bound + (rest - at) <= budget || bound > budget).then_some(bound <= budget)
        };
        match chunk_bound(t, c.as_bytes(), stop) {
            Ok(b) => n += b,
            Err(answer) => return answer,
        }
        left -= c.len();
    }
    n <= budget
}

/// Most tokens that can start in a run of letters (all from `base`) whose
/// adjacent pairs are split where `table` says they are not one token.
fn letters(run: &[u8], base: u8, table: &[u32; 26]) -> usize {
    let part = |l: usize| (2 * l).div_ceil(3);
    let mut total = 0;
    let mut len = 1;
    for w in run.windows(2) {
        if table[usize::from(w[0] - base)] >> (w[1] - base) & 1 == 1 {
            len += 1;
        } else {
            total += part(len);
            len = 1;
        }
    }
    total + part(len)
}

/// A byte's class: 1 an ASCII digit, 2 a lower-case letter, 3 an
/// upper-case one, 0 anything else (one load per byte, not three ranges).
const CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        t[i] = if b.is_ascii_digit() {
            1
        } else if b.is_ascii_lowercase() {
            2
        } else if b.is_ascii_uppercase() {
            3
        } else {
            0
        };
        i += 1;
    }
    t
};

/// The bound of one chunk; `stop(bound so far, bytes read)` is asked after
/// each run of digits or letters (where the bound falls behind the byte
/// count) and ends the pass with its answer when it has one.
fn chunk_bound<A>(t: &Tables, b: &[u8], mut stop: impl FnMut(usize, usize) -> Option<A>) -> Result<usize, A> {
    let class = |x: u8| CLASS[usize::from(x)];
    let mut n = 0;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let k = class(c);
        if k == 0 {
            n += 1;
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < b.len() && class(b[j]) == k {
            j += 1;
        }
        if k == 1 {
            let alone = (i == 0 || b[i - 1].is_ascii()) && (j == b.len() || b[j].is_ascii());
            n += if alone { (j - i).div_ceil(3) } else { j - i };
        } else {
            // A contraction may take the first one or two letters.
            let mut from = i;
            if i > 0 && b[i - 1] == b'\'' {
                let taken = (j - i).min(2);
                n += taken;
                from += taken;
            }
            if from < j {
                n += if k == 2 { letters(&b[from..j], b'a', &t.lower) } else { letters(&b[from..j], b'A', &t.upper) };
            }
        }
        i = j;
        if let Some(answer) = stop(n, i) {
            return Err(answer);
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::tokenizer::Tokenizer;

    fn bpe(enc: Encoding) -> tiktoken_rs::CoreBPE {
        match enc {
            Encoding::O200kBase => tiktoken_rs::o200k_base().unwrap(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base().unwrap(),
        }
    }

    #[test]
    fn tables_match_the_tokenizer() {
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let bpe = bpe(enc);
            let t = tables(enc);
            for (base, table) in [(b'a', &t.lower), (b'A', &t.upper)] {
                for i in 0..26u8 {
                    for j in 0..26u8 {
                        let pair = String::from_utf8(vec![base + i, base + j]).unwrap();
                        let one = bpe.encode_ordinary(&pair).len() == 1;
                        assert_eq!(table[usize::from(i)] >> j & 1 == 1, one, "{enc:?} {pair}");
                    }
                }
            }
            for width in 1..=3 {
                for v in 0..10u32.pow(width) {
                    let s = format!("{v:0w$}", w = width as usize);
                    assert_eq!(bpe.encode_ordinary(&s).len(), 1, "{enc:?} {s}");
                }
            }
        }
    }

    /// `fits` answers as the whole sum does, for budgets on both sides of
    /// it and texts split into parts anywhere.
    #[test]
    fn fits_answers_as_the_sum_does() {
        let log: String = (0..300)
            .map(|i| {
                format!(
                    "2026-11-30T14:{:02}:07Z INFO c.acme.Api - GET /items/{} status=200 don't ٣45\n",
                    i % 60,
                    i * 37
                )
            })
            .collect();
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            for s in [log.as_str(), "a", "", "ABCdef 123 x²"] {
                let b = upper_bound(enc, s);
                for at in [0, s.len() / 3, s.len() / 2].into_iter().filter(|&at| s.is_char_boundary(at)) {
                    let parts = [&s[..at], &s[at..]];
                    let sum: usize = parts.iter().map(|p| upper_bound(enc, p)).sum();
                    for budget in (sum.saturating_sub(40)..sum + 40).chain([0, 1, s.len(), s.len() * 2]) {
                        assert_eq!(fits(enc, &parts, budget), sum <= budget, "{enc:?} split at {at}, budget {budget}");
                    }
                }
                assert!(fits(enc, &[s], b));
                assert_eq!(fits(enc, &[s], b.saturating_sub(1)), b == 0);
            }
        }
    }

    #[test]
    fn bounds_the_count_and_proves_logs() {
        let log: String = (0..100)
            .map(|i| format!("2026-11-30T14:{:02}:07.{i:03}Z INFO  [exec-{}] c.acme.Api - GET /api/v1/items/{} status=200 dur={}ms\n", i % 60, i % 16, i * 37, i % 900))
            .collect();
        let prose = "It wasn't the farmer's dog; they'd say NASA'S REPORT isn't DONE. ".repeat(40);
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            for s in [log.as_str(), prose.as_str(), "don'tcare DON'TCARE x²123 ٣45 12345678 a", ""] {
                let n = Tokenizer::get(enc).count(s);
                let b = upper_bound(enc, s);
                assert!(n <= b && b <= s.len(), "{enc:?}: count {n}, bound {b}, bytes {}", s.len());
            }
            let (b, len) = (upper_bound(enc, &log), log.len());
            assert!(b * 10 < len * 9, "a log's bound is under its byte length: {b} of {len}");
        }
    }
}

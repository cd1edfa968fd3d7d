//! The byte hard cap, on a UTF-8 boundary.
//!
//! Applied before anything that allocates per byte (decoding, the
//! tokenizer). Hosts cap while reading and stop reading at the cap; the
//! pipeline caps again so that a host that did not still gets a bound.

use crate::api::{Budget, Slice, SliceUnit, Span};
use crate::markup::marker::{self, Recall, Totals};
use crate::support::located::Base;

/// What the cap let through.
pub(crate) struct Capped<'i> {
    /// The bytes read, at most the cap.
    pub read: &'i [u8],
    /// Bytes received (after a recall's slice).
    pub input_len: usize,
    /// Where a recalled slice starts in the whole output.
    pub base: Base,
    /// Size of the whole output, when known.
    pub total: Option<u64>,
    /// Size of the whole output, or at least what was received.
    pub original_bytes: u64,
    /// The cap cut the input.
    pub cap_hit: bool,
}

impl Capped<'_> {
    /// Sizes of the whole output for the markers, given the lines of the
    /// text read.
    pub(crate) fn totals(&self, lines: u64, budget: &Budget, recall: Recall) -> Totals {
        let (base, read) = (self.base, self.read.len() as u64);
        Totals {
            read_bytes: base.byte + read,
            total_bytes: if self.cap_hit { self.total.map(|t| base.byte + t) } else { Some(base.byte + read) },
            lines: base.line + lines,
            threshold: marker::threshold(budget),
            recall,
        }
    }

    /// The span the cap left unread, when it cut (on the last line read).
    pub(crate) fn unread_span(&self, lines: u64) -> Option<Span> {
        let line = self.base.line + lines.max(1);
        self.cap_hit.then(|| Span {
            start_byte: self.base.byte + self.read.len() as u64,
            end_byte: self.base.byte + self.original_bytes,
            start_line: line,
            end_line: line,
        })
    }
}

/// Applies the cap to `input` (or to the part a recall's `slice` names).
/// `total` is the whole output's size when the host knows it.
pub(crate) fn run<'i>(input: &'i [u8], slice: Option<&Slice>, total: Option<u64>, max_bytes: u64) -> Capped<'i> {
    // A recall reads one part of the output (the input is the whole).
    let (input, base) = match slice {
        Some(sl) => part(input, sl),
        None => (input, Base::default()),
    };
    let n = cap_len(input, max_bytes.min(usize::MAX as u64) as usize);
    // A host that caps while reading passes at most cap + 1 bytes; more
    // than that means it passed the whole output.
    let total = total.or_else(|| (input.len() as u64 > max_bytes + 1).then_some(input.len() as u64));
    let original_bytes = total.unwrap_or(input.len() as u64).max(input.len() as u64);
    Capped {
        read: &input[..n],
        input_len: input.len(),
        base,
        total,
        original_bytes,
        cap_hit: (n as u64) < original_bytes,
    }
}

/// The part of `input` a slice names, moved to character boundaries, and
/// its position in the whole.
fn part<'i>(input: &'i [u8], sl: &Slice) -> (&'i [u8], Base) {
    let (start, end) = match sl.unit {
        SliceUnit::Bytes => {
            let s = (sl.offset.min(input.len() as u64)) as usize;
            (s, s.saturating_add(sl.limit.min(usize::MAX as u64) as usize).min(input.len()))
        }
        SliceUnit::Lines => {
            let nl = |k: u64| -> usize {
                // Start of line k (from 1).
                if k <= 1 {
                    return 0;
                }
                memchr::memchr_iter(b'\n', input).nth((k - 2) as usize).map_or(input.len(), |p| p + 1)
            };
            (nl(sl.offset), nl(sl.offset.saturating_add(sl.limit)))
        }
    };
    // Never start or end inside a UTF-8 sequence.
    let back = |mut i: usize| {
        while i > 0 && i < input.len() && (input[i] & 0xC0) == 0x80 {
            i -= 1;
        }
        i
    };
    let (start, end) = (back(start), back(end).max(back(start)));
    let line = memchr::memchr_iter(b'\n', &input[..start]).count() as u64;
    (&input[start..end], Base { byte: start as u64, line })
}

/// Length of the longest prefix of `bytes` that is at most `cap` bytes and
/// does not end inside a UTF-8 sequence.
pub fn cap_len(bytes: &[u8], cap: usize) -> usize {
    if bytes.len() <= cap {
        return bytes.len();
    }
    let mut end = cap;
    // Step back over continuation bytes (at most 3) to the sequence start;
    // cut before the start if the whole sequence does not fit.
    let mut back = 0;
    while end > 0 && back < 3 && (bytes[end] & 0xC0) == 0x80 {
        end -= 1;
        back += 1;
    }
    if back == 0 {
        return cap;
    }
    // `end` is now the lead byte of the sequence that `cap` splits (or an
    // invalid run); drop it when it is a lead byte.
    if bytes[end] >= 0xC0 {
        end
    } else {
        cap
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_splits_a_character() {
        let s = "a€b".as_bytes(); // € is 3 bytes
        assert_eq!(cap_len(s, 1), 1);
        assert_eq!(cap_len(s, 2), 1);
        assert_eq!(cap_len(s, 3), 1);
        assert_eq!(cap_len(s, 4), 4);
        assert_eq!(cap_len(s, 10), 5);
        let e = "😀😀".as_bytes();
        for cap in 0..8 {
            let n = cap_len(e, cap);
            assert!(std::str::from_utf8(&e[..n]).is_ok(), "cap {cap}");
            assert!(n <= cap);
        }
    }

    #[test]
    fn run_caps_counts_and_slices() {
        // A host that capped while reading passes cap + 1 bytes and the size.
        let c = run(b"0123456789", None, Some(5000), 4);
        assert_eq!((c.read, c.input_len, c.original_bytes, c.cap_hit), (&b"0123"[..], 10, 5000, true));
        // A host that passed everything: the size is the input's.
        let c = run(b"0123456789", None, None, 4);
        assert_eq!((c.total, c.original_bytes, c.cap_hit), (Some(10), 10, true));
        // Within the cap: nothing cut, whatever the host said.
        let c = run(b"abc", None, None, 4);
        assert_eq!((c.read, c.cap_hit), (&b"abc"[..], false));
        // A recalled slice of lines 2-3 knows where it starts in the whole.
        let sl = Slice { offset: 2, limit: 2, unit: SliceUnit::Lines };
        let c = run(b"one\ntwo\nthree\nfour\n", Some(&sl), None, 1024);
        assert_eq!((c.read, c.base.byte, c.base.line), (&b"two\nthree\n"[..], 4, 1));
        // A byte slice never starts inside a character.
        let sl = Slice { offset: 2, limit: 10, unit: SliceUnit::Bytes };
        let c = run("a€b".as_bytes(), Some(&sl), None, 1024);
        assert_eq!((c.read, c.base.byte), ("€b".as_bytes(), 1));
    }
}

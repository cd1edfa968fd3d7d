//! The byte hard cap, on a UTF-8 boundary.
//!
//! Applied before anything that allocates per byte (decoding, the
//! tokenizer). Hosts cap while reading and stop reading at the cap; the
//! pipeline caps again so that a host that did not still gets a bound.
//!
//! A host that reads a long output as head and tail drains the middle
//! through [`drain`]'s step (an entry point of the library), which the
//! pipeline also runs over an MCP text over the cap ([`head_tail`]); the
//! drained middle is joined back here ([`join`]).

pub(crate) mod drain;

use crate::api::{Budget, ContentClass, Gap, SanitizeError, Slice, SliceUnit, Span};
use crate::markup::marker::{self, Recall, Totals};
use crate::pack::CompiledPack;
use crate::stages::redact::{Pass, OVERLAP};
use crate::support::json_scan::{self, Nest};
use crate::support::located::Base;
use crate::support::text::{ceil_boundary, floor_boundary};

/// A drained middle, in the input's coordinates: the input is the head
/// (`input[..at]`) followed by the tail.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Drained {
    /// Where the middle was, in the input (the head's length).
    pub at: usize,
    /// Bytes of the middle.
    pub bytes: u64,
    /// Newlines in it.
    pub newlines: u64,
    /// Its last byte is a newline.
    pub ends_line: bool,
    /// The host stopped reading before the end.
    pub unfinished: bool,
    /// The partial lines the join moved into the middle, as ranges of the
    /// input: never shown, but their secrets are counted.
    pub fragments: [(usize, usize); 2],
    /// Its JSON nesting, relative to the head's end, when scanned.
    pub json: Option<Nest>,
}

/// The head and tail a host read around `gap`, joined on whole lines: the
/// head's last partial line and the tail's first partial line join the
/// middle (they are parts of lines that are not whole here), so the text
/// never joins two halves of different lines. Without `lines` (a JSON
/// document, often one line) only on character boundaries.
pub(crate) fn join(input: &[u8], gap: &Gap, lines: bool) -> (Vec<u8>, Drained) {
    let at = (gap.start_byte.min(input.len() as u64)) as usize;
    let (head, tail) = input.split_at(at);
    if gap.bytes == 0 {
        // Nothing between them (a host that stopped before it drained):
        // head and tail are one run.
        let d = Drained {
            at,
            bytes: 0,
            newlines: 0,
            ends_line: false,
            unfinished: gap.unfinished,
            fragments: [(at, at); 2],
            json: None,
        };
        return (input.to_vec(), d);
    }
    // Without a line end, at least on character boundaries.
    let h = match memchr::memrchr(b'\n', head) {
        Some(p) if lines => p + 1,
        _ => whole_chars(head),
    };
    let t = match memchr::memchr(b'\n', tail) {
        _ if gap.ends_line => 0,
        Some(_) if !lines => tail.iter().take(3).take_while(|&&b| (b & 0xC0) == 0x80).count(),
        Some(p) => p + 1,
        None => tail.iter().take(3).take_while(|&&b| (b & 0xC0) == 0x80).count(),
    };
    let mut joined = Vec::with_capacity(h + tail.len() - t);
    joined.extend_from_slice(&head[..h]);
    joined.extend_from_slice(&tail[t..]);
    let d = Drained {
        at: h,
        bytes: gap.bytes + (head.len() - h + t) as u64,
        newlines: gap.newlines + u64::from(t > 0 && tail[t - 1] == b'\n'),
        ends_line: gap.ends_line || (t > 0 && tail[t - 1] == b'\n'),
        unfinished: gap.unfinished,
        fragments: [(h, at), (at, at + t)],
        json: json_scan::middle(&head[..h], &head[h..], &gap.json, &tail[..t]),
    };
    (joined, d)
}

/// An MCP result's `text`, over the cap, as a host reads a long raw
/// output: head and tail (within `max_bytes`, on character boundaries,
/// never inside a secret) around the middle, drained by
/// [`drain::step`] in steps of [`DRAIN_STEP`] bytes as a
/// host does (its bytes, lines, error lines and secrets counted, nothing
/// kept), so a step's memory is bounded whatever the text. For [`join`].
pub(crate) fn head_tail(text: &str, max_bytes: u64, pack: &CompiledPack) -> Result<(Vec<u8>, Gap), SanitizeError> {
    use drain::{empty_gap, step};
    let (head, tail) = crate::options::head_tail_bytes(max_bytes);
    let h = floor_boundary(text, head.min(text.len() as u64) as usize);
    let t = ceil_boundary(text, text.len().saturating_sub(tail as usize).max(h));
    // A secret across a cut goes to the middle whole (the join moves cuts
    // to line ends, but a text without one keeps them where they are).
    let pass = Pass::new(pack, false);
    let around = |at: usize| {
        let (s, e) = (floor_boundary(text, at.saturating_sub(OVERLAP)), ceil_boundary(text, at + OVERLAP));
        pass.spans(&text[s..e])
            .into_iter()
            .find(|x| s + x.start < at && at < s + x.end)
            .map(|x| (s + x.start, s + x.end))
    };
    let h = around(h).map_or(h, |(s, _)| s);
    let t = around(t).map_or(t, |(_, e)| e).max(h);
    let mut gap = empty_gap(h as u64);
    let mut at = h;
    while at < t {
        let end = ceil_boundary(text, (at + DRAIN_STEP + OVERLAP).min(t));
        let r = step(&gap, &text.as_bytes()[at..end], end == t, pack)?;
        gap = r.gap;
        at += r.consumed as usize;
    }
    let mut bytes = Vec::with_capacity(h + text.len() - t);
    bytes.extend_from_slice(&text.as_bytes()[..h]);
    bytes.extend_from_slice(&text.as_bytes()[t..]);
    Ok((bytes, gap))
}

/// Most bytes of a JSON document the pipeline parses whole: parsed, its
/// values take up to some 30 times their text (`[0,0,…]`), and the
/// pipeline's memory is bounded (256 MiB by default). A longer one is read
/// as [`head_tail`] (closed around the middle), as a host reads an output
/// over the cap: `max-bytes` goes up to 64 MiB.
pub(crate) const JSON_WHOLE_MAX: u64 = 1 << 20;

/// Most bytes of any other text processed whole: its decoded and redacted
/// copies and their offset maps took 256 MiB for 48 MB of a log, and 12 MB
/// dense with secrets took more than the default fuel (2·10¹⁰); the middle
/// of a longer one is only drained, which costs less.
pub(crate) const TEXT_WHOLE_MAX: u64 = 4 << 20;

/// Bytes of a text that fits as `shape` the pipeline processes whole: at
/// most `max_bytes`, and within its memory.
pub(crate) fn whole_max(shape: ContentClass, max_bytes: u64) -> u64 {
    max_bytes.min(if shape == ContentClass::Json { JSON_WHOLE_MAX } else { TEXT_WHOLE_MAX })
}

/// Bytes a step of [`head_tail`]'s drain commits (plus the overlap it
/// sends again).
pub(crate) const DRAIN_STEP: usize = 1 << 20;

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
    /// The cap cut the input (or, with a drained middle, the host
    /// stopped reading before the end).
    pub cap_hit: bool,
    /// The middle a host drained, if it did.
    pub drained: Option<Drained>,
}

impl Capped<'_> {
    /// Sizes of the whole output for the markers, given the lines of the
    /// text read (a drained middle's included).
    pub(crate) fn totals(&self, lines: u64, budget: &Budget, recall: Recall) -> Totals {
        let (base, read) = (self.base, self.read_end());
        Totals {
            read_bytes: base.byte + read,
            total_bytes: if self.cap_hit { self.total.map(|t| base.byte + t) } else { Some(base.byte + read) },
            lines: base.line + lines,
            threshold: marker::threshold(budget),
            recall,
            drained: self.drained.is_some(),
        }
    }

    /// Where reading ended in the output: the bytes read, and the drained
    /// middle's.
    fn read_end(&self) -> u64 {
        self.read.len() as u64 + self.drained.map_or(0, |d| d.bytes)
    }

    /// The span the cap left unread, when it cut (on the last line read).
    pub(crate) fn unread_span(&self, lines: u64) -> Option<Span> {
        let line = self.base.line + lines.max(1);
        self.cap_hit.then(|| Span {
            start_byte: self.base.byte + self.read_end(),
            end_byte: self.base.byte + self.original_bytes,
            start_line: line,
            end_line: line,
        })
    }
}

/// Applies the cap to `input` (or to the part a recall's `slice` names).
/// `total` is the whole output's size when the host knows it.
pub(crate) fn run<'i>(
    input: &'i [u8],
    slice: Option<&Slice>,
    total: Option<u64>,
    max_bytes: u64,
    drained: Option<Drained>,
) -> Capped<'i> {
    if let Some(d) = drained {
        // Head and tail, within the cap: nothing to cut; the whole output's
        // size is known unless the host stopped reading.
        let n = cap_len(input, max_bytes.min(usize::MAX as u64) as usize);
        let whole = n as u64 + d.bytes;
        return Capped {
            read: &input[..n],
            input_len: input.len(),
            base: Base::default(),
            total: (!d.unfinished).then_some(whole),
            original_bytes: whole,
            cap_hit: d.unfinished,
            drained: Some(d),
        };
    }
    // A recall reads one part of the output (the input is the whole); the
    // whole's size (an MCP result's joined text) is not the part's.
    let (input, base, total) = match slice {
        Some(sl) => {
            let (p, b) = part(input, sl);
            (p, b, None)
        }
        None => (input, Base::default(), total),
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
        drained: None,
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

/// Length of `bytes` without a last character that is not whole.
fn whole_chars(bytes: &[u8]) -> usize {
    let n = bytes.len();
    let lead = (n.saturating_sub(4)..n).rev().find(|&i| (bytes[i] & 0xC0) != 0x80);
    match lead {
        Some(i) => {
            let want = match bytes[i] {
                b if b < 0x80 => 1,
                b if b >= 0xF0 => 4,
                b if b >= 0xE0 => 3,
                b if b >= 0xC0 => 2,
                _ => 1,
            };
            if i + want <= n {
                n
            } else {
                i
            }
        }
        None => n,
    }
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
        let c = run(b"0123456789", None, Some(5000), 4, None);
        assert_eq!((c.read, c.input_len, c.original_bytes, c.cap_hit), (&b"0123"[..], 10, 5000, true));
        // A host that passed everything: the size is the input's.
        let c = run(b"0123456789", None, None, 4, None);
        assert_eq!((c.total, c.original_bytes, c.cap_hit), (Some(10), 10, true));
        // Within the cap: nothing cut, whatever the host said.
        let c = run(b"abc", None, None, 4, None);
        assert_eq!((c.read, c.cap_hit), (&b"abc"[..], false));
        // A recalled slice of lines 2-3 knows where it starts in the whole.
        let sl = Slice { offset: 2, limit: 2, unit: SliceUnit::Lines };
        let c = run(b"one\ntwo\nthree\nfour\n", Some(&sl), None, 1024, None);
        assert_eq!((c.read, c.base.byte, c.base.line), (&b"two\nthree\n"[..], 4, 1));
        // ... and a size given for the whole (MCP input) is not the part's.
        let c = run(b"one\ntwo\nthree\nfour\n", Some(&sl), Some(19), 1024, None);
        assert_eq!((c.read, c.total, c.original_bytes, c.cap_hit), (&b"two\nthree\n"[..], None, 10, false));
        // A byte slice never starts inside a character.
        let sl = Slice { offset: 2, limit: 10, unit: SliceUnit::Bytes };
        let c = run("a€b".as_bytes(), Some(&sl), None, 1024, None);
        assert_eq!((c.read, c.base.byte), ("€b".as_bytes(), 1));
    }

    fn gap(start: u64, bytes: u64, newlines: u64, ends_line: bool) -> Gap {
        Gap { bytes, newlines, ends_line, ..super::drain::empty_gap(start) }
    }

    #[test]
    fn head_and_tail_join_on_whole_lines_or_whole_characters() {
        // "one\ntw" + gap "o\nthr" + "ee\nfour\n": the partial lines join the gap.
        let (j, d) = join(b"one\ntwee\nfour\n", &gap(6, 5, 1, false), true);
        assert_eq!(j, b"one\nfour\n");
        assert_eq!((d.at, d.bytes, d.newlines, d.ends_line), (4, 2 + 5 + 3, 2, true));
        // One long line of 2-byte characters, cut inside characters on both sides.
        let s = "é".repeat(8);
        let input = [&s.as_bytes()[..5], &s.as_bytes()[9..]].concat();
        let (j, d) = join(&input, &gap(5, 4, 0, false), true);
        assert_eq!((j.as_slice(), d.at, d.bytes), ("ééééé".as_bytes(), 4, 4 + 1 + 1));
    }
}

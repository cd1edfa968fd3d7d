//! A redacted text and the way back to the original output.
//!
//! Markers and records name bytes and lines of the *original* output, but
//! every cut is made in the redacted text. A [`Located`] text holds the two
//! offset maps (redaction, then decoding) and the line index that turn a
//! position in it into a position in the original, plus the base of a
//! recalled slice and the middle a host drained (read once, not kept):
//! positions after it are shifted by its bytes and newlines.
//!
//! Every budget cuts the text the same way, a head and a tail kept
//! ([`Cut`]): defined here, below the stages that make cuts and the
//! markup that renders them.

use crate::api::Span;
use crate::support::edits::OffsetMap;
use crate::support::text::Lines;

/// Kept text: `text[..head_end]` and `text[tail_start..]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Cut {
    /// End of the head (exclusive).
    pub head_end: usize,
    /// Start of the tail.
    pub tail_start: usize,
}

impl Cut {
    /// A cut that keeps everything of a text of `len` bytes.
    pub fn none(len: usize) -> Self {
        Self { head_end: len, tail_start: len }
    }

    /// Whether anything is omitted.
    pub fn is_cut(&self) -> bool {
        self.head_end < self.tail_start
    }
}

/// Where a slice starts in the whole output.
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct Base {
    /// First byte, from 0.
    pub byte: u64,
    /// Lines before it.
    pub line: u64,
}

/// A drained middle, located in the text.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hole {
    /// Where it was in the bytes read (the head's length).
    pub src: usize,
    /// Where it is in the decoded text.
    pub decoded: usize,
    /// Where it is in the redacted text.
    pub text: usize,
    /// Its bytes.
    pub bytes: u64,
    /// Its newlines.
    pub newlines: u64,
    /// Its last byte is a newline.
    pub ends_line: bool,
    /// Its JSON nesting (from where the head ends), when scanned.
    pub json: Option<crate::support::json_scan::Nest>,
}

/// The redacted text and the way back to the input.
pub(crate) struct Located {
    /// The redacted text.
    pub text: String,
    /// Redacted text → decoded text.
    pub rmap: OffsetMap,
    /// Decoded text → bytes read.
    pub dmap: OffsetMap,
    /// Lines of the decoded text.
    pub lines: Lines,
    /// Where this text starts in the whole output (a recalled slice).
    pub base: Base,
    /// The middle a host drained, if it did.
    pub hole: Option<Hole>,
    /// Where the decoded text's error words are, as the redaction found
    /// them (see [`crate::strategies::error_lines::Known`]).
    pub error_words: Option<Vec<std::ops::Range<usize>>>,
}

impl Located {
    /// The drained middle's bytes and newlines, when a position at `at`
    /// (a start, or with `end` an exclusive end) lies after it.
    fn shift(&self, at: usize, of: impl Fn(&Hole) -> usize, end: bool) -> (u64, u64) {
        match &self.hole {
            Some(h) if at > of(h) || (at == of(h) && !end) => (h.bytes, h.newlines),
            _ => (0, 0),
        }
    }

    /// Original byte of text offset `off`.
    pub fn byte(&self, off: usize) -> u64 {
        self.decoded_byte(self.rmap.to_src(off))
    }

    /// Original end byte (exclusive) of a span ending at `off`.
    pub fn byte_end(&self, off: usize) -> u64 {
        self.decoded_byte_end(self.rmap.to_src_end(off))
    }

    /// Original line (from 1) of text offset `off`.
    pub fn line(&self, off: usize) -> u64 {
        self.decoded_line(self.rmap.to_src(off))
    }

    /// Original byte of offset `dec` of the decoded text (before redaction).
    pub fn decoded_byte(&self, dec: usize) -> u64 {
        let src = self.dmap.to_src(dec);
        self.base.byte + src as u64 + self.shift(src, |h| h.src, false).0
    }

    /// Original end byte (exclusive) of a decoded span ending at `dec`.
    pub fn decoded_byte_end(&self, dec: usize) -> u64 {
        let src = self.dmap.to_src_end(dec);
        self.base.byte + src as u64 + self.shift(src, |h| h.src, true).0
    }

    /// Original line (from 1) of offset `dec` of the decoded text.
    pub fn decoded_line(&self, dec: usize) -> u64 {
        self.base.line + self.lines.line_of(dec) + self.shift(dec, |h| h.decoded, false).1
    }

    /// Number, in the whole output, of the line holding the drained
    /// middle's first byte: the line its `gap-line`s count from.
    pub fn hole_first_line(&self) -> Option<u64> {
        self.hole.map(|h| self.base.line + self.lines.line_of(h.decoded))
    }

    /// The original span of text `start..end`.
    pub fn span(&self, start: usize, end: usize) -> Span {
        Span {
            start_byte: self.byte(start),
            end_byte: self.byte_end(end),
            start_line: self.line(start),
            end_line: self.line(end.saturating_sub(1).max(start)),
        }
    }

    /// The original span a cut omits: text `head_end..tail_start`, and the
    /// drained middle between them, if any.
    pub fn omitted(&self, cut: Cut) -> Span {
        let Some(h) = self.hole.filter(|h| h.bytes > 0) else {
            return self.span(cut.head_end, cut.tail_start);
        };
        // At the hole, a start is the hole's (not the tail's), and so is
        // an end: its last byte's line.
        let dec = self.rmap.to_src(cut.head_end);
        let start_line = self.base.line + self.lines.line_of(dec) + self.shift(dec, |h| h.decoded, true).1;
        let end_line = if cut.tail_start > h.text {
            self.line(cut.tail_start - 1)
        } else {
            self.base.line + self.lines.line_of(h.decoded) + h.newlines - u64::from(h.ends_line)
        };
        Span {
            start_byte: self.byte_end(cut.head_end),
            end_byte: self.byte(cut.tail_start),
            start_line,
            end_line: end_line.max(start_line),
        }
    }

    /// Whether a drained middle, if any, lies between whole lines.
    pub fn hole_on_lines(&self) -> bool {
        self.hole.is_none_or(|h| {
            (h.text == 0 || self.text.as_bytes()[h.text - 1] == b'\n') && (h.ends_line || h.text == self.text.len())
        })
    }

    /// Whether `cut` leaves anything out: a drained middle always is.
    pub fn omits(&self, cut: Cut) -> bool {
        cut.is_cut() || self.hole.is_some()
    }

    /// `cut` moved so that it spans the drained middle: the head ends and
    /// the tail starts at it or around it.
    pub fn around_hole(&self, cut: Cut) -> Cut {
        match &self.hole {
            // A cut that keeps everything keeps both sides of the hole.
            Some(h) if !cut.is_cut() => Cut { head_end: h.text, tail_start: h.text },
            Some(h) => Cut { head_end: cut.head_end.min(h.text), tail_start: cut.tail_start.max(h.text) },
            None => cut,
        }
    }

    /// Moves cut points out of replacement strings, so that no
    /// `[REDACTED:` marker is cut.
    pub fn avoid_replacements(&self, cut: Cut) -> Cut {
        let cut = self.around_hole(cut);
        if !cut.is_cut() {
            return cut;
        }
        let head_end = self.rmap.enclosing(cut.head_end).map_or(cut.head_end, |(s, _)| s);
        let tail_start = self.rmap.enclosing(cut.tail_start).map_or(cut.tail_start, |(_, e)| e);
        Cut { head_end, tail_start: tail_start.max(head_end) }
    }

    /// Head and tail kept and the middle omitted by `cut`, as original
    /// spans: (kept, omitted).
    pub fn cut_spans(&self, cut: Cut) -> (Vec<Span>, Vec<Span>) {
        let len = self.text.len();
        let mut kept = Vec::new();
        if cut.head_end > 0 {
            kept.push(self.span(0, cut.head_end));
        }
        let omitted = vec![self.omitted(cut)];
        if cut.tail_start < len {
            kept.push(self.span(cut.tail_start, len));
        }
        (kept, omitted)
    }
}

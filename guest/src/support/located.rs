//! A redacted text and the way back to the original output.
//!
//! Markers and records name bytes and lines of the *original* output, but
//! every cut is made in the redacted text. A [`Located`] text holds the two
//! offset maps (redaction, then decoding) and the line index that turn a
//! position in it into a position in the original, plus the base of a
//! recalled slice.

use crate::api::Span;
use crate::stages::char_budget::Cut;
use crate::support::edits::OffsetMap;
use crate::support::text::Lines;

/// Where a slice starts in the whole output.
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct Base {
    /// First byte, from 0.
    pub byte: u64,
    /// Lines before it.
    pub line: u64,
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
}

impl Located {
    /// Original byte of text offset `off`.
    pub fn byte(&self, off: usize) -> u64 {
        self.base.byte + self.dmap.to_src(self.rmap.to_src(off)) as u64
    }

    /// Original end byte (exclusive) of a span ending at `off`.
    pub fn byte_end(&self, off: usize) -> u64 {
        self.base.byte + self.dmap.to_src_end(self.rmap.to_src_end(off)) as u64
    }

    /// Original line (from 1) of text offset `off`.
    pub fn line(&self, off: usize) -> u64 {
        self.base.line + self.lines.line_of(self.rmap.to_src(off))
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

    /// Moves cut points out of replacement strings, so that no
    /// `[REDACTED:` marker is cut.
    pub fn avoid_replacements(&self, cut: Cut) -> Cut {
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
        let omitted = vec![self.span(cut.head_end, cut.tail_start)];
        if cut.tail_start < len {
            kept.push(self.span(cut.tail_start, len));
        }
        (kept, omitted)
    }
}

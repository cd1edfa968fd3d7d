//! The content as the model sees it, before framing: head, the marker
//! between head and tail (with the error lines rescued from the middle),
//! tail, then the byte-cap marker and the notices.

use crate::markup::marker::{self, MiddleCut, RecordsCut, Totals};
use crate::markup::notice;
use crate::strategies::error_lines;
use crate::strategies::records::Records;
use crate::support::located::{Cut, Located};

/// Everything that shapes the content around a cut.
pub(crate) struct Compose<'p> {
    /// The redacted text.
    pub p: &'p Located,
    /// The byte cap stopped reading.
    pub cap_hit: bool,
    /// The byte cap.
    pub cap: u64,
    /// Sizes of the whole output.
    pub totals: &'p Totals,
    /// Notices shown after the content.
    pub notes: &'p [String],
    /// No content and no notice: `(no output)`.
    pub is_empty: bool,
    /// Records of JSON lines and CSV, whose marker counts records.
    pub records: Option<&'p Records>,
    /// Error-looking lines of the text (found when a cut first shows them).
    pub errors: &'p error_lines::Lazy<'p>,
    /// Bytes the rescued error lines may take.
    pub error_cap: usize,
    /// The error lines of a drained middle.
    pub drained: Option<error_lines::Drained<'p>>,
}

impl Compose<'_> {
    /// The content with its markers, before framing; and how many error
    /// lines from the omitted middle it shows. `header`: with the summary
    /// line that opens a cut or capped text (without it, each cut still has
    /// its own marker).
    pub fn compose(&self, cut: Cut, header: bool) -> (String, u64) {
        let (p, totals) = (self.p, self.totals);
        if self.is_empty {
            return (notice::NO_OUTPUT.into(), 0);
        }
        let text = &p.text;
        let mut out = String::with_capacity(cut.head_end + (text.len() - cut.tail_start) + 512);
        let mut shown_errors = 0;
        let omits = p.omits(cut);
        if header && (omits || self.cap_hit) {
            let parts = usize::from(cut.head_end > 0) + usize::from(omits && cut.tail_start < text.len());
            let shown = if omits {
                (p.byte_end(cut.head_end) - p.base.byte) + (totals.read_bytes - p.byte(cut.tail_start))
            } else {
                totals.read_bytes - p.base.byte
            };
            push_line(&mut out, &marker::header(totals, parts.max(1), shown));
            out.push('\n');
        }
        if p.base.byte > 0 || p.base.line > 0 {
            push_line(&mut out, &notice::recalled_part(p.base.byte, p.base.line + 1));
            out.push('\n');
        }
        if omits {
            out.push_str(&text[..cut.head_end]);
            let o = p.omitted(cut);
            let m = MiddleCut {
                start_byte: o.start_byte,
                end_byte: o.end_byte,
                start_line: o.start_line,
                end_line: o.end_line,
                above_last_line: if cut.head_end == 0 { 0 } else { p.line(cut.head_end - 1) },
                below_first_line: p.line(cut.tail_start),
            };
            match self.records {
                Some(r) => push_line(&mut out, &marker::records(&records_cut(r, cut), &m, &totals.recall)),
                None => push_line(&mut out, &marker::middle(&m, totals)),
            }
            out.push('\n');
            let errors = self.errors.get();
            if !errors.is_empty() || self.drained.is_some() {
                let (ex, k) = error_lines::excerpt(
                    text,
                    errors,
                    cut.head_end,
                    cut.tail_start,
                    self.error_cap,
                    |off| p.line(off),
                    self.drained.as_ref(),
                );
                out.push_str(&ex);
                shown_errors = k;
            }
            out.push_str(&text[cut.tail_start..]);
        } else {
            out.push_str(text);
        }
        if self.cap_hit {
            push_line(&mut out, &marker::cap(totals, self.cap));
        }
        for n in self.notes {
            push_line(&mut out, n);
        }
        (out, shown_errors)
    }
}

/// Appends `s` on a line of its own.
fn push_line(out: &mut String, s: &str) {
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(s);
}

/// Which records `cut` leaves out.
fn records_cut(r: &Records, cut: Cut) -> RecordsCut {
    // Index of the first omitted record (records before it are shown).
    let first = if cut.head_end <= r.header_end { 0 } else { r.index_of(cut.head_end, false) };
    let last = if cut.tail_start >= r.len { r.count() } else { r.index_of(cut.tail_start, true) };
    RecordsCut { first, last, total: r.count(), header: r.header_end > 0 }
}

//! Lines that look like errors, rescued from the part of a log the budget
//! omits.
//!
//! A build or test log cut to head and tail loses its middle, which is
//! where the first compiler error or failing test usually is. One
//! Aho-Corasick pass (ASCII case-insensitive) over the text finds lines
//! with error words; the lines inside the omitted middle are shown after
//! the middle marker with their line numbers, within a small byte share of
//! the token budget (about a tenth of it, at four bytes a token; the
//! rendered output that holds them is still counted exactly). When there are more than fit, the first and the last
//! ones are shown. The middle a host drained (never in the text) brings
//! its own error lines, the lines [`find`] would give, read from the words
//! the redaction's keyword pass found as it was drained
//! (`stages/byte_cap/drain.rs`, [`lines_of`]: one pass over the middle, not
//! two); they take their place between those of the text.

use std::cell::OnceCell;
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;

use crate::api::GapLine;
use crate::markup::defang;
use crate::markup::marker;
use crate::support::edits;
use crate::support::text::floor_boundary;

pub(crate) use crate::support::error_words::WORDS;

/// Longest part of one error line shown, bytes.
pub const LINE_MAX: usize = 240;

/// Error lines a drained middle keeps from its start, and from its end
/// (`stages/byte_cap/drain.rs`); [`excerpt`] shows them around those not kept.
pub const KEEP: usize = 16;

fn automaton() -> &'static AhoCorasick {
    static AC: OnceLock<AhoCorasick> = OnceLock::new();
    crate::support::text::words_automaton(&AC, WORDS)
}

/// Byte ranges (without the newline) of every error-looking line.
pub fn find(text: &str) -> Vec<(usize, usize)> {
    lines_of(text, automaton().find_iter(text).map(|m| m.range()))
}

/// The error lines of a text ([`find`]), found on first use: only a cut
/// shows them, and most texts fit whole.
pub(crate) struct Lazy<'t> {
    text: Option<&'t str>,
    found: OnceCell<Vec<(usize, usize)>>,
}

impl<'t> Lazy<'t> {
    /// The error lines of `text`; of none with `None` (a class whose
    /// strategy shows no error lines).
    pub fn new(text: Option<&'t str>) -> Self {
        Self { text, found: OnceCell::new() }
    }

    /// [`find`] of the text, once.
    pub fn get(&self) -> &[(usize, usize)] {
        self.found.get_or_init(|| self.text.map_or_else(Vec::new, find))
    }
}

/// The lines of `text` that hold one of `words` (occurrences of [`WORDS`],
/// sorted by start): byte ranges without the newline, each line once. The
/// words a scan's keyword pass found ([`crate::stages::redact::Pass::spans_and_error_words`])
/// give the lines [`find`] gives.
pub fn lines_of(text: &str, words: impl Iterator<Item = std::ops::Range<usize>>) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out: Vec<(usize, usize)> = Vec::new();
    for m in words {
        if out.last().is_some_and(|&(_, e)| m.start <= e) {
            continue; // same line
        }
        let s = memchr::memrchr(b'\n', &b[..m.start]).map_or(0, |p| p + 1);
        let e = memchr::memchr(b'\n', &b[m.start..]).map_or(b.len(), |p| m.start + p);
        out.push((s, e));
    }
    out
}

/// The error lines of a drained middle, and where it is.
pub struct Drained<'a> {
    /// Text offset of the middle.
    pub at: usize,
    /// Number of its first line in the whole output.
    pub first_line: u64,
    /// Its error lines: the first and the last ones.
    pub lines: &'a [GapLine],
    /// Its error lines in all.
    pub seen: u64,
}

/// The excerpt for the omitted range `from..to`: a marker line and the
/// error lines inside it, numbered by `line_of`, within `cap` bytes, with
/// the error lines of a drained middle inside it.
/// Returns the excerpt and how many lines it shows.
pub fn excerpt(
    text: &str,
    lines: &[(usize, usize)],
    from: usize,
    to: usize,
    cap: usize,
    line_of: impl Fn(usize) -> u64,
    drained: Option<&Drained>,
) -> (String, u64) {
    // `lines` is sorted and disjoint: the ones inside are one run, found by
    // bisection, and only the ones shown are formatted (a render is retried
    // while the budget is fitted; a log may have 100 000 error lines).
    let run = |from: usize, to: usize| {
        let lo = lines.partition_point(|&(s, _)| s < from);
        &lines[lo..lo + lines[lo..].partition_point(|&(_, e)| e <= to)]
    };
    let at = drained.map_or(to, |d| d.at.clamp(from, to));
    let (before, after) = (run(from, at), if at < to { run(at, to) } else { &[][..] });
    // The drained lines: the first `kept_first` of them, then a hole of those
    // not kept, then the last ones.
    let (kept, seen) = drained.map_or((&[][..], 0), |d| (d.lines, (d.seen as usize).max(d.lines.len())));
    let kept_first = kept.len().min(KEEP);
    let n = before.len() + seen + after.len();
    if n == 0 || cap < 200 {
        return (String::new(), 0);
    }
    let render_text = |(s, e): (usize, usize)| {
        let end = floor_boundary(text, e.min(s + LINE_MAX));
        marker::error_line_excerpt(line_of(s), text[s..end].trim_end_matches('\r'), end < e)
    };
    // A drained line comes from the host: shown like content, defanged and
    // on one line (the final pass redacts it again with everything else).
    let render_drained = |g: &GapLine, first_line: u64| {
        let one: String = g.text.chars().map(|c| if c == '\n' || c == '\r' { ' ' } else { c }).collect();
        let end = floor_boundary(&one, LINE_MAX);
        let (safe, _) = edits::apply(&one[..end], &defang::edits(&one[..end]));
        marker::error_line_excerpt(first_line + g.line, &safe, g.cut || end < one.len())
    };
    let item = |k: usize| -> Option<String> {
        if k < before.len() {
            return Some(render_text(before[k]));
        }
        let k = k - before.len();
        if k >= seen {
            return Some(render_text(after[k - seen]));
        }
        let d = drained?;
        let last_from = seen - (kept.len() - kept_first);
        match k {
            k if k < kept_first => Some(render_drained(&kept[k], d.first_line)),
            k if k >= last_from => Some(render_drained(&kept[kept_first + (k - last_from)], d.first_line)),
            _ => None, // counted while drained, not kept
        }
    };
    let head = marker::error_lines_header();
    let mut room = cap.saturating_sub(head.len() + 80);
    // First ones from the start, last ones from the end, alternately; a
    // side stops where the drained lines were not kept.
    let (mut first, mut last) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0usize, n);
    let mut take_front = true;
    let (mut front_open, mut back_open) = (true, true);
    while i < j && (front_open || back_open) {
        if !(if take_front { front_open } else { back_open }) {
            take_front = !take_front;
            continue;
        }
        let Some(line) = item(if take_front { i } else { j - 1 }) else {
            if take_front {
                front_open = false;
            } else {
                back_open = false;
            }
            take_front = !take_front;
            continue;
        };
        if line.len() > room {
            break;
        }
        room -= line.len();
        if take_front {
            first.push(line);
            i += 1;
        } else {
            last.push(line);
            j -= 1;
        }
        take_front = !take_front;
    }
    let shown = first.len() + last.len();
    if shown == 0 {
        return (String::new(), 0);
    }
    let mut out = head;
    for l in &first {
        out.push_str(l);
    }
    if shown < n {
        out.push_str(&marker::more_error_lines(n - shown));
    }
    for l in last.iter().rev() {
        out.push_str(l);
    }
    (out, shown as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_and_excerpts() {
        let text = "ok 1\nerror: bad thing\nok 2\nthread 'main' panicked at x\nok 3\nFAILED tests::a\n";
        let found = find(text);
        assert_eq!(found.len(), 3);
        let (ex, n) =
            excerpt(text, &found, 0, text.len(), 1000, |off| text[..off].matches('\n').count() as u64 + 1, None);
        assert_eq!(n, 3);
        assert!(ex.contains("     2| error: bad thing\n"), "{ex}");
        assert!(ex.contains("     6| FAILED tests::a\n"), "{ex}");
        let (_, n) = excerpt(text, &found, 0, 10, 1000, |_| 0, None);
        assert_eq!(n, 0);
    }
}

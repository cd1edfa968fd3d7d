//! Lines that look like errors, rescued from the part of a log the budget
//! omits.
//!
//! A build or test log cut to head and tail loses its middle, which is
//! where the first compiler error or failing test usually is. The lines
//! with error words ([`find`]: one Aho-Corasick pass, ASCII
//! case-insensitive) inside the omitted middle are shown after the middle
//! marker with their line numbers, within a small byte share of the token
//! budget (about a tenth of it, at four bytes a token; the rendered output
//! that holds them is still counted exactly). When there are more than
//! fit, the first and the last ones are shown.
//!
//! The words themselves come from the redaction's keyword pass, which
//! finds them with the rules' keywords: the redacted text's lines are read
//! from them and its edits ([`lines_after_edits`]: only the lines that
//! hold a replacement are searched again). The middle a host drained
//! (never in the text) brings its own error lines, read the same way as it
//! was drained (`stages/byte_cap/drain.rs`, [`lines_of`]); they take their
//! place between those of the text.

use std::cell::OnceCell;
use std::ops::Range;
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;

use crate::api::GapLine;
use crate::markup::defang;
use crate::markup::marker;
use crate::support::edits::OffsetMap;
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

/// Where the error words of an edited text's source are, and the map of
/// its edits (a redaction's): enough to read the edited text's error lines
/// without searching all of it ([`lines_after_edits`]).
#[derive(Clone, Copy)]
pub(crate) struct Known<'t> {
    /// Every occurrence of a word of [`WORDS`] in the source, as the
    /// redaction's keyword pass found them (overlapping, in any order).
    pub words: &'t [Range<usize>],
    /// The edited text → its source.
    pub map: &'t OffsetMap,
}

/// The error lines of a text ([`find`]), found on first use: only a cut
/// shows them, and most texts fit whole.
pub(crate) struct Lazy<'t> {
    text: Option<&'t str>,
    known: Option<Known<'t>>,
    found: OnceCell<Vec<(usize, usize)>>,
}

impl<'t> Lazy<'t> {
    /// The error lines of `text`; of none with `None` (a class whose
    /// strategy shows no error lines). With `known`, read from its source's
    /// words.
    pub fn new(text: Option<&'t str>, known: Option<Known<'t>>) -> Self {
        Self { text, known, found: OnceCell::new() }
    }

    /// [`find`] of the text, once.
    pub fn get(&self) -> &[(usize, usize)] {
        self.found.get_or_init(|| match (self.text, self.known) {
            (None, _) => Vec::new(),
            (Some(t), Some(k)) => lines_after_edits(t, k.words, k.map),
            (Some(t), None) => find(t),
        })
    }
}

/// The lines [`find`] gives for `text`, an edit of a source whose error
/// words are `words` (every occurrence) by the replacements of `map`.
///
/// A line of `text` that holds no replacement (nor the place of a
/// deletion) is a line of the source, moved, byte for byte: it holds a word
/// exactly where the source held one clear of every replacement. So those
/// words are moved, and only the lines that hold a replacement are
/// searched. A redacted log's lines are mostly untouched: searching all of
/// a 256 KiB text again was a tenth of fitting it in wasm.
pub fn lines_after_edits(text: &str, words: &[Range<usize>], map: &OffsetMap) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let segs: Vec<(Range<usize>, Range<usize>)> = map.segments().collect();
    let mut sorted = words.to_vec();
    sorted.sort_unstable_by_key(|w| w.start);
    let mut found = Vec::with_capacity(sorted.len());
    // Words clear of every replacement, moved by those before them; a
    // replacement ends before a word when its source does (an insertion
    // at the word's start too).
    let (mut k, mut shift) = (0, 0isize);
    for w in sorted {
        while let Some((out, src)) = segs.get(k).filter(|(_, src)| src.end <= w.start) {
            shift += out.len() as isize - src.len() as isize;
            k += 1;
        }
        if segs.get(k).is_some_and(|(_, src)| src.start < w.end) {
            continue; // inside or across a replacement: its line is searched
        }
        found.push(w.start.saturating_add_signed(shift)..w.end.saturating_add_signed(shift));
    }
    // The lines that hold a replacement, each searched once.
    let mut searched = 0;
    for (out, _) in &segs {
        let start = memchr::memrchr(b'\n', &b[..out.start]).map_or(0, |p| p + 1).max(searched);
        let end = memchr::memchr(b'\n', &b[out.end..]).map_or(b.len(), |p| out.end + p);
        if start < end {
            found.extend(automaton().find_iter(&text[start..end]).map(|m| start + m.start()..start + m.end()));
        }
        searched = searched.max(end);
    }
    found.sort_unstable_by_key(|w| w.start);
    lines_of(text, found.into_iter())
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
        let (safe, _) = defang::text(&one[..end]);
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
    use crate::support::edits;

    /// Every occurrence of a word, as the redaction's keyword pass finds
    /// them (overlapping, ASCII case-insensitive).
    fn every_word(text: &str) -> Vec<Range<usize>> {
        let ac = aho_corasick::AhoCorasick::builder().ascii_case_insensitive(true).build(WORDS).unwrap();
        ac.find_overlapping_iter(text).map(|m| m.range()).collect()
    }

    #[test]
    fn lines_after_edits_are_the_lines_find_gives() {
        let parts = ["error", "ERR", "or", "\n", " ", "fail", "ed", "exit ", "status", "x", "é", "panic", "could not"];
        let withs = ["", "[REDACTED:x]", "error", "\n", "or", "e", "panic\nok", "\u{200b}"];
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for _ in 0..3000 {
            let src: String = (0..next(40)).map(|_| parts[next(parts.len())]).collect();
            let bounds: Vec<usize> = (0..=src.len()).filter(|&i| src.is_char_boundary(i)).collect();
            let mut at: Vec<usize> = (0..next(8)).map(|_| bounds[next(bounds.len())]).collect();
            at.sort_unstable();
            // Pairs of positions, sorted, as replacements; an empty source
            // span is an insertion.
            let edits: Vec<edits::Edit> = at
                .chunks_exact(2)
                .map(|p| edits::Edit { start: p[0], end: p[1], with: withs[next(withs.len())].to_string() })
                .collect();
            let (text, map) = edits::apply(&src, &edits);
            assert_eq!(lines_after_edits(&text, &every_word(&src), &map), find(&text), "{src:?} {edits:?}");
        }
    }

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

//! Draining the middle of a long output: read once, kept never.
//!
//! A host that reads a long output as head + tail sends every byte that
//! falls between them through [`step`], chunk by chunk, with the [`Gap`]
//! the step before returned. Each step counts the bytes and newlines,
//! redacts (for the counts, and for the lines it keeps), and keeps the
//! error-looking lines ([`crate::strategies::error_lines`], whose words the
//! redaction's keyword pass finds on its way): the first and
//! the last [`KEEP`], each at most [`LINE_MAX`] bytes, with their line
//! numbers. Like the streaming `redact` step, it commits up to
//! [`OVERLAP`](crate::stages::redact::OVERLAP) bytes before the end of the data, moved back to a line start
//! and forward past a secret that crosses it, so neither a line nor a
//! secret is split between two steps; the caller sends the rest again.

use std::collections::BTreeMap;

use crate::api::{DrainStep, Gap, GapLine, SanitizeError};
use crate::markup;
use crate::pack::CompiledPack;
use crate::record::counts_to_records;
use crate::stages::redact::{past_matches, usual_commit, Pass, Span};
use crate::strategies::error_lines::{self, KEEP, LINE_MAX};
use crate::support::text::{self, floor_boundary};

/// The gap a host starts with: after a head of `start` bytes, nothing
/// drained yet.
pub fn empty_gap(start: u64) -> Gap {
    Gap {
        start_byte: start,
        bytes: 0,
        newlines: 0,
        ends_line: false,
        error_lines: Vec::new(),
        error_lines_seen: 0,
        redactions: Vec::new(),
        unfinished: false,
        json: Vec::new(),
        unscanned: 0,
    }
}

/// One step over `data`: what it adds to `gap`, and how much it consumed.
pub fn step(gap: &Gap, data: &[u8], last: bool, pack: &CompiledPack) -> Result<DrainStep, SanitizeError> {
    let d = text::decode(data);
    let t = d.text.as_str();
    // Strict mode: the middle is never shown, and its kept lines are
    // better over-redacted than not.
    let pass = Pass::new(pack, false);
    // One keyword pass finds the secrets and the error words.
    let (spans, words) = pass.spans_and_error_words(t);
    let commit = commit_point(t, &spans, last);
    let consumed = if commit == t.len() { data.len() } else { d.map.to_src(commit) };
    let mut out = gap.clone();
    let before = out.newlines;
    out.bytes += consumed as u64;
    out.newlines += memchr::memchr_iter(b'\n', &data[..consumed]).count() as u64;
    if consumed > 0 {
        out.ends_line = data[consumed - 1] == b'\n';
    }
    crate::support::json_scan::feed_all(&mut out.json, &data[..consumed]);
    let found = match words {
        Some(mut w) => {
            // What `find` on `t[..commit]` sees: the words inside it.
            w.retain(|r| r.end <= commit);
            w.sort_unstable_by_key(|r| r.start);
            error_lines::lines_of(&t[..commit], w.into_iter())
        }
        None => error_lines::find(&t[..commit]),
    };
    let (mut line, mut at) = (before, 0usize);
    for &(s, e) in &found {
        line += memchr::memchr_iter(b'\n', &t.as_bytes()[at..s]).count() as u64;
        at = s;
        let (shown, cut) = redacted_line(t, s, e, &spans);
        if out.error_lines.len() >= 2 * KEEP {
            out.error_lines.remove(KEEP); // the oldest of the last ones
        }
        out.error_lines.push(GapLine { line, text: shown, cut });
    }
    out.error_lines_seen += found.len() as u64;
    let mut counts: BTreeMap<String, u32> = out.redactions.iter().map(|c| (c.rule_id.clone(), c.count)).collect();
    for s in spans.iter().filter(|s| s.start < commit) {
        *counts.entry(s.rule.clone()).or_default() += 1;
    }
    out.redactions = counts_to_records(&counts);
    if let Some(e) = pass.error() {
        return Err(e);
    }
    Ok(DrainStep { gap: out, consumed: consumed as u32 })
}

/// Where this step stops: the end when `last`, else [`OVERLAP`](crate::stages::redact::OVERLAP) before
/// it, at a line start when there is one, never inside a secret.
fn commit_point(t: &str, spans: &[Span], last: bool) -> usize {
    if last {
        return t.len();
    }
    let usual = usual_commit(t.as_bytes());
    // Past the matches that cross the point (their secret, or their
    // context and then their secret), on to the next line start if it is
    // within the data and no match crosses it.
    let commit = past_matches(spans, usual);
    if commit > usual {
        if let Some(p) = memchr::memchr(b'\n', &t.as_bytes()[commit..]) {
            let next = commit + p + 1;
            if past_matches(spans, next) == next {
                return next;
            }
        }
    }
    commit
}

/// Line `t[s..e]` with the secrets in it replaced, at most [`LINE_MAX`]
/// bytes of it, and whether it was shortened.
fn redacted_line(t: &str, s: usize, e: usize, spans: &[Span]) -> (String, bool) {
    let mut out = String::new();
    let mut pos = s;
    let from = spans.partition_point(|x| x.end <= s);
    for x in spans[from..].iter().take_while(|x| x.start < e) {
        out.push_str(&t[pos..x.start.max(pos)]);
        out.push_str(&markup::redacted(&x.rule));
        pos = x.end.min(e).max(pos);
    }
    out.push_str(&t[pos..e]);
    let out = out.trim_end_matches('\r');
    let end = floor_boundary(out, LINE_MAX);
    (out[..end].to_string(), end < out.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::fixtures;
    use crate::stages::redact::OVERLAP;

    fn pack() -> CompiledPack {
        fixtures::pack(vec![fixtures::rule(serde_json::json!({
            "id": "tok", "regex": r"\b(tok_[a-z0-9]{20})\b", "keywords": ["tok_"], "secret_group": 1
        }))])
    }

    /// Drains `input` in chunks of `chunk` bytes, as a host does.
    fn drain(input: &[u8], chunk: usize, p: &CompiledPack) -> Gap {
        let mut gap = empty_gap(0);
        let mut carry = Vec::new();
        let mut chunks = input.chunks(chunk).peekable();
        while let Some(c) = chunks.next() {
            carry.extend_from_slice(c);
            let last = chunks.peek().is_none();
            let r = step(&gap, &carry, last, p).unwrap();
            carry.drain(..r.consumed as usize);
            gap = r.gap;
        }
        assert!(carry.is_empty());
        gap
    }

    #[test]
    fn counts_lines_errors_and_secrets_whatever_the_chunks() {
        let p = pack();
        let mut input = Vec::new();
        for i in 0..30_000 {
            input.extend_from_slice(format!("unit {i} ok\n").as_bytes());
            if i % 500 == 499 {
                input.extend_from_slice(b"error: failed with tok_qwhzkrmvtp0123456789 \xff\n");
            }
        }
        let newlines = input.iter().filter(|&&b| b == b'\n').count() as u64;
        for chunk in [OVERLAP + 1, OVERLAP + 7919, 3 * OVERLAP] {
            let g = drain(&input, chunk, &p);
            assert_eq!((g.bytes, g.newlines, g.ends_line), (input.len() as u64, newlines, true), "chunk {chunk}");
            assert_eq!((g.error_lines_seen, g.error_lines.len()), (60, 2 * KEEP));
            assert_eq!(g.redactions[0].count, 60);
            // The first error line has 500 lines before it.
            assert_eq!(g.error_lines[0].line, 500);
            assert_eq!(g.error_lines[0].text, "error: failed with [REDACTED:tok] \u{FFFD}");
            // The last kept is the last one: 30 000 units and 59 error lines before it.
            assert_eq!(g.error_lines.last().unwrap().line, 30_000 + 59);
        }
    }

    /// The error lines read from the keyword pass are the lines a search
    /// of their own finds: texts of error words in any case, overlapping,
    /// at the ends, in non-ASCII text and next to invisible characters
    /// (whose pass runs apart).
    mod words_from_the_keyword_pass {
        use super::*;
        use proptest::prelude::*;

        const PARTS: &[&str] = &[
            "error",
            "ERROR",
            "Err",
            "or",
            "fail",
            "ed",
            "ure",
            "exit status",
            "exit  code",
            "timed out",
            "Segmentation fault",
            "could not",
            "\n",
            "\r\n",
            " ",
            "x",
            "é",
            "\u{200B}",
            "tok_",
            "qwhzkrmvtp0123456789",
            "panicked",
            "Traceback",
            "deniedkilled",
        ];

        fn check(text: &str, p: &CompiledPack) {
            let pass = Pass::new(p, false);
            let (_, words) = pass.spans_and_error_words(text);
            let visible = text.contains('\u{200B}');
            match words {
                Some(mut w) => {
                    assert!(!visible);
                    w.sort_unstable_by_key(|r| r.start);
                    assert_eq!(error_lines::lines_of(text, w.into_iter()), error_lines::find(text));
                }
                None => assert!(visible),
            }
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2000))]
            #[test]
            fn same_lines_as_find(parts in proptest::collection::vec(0..PARTS.len(), 0..40)) {
                let text: String = parts.iter().map(|&i| PARTS[i]).collect();
                check(&text, &pack());
            }
        }

        #[test]
        fn same_lines_on_this_repository_s_text() {
            let p = pack();
            let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
            // And all of it as one text, past the size that takes the DFA.
            let mut all = String::new();
            for dir in ["guest/src", "host/src", "docs", "rules", "examples"] {
                let mut stack = vec![std::path::PathBuf::from(root).join(dir)];
                while let Some(d) = stack.pop() {
                    for e in std::fs::read_dir(&d).unwrap().flatten() {
                        let path = e.path();
                        if path.is_dir() {
                            stack.push(path);
                        } else if let Ok(text) = std::fs::read_to_string(&path) {
                            check(&text, &p);
                            all.push_str(&text);
                        }
                    }
                }
            }
            assert!(all.len() > crate::stages::redact::DFA_MIN_TEXT);
            check(&all, &p);
        }
    }
}

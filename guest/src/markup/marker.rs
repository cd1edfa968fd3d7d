//! Truncation markers: what the model holds, what it does not, and how to
//! read the rest.
//!
//! Every marker starts with the fixed prefix `[truncated:` and states the
//! threshold, the original size, the kept ranges and the recovery route
//! (byte `offset`/`limit` and line numbers), so that a model neither
//! mistakes a fragment for the whole nor re-reads what it already has.
//! The exception is [`error_message`]: a tool error's message is not
//! kept, so its marker gives the sizes only.
//! Numbers are positions in the original output: bytes from 0, exclusive
//! ends; lines from 1, inclusive.

use crate::api::OutputSource;

/// The fixed, parseable prefix of every marker.
pub use crate::markup::lexicon::MARKER_PREFIX as PREFIX;

/// Where a middle cut is, in original coordinates.
pub struct MiddleCut {
    /// First omitted byte.
    pub start_byte: u64,
    /// End of the omitted bytes (exclusive).
    pub end_byte: u64,
    /// Line holding the first omitted byte.
    pub start_line: u64,
    /// Line holding the last omitted byte.
    pub end_line: u64,
    /// Last line shown (partly or wholly) above.
    pub above_last_line: u64,
    /// First line shown below.
    pub below_first_line: u64,
}

/// How an omitted part can be had again: by `recall`, when the host keeps
/// the full output, else as its source allows.
#[derive(Clone, Debug)]
pub struct Recall {
    /// Call id the output is kept under (safe alphabet), when kept.
    pub call_id: Option<String>,
    /// The tool that serves recall (the options checked its alphabet).
    pub tool: String,
    /// Bytes 0..n of the original are kept.
    pub kept_bytes: u64,
    /// Where the output came from.
    pub source: OutputSource,
}

impl Default for Recall {
    fn default() -> Self {
        Self { call_id: None, tool: "recall".into(), kept_bytes: 0, source: OutputSource::Tool }
    }
}

impl Recall {
    /// From the options: kept only with a call id and `recall-bytes`.
    pub fn from_options(opts: &crate::api::Options) -> Self {
        let (call_id, recall_bytes, source) = (&opts.call_id, opts.recall_bytes, opts.source);
        let tool = opts.recall_tool.clone().unwrap_or_else(|| "recall".into());
        let id: String = call_id
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'))
            .take(128)
            .collect();
        match recall_bytes {
            Some(n) if !id.is_empty() && n > 0 => Self { call_id: Some(id), tool, kept_bytes: n, source },
            _ => Self { source, tool, ..Self::default() },
        }
    }

    /// Whether bytes `start..end` of the original can be recalled.
    pub fn covers(&self, end_byte: u64) -> bool {
        self.call_id.is_some() && end_byte <= self.kept_bytes
    }

    /// Short wording for notes inside data (JSON): how the rest is had.
    pub fn short(&self, end_byte: u64) -> String {
        match &self.call_id {
            Some(id) if self.covers(end_byte) => format!(", recallable: {} call_id={id}", self.tool),
            _ => ", not kept".into(),
        }
    }
}

/// How to read an omitted range: recall when the host keeps it, else what
/// its source allows: a file is re-read by offset, a tool called again
/// with one, a stream (a command's output) cannot be read back. Bytes
/// from 0 (exclusive end), lines from 1 (inclusive).
pub fn recovery(start_byte: u64, end_byte: u64, start_line: u64, end_line: u64, recall: &Recall) -> String {
    let n = end_byte.saturating_sub(start_byte);
    let lines = end_line.saturating_sub(start_line) + 1;
    match (&recall.call_id, recall.source) {
        (Some(id), _) if recall.covers(end_byte) => format!(
            "The omitted part is not shown but recallable: {t}(call_id={id}, offset={start_byte}, limit={n}) \
             in bytes, or {t}(call_id={id}, offset={start_line}, limit={lines}, unit=lines).",
            t = recall.tool
        ),
        (_, OutputSource::File) => format!(
            "The omitted part is not kept here: re-read it from the file, offset={start_byte} limit={n} (bytes) \
             or lines {start_line}-{end_line}."
        ),
        (_, OutputSource::Pipe) => "The omitted part was not kept and cannot be read back.".into(),
        _ => format!(
            "The omitted part is not kept: to read it, call the tool again with offset={start_byte} limit={n} \
             (bytes) or offset={start_line} limit={lines} (lines)."
        ),
    }
}

/// Sizes of the whole output.
pub struct Totals {
    /// Bytes read (after the cap).
    pub read_bytes: u64,
    /// Bytes of the whole output, when known.
    pub total_bytes: Option<u64>,
    /// Lines in the bytes read.
    pub lines: u64,
    /// What the budgets were, for the threshold statement.
    pub threshold: String,
    /// Recovery route.
    pub recall: Recall,
    /// A host drained the middle: the sizes are of the whole output, read
    /// once.
    pub drained: bool,
}

/// The budgets, as the header states them.
pub fn threshold(b: &crate::api::Budget) -> String {
    format!("limits {} bytes, {} chars, {} tokens", b.max_bytes, b.max_chars, b.max_tokens)
}

/// First line of a truncated output: it is partial, and cuts are marked.
pub fn header(t: &Totals, parts: usize, shown_bytes: u64) -> String {
    let of = match t.total_bytes {
        Some(n) => format!("{n} bytes"),
        None => format!("more than {} bytes", t.read_bytes),
    };
    format!(
        "{PREFIX} partial output: {parts} part(s) totalling {shown_bytes} of {of} shown ({}); each cut is marked with a {PREFIX} line]",
        t.threshold
    )
}

/// The marker between head and tail.
pub fn middle(c: &MiddleCut, t: &Totals) -> String {
    let n = c.end_byte - c.start_byte;
    // With a drained middle every byte was read, and only head and tail kept.
    let of = if t.drained { "of the output, read once" } else { "read" };
    format!(
        "{PREFIX} omitted bytes {}-{} ({n} bytes, lines {}-{}) of the {} bytes / {} lines {of}; \
         shown: lines 1-{} above and lines {}-{} below. {}]",
        c.start_byte,
        c.end_byte,
        c.start_line,
        c.end_line,
        t.read_bytes,
        t.lines,
        c.above_last_line,
        c.below_first_line,
        t.lines,
        recovery(c.start_byte, c.end_byte, c.start_line, c.end_line, &t.recall),
    )
}

/// The marker after the last byte read, when the byte cap stopped reading.
pub fn cap(t: &Totals, cap: u64) -> String {
    if t.drained {
        // Only a host that stopped reading (its drain limit) gets here.
        return format!(
            "{PREFIX} reading stopped at byte {} ({} lines read), the host's drain limit; the output went on, its size \
             unknown. The rest was not read.]",
            t.read_bytes,
            t.lines.max(1)
        );
    }
    let rest = match t.total_bytes {
        Some(total) if total > t.read_bytes => {
            format!("bytes {}-{total} ({} bytes) were not read", t.read_bytes, total - t.read_bytes)
        }
        _ => format!("the output continued past byte {} (total size unknown)", t.read_bytes),
    };
    let how = match (&t.recall.call_id, t.total_bytes, t.recall.source) {
        (Some(id), Some(total), _) if t.recall.covers(total) => format!(
            "The rest is not shown but recallable: {}(call_id={id}, offset={}, limit={}) in bytes.",
            t.recall.tool,
            t.read_bytes,
            total - t.read_bytes
        ),
        (_, _, OutputSource::File) => {
            format!("The rest is not kept here: re-read it from the file, from offset={} (bytes) on.", t.read_bytes)
        }
        (_, _, OutputSource::Pipe) => "The rest was not read.".into(),
        _ => format!(
            "The rest is not kept: to read it, call the tool again with offset={} (bytes) or from line {} on.",
            t.read_bytes,
            t.lines.max(1)
        ),
    };
    format!("{PREFIX} byte cap of {cap} bytes reached; {rest}. {how}]")
}

/// Inside thinned JSON: a container past the depth limit.
pub fn json_container(kind: &str, n: usize, unit: &str, rest: &str) -> String {
    format!("{PREFIX} {kind} with {n} {unit} omitted{rest}]")
}

/// Inside thinned JSON: the array items left out, as an element.
pub fn json_items(omitted: usize, first: usize, last: usize, of: usize, rest: &str) -> String {
    format!("{PREFIX} {omitted} items omitted (indexes {first}-{last} of {of}){rest}]")
}

/// Inside a JSON document read as head + tail: the elements of the
/// container around the drained middle left out, `(first, last, of)` their
/// indexes from 0, `at` where they were in the output.
pub fn json_gap(
    omitted: u64,
    unit: &str,
    (first, last, of): (u64, u64, u64),
    at: &crate::api::Span,
    rest: &str,
) -> String {
    format!(
        "{PREFIX} {omitted} {unit} omitted (indexes {first}-{last} of {of}; bytes {}-{}, lines {}-{} of the output, read once){rest}]",
        at.start_byte, at.end_byte, at.start_line, at.end_line
    )
}

/// Inside thinned JSON: the member name and value that count the object
/// members left out.
pub fn json_keys(omitted: usize, rest: &str) -> (String, String) {
    (format!("{PREFIX}]"), format!("{omitted} more keys omitted{rest}"))
}

/// Ends a tool error's message cut to its share of the token budget.
pub fn error_message(kept: usize, total: usize) -> String {
    format!("… {PREFIX} error message cut after {kept} of {total} bytes]")
}

/// Inside thinned JSON: a long string shortened in place.
pub fn json_string(head: &str, omitted: usize, rest: &str) -> String {
    format!("{head}… {PREFIX} {omitted} chars omitted{rest}]")
}

/// Member name of the byte-cap note that closes a cut JSON object.
pub fn json_cap_key() -> String {
    format!("{PREFIX} byte cap]")
}

/// The byte-cap note inside a JSON document cut by the cap.
pub fn json_cap_note(cap: u64, rest: &str) -> String {
    format!("{PREFIX} byte cap of {cap} bytes reached: {rest}]")
}

/// What of a JSON document cut by the byte cap was not read.
pub fn json_unread(from: u64, to: Option<u64>, recall: &Recall) -> String {
    match to {
        Some(to) if to > from => format!("bytes {from}-{to} of the document were not read{}", recall.short(to)),
        _ => format!("the document continued past byte {from} (total size unknown), not kept"),
    }
}

/// Heads the error-looking lines rescued from an omitted middle.
pub fn error_lines_header() -> String {
    format!("{PREFIX} lines of the omitted part that look like errors, with their line numbers:]\n")
}

/// Error-looking lines of the omitted middle that did not fit.
pub fn more_error_lines(n: usize) -> String {
    format!("{PREFIX} {n} more error-like lines in the omitted part not shown]\n")
}

/// One rescued error line, with its line number.
pub fn error_line_excerpt(line: u64, text: &str, cut: bool) -> String {
    format!("{line:>6}| {text}{}\n", if cut { "…" } else { "" })
}

/// The marker between the head and tail records of JSON lines or CSV.
pub fn records(r: &RecordsCut, m: &MiddleCut, recall: &Recall) -> String {
    let header = if r.header { "the header line, " } else { "" };
    format!(
        "{PREFIX} omitted records {}-{} of {} ({} records; bytes {}-{}, lines {}-{}); shown: {header}records 1-{} above and {}-{} below. {}]",
        r.first + 1,
        r.last,
        r.total,
        r.last - r.first,
        m.start_byte,
        m.end_byte,
        m.start_line,
        m.end_line,
        r.first,
        r.last + 1,
        r.total,
        recovery(m.start_byte, m.end_byte, m.start_line, m.end_line, recall)
    )
}

/// Which records a records cut left out: indexes from 0 of the first
/// omitted and the first shown after them.
pub struct RecordsCut {
    /// First omitted record (records before it are shown).
    pub first: usize,
    /// First record shown after the cut.
    pub last: usize,
    /// Records in all.
    pub total: usize,
    /// A header line is shown.
    pub header: bool,
}

//! Truncation markers: what the model holds, what it does not, and how to
//! read the rest.
//!
//! Every marker starts with the fixed prefix `[truncated:` and states the
//! threshold, the original size, the kept ranges and the recovery route
//! (byte `offset`/`limit` and line numbers), so that a model neither
//! mistakes a fragment for the whole nor re-reads what it already has.
//! Numbers are positions in the original output: bytes from 0, exclusive
//! ends; lines from 1, inclusive.

/// The fixed, parseable prefix of every marker.
pub const PREFIX: &str = "[truncated:";

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
    let line_count = c.end_line.saturating_sub(c.start_line) + 1;
    format!(
        "{PREFIX} omitted bytes {}-{} ({n} bytes, lines {}-{}) of the {} bytes / {} lines read; \
         shown: lines 1-{} above and lines {}-{} below. The omitted part is not kept: to read it, \
         call the tool again with offset={} limit={n} (bytes) or offset={} limit={line_count} (lines).]",
        c.start_byte,
        c.end_byte,
        c.start_line,
        c.end_line,
        t.read_bytes,
        t.lines,
        c.above_last_line,
        c.below_first_line,
        t.lines,
        c.start_byte,
        c.start_line,
    )
}

/// The marker after the last byte read, when the byte cap stopped reading.
pub fn cap(t: &Totals, cap: u64) -> String {
    let rest = match t.total_bytes {
        Some(total) if total > t.read_bytes => {
            format!("bytes {}-{total} ({} bytes) were not read", t.read_bytes, total - t.read_bytes)
        }
        _ => format!("the output continued past byte {} (total size unknown)", t.read_bytes),
    };
    format!(
        "{PREFIX} byte cap of {cap} bytes reached; {rest}. The rest is not kept: to read it, \
         call the tool again with offset={} (bytes) or from line {} on.]",
        t.read_bytes,
        t.lines.max(1)
    )
}

//! Notices: one line each, telling the model what it does not see and why
//! (blocks left out, markup not read, structured content thinned), or what
//! stands in for content (binary output, no output at all).

use super::marker::PREFIX;
use crate::markup::defang;

/// Stands in for an empty output.
pub const NO_OUTPUT: &str = "(no output)";

/// Stands in for binary output.
pub fn binary(bytes: usize, format: Option<&str>) -> String {
    let what = format.map(|f| format!(" ({f})")).unwrap_or_default();
    format!("binary output omitted, {bytes} bytes{what}")
}

/// The end of a drained middle that the host counted but did not scan.
pub fn unscanned(from: u64, to: u64) -> String {
    format!(
        "{PREFIX} bytes {from}-{to} of the omitted part were counted, not scanned for error lines or secrets (past the host's scan bound of a file's middle).]"
    )
}

/// Structured content thinned to its share of the token budget.
pub fn structured_thinned(tokens: u32, max_tokens: u32) -> String {
    format!(
        "{PREFIX} structuredContent thinned to {tokens} tokens (half the {max_tokens}-token budget); omissions are marked inside it.]"
    )
}

/// Structured content thinned keeping its shape for a schema: which
/// arrays were cut, and where (the first few; the rest counted). Each
/// array: its JSON pointer, the items omitted, the first and last of them,
/// and how many it had.
pub fn structured_thinned_bare(
    tokens: u32,
    max_tokens: u32,
    arrays: &[(&str, usize, usize, usize, usize)],
    rest: &str,
) -> String {
    const LISTED: usize = 6;
    let mut said: Vec<String> = arrays
        .iter()
        .take(LISTED)
        .map(|&(path, omitted, first, last, of)| {
            let at = if path.is_empty() { "the root".into() } else { quoted(path) };
            format!("{at}: {omitted} items omitted (indexes {first}-{last} of {of})")
        })
        .collect();
    if arrays.len() > LISTED {
        said.push(format!("{} more arrays cut", arrays.len() - LISTED));
    }
    let arrays = if said.is_empty() { String::new() } else { format!("; arrays cut: {}", said.join("; ")) };
    format!(
        "{PREFIX} structuredContent thinned to {tokens} tokens (half the {max_tokens}-token budget) keeping the shape its outputSchema checks, notes only inside cut strings{arrays}{rest}.]"
    )
}

/// Text from the input (a JSON pointer of the tool's keys, a link's URI)
/// as a notice quotes it: control and invisible format characters escaped,
/// and `\` and `` ` `` too (so no quote in backticks ends early and every
/// `\` begins an escape), and look-alikes of the pipeline's markup
/// defanged. Each key was defanged alone, but keys joined with `/` can
/// spell `[/tool_result]` across two (`x\n[` then `tool_result]`), and a
/// notice is markup the final pass leaves as it is.
fn quoted(s: &str) -> String {
    quoted_within(s, usize::MAX).0
}

/// [`quoted`], at most `max` bytes of it: whole characters and whole
/// escapes only; and whether it was cut.
fn quoted_within(s: &str, max: usize) -> (String, bool) {
    let mut out = String::with_capacity(s.len().min(max));
    for c in s.chars() {
        let piece: String = match c {
            '\\' | '`' => ['\\', c].into_iter().collect(),
            c if invisible(c) => c.escape_unicode().collect(),
            c if c.is_control() => c.escape_default().collect(),
            c => c.into(),
        };
        if out.len() + piece.len() > max {
            return (defang::text(&out).0, true);
        }
        out.push_str(&piece);
    }
    (defang::text(&out).0, false)
}

/// Format characters that change how the text around them reads without
/// showing (bidi marks, overrides and isolates, line and paragraph
/// separators, zero-width and invisible operators, soft hyphens, variation
/// selectors, tag characters): escaped where a notice quotes input.
fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{AD}'
            | '\u{61C}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{E0000}'..='\u{E007F}'
    )
}

/// Structured content left out because, thinned, it no longer validated
/// against the tool's `outputSchema` (the host found it).
pub fn structured_invalid() -> String {
    format!(
        "{PREFIX} structuredContent omitted: thinned to fit the budget, it no longer validated against the tool's outputSchema; its text form is above.]"
    )
}

/// Structured content left out: over its share even when thinned.
pub fn structured_omitted(max_tokens: u32) -> String {
    format!(
        "{PREFIX} structuredContent omitted: over half the {max_tokens}-token budget even when thinned; its text form is above.]"
    )
}

/// Structured content left out: too many values to parse.
pub fn structured_too_large(values: usize, max: usize) -> String {
    format!(
        "{PREFIX} structuredContent omitted: about {values} values, more than the {max} this pipeline parses; its text form is above.]"
    )
}

/// HTML markup read only up to its byte budget.
pub fn html_markup(read: usize, len: usize, more: bool, markup_bytes: u64) -> String {
    format!(
        "{PREFIX} HTML markup read up to byte {read} of {len}{} (markup budget {markup_bytes} bytes); the text above comes from that part only.]",
        if more { " or more" } else { "" }
    )
}

/// Heads a recalled slice: positions are those of the whole output.
pub fn recalled_part(byte: u64, line: u64) -> String {
    format!(
        "{PREFIX} recalled part starting at byte {byte}, line {line}; positions below are those of the whole output]"
    )
}

/// The line that introduces an embedded MCP resource's text.
pub fn resource(uri: &str) -> String {
    format!("[resource {uri}]")
}

/// An MCP image or audio block over the byte cap.
pub fn media_over_cap(i: usize, ty: &str, mime: &str, bytes: usize, cap: u64) -> String {
    format!("{PREFIX} content block {i} ({ty}, {mime}, {bytes} bytes of base64) omitted: over the byte cap of {cap} bytes.]")
}

/// An MCP image or audio block over the media share of the token budget.
pub fn media_over_tokens(i: usize, ty: &str, mime: &str, tokens: u32, max_tokens: u32) -> String {
    format!(
        "{PREFIX} content block {i} ({ty}, {mime}) omitted: about {tokens} tokens, and media may take at most half the {max_tokens}-token budget.]"
    )
}

/// An MCP image or audio block that is not what such a block must be
/// (`why`: its type or data; see `support::media`).
pub fn media_malformed(i: usize, ty: &str, why: &str) -> String {
    format!("{PREFIX} content block {i} ({ty}) omitted: {why}.]")
}

/// The MCP blocks an output's message cannot carry: how many of each
/// kind, and the URIs of the first links (redacted, at most
/// [`LINKS_SHOWN`]), for [`not_carried`].
#[derive(Default)]
pub struct NotCarried {
    /// Image blocks.
    pub images: usize,
    /// Audio blocks.
    pub audio: usize,
    /// Resource links.
    pub links: usize,
    /// The first links' URIs, redacted.
    pub uris: Vec<String>,
}

/// `left`, in one notice of bounded size however many blocks there are:
/// how many of each kind, and the first links' URIs, each [`quoted`] in
/// backticks within [`URI_MAX`] bytes. `holder`: the message, and what it
/// holds.
pub fn not_carried(left: &NotCarried, holder: (&str, &str)) -> String {
    let (message, holds) = holder;
    let what: Vec<String> = [("image", left.images), ("audio block", left.audio), ("resource link", left.links)]
        .into_iter()
        .filter(|&(_, n)| n > 0)
        .map(|(kind, n)| format!("{n} {kind}{}", if n == 1 { "" } else { "s" }))
        .collect();
    let mut shown: Vec<String> = left
        .uris
        .iter()
        .take(LINKS_SHOWN)
        .map(|u| match quoted_within(u, URI_MAX) {
            (q, true) => format!("`{q}`…"),
            (q, false) => format!("`{q}`"),
        })
        .collect();
    if left.links > shown.len() && !shown.is_empty() {
        shown.push(format!("{} more", left.links - shown.len()));
    }
    let shown = if shown.is_empty() { String::new() } else { format!("; links: {}", shown.join(", ")) };
    format!("{PREFIX} {} omitted: {message} holds {holds} only{shown}.]", what.join(", "))
}

/// Structured content the output's message cannot carry, which the text
/// does not repeat.
pub fn structured_not_carried(holder: (&str, &str)) -> String {
    let (message, holds) = holder;
    format!("{PREFIX} structuredContent omitted: {message} holds {holds} only, and the text does not repeat it.]")
}

/// Links whose URIs [`not_carried`] shows.
pub const LINKS_SHOWN: usize = 3;

/// Most bytes of a URI [`not_carried`] shows, escapes included.
const URI_MAX: usize = 100;

/// An embedded binary MCP resource.
pub fn binary_resource(i: usize, mime: &str, bytes: usize) -> String {
    format!("{PREFIX} content block {i} (embedded binary resource, {mime}, {bytes} bytes of base64) omitted.]")
}

/// An MCP block of a type the pipeline does not know.
pub fn unknown_block(i: usize, what: &str) -> String {
    format!("{PREFIX} content block {i} of unknown type `{what}` omitted.]")
}

//! The untrusted-source boundary and the tool-error line.
//!
//! Untrusted content is framed by the boundary from the spec; the closing
//! tag is explicit so that a `---` line inside the content closes nothing,
//! and look-alikes inside the content were defanged earlier. The error
//! line is bounded by a share of the token budget, since every render
//! holds it whatever the cut.

use crate::api::Options;
use crate::markup::marker;
use crate::support::tokenizer::Tokenizer;

pub use crate::markup::lexicon::{BOUNDARY_CLOSE, BOUNDARY_INTRO, BOUNDARY_OPEN, BOUNDARY_OUTRO};

/// Tool names and content types are caller data: keep them to a safe
/// alphabet inside the boundary header.
fn header_value(s: &str, fallback: &str) -> String {
    let v: String = s
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '+' | ':'))
        .take(64)
        .collect();
    if v.is_empty() {
        fallback.into()
    } else {
        v
    }
}

/// Frames `inner` for the model: error line, then the untrusted boundary.
pub fn frame(opts: &Options, error_line: Option<&str>, inner: &str) -> String {
    let mut out = String::with_capacity(inner.len() + 256);
    if let Some(e) = error_line {
        out.push_str(e);
        if !inner.is_empty() {
            out.push('\n');
        }
    }
    if opts.untrusted {
        out.push_str(&opening(opts));
        out.push_str(inner);
        if !inner.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(BOUNDARY_OUTRO);
        out.push_str(BOUNDARY_CLOSE);
        out.push(']');
    } else {
        out.push_str(inner);
    }
    out
}

/// The boundary's opening tag and intro.
fn opening(opts: &Options) -> String {
    let name = header_value(&opts.tool, "tool");
    let ct = header_value(opts.content_type.as_deref().unwrap_or("text/plain"), "text/plain");
    format!("{BOUNDARY_OPEN} name={name} untrusted=true content_type={ct}]{BOUNDARY_INTRO}")
}

/// The inner text of `framed`, a [`frame`] of the same `opts` and
/// `error_line` (after the final redaction pass); `None` when that pass
/// changed the frame itself. `ends_line`: whether the inner text ended
/// with a newline (the frame adds one when it did not).
pub fn unframe<'t>(opts: &Options, error_line: Option<&str>, framed: &'t str, ends_line: bool) -> Option<&'t str> {
    let mut rest = framed;
    if let Some(e) = error_line {
        rest = rest.strip_prefix(e)?;
        rest = rest.strip_prefix('\n').unwrap_or(rest);
    }
    if !opts.untrusted {
        return Some(rest);
    }
    rest = rest.strip_prefix(opening(opts).as_str())?;
    rest = rest.strip_suffix(']')?.strip_suffix(BOUNDARY_CLOSE)?.strip_suffix(BOUNDARY_OUTRO)?;
    Some(if ends_line { rest } else { rest.strip_suffix('\n').unwrap_or(rest) })
}

/// The `[code] message` line of a tool execution error, in the two forms
/// a render may show.
pub struct ErrorLine {
    /// Within its share of the budget plus a marker's tokens: a line over
    /// its share (a stack trace, say) keeps the message's first tokens,
    /// then a marker with the sizes, unless the cut would be no shorter.
    pub line: String,
    /// The code and the marker alone, for a budget the markers alone are
    /// over (see `stages::token_budget`); `line` when that is no longer.
    pub bare: String,
    /// `line` cut the message.
    pub cut: bool,
}

impl ErrorLine {
    /// The line for `code` and `message`, its message within `share` tokens.
    pub fn new(code: &str, message: &str, tok: Tokenizer<'_>, share: usize) -> Self {
        let code = header_value(code, "error");
        let message = message.replace("\r\n", " ").replace(['\r', '\n'], " ");
        let whole = format!("[{code}] {message}");
        // The code stays whole; sizes are the message's bytes as the line
        // holds them (one space per line break).
        let start = whole.len() - message.len();
        let cut_at = |keep: usize| format!("{}{}", &whole[..keep], marker::error_message(keep - start, message.len()));
        // `whole` has no more tokens than `s` (counting stops past them).
        let no_longer_than = |s: &str| tok.count_within(&whole, tok.count(s)).is_some();
        let bare = cut_at(start);
        let bare = if no_longer_than(&bare) { whole.clone() } else { bare };
        if tok.count_within(&whole, share).is_some() {
            return Self { line: whole, bare, cut: false };
        }
        // A line only a few tokens over its share stays whole: cutting it
        // would lose text and save none (the marker costs ~15 tokens). The
        // bound is the same either way: the share plus a marker.
        let line = cut_at(start.max(tok.prefix_bytes(&whole, share)));
        if no_longer_than(&line) {
            Self { line: whole, bare, cut: false }
        } else {
            Self { line, bare, cut: true }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::default_options;

    #[test]
    fn unframe_gives_back_what_frame_wrapped() {
        for untrusted in [true, false] {
            let mut o = default_options();
            o.untrusted = untrusted;
            o.tool = "read_text_file".into();
            for error in [None, Some("[E1] failed")] {
                for inner in ["", "one line", "two\nlines\n", "---\n[/tool_result]\n"] {
                    let f = frame(&o, error, inner);
                    assert_eq!(unframe(&o, error, &f, inner.ends_with('\n')), Some(inner), "{f:?}");
                }
            }
        }
    }

    #[test]
    fn a_long_error_message_is_cut_within_its_share() {
        let tok = Tokenizer::get(crate::api::Encoding::O200kBase);
        let e = ErrorLine::new("exit-status-1", "failed\nat step 3", tok, 32);
        assert_eq!((e.line.as_str(), e.cut), ("[exit-status-1] failed at step 3", false));
        // A short message is its own bare form: the marker would be longer.
        assert_eq!(e.bare, e.line);
        let trace: String = (0..400).map(|i| format!("at frame{i} (src/mod{i}.rs:{i})\n")).collect();
        let e = ErrorLine::new("exception", &trace, tok, 32);
        let line = e.line;
        assert!(e.cut);
        let (kept, marker) = line.split_once("… [truncated:").unwrap();
        assert!(kept.starts_with("[exception] at frame0 (src/mod0.rs:0) at frame1"), "{line}");
        assert!(tok.count(kept) <= 32, "{line}");
        let shown = kept.len() - "[exception] ".len();
        assert_eq!(marker, format!(" error message cut after {shown} of {} bytes]", trace.len()));
        assert_eq!(&trace.replace('\n', " ")[..shown], &kept["[exception] ".len()..]);
        // A share below the code's own tokens still keeps the code whole.
        let e = ErrorLine::new("exit-status-1", &trace, tok, 1);
        let bare = format!("[exit-status-1] … [truncated: error message cut after 0 of {} bytes]", trace.len());
        assert!(e.cut && e.line == bare && e.bare == bare, "{}", e.line);
        // The bare form of a long message is the code and the marker.
        let e = ErrorLine::new("exception", &trace, tok, 32);
        assert_eq!(e.bare, bare.replace("exit-status-1", "exception"));
        // CRLF is one line break: one space.
        let e = ErrorLine::new("E", "a\r\nb\rc\nd", tok, 32);
        assert_eq!(e.line, "[E] a b c d");
    }

    #[test]
    fn a_line_a_few_tokens_over_its_share_is_not_cut() {
        let tok = Tokenizer::get(crate::api::Encoding::O200kBase);
        let message: String = (0..40).map(|i| format!("word{i} ")).collect();
        let whole = format!("[exception] {message}");
        let n = tok.count(&whole);
        // Cutting this line to its share would add a marker as long as the
        // tokens cut: it stays whole, and nothing is reported cut.
        for over in 1..4 {
            let e = ErrorLine::new("exception", &message, tok, n - over);
            assert_eq!((e.line.as_str(), e.cut), (whole.as_str(), false), "{over} over");
        }
        // Far over its share, a cut saves tokens and is made.
        let e = ErrorLine::new("exception", &message, tok, n / 4);
        assert!(e.cut && tok.count(&e.line) < n, "{}", e.line);
    }

    #[test]
    fn unframe_refuses_another_frame() {
        let mut o = default_options();
        o.untrusted = true;
        let f = frame(&o, None, "body");
        o.tool = "other".into();
        assert_eq!(unframe(&o, None, &f, false), None);
        assert_eq!(unframe(&o, Some("[E] x"), &f, false), None);
    }
}

//! HTML to text, before redaction and truncation.
//!
//! A web page is mostly markup, scripts and styles; what a model needs is
//! its text and its shape. The page is tokenized by `html5gum` (a WHATWG
//! tokenizer; script, style and other raw-text elements switch states as a
//! browser would) and walked once:
//!
//! * dropped with everything inside: `script`, `style`, `noscript`,
//!   `template`, `svg`, `iframe`, `object`, `canvas`, and any element that
//!   is hidden (`hidden`, `aria-hidden="true"`, `display:none`,
//!   `visibility:hidden`, `<input type="hidden">`); comments and doctypes;
//! * kept as structure: headings as `#` lines, list items as `-` (or
//!   `1.`) lines indented by depth, table cells separated by ` | `, block
//!   elements on their own lines, `pre` verbatim, link text as
//!   `[text](url)` for absolute http(s) links, the title as a `Title:` line;
//! * whitespace elsewhere collapsed, at most one blank line in a row.
//!
//! Cost: one pass over the markup, output no longer than the input; the
//! markup read is bounded by the budget's `markup-bytes`.

use html5gum::{DefaultEmitter, Token, Tokenizer};

const DROP: &[&str] = &["script", "style", "noscript", "template", "svg", "iframe", "object", "canvas", "math"];
const VOID: &[&str] =
    &["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr", "param"];
const BLOCK: &[&str] = &[
    "p",
    "div",
    "section",
    "article",
    "header",
    "footer",
    "nav",
    "main",
    "aside",
    "table",
    "thead",
    "tbody",
    "tfoot",
    "tr",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "blockquote",
    "form",
    "figure",
    "figcaption",
    "address",
    "details",
    "summary",
    "fieldset",
    "body",
    "html",
    "head",
    "caption",
];

/// The HTML stage: the markup, read up to its own byte budget
/// (`markup-bytes`), becomes text; positions in markers and records then
/// refer to that text. Returns the text and, when the budget cut the
/// markup, a notice.
pub(crate) fn run(
    input: &[u8],
    markup_bytes: u64,
    record: &mut crate::record::RecordBuilder,
) -> (Vec<u8>, Option<String>) {
    let cap = crate::stages::byte_cap::cap_len(input, markup_bytes.min(usize::MAX as u64) as usize);
    let text = extract(&String::from_utf8_lossy(&input[..cap]));
    record.stage(crate::api::Stage::Html, cap, text.len());
    let note = (cap < input.len()).then(|| {
        crate::markup::notice::html_markup(cap, input.len(), input.len() as u64 <= markup_bytes + 1, markup_bytes)
    });
    (text.into_bytes(), note)
}

/// Text extracted from an HTML document.
pub fn extract(html: &str) -> String {
    let mut em = DefaultEmitter::default();
    em.naively_switch_states(true);
    let mut w = Writer::default();
    // Inside a dropped element: its name and nesting depth.
    let mut skip: Option<(Vec<u8>, usize)> = None;
    let mut lists: Vec<(bool, usize)> = Vec::new(); // (ordered, counter)
    let mut pre = 0usize;
    let mut link: Option<(String, usize)> = None; // (href, text start)
    for token in Tokenizer::new_with_emitter(html, em).flatten() {
        if let Some((name, depth)) = &mut skip {
            match &token {
                Token::StartTag(t) if t.name.as_slice() == name.as_slice() && !t.self_closing => *depth += 1,
                Token::EndTag(t) if t.name.as_slice() == name.as_slice() => {
                    *depth -= 1;
                    if *depth == 0 {
                        skip = None;
                    }
                }
                _ => {}
            }
            continue;
        }
        match token {
            Token::StartTag(t) => {
                let name = String::from_utf8_lossy(&t.name).to_string();
                let attr =
                    |k: &str| t.attributes.get(k.as_bytes()).map(|v| String::from_utf8_lossy(v).to_ascii_lowercase());
                let style = attr("style").unwrap_or_default().replace(' ', "");
                let hidden = t.attributes.contains_key(b"hidden".as_slice())
                    || attr("aria-hidden").as_deref() == Some("true")
                    || style.contains("display:none")
                    || style.contains("visibility:hidden")
                    || (name == "input" && attr("type").as_deref() == Some("hidden"));
                let void = VOID.contains(&name.as_str()) || t.self_closing;
                if (DROP.contains(&name.as_str()) || hidden) && !void {
                    skip = Some((t.name.to_vec(), 1));
                    continue;
                }
                match name.as_str() {
                    "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                        let level = usize::from(name.as_bytes()[1] - b'0');
                        w.blank_line();
                        w.raw(&format!("{} ", "#".repeat(level)));
                    }
                    "title" => {
                        w.newline();
                        w.raw("Title: ");
                    }
                    "ul" | "ol" => {
                        w.newline();
                        lists.push((name == "ol", 0));
                    }
                    "li" => {
                        w.newline();
                        let indent = "  ".repeat(lists.len().saturating_sub(1));
                        let bullet = match lists.last_mut() {
                            Some((true, n)) => {
                                *n += 1;
                                format!("{n}. ")
                            }
                            _ => "- ".into(),
                        };
                        w.raw(&format!("{indent}{bullet}"));
                    }
                    "br" => w.newline(),
                    "hr" => {
                        w.newline();
                        w.raw("---");
                        w.newline();
                    }
                    "td" | "th" => w.cell(),
                    "pre" => {
                        w.newline();
                        pre += 1;
                    }
                    "img" => {
                        if let Some(alt) = attr("alt").filter(|a| !a.trim().is_empty()) {
                            w.text(&format!("[image: {}]", alt.trim()), false);
                        }
                    }
                    "a" => {
                        let href = t.attributes.get(b"href".as_slice()).map(|v| String::from_utf8_lossy(v).to_string());
                        if let Some(h) = href.filter(|h| h.starts_with("http://") || h.starts_with("https://")) {
                            w.text("[", false);
                            link = Some((h, w.out.len()));
                        }
                    }
                    n if BLOCK.contains(&n) => w.newline(),
                    _ => {}
                }
            }
            Token::EndTag(t) => match t.name.as_slice() {
                b"h1" | b"h2" | b"h3" | b"h4" | b"h5" | b"h6" => w.blank_line(),
                b"title" | b"li" | b"tr" => w.newline(),
                b"ul" | b"ol" => {
                    lists.pop();
                    w.newline();
                }
                b"pre" => {
                    pre = pre.saturating_sub(1);
                    w.newline();
                }
                b"a" => {
                    if let Some((href, start)) = link.take() {
                        if w.out.len() == start {
                            w.out.pop(); // no link text: drop the "["
                        } else {
                            w.raw(&format!("]({href})"));
                        }
                    }
                }
                n if BLOCK.iter().any(|b| b.as_bytes() == n) => w.newline(),
                _ => {}
            },
            Token::String(s) => w.text(&String::from_utf8_lossy(&s), pre > 0),
            _ => {}
        }
    }
    w.finish()
}

/// Output with whitespace discipline.
#[derive(Default)]
struct Writer {
    out: String,
    /// A space is owed before the next word.
    space: bool,
}

impl Writer {
    fn raw(&mut self, s: &str) {
        self.out.push_str(s);
        self.space = false;
    }

    fn text(&mut self, s: &str, verbatim: bool) {
        if verbatim {
            self.out.push_str(s);
            return;
        }
        for (i, word) in s.split(|c: char| c.is_whitespace()).enumerate() {
            if i > 0 {
                self.space = true;
            }
            if word.is_empty() {
                continue;
            }
            if self.space && !self.out.is_empty() && !self.out.ends_with(['\n', ' ', '[']) {
                self.out.push(' ');
            }
            self.out.push_str(word);
            self.space = false;
        }
        if s.ends_with(char::is_whitespace) {
            self.space = true;
        }
    }

    fn newline(&mut self) {
        while self.out.ends_with(' ') {
            self.out.pop();
        }
        if !self.out.is_empty() && !self.out.ends_with('\n') {
            self.out.push('\n');
        }
        self.space = false;
    }

    fn blank_line(&mut self) {
        self.newline();
        if !self.out.is_empty() && !self.out.ends_with("\n\n") {
            self.out.push('\n');
        }
    }

    fn cell(&mut self) {
        if !self.out.is_empty() && !self.out.ends_with('\n') {
            self.out.push_str(" | ");
        }
        self.space = false;
    }

    fn finish(mut self) -> String {
        self.newline();
        // At most one blank line in a row.
        let mut out = String::with_capacity(self.out.len());
        let mut blank = 0;
        for line in self.out.lines() {
            let line = line.trim_end();
            if line.is_empty() {
                blank += 1;
                if blank > 1 || out.is_empty() {
                    continue;
                }
            } else {
                blank = 0;
            }
            out.push_str(line);
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_text_and_shape_drops_the_rest() {
        let html = r#"<!doctype html><html><head><title>Release notes</title>
            <style>body { color: red }</style><script>var token = "x"; if (a < b) {}</script></head>
            <body><!-- secret comment --><h1>Version 2</h1><p>Fixed   a
            bug.</p><div hidden><p>hidden text</p></div><span style="display: none">invisible</span>
            <ul><li>one</li><li>two <a href="https://example.org/x">link</a></li><ul><li>nested</li></ul></ul>
            <ol><li>first</li><li>second</li></ol><table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>
            <pre>  keep
   spacing</pre><input type="hidden" value="csrf"><p>end &amp; done</p></body></html>"#;
        let t = extract(html);
        for gone in ["color: red", "var token", "secret comment", "hidden text", "invisible", "csrf"] {
            assert!(!t.contains(gone), "{gone} in {t}");
        }
        for kept in [
            "Title: Release notes",
            "# Version 2",
            "Fixed a bug.",
            "- one",
            "- two [link](https://example.org/x)",
            "  - nested",
            "1. first",
            "2. second",
            "k | v",
            "a | 1",
            "  keep\n   spacing",
            "end & done",
        ] {
            assert!(t.contains(kept), "{kept:?} missing in\n{t}");
        }
    }
}

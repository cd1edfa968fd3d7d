//! Type triage: is this text, binary, or nothing?
//!
//! Binary output must never reach a model as mojibake. A result is binary
//! when its content type says so, when it starts with a known magic number,
//! or when NUL bytes or invalid UTF-8 make up a visible share of its first
//! 8 KiB. Cost: one pass over at most 8 KiB.

use crate::api::ContentClass;

const SNIFF: usize = 8 * 1024;

/// Magic numbers of common binary formats.
const MAGIC: &[(&[u8], &str)] = &[
    (b"\x89PNG\r\n\x1a\n", "png"),
    (b"\xff\xd8\xff", "jpeg"),
    (b"GIF87a", "gif"),
    (b"GIF89a", "gif"),
    (b"%PDF-", "pdf"),
    (b"PK\x03\x04", "zip"),
    (b"\x1f\x8b", "gzip"),
    (b"\x7fELF", "elf"),
    (b"\0asm", "wasm"),
    (b"\xcf\xfa\xed\xfe", "mach-o"),
    (b"\xfe\xed\xfa\xcf", "mach-o"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\0", "xz"),
    (b"7z\xbc\xaf\x27\x1c", "7z"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"SQLite format 3\0", "sqlite"),
    (b"RIFF", "riff"),
    (b"OggS", "ogg"),
];

/// Triage verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Class.
    pub class: ContentClass,
    /// Format name for binaries, when recognised.
    pub format: Option<&'static str>,
}

/// Classifies raw output; `content_type` is the caller's hint, if any.
pub fn classify(bytes: &[u8], content_type: Option<&str>) -> Verdict {
    if bytes.is_empty() {
        return Verdict { class: ContentClass::Empty, format: None };
    }
    if let Some(ct) = content_type {
        let ct = ct.to_ascii_lowercase();
        let binary_type = ["image/", "audio/", "video/", "font/"].iter().any(|p| ct.starts_with(p))
            || ct.starts_with("application/octet-stream")
            || ct.starts_with("application/zip")
            || ct.starts_with("application/pdf");
        if binary_type && !ct.starts_with("image/svg") {
            return Verdict { class: ContentClass::Binary, format: None };
        }
    }
    for (magic, name) in MAGIC {
        if bytes.starts_with(magic) {
            return Verdict { class: ContentClass::Binary, format: Some(name) };
        }
    }
    let head = &bytes[..bytes.len().min(SNIFF)];
    let nuls = memchr::memchr_iter(0, head).count();
    // UTF-16 text and most binaries have NULs in far more than 1% of bytes;
    // text logs with a stray NUL do not.
    if nuls * 100 > head.len() {
        return Verdict { class: ContentClass::Binary, format: None };
    }
    // Valid UTF-8 (most text) is checked a word at a time; only text that
    // is not is walked chunk by chunk.
    let invalid: usize = match std::str::from_utf8(head) {
        Ok(_) => 0,
        Err(_) => head.utf8_chunks().map(|c| c.invalid().len()).sum(),
    };
    // The sniffed window may end inside a character: ignore up to 3 bytes.
    if invalid > 3 && invalid * 10 > head.len() {
        return Verdict { class: ContentClass::Binary, format: None };
    }
    Verdict { class: ContentClass::Text, format: None }
}

/// The kind of text, for the structure-aware stages: HTML (extracted to
/// text), JSON (thinned as a document), JSON lines and CSV (cut on whole
/// records), source code (generic rules kept to its string literals; cut
/// like plain text), else plain text (logs). The content type decides when given;
/// otherwise the first 8 KiB are sniffed. A wrong guess costs nothing: a
/// document that does not parse falls back to the plain text strategy.
pub fn refine(bytes: &[u8], content_type: Option<&str>) -> ContentClass {
    let ct = content_type.map(|c| c.to_ascii_lowercase()).unwrap_or_default();
    let ct = ct.split(';').next().unwrap_or("").trim();
    match ct {
        "text/html" | "application/xhtml+xml" => return ContentClass::Html,
        "application/x-ndjson" | "application/jsonl" | "application/x-jsonlines" | "application/json-seq" => {
            return ContentClass::JsonLines
        }
        "text/csv" | "text/tab-separated-values" => return ContentClass::Csv,
        _ if crate::support::code::is_code_type(ct) => return ContentClass::Code,
        _ => {}
    }
    let head = &bytes[..bytes.len().min(SNIFF)];
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    let start = head.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(head.len());
    let body = &head[start..];
    let lower: Vec<u8> = body.iter().take(64).map(u8::to_ascii_lowercase).collect();
    if lower.starts_with(b"<!doctype html") || lower.starts_with(b"<html") {
        return ContentClass::Html;
    }
    let json_type = ct == "application/json" || ct.ends_with("+json");
    if json_type || body.starts_with(b"{") || body.starts_with(b"[") {
        // Several lines that each hold one JSON value are JSON lines.
        if looks_like_json_lines(body) {
            return ContentClass::JsonLines;
        }
        if json_type || json_prefix(body) {
            return ContentClass::Json;
        }
    }
    if looks_like_csv(body) {
        return ContentClass::Csv;
    }
    // A diff or grep hits quote code from files they name: plain text,
    // where each region is judged as its file (`support::regions`).
    if crate::support::sniff::looks_like_code(body)
        && !crate::support::regions::names_files(&String::from_utf8_lossy(body))
    {
        return ContentClass::Code;
    }
    ContentClass::Text
}

fn complete_lines(b: &[u8]) -> impl Iterator<Item = &[u8]> {
    // The last line of a sniffed window may be cut: skip it.
    let end = memchr::memrchr(b'\n', b).unwrap_or(0);
    crate::support::text::split_lines(&b[..end]).map(|l| l.strip_suffix(b"\r").unwrap_or(l)).filter(|l| !l.is_empty())
}

/// Whether `body` (a text's first bytes) reads as the start of one JSON
/// value: it parses, or stops only for want of more bytes. A log whose
/// lines start `[2026-12-04T10:00:00Z] INFO` is not one (it would lose its
/// line cuts and error lines to the JSON strategies).
fn json_prefix(body: &[u8]) -> bool {
    // The sniffed head may end inside a character.
    let end = std::str::from_utf8(body).map_or_else(|e| e.valid_up_to(), |_| body.len());
    let parses = |b: &[u8]| match serde_json::from_slice::<serde::de::IgnoredAny>(b) {
        Ok(_) => true,
        Err(e) => e.is_eof(),
    };
    let b = &body[..end];
    // A number cut at the window's end (`-`, `1.`, `2e+`) is an invalid
    // number to serde_json, not an end of input: judge the head without it.
    let number = b.iter().rev().take_while(|c| matches!(c, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')).count();
    parses(b) || (number > 0 && parses(&b[..b.len() - number]))
}

fn looks_like_json_lines(b: &[u8]) -> bool {
    let mut n = 0;
    for line in complete_lines(b).take(20) {
        let obj = line.starts_with(b"{") && line.ends_with(b"}");
        let arr = line.starts_with(b"[") && line.ends_with(b"]");
        if !(obj || arr) || serde_json::from_slice::<serde_json::Value>(line).is_err() {
            return false;
        }
        n += 1;
    }
    n >= 2
}

fn looks_like_csv(b: &[u8]) -> bool {
    let lines: Vec<&[u8]> = complete_lines(b).take(20).collect();
    if lines.len() < 3 {
        return false;
    }
    [b',', b'\t'].iter().any(|&d| {
        let n = memchr::memchr_iter(d, lines[0]).count();
        // The header names its fields: no spaces-only prose, same count of
        // separators on (almost) every line. Lines that end with the
        // separator are a list in code (`  Headers,` one name a line), not
        // rows.
        n >= 1
            && lines[0].len() < 2048
            && lines.iter().filter(|l| memchr::memchr_iter(d, l).count() == n).count() * 10 >= lines.len() * 9
            && lines.iter().filter(|l| l.trim_ascii_end().ends_with(&[d])).count() * 2 < lines.len()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        assert_eq!(classify(b"", None).class, ContentClass::Empty);
        assert_eq!(classify(b"hello\nworld", None).class, ContentClass::Text);
        assert_eq!(classify(b"\x89PNG\r\n\x1a\nxxxx", None).format, Some("png"));
        assert_eq!(classify(&[0u8; 100], None).class, ContentClass::Binary);
        assert_eq!(classify("é".repeat(100).as_bytes(), None).class, ContentClass::Text);
        assert_eq!(classify(b"abc", Some("image/png")).class, ContentClass::Binary);
        assert_eq!(classify(&[0xff; 100], None).class, ContentClass::Binary);
    }

    #[test]
    fn refined_classes() {
        assert_eq!(refine(b"  {\"a\": 1}", None), ContentClass::Json);
        assert_eq!(refine(b"{\"a\": 1}\n{\"a\": 2}\n{\"a\": 3}\n", None), ContentClass::JsonLines);
        assert_eq!(refine(b"<!DOCTYPE html><p>x", None), ContentClass::Html);
        assert_eq!(refine(b"x", Some("text/html; charset=utf-8")), ContentClass::Html);
        assert_eq!(refine(b"id,name\n1,a\n2,b\n3,c\n", None), ContentClass::Csv);
        assert_eq!(refine(b"error: failed, see above\nok\n", None), ContentClass::Text);
        // A list of names one a line, as an import or an enum writes it.
        let names = b"import {\n  Client,\n  Options,\n  Headers,\n  Cancel,\n  Timeout,\n} from 'lib';\n";
        assert_ne!(refine(names, None), ContentClass::Csv);
        assert_eq!(refine(b"[1, 2", Some("application/json")), ContentClass::Json);
        // A document's head, cut anywhere (even inside a character), is JSON;
        // a log whose lines start with a bracketed timestamp or level is not.
        assert_eq!(refine("[{\"a\": \"é".as_bytes().split_last().unwrap().1, None), ContentClass::Json);
        for cut in ["[1, -", "[1.", "[2e", "[2e+", "{\"a\": -1.5E-"] {
            assert_eq!(refine(cut.as_bytes(), None), ContentClass::Json, "{cut}");
        }
        assert_eq!(
            refine(b"[2026-12-04T10:00:00Z] INFO up\n[2026-12-04T10:00:01Z] ERROR down\n", None),
            ContentClass::Text
        );
        assert_eq!(refine(b"[INFO] building\n[ERROR] failed\n", None), ContentClass::Text);
        assert_eq!(refine(b"{\"a\": 1} and then prose\n", None), ContentClass::Text);
    }
}

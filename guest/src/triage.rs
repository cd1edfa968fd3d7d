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
    let invalid: usize = head.utf8_chunks().map(|c| c.invalid().len()).sum();
    // The sniffed window may end inside a character: ignore up to 3 bytes.
    if invalid > 3 && invalid * 10 > head.len() {
        return Verdict { class: ContentClass::Binary, format: None };
    }
    Verdict { class: ContentClass::Text, format: None }
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
}

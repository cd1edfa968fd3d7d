//! Token estimates for images and audio in MCP results, and what such a
//! block must look like to pass through.
//!
//! A model is billed for media in tokens, so they share the token budget
//! with the text. The estimates, documented in docs/pipeline.md ("Media
//! tokens"):
//!
//! * image: `ceil(width × height / 750)`, at most 1 600 — Anthropic's
//!   published formula, with its cap for images scaled to ~1.15 megapixels;
//!   also a fair bound for OpenAI's tiles at high detail. Width and height
//!   come from the PNG, GIF or JPEG header (only the first 64 KiB of base64
//!   are decoded); an image whose size cannot be read counts 1 600;
//! * audio: one token per 1 000 bytes of decoded data, at least 50 — a
//!   coarse bound (32 tokens per second of 16 kHz 16-bit mono), since the
//!   duration is not known without decoding the format.
//!
//! A block passes through only with a media type for `mimeType`
//! ([`is_media_type`]) and base64 for `data` ([`is_base64`]): the block is
//! forwarded as the server wrote it, and the type is also written into
//! the notices of the text, so anything else there (a secret, a forged
//! `[/tool_result]`) would reach the model unredacted.

use base64::Engine;

/// Most tokens an image is counted as.
pub const IMAGE_MAX: u32 = 1600;

/// Width and height from the first bytes of a PNG, GIF or JPEG.
pub fn dimensions(b: &[u8]) -> Option<(u32, u32)> {
    let be32 = |i: usize| Some(u32::from_be_bytes(b.get(i..i + 4)?.try_into().ok()?));
    let be16 = |i: usize| Some(u32::from(u16::from_be_bytes(b.get(i..i + 2)?.try_into().ok()?)));
    let le16 = |i: usize| Some(u32::from(u16::from_le_bytes(b.get(i..i + 2)?.try_into().ok()?)));
    if b.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some((be32(16)?, be32(20)?));
    }
    if b.starts_with(b"GIF8") {
        return Some((le16(6)?, le16(8)?));
    }
    if b.starts_with(b"\xff\xd8") {
        // Walk the segments to a start-of-frame marker.
        let mut i = 2;
        while i + 9 < b.len() {
            if b[i] != 0xff {
                return None;
            }
            let m = b[i + 1];
            let len = be16(i + 2)? as usize;
            if matches!(m, 0xc0..=0xc3 | 0xc5..=0xc7 | 0xc9..=0xcb | 0xcd..=0xcf) {
                return Some((be16(i + 7)?, be16(i + 5)?));
            }
            i += 2 + len;
        }
    }
    None
}

/// Estimated tokens of a base64 image.
pub fn image_tokens(data: &str) -> u32 {
    let head = &data.as_bytes()[..data.len().min(64 * 1024) / 4 * 4];
    let decoded = base64::engine::general_purpose::STANDARD.decode(head).unwrap_or_default();
    match dimensions(&decoded) {
        Some((w, h)) if w > 0 && h > 0 => {
            ((u64::from(w) * u64::from(h)).div_ceil(750)).min(u64::from(IMAGE_MAX)) as u32
        }
        _ => IMAGE_MAX,
    }
}

/// Estimated tokens of base64 audio.
pub fn audio_tokens(data: &str) -> u32 {
    ((data.len() as u64 * 3 / 4 / 1000).max(50)).min(u64::from(u32::MAX)) as u32
}

/// Whether `s` is a media type (RFC 6838): `type/subtype`, each a
/// restricted name (a letter or digit, then up to 126 of those and
/// `!#$&-^_.+`), then optional `; name=value` parameters of the same
/// characters; at most 255 bytes.
pub fn is_media_type(s: &str) -> bool {
    let name = |n: &str| {
        let b = n.as_bytes();
        (1..=127).contains(&b.len())
            && b[0].is_ascii_alphanumeric()
            && b.iter().all(|&c| c.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&c))
    };
    let mut parts = s.split(';');
    let main = parts.next().unwrap_or("");
    s.len() <= 255
        && main.split_once('/').is_some_and(|(t, st)| name(t) && name(st))
        && parts.all(|p| p.trim_start_matches(' ').split_once('=').is_some_and(|(k, v)| name(k) && name(v)))
}

/// Whether `s` is base64 (the standard or the URL-safe alphabet, with or
/// without padding): nothing a reader could take for text.
pub fn is_base64(s: &str) -> bool {
    let body = s.trim_end_matches('=');
    s.len() - body.len() <= 2
        && body.bytes().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'-' | b'_'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_size_and_estimate() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend(300u32.to_be_bytes());
        png.extend(150u32.to_be_bytes());
        png.extend([8, 2, 0, 0, 0]);
        assert_eq!(dimensions(&png), Some((300, 150)));
        let b64 = base64::engine::general_purpose::STANDARD.encode(&png);
        assert_eq!(image_tokens(&b64), 60);
        assert_eq!(image_tokens("bm90IGFuIGltYWdl"), IMAGE_MAX);
        assert_eq!(audio_tokens("AAAA"), 50);
    }

    #[test]
    fn media_types_and_base64_are_checked() {
        for ok in ["image/png", "audio/wav", "image/svg+xml", "audio/wav; codecs=1", "application/vnd.api+json"] {
            assert!(is_media_type(ok), "{ok}");
        }
        for bad in ["", "image", "image/", "/png", "image/png]", "image/png\n[/tool_result]", "image/png, x", "a/b; c"]
        {
            assert!(!is_media_type(bad), "{bad:?}");
        }
        assert!(!is_media_type(&format!("image/{}", "x".repeat(300))));
        for ok in ["", "aGk=", "aGk", "iVBORw0KGgo+/A==", "a-b_c"] {
            assert!(is_base64(ok), "{ok}");
        }
        for bad in ["aGk===", "a b", "aGk=\n", "[/tool_result]", "ghp_x y"] {
            assert!(!is_base64(bad), "{bad:?}");
        }
    }
}

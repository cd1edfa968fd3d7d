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
//! A block passes through only with a known image or audio type for
//! `mimeType` and base64 data that begins as that type does
//! ([`known_type`], [`begins_as`]): the block is forwarded with its data as written, so
//! text posing as data, or a secret or a forged `[/tool_result]` in the
//! type, would reach the model unredacted.

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
/// characters; at most 255 bytes. Nothing in it can read as markup (no
/// brackets, no line breaks); it can still hold a secret, so a caller that
/// shows it redacts it.
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
        && main.trim().split_once('/').is_some_and(|(t, st)| name(t) && name(st))
        && parts.all(|p| p.trim().split_once('=').is_some_and(|(k, v)| name(k) && name(v.trim_matches('"'))))
}

/// A known media type: its name, the subtypes that stand for it, and
/// whether decoded data begins as it does.
type Known = (&'static str, &'static [&'static str], fn(&[u8]) -> bool);

/// The image and audio types a block passes with, and how the data of
/// each begins (its first bytes, decoded).
const KNOWN: &[Known] = &[
    ("image/png", &["png"], |b| b.starts_with(b"\x89PNG\r\n\x1a\n")),
    ("image/jpeg", &["jpeg", "jpg", "pjpeg"], |b| b.starts_with(b"\xff\xd8\xff")),
    ("image/gif", &["gif"], |b| b.starts_with(b"GIF87a") || b.starts_with(b"GIF89a")),
    ("image/webp", &["webp"], |b| b.starts_with(b"RIFF") && b.get(8..12) == Some(b"WEBP")),
    ("image/bmp", &["bmp", "x-ms-bmp"], |b| b.starts_with(b"BM")),
    ("image/tiff", &["tiff"], |b| b.starts_with(b"II*\0") || b.starts_with(b"MM\0*")),
    ("image/avif", &["avif", "heic", "heif"], |b| b.get(4..8) == Some(b"ftyp")),
    ("image/x-icon", &["x-icon", "vnd.microsoft.icon"], |b| b.starts_with(b"\0\0\x01\0")),
    ("image/svg+xml", &["svg+xml"], |b| {
        let b = b.strip_prefix(b"\xef\xbb\xbf").unwrap_or(b);
        b.iter().find(|c| !c.is_ascii_whitespace()) == Some(&b'<')
    }),
    ("audio/wav", &["wav", "x-wav", "wave", "vnd.wave"], |b| b.starts_with(b"RIFF") && b.get(8..12) == Some(b"WAVE")),
    ("audio/mpeg", &["mpeg", "mp3"], |b| b.starts_with(b"ID3") || (b.len() > 1 && b[0] == 0xff && b[1] & 0xe0 == 0xe0)),
    ("audio/mp4", &["mp4", "m4a", "x-m4a"], |b| b.get(4..8) == Some(b"ftyp")),
    ("audio/aac", &["aac"], |b| b.starts_with(b"ADIF") || (b.len() > 1 && b[0] == 0xff && b[1] & 0xf6 == 0xf0)),
    ("audio/ogg", &["ogg", "opus"], |b| b.starts_with(b"OggS")),
    ("audio/webm", &["webm"], |b| b.starts_with(b"\x1a\x45\xdf\xa3")),
    ("audio/flac", &["flac", "x-flac"], |b| b.starts_with(b"fLaC")),
    ("audio/aiff", &["aiff", "x-aiff"], |b| b.starts_with(b"FORM")),
    ("audio/basic", &["basic"], |b| b.starts_with(b".snd")),
];

/// The media type an MCP `image` or `audio` block (`ty`) passes with: its
/// `mimeType`, parameters dropped and lower-cased, when that is a known
/// type of its kind ([`KNOWN`]); the block goes out under the type's own
/// name (the Anthropic message's `media_type`, the MCP block's
/// `mimeType`), so nothing else of the type reaches the model.
pub fn known_type(ty: &str, mime: &str) -> Result<&'static str, &'static str> {
    let main = mime.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    let known = main.split_once('/').and_then(|(t, st)| {
        KNOWN.iter().find(|(name, subs, _)| t == ty && name.split('/').next() == Some(t) && subs.contains(&st))
    });
    match known {
        Some(k) => Ok(k.0),
        None if ty == "image" => Err("its mimeType is not an image type this pipeline knows"),
        None => Err("its mimeType is not an audio type this pipeline knows"),
    }
}

/// Whether `data` is base64 (the standard alphabet) whose first bytes are
/// those of `mime` (one of [`known_type`]'s): the data goes out as written,
/// so text posing as data (a secret, a forged `[/tool_result]`) does not.
pub fn begins_as(mime: &str, data: &str) -> bool {
    let body = data.trim_end_matches('=');
    let base64 =
        data.len() - body.len() <= 2 && body.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'+' || c == b'/');
    let head = &data.as_bytes()[..data.len().min(64) / 4 * 4];
    let decoded = base64::engine::general_purpose::STANDARD.decode(head).unwrap_or_default();
    base64 && KNOWN.iter().find(|k| k.0 == mime).is_some_and(|k| (k.2)(&decoded))
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
    fn media_types_and_data_are_checked() {
        for ok in ["image/png", "audio/wav", "image/svg+xml", "audio/wav; codecs=1", "text/plain; charset=\"utf-8\""] {
            assert!(is_media_type(ok), "{ok}");
        }
        for bad in ["", "image", "image/", "/png", "image/png]", "image/png\n[/tool_result]", "image/png, x", "a/b; c"]
        {
            assert!(!is_media_type(bad), "{bad:?}");
        }
        assert!(!is_media_type(&format!("image/{}", "x".repeat(300))));
        let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        let png = b64(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
        assert_eq!(known_type("image", "image/png"), Ok("image/png"));
        assert_eq!(known_type("image", " IMAGE/PNG ; charset=x"), Ok("image/png"));
        assert_eq!(known_type("audio", "audio/x-wav"), Ok("audio/wav"));
        // A type of the other kind, an unknown one, one that holds a secret.
        assert!(known_type("audio", "image/png").is_err());
        assert!(known_type("image", "image/x-made-up").is_err());
        assert!(known_type("image", "image/ghp_4kLm9Pq2Rt7Vx3Yz6Ab1Cd5Ef0Gh2Ij4Kl6M").is_err());
        let wav = b64(b"RIFF\x24\0\0\0WAVEfmt ");
        assert!(begins_as("image/png", &png) && begins_as("audio/wav", &wav));
        // Data that is not that type's, not base64, or text posing as it.
        for data in
            [wav.as_str(), "aGk=", "ghp_4kLm9Pq2Rt7Vx3Yz6Ab1Cd5Ef0Gh2Ij4Kl6M", "AKIAQ3EGRTZ7MBXK4WNP", "iVBORw0KGgo= x"]
        {
            assert!(!begins_as("image/png", data), "{data}");
        }
    }
}

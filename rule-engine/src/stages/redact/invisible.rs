//! The view of a text without its invisible format characters (zero-width
//! spaces and joiners, soft hyphens, bidi controls): a secret with a U+200B
//! inside is still one secret, so the scan runs on the view and maps its
//! spans back. Finding that a text has none (the common case) is one
//! `is_ascii` or a few memchr passes for their lead bytes.

/// Whether `c` is an invisible format character.
pub(super) fn invisible(c: char) -> bool {
    matches!(c, '\u{00AD}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

/// Whether an [`invisible`] character's encoding starts at `b[i]`: C2 AD,
/// E2 80 8B-8F / AA-AE, E2 81 A0-A4 / A6-A9, EF BB BF.
fn invisible_at(b: &[u8], i: usize) -> bool {
    let at = |k: usize| b.get(k).copied().unwrap_or(0);
    match (b[i], at(i + 1), at(i + 2)) {
        (0xC2, 0xAD, _) => true,
        (0xE2, 0x80, c) => matches!(c, 0x8B..=0x8F | 0xAA..=0xAE),
        (0xE2, 0x81, c) => matches!(c, 0xA0..=0xA4 | 0xA6..=0xA9),
        (0xEF, 0xBB, 0xBF) => true,
        _ => false,
    }
}

/// `text` without invisible format characters, and for each byte offset
/// of that view (and its end) the offset in `text`; `None` when there are
/// none (the common case, found with one memchr pass for their lead bytes).
pub(super) fn visible_view(text: &str) -> Option<(String, Vec<usize>)> {
    let b = text.as_bytes();
    // Most tool output is ASCII: `is_ascii` reads words at a time.
    if b.is_ascii() {
        return None;
    }
    // Found by their first two bytes (SIMD searches), not by decoding
    // every character: logs full of box drawing and emoji stay fast.
    let maybe = memchr::memmem::find(b, b"\xC2\xAD").is_some()
        || memchr::memmem::find(b, b"\xEF\xBB\xBF").is_some()
        || [b"\xE2\x80", b"\xE2\x81"].iter().any(|p| memchr::memmem::find_iter(b, p).any(|i| invisible_at(b, i)));
    if !maybe {
        return None;
    }
    let mut view = String::with_capacity(text.len());
    let mut back = Vec::with_capacity(text.len() + 1);
    for (i, c) in text.char_indices() {
        if invisible(c) {
            continue;
        }
        for _ in 0..c.len_utf8() {
            back.push(i);
        }
        view.push(c);
    }
    // An end maps to the next visible character, so the span also covers
    // any hidden characters right after the secret (harmless to remove).
    back.push(text.len());
    Some((view, back))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisible_bytes_match_invisible_chars() {
        for c in (0x80u32..0x10000).filter_map(char::from_u32) {
            let mut buf = [0u8; 4];
            let enc = c.encode_utf8(&mut buf).as_bytes();
            assert_eq!(invisible_at(enc, 0), invisible(c), "U+{:04X}", c as u32);
        }
    }
}

//! International bank account numbers (IBAN, ISO 13616).
//!
//! A candidate is two upper-case letters, two check digits and the basic
//! bank account number, written in one piece (`DE89370400440532013000`) or
//! in groups of four separated by single spaces (`DE89 3704 0044 0532 0130
//! 00`), not glued to a letter or digit on either side. It is an IBAN when:
//!
//! - the letters are a country of the IBAN registry ([`LENGTHS`]) and the
//!   number has exactly that country's length;
//! - the mod-97 check holds: moved to the end and with letters as numbers
//!   (A = 10 ... Z = 35), the number leaves 1 when divided by 97.
//!
//! A random upper-case token of the right length passes one time in 97;
//! with the country's length and its letters at the start, identifiers
//! are rarely taken. Missed: lower-case IBANs, groupings other than fours,
//! countries not in the table, a number broken across lines.

/// The IBAN length of each country of the registry (SWIFT's IBAN
/// registry), by its ISO 3166 code.
const LENGTHS: &[(&[u8; 2], usize)] = &[
    (b"AD", 24),
    (b"AE", 23),
    (b"AL", 28),
    (b"AT", 20),
    (b"AZ", 28),
    (b"BA", 20),
    (b"BE", 16),
    (b"BG", 22),
    (b"BH", 22),
    (b"BR", 29),
    (b"BY", 28),
    (b"CH", 21),
    (b"CR", 22),
    (b"CY", 28),
    (b"CZ", 24),
    (b"DE", 22),
    (b"DK", 18),
    (b"DO", 28),
    (b"EE", 20),
    (b"EG", 29),
    (b"ES", 24),
    (b"FI", 18),
    (b"FO", 18),
    (b"FR", 27),
    (b"GB", 22),
    (b"GE", 22),
    (b"GI", 23),
    (b"GL", 18),
    (b"GR", 27),
    (b"GT", 28),
    (b"HR", 21),
    (b"HU", 28),
    (b"IE", 22),
    (b"IL", 23),
    (b"IQ", 23),
    (b"IS", 26),
    (b"IT", 27),
    (b"JO", 30),
    (b"KW", 30),
    (b"KZ", 20),
    (b"LB", 28),
    (b"LC", 32),
    (b"LI", 21),
    (b"LT", 20),
    (b"LU", 20),
    (b"LV", 21),
    (b"MC", 27),
    (b"MD", 24),
    (b"ME", 22),
    (b"MK", 19),
    (b"MR", 27),
    (b"MT", 31),
    (b"MU", 30),
    (b"NL", 18),
    (b"NO", 15),
    (b"PK", 24),
    (b"PL", 28),
    (b"PS", 29),
    (b"PT", 25),
    (b"QA", 29),
    (b"RO", 24),
    (b"RS", 22),
    (b"SA", 24),
    (b"SC", 31),
    (b"SE", 24),
    (b"SI", 19),
    (b"SK", 24),
    (b"SM", 27),
    (b"ST", 25),
    (b"SV", 28),
    (b"TL", 23),
    (b"TN", 24),
    (b"TR", 26),
    (b"UA", 29),
    (b"VA", 22),
    (b"VG", 24),
    (b"XK", 20),
];

fn country_length(cc: &[u8]) -> Option<usize> {
    LENGTHS.iter().find(|(c, _)| c.as_slice() == cc).map(|&(_, n)| n)
}

/// The IBANs in `text`, as byte ranges.
pub(super) fn find(text: &str, out: &mut Vec<std::ops::Range<usize>>) {
    let b = text.as_bytes();
    let glued = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i + 15 <= b.len() {
        // Two upper-case letters and two digits, not glued on the left.
        let head = b[i].is_ascii_uppercase()
            && b[i + 1].is_ascii_uppercase()
            && b[i + 2].is_ascii_digit()
            && b[i + 3].is_ascii_digit()
            && (i == 0 || !glued(b[i - 1]));
        let Some(len) = head.then(|| country_length(&b[i..i + 2])).flatten() else {
            i += 1;
            continue;
        };
        if let Some(end) = take(b, i, len) {
            if end == b.len() || !glued(b[end]) {
                out.push(i..end);
                i = end;
                continue;
            }
        }
        i += 1;
    }
}

/// Where an IBAN of `len` characters starting at `at` ends, written in
/// one piece or in groups of four, if its checksum holds.
fn take(b: &[u8], at: usize, len: usize) -> Option<usize> {
    let alnum = |c: &u8| c.is_ascii_uppercase() || c.is_ascii_digit();
    // In one piece.
    if b.len() >= at + len && b[at..at + len].iter().all(alnum) && (at + len == b.len() || !alnum(&b[at + len])) {
        return mod97(&b[at..at + len]).then_some(at + len);
    }
    // In groups of four: `XXXX XXXX ... X`.
    let mut chars = Vec::with_capacity(len);
    let mut p = at;
    while chars.len() < len {
        let group = b.get(p..(p + 4).min(p + len - chars.len()))?;
        if !group.iter().all(alnum) || group.is_empty() {
            return None;
        }
        chars.extend_from_slice(group);
        p += group.len();
        if chars.len() < len {
            if b.get(p) != Some(&b' ') {
                return None;
            }
            p += 1;
        }
    }
    // The last group ends the number.
    if b.get(p).is_some_and(alnum) {
        return None;
    }
    mod97(&chars).then_some(p)
}

/// ISO 7064 mod 97-10 over the IBAN with its first four characters moved
/// to the end and letters as two-digit numbers.
fn mod97(iban: &[u8]) -> bool {
    let mut r: u32 = 0;
    for &c in iban[4..].iter().chain(&iban[..4]) {
        r = if c.is_ascii_digit() {
            (r * 10 + u32::from(c - b'0')) % 97
        } else {
            (r * 100 + u32::from(c - b'A') + 10) % 97
        };
    }
    r == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<&str> {
        let mut v = Vec::new();
        find(text, &mut v);
        v.into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn ibans_of_several_countries() {
        for iban in
            ["DE89370400440532013000", "GB29NWBK60161331926819", "FR1420041010050500013M02606", "NL91ABNA0417164300"]
        {
            assert_eq!(found(&format!("iban: {iban}.")), [iban]);
        }
        assert_eq!(found("to DE89 3704 0044 0532 0130 00 EUR"), ["DE89 3704 0044 0532 0130 00"]);
        // One character off, the wrong length, glued, lower case.
        assert!(found("DE89370400440532013001").is_empty());
        assert!(found("DE8937040044053201300").is_empty());
        assert!(found("XDE89370400440532013000").is_empty());
        assert!(found("de89370400440532013000").is_empty());
    }
}

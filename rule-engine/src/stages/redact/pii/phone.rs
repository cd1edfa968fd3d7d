//! Phone numbers.
//!
//! A number is taken as a phone number in these forms, and only these:
//!
//! - **E.164**, `+` then the country calling code and the national number,
//!   in one piece (`+447911123456`) or in groups whose first is the
//!   calling code (`+44 7911 123456`, `+1 (415) 555-0132`, `+44 (0)20 7946
//!   0958`): the code must be one of [`CODES`] and the national number of
//!   that country's length (for `+1`, a valid NANP area code and exchange);
//! - **printed national forms** that are distinctive on their own: NANP
//!   `(415) 555-0132`, `415-555-0132`, `415.555.0132`, `1-800-555-0199`
//!   (area code and exchange validated: 2-9 first, not N11); French
//!   `06 12 34 56 78` / `01.23.45.67.89`; British `020 7946 0958`,
//!   `07911 123456` (11 digits from a trunk `0`);
//! - **any national form next to a phone key** (`phone`, `tel`, `mobile`,
//!   `fax`, ... before it on its line, or a CSV column of that name): a
//!   trunk `0` and 9 to 12 digits (`030 12345678`), `00` and an E.164
//!   number, a NANP number with or without the leading `1`, or 7 to 12
//!   digits in groups (`9123 4567`).
//!
//! Not taken: bare digit runs without `+` or a phone key (order ids,
//! timestamps, counters), dates and versions (their groups are not these),
//! numbers glued to letters. Missed: national forms of other countries
//! without a phone key, vanity numbers (`1-800-FLOWERS`), extensions
//! (`x123` is left), numbers split across lines.

use super::number::Number;

/// Country calling codes (ITU-T E.164 assignments) and the lengths of their
/// national significant numbers, shortest to longest.
const CODES: &[(&[u8], usize, usize)] = &[
    (b"1", 10, 10),
    (b"7", 10, 10),
    (b"20", 9, 10),
    (b"27", 9, 9),
    (b"30", 10, 10),
    (b"31", 9, 9),
    (b"32", 8, 9),
    (b"33", 9, 9),
    (b"34", 9, 9),
    (b"36", 8, 9),
    (b"39", 9, 11),
    (b"40", 9, 9),
    (b"41", 9, 9),
    (b"43", 7, 13),
    (b"44", 9, 10),
    (b"45", 8, 8),
    (b"46", 7, 9),
    (b"47", 8, 8),
    (b"48", 9, 9),
    (b"49", 7, 12),
    (b"51", 8, 9),
    (b"52", 10, 10),
    (b"53", 8, 8),
    (b"54", 10, 11),
    (b"55", 10, 11),
    (b"56", 9, 9),
    (b"57", 10, 10),
    (b"58", 10, 10),
    (b"60", 8, 10),
    (b"61", 9, 9),
    (b"62", 9, 12),
    (b"63", 10, 10),
    (b"64", 8, 10),
    (b"65", 8, 8),
    (b"66", 8, 9),
    (b"81", 9, 10),
    (b"82", 8, 10),
    (b"84", 9, 10),
    (b"86", 10, 11),
    (b"90", 10, 10),
    (b"91", 10, 10),
    (b"92", 10, 10),
    (b"93", 9, 9),
    (b"94", 9, 9),
    (b"95", 8, 10),
    (b"98", 10, 10),
    (b"212", 9, 9),
    (b"213", 9, 9),
    (b"216", 8, 8),
    (b"233", 9, 9),
    (b"234", 8, 10),
    (b"251", 9, 9),
    (b"254", 9, 9),
    (b"255", 9, 9),
    (b"256", 9, 9),
    (b"351", 9, 9),
    (b"352", 6, 11),
    (b"353", 7, 9),
    (b"354", 7, 7),
    (b"356", 8, 8),
    (b"357", 8, 8),
    (b"358", 6, 10),
    (b"359", 8, 9),
    (b"370", 8, 8),
    (b"371", 8, 8),
    (b"372", 7, 8),
    (b"374", 8, 8),
    (b"375", 9, 9),
    (b"380", 9, 9),
    (b"381", 8, 9),
    (b"385", 8, 9),
    (b"386", 8, 8),
    (b"420", 9, 9),
    (b"421", 9, 9),
    (b"852", 8, 8),
    (b"853", 8, 8),
    (b"880", 10, 10),
    (b"886", 8, 9),
    (b"966", 9, 9),
    (b"971", 8, 9),
    (b"972", 8, 9),
    (b"974", 8, 8),
    (b"994", 9, 9),
    (b"995", 9, 9),
];

/// Whether `n` is a phone number (see the module docs); `context` says
/// whether a phone key names it.
pub(super) fn is_phone(n: &Number, context: &dyn Fn() -> bool) -> bool {
    let len = n.digits.len();
    if !(7..=15).contains(&len) {
        return false;
    }
    if n.plus {
        return e164(n);
    }
    if nanp_printed(n) || french_printed(n) || british_printed(n) {
        return true;
    }
    context() && national(n)
}

/// `+`, a calling code and a national number of its country's length.
fn e164(n: &Number) -> bool {
    // A trunk zero in parentheses after the code, `+44 (0)20 ...`, is not
    // dialled from abroad.
    let trunk = n.groups.len() > 2 && n.groups[1] == 1 && n.digits[n.groups[0]] == b'0' && n.seps[0].contains(&b'(');
    let digits: Vec<u8> = if trunk {
        let g0 = n.groups[0];
        n.digits[..g0].iter().chain(&n.digits[g0 + 1..]).copied().collect()
    } else {
        n.digits.to_vec()
    };
    let first = if trunk { n.groups[0] } else { n.groups[0].min(digits.len()) };
    international(&digits, (n.groups.len() > 1).then_some(first))
}

/// `digits` as a calling code and a national number; with `code_len`, the
/// code is exactly that long (the number's first group).
fn international(digits: &[u8], code_len: Option<usize>) -> bool {
    CODES.iter().any(|&(cc, min, max)| {
        let nsn = &digits[cc.len().min(digits.len())..];
        digits.starts_with(cc)
            && code_len.is_none_or(|l| l == cc.len())
            && (min..=max).contains(&nsn.len())
            && (nsn.first() != Some(&b'0') || cc == b"39")
            && (cc != b"1" || nanp(nsn))
    })
}

/// A NANP number (10 digits): area code and exchange start with 2-9 and
/// are not N11; an area code's middle digit is not 9.
fn nanp(d: &[u8]) -> bool {
    let n11 = |x: &[u8]| x[1] == b'1' && x[2] == b'1';
    d.len() == 10 && d[0] >= b'2' && d[1] != b'9' && !n11(&d[..3]) && d[3] >= b'2' && !n11(&d[3..6])
}

fn seps_are(n: &Number, allowed: &[&[u8]]) -> bool {
    !n.seps.is_empty() && n.seps.iter().all(|s| *s == n.seps[0]) && allowed.contains(&n.seps[0])
}

/// `(415) 555-0132`, `415-555-0132`, `415.555.0132`, `1-800-555-0199`,
/// `1 (800) 555-0199`.
fn nanp_printed(n: &Number) -> bool {
    match n.groups {
        [3, 3, 4] if n.paren => {
            matches!(n.seps[0], b")" | b") ") && matches!(n.seps[1], b"-" | b" " | b".") && nanp(n.digits)
        }
        [3, 3, 4] => seps_are(n, &[b"-", b"."]) && nanp(n.digits),
        [1, 3, 3, 4] if n.digits[0] == b'1' && !n.paren => {
            let parens = n.seps[0] == b" (" && matches!(n.seps[1], b") " | b")") && n.seps[2] == b"-";
            (parens || seps_are(n, &[b"-", b"."])) && nanp(&n.digits[1..])
        }
        _ => false,
    }
}

/// `06 12 34 56 78`, `01.23.45.67.89`.
fn french_printed(n: &Number) -> bool {
    n.groups == [2, 2, 2, 2, 2] && !n.paren && n.digits[0] == b'0' && n.digits[1] != b'0' && seps_are(n, &[b" ", b"."])
}

/// `020 7946 0958`, `0161 496 0000`, `07911 123456`, `01632 960 001`:
/// 11 digits from a trunk `0` (then 1, 2, 3, 7 or 8), in Ofcom's groups.
fn british_printed(n: &Number) -> bool {
    n.digits.len() == 11
        && !n.paren
        && n.digits[0] == b'0'
        && matches!(n.digits[1], b'1' | b'2' | b'3' | b'7' | b'8')
        && matches!(n.groups, [3, 4, 4] | [4, 3, 4] | [5, 6] | [5, 3, 3])
        && seps_are(n, &[b" "])
}

/// A national number next to a phone key.
fn national(n: &Number) -> bool {
    let d = n.digits;
    match d {
        [b'0', b'0', rest @ ..] => international(rest, None),
        [b'0', ..] => (9..=12).contains(&d.len()),
        _ if d.len() == 10 && nanp(d) => true,
        [b'1', rest @ ..] if rest.len() == 10 && nanp(rest) => true,
        // A local number: `555-0132`, `9123 4567`.
        _ => (7..=12).contains(&d.len()) && n.groups.len() >= 2,
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::number;
    use super::*;

    fn phone(s: &str, context: bool) -> bool {
        let (digits, groups, seps, plus, paren) = number(s);
        let seps: Vec<&[u8]> = seps.iter().map(Vec::as_slice).collect();
        is_phone(&Number { digits: &digits, groups: &groups, seps: &seps, plus, paren }, &|| context)
    }

    #[test]
    fn forms_taken_and_left() {
        for p in [
            "+14155550132",
            "+1 415 555 0132",
            "+1 (415) 555-0132",
            "+44 7911 123456",
            "+44 (0)20 7946 0958",
            "+49 30 12345678",
            "+33 6 12 34 56 78",
            "+81 3-1234-5678",
            "+91 98765 43210",
            "+61 412 345 678",
            "(415) 555-0132",
            "415-555-0132",
            "1-800-555-0199",
            "06 12 34 56 78",
            "020 7946 0958",
        ] {
            assert!(phone(p, false), "{p}");
        }
        // Not without a key: a German or a local number, digits alone.
        for p in ["030 12345678", "555-0132", "4155550132", "123-456-7890"] {
            assert!(!phone(p, false) && phone(p, true), "{p}");
        }
        // Never: a calling code that does not exist, a national number of
        // the wrong length, an invalid NANP area code or exchange.
        for p in ["+999 1234 5678", "+44 12345", "+1 415 155 0132", "+1 911 555 0132", "+12345678"] {
            assert!(!phone(p, true), "{p}");
        }
        // Dates, versions and ids are no printed form.
        for p in ["2024-12-01", "2024.12.0001", "1.2.3", "10-20-30-40"] {
            assert!(!phone(p, false), "{p}");
        }
    }
}

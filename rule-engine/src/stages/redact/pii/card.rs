//! Payment card numbers (PAN).
//!
//! A candidate is a card number when all of these hold:
//!
//! - it is 12 to 19 digits, written as one group or in the groupings
//!   cards are printed in (4-4-4-4, 4-4-4-4-3, Amex 4-6-5, Diners 4-6-4,
//!   4-4-4-2), the separators all one space or all one dash;
//! - its prefix and length are those of a brand ([`BRANDS`]): Visa,
//!   Mastercard, American Express, Discover, Diners Club, JCB, UnionPay,
//!   Maestro, Mir;
//! - its Luhn checksum is right ([`luhn`]);
//! - it is not one digit repeated.
//!
//! So an order id, a timestamp (microseconds since 1970 start with `1`, no
//! brand's prefix) or a random 16-digit number is taken only when it
//! happens to have a brand's prefix and a right checksum (one in ten of
//! those). Missed: numbers split in other groupings, or across lines;
//! brands not in the table; masked numbers (`4111 **** **** 1111`, which
//! hold nothing to redact).

/// A brand: the prefix range (inclusive, compared on as many leading
/// digits as the bounds have) and the lengths it issues.
struct Brand {
    from: u32,
    to: u32,
    lengths: &'static [usize],
}

const fn brand(from: u32, to: u32, lengths: &'static [usize]) -> Brand {
    Brand { from, to, lengths }
}

const SIXTEEN_TO_NINETEEN: &[usize] = &[16, 17, 18, 19];

/// Issuer prefixes and lengths (ISO/IEC 7812 IINs as the brands publish
/// them).
const BRANDS: &[Brand] = &[
    brand(4, 4, &[13, 16, 19]),                           // Visa
    brand(51, 55, &[16]),                                 // Mastercard
    brand(2221, 2720, &[16]),                             // Mastercard 2-series
    brand(34, 34, &[15]),                                 // American Express
    brand(37, 37, &[15]),                                 // American Express
    brand(6011, 6011, SIXTEEN_TO_NINETEEN),               // Discover
    brand(644, 649, SIXTEEN_TO_NINETEEN),                 // Discover
    brand(65, 65, SIXTEEN_TO_NINETEEN),                   // Discover
    brand(300, 305, &[14, 15, 16, 17, 18, 19]),           // Diners Club
    brand(36, 36, &[14, 15, 16, 17, 18, 19]),             // Diners Club
    brand(38, 39, &[16, 17, 18, 19]),                     // Diners Club
    brand(3528, 3589, SIXTEEN_TO_NINETEEN),               // JCB
    brand(62, 62, SIXTEEN_TO_NINETEEN),                   // UnionPay
    brand(2200, 2204, SIXTEEN_TO_NINETEEN),               // Mir
    brand(6304, 6304, &[12, 13, 14, 15, 16, 17, 18, 19]), // Maestro
    brand(6759, 6759, &[12, 13, 14, 15, 16, 17, 18, 19]), // Maestro UK
    brand(6761, 6763, &[12, 13, 14, 15, 16, 17, 18, 19]), // Maestro
    brand(5018, 5018, &[12, 13, 14, 15, 16, 17, 18, 19]), // Maestro
    brand(5020, 5020, &[12, 13, 14, 15, 16, 17, 18, 19]), // Maestro
    brand(5038, 5038, &[12, 13, 14, 15, 16, 17, 18, 19]), // Maestro
    brand(5893, 5893, &[12, 13, 14, 15, 16, 17, 18, 19]), // Maestro
];

/// Groupings a card number is printed in (digits per group).
const GROUPINGS: &[&[usize]] = &[&[4, 4, 4, 4], &[4, 4, 4, 4, 3], &[4, 6, 5], &[4, 6, 4], &[4, 4, 4, 2]];

/// Whether `digits` (ASCII digits only), printed in `groups` with the
/// separators `seps`, is a card number (see the module docs).
pub(super) fn is_card(digits: &[u8], groups: &[usize], seps: &[&[u8]]) -> bool {
    if !(12..=19).contains(&digits.len()) {
        return false;
    }
    if groups.len() > 1 {
        let same = seps.iter().all(|s| *s == seps[0]) && (seps[0] == b" " || seps[0] == b"-");
        if !same || !GROUPINGS.contains(&groups) {
            return false;
        }
    }
    if digits.iter().all(|&d| d == digits[0]) {
        return false;
    }
    has_brand(digits) && luhn(digits)
}

fn has_brand(digits: &[u8]) -> bool {
    BRANDS.iter().any(|b| {
        let width = width(b.to);
        let prefix = digits[..width].iter().fold(0u32, |n, &d| n * 10 + u32::from(d - b'0'));
        (b.from..=b.to).contains(&prefix) && b.lengths.contains(&digits.len())
    })
}

/// Decimal digits of `n`.
fn width(mut n: u32) -> usize {
    let mut w = 1;
    while n >= 10 {
        n /= 10;
        w += 1;
    }
    w
}

/// The Luhn (mod 10) check: doubling every second digit from the right,
/// the digit sum is a multiple of 10.
pub fn luhn(digits: &[u8]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &c)| {
            let d = u32::from(c - b'0');
            if i % 2 == 1 {
                let x = d * 2;
                if x > 9 {
                    x - 9
                } else {
                    x
                }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn luhn_and_brands() {
        for n in ["4111111111111111", "5555555555554444", "378282246310005", "6011111111111117", "3530111333300000"] {
            assert!(is_card(n.as_bytes(), &[n.len()], &[]), "{n}");
        }
        // One digit off: the checksum fails.
        assert!(!is_card(b"4111111111111112", &[16], &[]));
        // A right checksum without a brand's prefix (a timestamp in µs).
        assert!(luhn(b"1733312345678909") && !is_card(b"1733312345678909", &[16], &[]));
        // A brand's prefix at a length it does not issue.
        assert!(luhn(b"34111111111111118") && !is_card(b"34111111111111118", &[17], &[]));
        // Printed groupings, one separator for all.
        let g = [4, 4, 4, 4];
        assert!(is_card(b"4111111111111111", &g, &[b" ", b" ", b" "]));
        assert!(!is_card(b"4111111111111111", &g, &[b" ", b"-", b" "]));
        assert!(!is_card(b"4111111111111111", &[4, 4, 8], &[b" ", b" "]));
    }
}

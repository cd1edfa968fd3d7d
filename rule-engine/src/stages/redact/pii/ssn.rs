//! US Social Security numbers.
//!
//! Taken when printed `AAA-GG-SSSS` (dashes), or as 9 digits (or with
//! spaces) next to an SSN key (`ssn`, `social security` before it on its
//! line, or a CSV column of that name), and only when the number is one
//! the SSA can issue: area 001-899 but not 666, group 01-99, serial
//! 0001-9999, and not one of the numbers published as examples
//! (078-05-1120 from a wallet insert, 219-09-9999 from an SSA leaflet).
//! ITINs (area 9xx) are not SSNs and are left. Missed: numbers in other
//! layouts (`123 45 6789` without a key, `123456789` without a key).

use super::number::Number;

const PUBLISHED: &[&[u8]] = &[b"078051120", b"219099999"];

/// Whether `n` is an SSN; `context` says whether an SSN key names it.
pub(super) fn is_ssn(n: &Number, context: &dyn Fn() -> bool) -> bool {
    if n.plus || n.paren || n.digits.len() != 9 {
        return false;
    }
    let printed =
        n.groups == [3, 2, 4] && n.seps[0] == n.seps[1] && (n.seps[0] == b"-" || (n.seps[0] == b" " && context()));
    let plain = n.groups == [9] && context();
    (printed || plain) && issuable(n.digits)
}

/// Whether the 9 digits are an SSN the SSA can issue.
fn issuable(d: &[u8]) -> bool {
    let area = &d[..3];
    area != b"000"
        && area != b"666"
        && area[0] != b'9'
        && &d[3..5] != b"00"
        && &d[5..] != b"0000"
        && !PUBLISHED.contains(&d)
}

#[cfg(test)]
mod tests {
    use super::super::tests::number;
    use super::*;

    fn ssn(s: &str, context: bool) -> bool {
        let (digits, groups, seps, plus, paren) = number(s);
        let seps: Vec<&[u8]> = seps.iter().map(Vec::as_slice).collect();
        is_ssn(&Number { digits: &digits, groups: &groups, seps: &seps, plus, paren }, &|| context)
    }

    #[test]
    fn issuable_ranges() {
        assert!(ssn("536-22-8410", false));
        assert!(!ssn("536228410", false) && ssn("536228410", true));
        for bad in ["000-12-3456", "666-12-3456", "912-34-5678", "536-00-8410", "536-22-0000", "078-05-1120"] {
            assert!(!ssn(bad, true), "{bad}");
        }
        // Not an SSN's layout: a ZIP+4, a date.
        assert!(!ssn("12345-6789", true) && !ssn("2024-12-01", true));
    }
}

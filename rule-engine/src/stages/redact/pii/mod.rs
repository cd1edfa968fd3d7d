//! Personal data that a rule's regex cannot validate: payment cards,
//! IBANs, phone numbers, US SSNs, IP addresses, and dates of birth in a
//! CSV column. Personal data a regex can find (email addresses, a date of
//! birth after its key) are `pii` rules of the rule pack
//! (`rules/default/14-pii.toml`); these detectors are code because what makes a
//! number personal data is a checksum, a number plan or an address range,
//! each in its module with what it takes and what it misses:
//!
//! - [`card`]: Luhn and the brands' prefixes and lengths (`card`);
//! - [`iban`]: the registry's lengths and mod 97 (`iban`);
//! - [`phone`]: E.164 calling codes and lengths, printed national forms,
//!   phone keys (`phone`);
//! - [`ssn`]: the SSA's issuable ranges (`ssn`);
//! - [`ip`]: private, link-local and unique-local addresses, public ones
//!   when asked (`ip`).
//!
//! # Where they run
//!
//! With PII on ([`Mode::pii`]: the call's `pii` option, or a tool the packs
//! list in `pii-tools`) all of them; in an error result ([`Mode::scrub`])
//! cards, IBANs, phone numbers and SSNs (its private addresses are the
//! `private-ip` rule's). Nothing runs otherwise: with PII off a successful
//! result is redacted as before. Nor in source code (a code content type,
//! a source file's name, or sniffed) unless it is an error result: its
//! addresses and numbers are its authors' test fixtures and examples.
//!
//! # How numbers are read
//!
//! One pass over the bytes reads *runs*: digit groups joined by single
//! separators (a space, `-`, `.`, parentheses), optionally after `+` or
//! `(`, not glued to a word, a path or a decimal point on the left. Each
//! run is tried as windows of whole groups, the earliest and longest first,
//! so `Order 2024 4111 1111 1111 1111` finds the card after the year. A
//! window of four dotted octets is an IPv4 address and nothing else. A
//! phone or SSN key (`phone:`, `"tel": "`, `SSN`) before a run on its line,
//! or a CSV header naming the run's column, lets national forms count.
//! A window reaches the detectors as a [`Number`] (module `number`).
//!
//! Replacements are `[REDACTED:<id>]`. A number that stands bare in JSON
//! (`"phone": 14155550132`) is replaced by the quoted form so that the
//! document still parses ([`outside_json_strings`]).

mod card;
mod iban;
mod ip;
mod number;
mod phone;
mod ssn;

use std::ops::Range;

use super::{Mode, Span};
use number::Number;

/// Rule ids of the detectors here.
pub const CARD: &str = "card";
pub const IBAN: &str = "iban";
pub const PHONE: &str = "phone";
pub const SSN: &str = "ssn";
pub const IP: &str = "ip";
pub const DOB: &str = "dob";

/// Every id the detectors report: no pack rule has them, and a host that
/// checks a record's rule ids against the packs takes these too.
pub const DETECTOR_IDS: &[&str] = &[CARD, IBAN, PHONE, SSN, IP, DOB];

/// Whether a span of rule `id` may be a bare JSON number.
pub fn may_be_number(id: &str) -> bool {
    matches!(id, CARD | PHONE | SSN)
}

/// The detectors' findings in `text` for `mode` (see the module docs).
pub(super) fn find(text: &str, mode: Mode) -> Vec<Span> {
    let mut out = Vec::new();
    // Source code holds what its authors wrote (test fixtures, examples):
    // no personal data is sought there unless it is an error's.
    if !mode.scrub && (!mode.pii || mode.code) {
        return out;
    }
    let csv = if mode.pii { Columns::of(text) } else { None };
    numbers(text, mode, csv.as_ref(), &mut out);
    let mut ranges = Vec::new();
    iban::find(text, &mut ranges);
    out.extend(ranges.drain(..).map(|r| span(r, IBAN)));
    if mode.pii {
        ip::find_v6(text, mode.public_ip, &mut ranges);
        out.extend(ranges.drain(..).map(|r| span(r, IP)));
        if let Some(c) = &csv {
            c.dates(text, &mut out);
        }
    }
    out
}

fn span(r: Range<usize>, rule: &str) -> Span {
    Span::new(r.start, r.end, rule.into())
}

/// Most groups a run holds, and most bytes: a table of numbers is read
/// as several runs.
const MAX_GROUPS: usize = 12;
const MAX_RUN: usize = 64;

/// Whether a number starting at `i` is glued to what precedes it: a word,
/// a path, a decimal point, a sigil (`#123`, `$4`), or a `-`/`+` right
/// after a word (`v1-2`, `1e+10`).
fn glued_left(b: &[u8], i: usize) -> bool {
    let Some(&p) = i.checked_sub(1).map(|k| &b[k]) else { return false };
    p.is_ascii_alphanumeric()
        || matches!(p, b'_' | b'.' | b'/' | b'\\' | b'@' | b'#' | b'$' | b'%' | b'&' | b'*' | b'^' | b'~' | b'`' | b'|')
        || (matches!(p, b'-' | b'+' | b':') && i >= 2 && b[i - 2].is_ascii_alphanumeric() && p != b':')
}

/// A separator between two digit groups: one space, dash or dot, or a
/// parenthesis with a space or a dash.
fn valid_sep(s: &[u8]) -> bool {
    matches!(s, b" " | b"-" | b"." | b")" | b") " | b" (" | b")-" | b"(")
}

fn numbers(text: &str, mode: Mode, csv: Option<&Columns>, out: &mut Vec<Span>) {
    let b = text.as_bytes();
    let digit = |c: Option<&u8>| c.is_some_and(u8::is_ascii_digit);
    let mut groups: Vec<Range<usize>> = Vec::new();
    let mut seps: Vec<Range<usize>> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let lead = (c == b'+' || c == b'(') && digit(b.get(i + 1));
        if !(c.is_ascii_digit() || lead) {
            i += 1;
            continue;
        }
        if glued_left(b, i) {
            // The rest of this word is no number's start either.
            i += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            continue;
        }
        groups.clear();
        seps.clear();
        let plus = c == b'+';
        let paren = c == b'(';
        let mut p = if lead { i + 1 } else { i };
        loop {
            let g0 = p;
            while p < b.len() && b[p].is_ascii_digit() {
                p += 1;
            }
            groups.push(g0..p);
            if groups.len() == MAX_GROUPS || p - i > MAX_RUN {
                break;
            }
            let mut q = p;
            while q < b.len() && q - p < 2 && matches!(b[q], b' ' | b'-' | b'.' | b'(' | b')') {
                q += 1;
            }
            // A one-byte separator before a digit, else a two-byte one.
            let one = q > p && digit(b.get(p + 1)) && valid_sep(&b[p..p + 1]);
            let two = q == p + 2 && digit(b.get(q)) && valid_sep(&b[p..q]);
            if one {
                seps.push(p..p + 1);
                p += 1;
            } else if two {
                seps.push(p..q);
                p = q;
            } else {
                break;
            }
        }
        // A last group glued to a word (`0132ext`, `42px`) is not a number.
        if b.get(p).is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'@') {
            groups.pop();
            seps.truncate(groups.len().saturating_sub(1));
        }
        windows(text, mode, csv, i, plus, paren, &groups, &seps, out);
        i = p.max(i + 1);
    }
}

#[allow(clippy::too_many_arguments)]
fn windows(
    text: &str,
    mode: Mode,
    csv: Option<&Columns>,
    run_start: usize,
    plus: bool,
    paren: bool,
    groups: &[Range<usize>],
    seps: &[Range<usize>],
    out: &mut Vec<Span>,
) {
    let b = text.as_bytes();
    let n = groups.len();
    let total: usize = groups.iter().map(|g| g.len()).sum();
    if total < 7 && n != 4 {
        return;
    }
    let mut digits: Vec<u8> = Vec::with_capacity(total);
    let mut lens: Vec<usize> = Vec::with_capacity(n);
    let mut s = 0;
    'start: while s < n {
        for e in (s..n).rev() {
            let count: usize = groups[s..=e].iter().map(|g| g.len()).sum();
            if count > 19 {
                continue;
            }
            let dots = (s..e).all(|k| &b[seps[k].clone()] == b".");
            let edge = |k: Option<usize>| k.is_none_or(|k| !b[seps[k].clone()].contains(&b'.'));
            let dotted_quad =
                e - s == 3 && dots && edge(s.checked_sub(1)) && edge((e + 1 < n).then_some(e)) && !(plus && s == 0);
            if count < 7 && !dotted_quad {
                break;
            }
            let opens = (s == 0 && paren) || (s > 0 && b[seps[s - 1].end - 1] == b'(');
            let start = match (s, opens) {
                (0, _) => run_start,
                (_, true) => seps[s - 1].end - 1,
                _ => groups[s].start,
            };
            let end = groups[e].end;
            if dotted_quad {
                let octets: Vec<&[u8]> = groups[s..=e].iter().map(|g| &b[g.clone()]).collect();
                if let Some(o) = octets4(&octets) {
                    if mode.pii && ip::v4(o, mode.public_ip) {
                        out.push(span(start..end, IP));
                    }
                    s = e + 1;
                    continue 'start;
                }
            }
            digits.clear();
            lens.clear();
            for g in &groups[s..=e] {
                digits.extend_from_slice(&b[g.clone()]);
                lens.push(g.len());
            }
            let sep_bytes: Vec<&[u8]> = seps[s..e].iter().map(|r| &b[r.clone()]).collect();
            let num = Number { digits: &digits, groups: &lens, seps: &sep_bytes, plus: plus && s == 0, paren: opens };
            let column = csv.map(|c| c.kind_at(text, start));
            let phone_key = || column == Some(Some(Kind::Phone)) || key_before(text, start, PHONE_KEYS);
            let ssn_key = || column == Some(Some(Kind::Ssn)) || key_before(text, start, SSN_KEYS);
            let id = if !num.plus && card::is_card(num.digits, num.groups, num.seps) {
                Some(CARD)
            } else if ssn::is_ssn(&num, &ssn_key) {
                Some(SSN)
            } else if phone::is_phone(&num, &phone_key) {
                Some(PHONE)
            } else {
                None
            };
            if let Some(id) = id {
                // A closing parenthesis of the last group goes with it.
                out.push(span(start..end, id));
                s = e + 1;
                continue 'start;
            }
        }
        s += 1;
    }
}

/// Four decimal octets, 0 to 255 without leading zeros.
fn octets4(parts: &[&[u8]]) -> Option<[u8; 4]> {
    let mut o = [0u8; 4];
    for (k, p) in parts.iter().enumerate() {
        if p.is_empty() || p.len() > 3 || (p.len() > 1 && p[0] == b'0') {
            return None;
        }
        let v = p.iter().fold(0u32, |n, &d| n * 10 + u32::from(d - b'0'));
        o[k] = u8::try_from(v).ok()?;
    }
    Some(o)
}

/// Keys that name a phone number.
const PHONE_KEYS: &[&str] =
    &["phone", "tel", "telephone", "mobile", "cell", "fax", "whatsapp", "telefon", "telefono", "handy", "msisdn"];
/// Keys that name an SSN.
const SSN_KEYS: &[&str] = &["ssn", "social security", "social_security", "social-security"];
/// How far before a number its key may be, on its line.
const KEY_REACH: usize = 40;

/// Whether one of `keys` stands as a word at most [`KEY_REACH`] bytes
/// before `at` on its line (`phone:`, `"mobile": "`, `Tel.`, `homePhone=`).
fn key_before(text: &str, at: usize, keys: &[&str]) -> bool {
    let b = text.as_bytes();
    let from = at.saturating_sub(KEY_REACH);
    let from = memchr::memrchr(b'\n', &b[from..at]).map_or(from, |p| from + p + 1);
    let hay = &b[from..at];
    keys.iter().any(|k| {
        let k = k.as_bytes();
        (0..hay.len().saturating_sub(k.len() - 1)).any(|p| {
            if !hay[p..p + k.len()].eq_ignore_ascii_case(k) {
                return false;
            }
            // A word: not inside another (`hotel`, `cancel`), except a
            // camelCase join (`homePhone`).
            let before = p.checked_sub(1).map(|q| hay[q]);
            let left = before.is_none_or(|c| !c.is_ascii_alphabetic() || hay[p].is_ascii_uppercase());
            let right = hay.get(p + k.len()).is_none_or(|c| !c.is_ascii_lowercase());
            left && right
        })
    })
}

/// What a CSV column holds, by its header.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Phone,
    Ssn,
    Dob,
}

/// The header of a CSV (or TSV, or `;`-separated) text whose columns
/// name personal data.
struct Columns {
    sep: u8,
    kinds: Vec<Option<Kind>>,
    /// Where the first record starts.
    body: usize,
}

impl Columns {
    /// The header of `text`, if its first line is one that names a phone,
    /// SSN or birth-date column.
    fn of(text: &str) -> Option<Self> {
        let b = text.as_bytes();
        let end = memchr::memchr(b'\n', b).unwrap_or(b.len());
        let header = &b[..end.min(4096)];
        let sep = [b',', b'\t', b';'].into_iter().max_by_key(|&s| memchr::memchr_iter(s, header).count())?;
        if !header.contains(&sep) {
            return None;
        }
        let kinds: Vec<Option<Kind>> = cells(header, sep).map(|c| kind_of(&header[c])).collect();
        kinds.iter().any(Option::is_some).then_some(Self { sep, kinds, body: (end + 1).min(b.len()) })
    }

    /// The kind of the column that byte `at` is in (none in the header).
    fn kind_at(&self, text: &str, at: usize) -> Option<Kind> {
        let b = text.as_bytes();
        if at < self.body {
            return None;
        }
        let line = memchr::memrchr(b'\n', &b[..at]).map_or(0, |p| p + 1);
        let mut quoted = false;
        let col = b[line..at]
            .iter()
            .filter(|&&c| {
                if c == b'"' {
                    quoted = !quoted;
                }
                c == self.sep && !quoted
            })
            .count();
        self.kinds.get(col).copied().flatten()
    }

    /// The dates in birth-date columns.
    fn dates(&self, text: &str, out: &mut Vec<Span>) {
        if !self.kinds.contains(&Some(Kind::Dob)) {
            return;
        }
        let b = text.as_bytes();
        let mut line = self.body;
        while line < b.len() {
            let end = memchr::memchr(b'\n', &b[line..]).map_or(b.len(), |p| line + p);
            for (k, c) in cells(&b[line..end], self.sep).enumerate() {
                if self.kinds.get(k) == Some(&Some(Kind::Dob)) {
                    let (s, e) = trim_cell(&b[line..end], c);
                    if is_date(&b[line + s..line + e]) {
                        out.push(span(line + s..line + e, DOB));
                    }
                }
            }
            line = end + 1;
        }
    }
}

/// The cells of one CSV line (quotes respected), as ranges.
fn cells(line: &[u8], sep: u8) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut at = 0;
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        let start = at;
        let mut quoted = false;
        while at < line.len() && (quoted || line[at] != sep) {
            if line[at] == b'"' {
                quoted = !quoted;
            }
            at += 1;
        }
        let cell = start..at;
        if at >= line.len() {
            done = true;
        } else {
            at += 1;
        }
        Some(cell)
    })
}

/// A cell without its surrounding spaces, quotes and `\r`.
fn trim_cell(line: &[u8], c: Range<usize>) -> (usize, usize) {
    let (mut s, mut e) = (c.start, c.end);
    while s < e && matches!(line[s], b' ' | b'"' | b'\'') {
        s += 1;
    }
    while e > s && matches!(line[e - 1], b' ' | b'"' | b'\'' | b'\r') {
        e -= 1;
    }
    (s, e)
}

/// The kind a header cell names: letters only, lower case, compared with
/// the phone, SSN and birth-date names.
fn kind_of(cell: &[u8]) -> Option<Kind> {
    let name: String =
        cell.iter().filter(|c| c.is_ascii_alphabetic()).map(|c| c.to_ascii_lowercase() as char).collect();
    let phone = ["tel", "telephone", "mobile", "cell", "cellphone", "fax", "msisdn", "whatsapp", "telefon", "handy"];
    if name.contains("phone") || phone.contains(&name.as_str()) || name.ends_with("mobile") {
        return Some(Kind::Phone);
    }
    if matches!(name.as_str(), "ssn" | "socialsecurity" | "socialsecuritynumber") {
        return Some(Kind::Ssn);
    }
    let dob = ["dob", "dateofbirth", "birthdate", "birthday", "born", "bornon", "geburtsdatum", "datenaissance"];
    dob.contains(&name.as_str()).then_some(Kind::Dob)
}

/// A calendar date: `1985-03-02`, `1985/3/2`, `02/03/1985`, `02.03.1985`,
/// `3-2-1985` (one separator), a year 1900 to 2099, a month and a day in
/// range either way round.
pub fn is_date(s: &[u8]) -> bool {
    let Some(&sep) = s.iter().find(|c| !c.is_ascii_digit()) else { return false };
    if !matches!(sep, b'-' | b'/' | b'.') {
        return false;
    }
    let parts: Vec<&[u8]> = s.split(|&c| c == sep).collect();
    if parts.len() != 3 || parts.iter().any(|p| p.is_empty() || !p.iter().all(u8::is_ascii_digit)) {
        return false;
    }
    let num = |p: &[u8]| p.iter().fold(0u32, |n, &d| n * 10 + u32::from(d - b'0'));
    let (y, a, c) = match (parts[0].len(), parts[2].len()) {
        (4, 1..=2) => (parts[0], parts[1], parts[2]),
        (1..=2, 4) => (parts[2], parts[0], parts[1]),
        _ => return false,
    };
    if parts[1].len() > 2 {
        return false;
    }
    let (y, a, c) = (num(y), num(a), num(c));
    (1900..=2099).contains(&y) && (1..=31).contains(&a) && (1..=31).contains(&c) && (a <= 12 || c <= 12)
}

/// For each span, whether it stands outside every string of the JSON
/// `text` (a bare number): its replacement must then be quoted to keep
/// the document JSON. One pass over the text, only when some span is a
/// detector's number.
pub fn outside_json_strings(text: &str, spans: &[Span]) -> Vec<bool> {
    let mut out = vec![false; spans.len()];
    if !spans.iter().any(|s| may_be_number(&s.rule)) {
        return out;
    }
    let b = text.as_bytes();
    let mut in_string = false;
    let mut escaped = false;
    let mut k = 0;
    for (i, &c) in b.iter().enumerate() {
        while k < spans.len() && spans[k].start == i {
            out[k] = !in_string && may_be_number(&spans[k].rule);
            k += 1;
        }
        if k == spans.len() {
            break;
        }
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else if c == b'"' {
            in_string = true;
        }
    }
    out
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// The parts of a number written as `s`: digits, groups, separators,
    /// `+`, `(`.
    pub fn number(s: &str) -> (Vec<u8>, Vec<usize>, Vec<Vec<u8>>, bool, bool) {
        let b = s.as_bytes();
        let plus = b[0] == b'+';
        let paren = b[usize::from(plus)] == b'(';
        let body = &b[usize::from(plus) + usize::from(paren)..];
        let (mut digits, mut groups, mut seps) = (Vec::new(), Vec::new(), Vec::new());
        let mut i = 0;
        while i < body.len() {
            let g = i;
            while i < body.len() && body[i].is_ascii_digit() {
                i += 1;
            }
            digits.extend_from_slice(&body[g..i]);
            groups.push(i - g);
            let s0 = i;
            while i < body.len() && !body[i].is_ascii_digit() {
                i += 1;
            }
            if i > s0 && i < body.len() {
                seps.push(body[s0..i].to_vec());
            }
        }
        (digits, groups, seps, plus, paren)
    }

    fn found(text: &str, mode: Mode) -> Vec<(String, &str)> {
        let mut spans = find(text, mode);
        spans.sort_by_key(|s| s.start);
        spans.into_iter().map(|s| (s.rule, &text[s.start..s.end])).collect()
    }

    fn on() -> Mode {
        Mode { pii: true, ..Mode::default() }
    }

    #[test]
    fn numbers_in_context() {
        let text = "Order 2024 4111 1111 1111 1111 paid; call +1 (415) 555-0132 or 020 7946 0958, ssn 536-22-8410.";
        let got = found(text, on());
        assert_eq!(
            got,
            [
                ("card".into(), "4111 1111 1111 1111"),
                ("phone".into(), "+1 (415) 555-0132"),
                ("phone".into(), "020 7946 0958"),
                ("ssn".into(), "536-22-8410")
            ]
        );
        // Off: nothing; an error result: no IP addresses.
        assert!(found(text, Mode::default()).is_empty());
        let scrub = Mode { scrub: true, ..Mode::default() };
        assert_eq!(found("at 10.0.0.7 card 4111111111111111", scrub), [("card".into(), "4111111111111111")]);
        assert_eq!(found("at 10.0.0.7 and 8.8.8.8", on()), [("ip".into(), "10.0.0.7")]);
        let public = Mode { public_ip: true, ..on() };
        assert_eq!(found("at 10.0.0.7 and 8.8.8.8:53", public), [("ip".into(), "10.0.0.7"), ("ip".into(), "8.8.8.8")]);
    }

    #[test]
    fn close_negatives() {
        for text in [
            "order 4111111111111112 shipped",        // Luhn fails
            "ts=1733312345678909 id=20241201123456", // no brand, not a phone form
            "uuid 123e4567-e89b-12d3-a456-426614174000",
            "version 10.2.3.4.5 and v1.2.3 and 2.0.0-rc.1",
            "ports 8080 8443 9090 5432 6379 27017",
            "2024-12-01T10:11:12.123456+01:00 took 1234567 ns",
            "pi 3.14159265358979 e 2.718281828459045",
            "sha 4111111111111111a and x4111111111111111",
            "lines 12-45-6789 in 5.2.1 and 415 555 0132 unkeyed",
        ] {
            assert!(found(text, on()).is_empty(), "{text}");
        }
    }

    #[test]
    fn not_in_source_code() {
        let text = "card 4111111111111111 phone +44 7911 123456";
        assert!(found(text, Mode { code: true, ..on() }).is_empty());
        assert_eq!(found(text, Mode { code: true, scrub: true, ..Mode::default() }).len(), 2);
    }

    #[test]
    fn keys_and_csv_columns() {
        assert_eq!(found("Tel.: 030 12345678", on()), [("phone".into(), "030 12345678")]);
        assert!(found("hotel 030 12345678", on()).is_empty());
        assert_eq!(found("{\"homePhone\": \"9123 4567\"}", on()), [("phone".into(), "9123 4567")]);
        let csv = "name,phone,ssn,dob\nCarol,030 12345678,536228410,1985-03-02\nDan,\"+44 7911 123456\",,02/03/1990\n";
        let got = found(csv, on());
        let kinds: Vec<&str> = got.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(kinds, ["phone", "ssn", "dob", "phone", "dob"], "{got:?}");
    }

    #[test]
    fn bare_json_numbers() {
        let text = r#"{"phone": 14155550132, "note": "call 4155550132"}"#;
        let spans = vec![
            Span::new(10, 21, PHONE.into()),
            Span::new(text.find("4155550132\"").unwrap(), text.len() - 2, PHONE.into()),
        ];
        assert_eq!(outside_json_strings(text, &spans), [true, false]);
    }

    #[test]
    fn dates() {
        for d in ["1985-03-02", "02/03/1985", "12.31.1999", "1985/3/2"] {
            assert!(is_date(d.as_bytes()), "{d}");
        }
        for d in ["1985-13-32", "2024-12", "1.2.3", "10/20/30", "1985-03-02T10"] {
            assert!(!is_date(d.as_bytes()), "{d}");
        }
    }
}

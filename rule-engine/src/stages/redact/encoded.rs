//! Encoded secrets: base64, percent-encoding and `\u`/`\x` escapes.
//!
//! Credentials often appear only encoded: a docker `auth`, a Kubernetes
//! `data:` value, a git `http.extraheader`, a password in a query string, a
//! token inside a JSON-escaped string. The text splits into tokens at
//! delimiters (space, quotes, brackets, `,;`); only tokens that can hold
//! an encoded secret are visited ([`Candidates`]). Inside one, runs of 16+
//! base64 characters with both letter cases are decoded (one-case runs are
//! hashes and ids, and decode to binary), and a token with `%XX` or `\u`
//! escapes is unescaped. A decoded text that is printable UTF-8 is scanned
//! with the plain rules; if it holds a secret, the *encoded* span is
//! redacted under that rule's id. Decoding is one level deep and bounded
//! ([`MAX_DECODED`] bytes per text), so hostile input cannot make it costly.

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::{alphabet, Engine};

use crate::stages::redact::Span;

/// Total decoded bytes scanned per text.
pub const MAX_DECODED: usize = 4 << 20;
const MIN_RUN: usize = 16;
const MAX_TOKEN: usize = 64 * 1024;

fn engines() -> (GeneralPurpose, GeneralPurpose) {
    let cfg = GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true);
    (GeneralPurpose::new(&alphabet::STANDARD, cfg), GeneralPurpose::new(&alphabet::URL_SAFE, cfg))
}

/// Byte classes, looked up once per byte (the scan runs over every byte of
/// every text, so it is a table, not a chain of comparisons).
const DELIM: u8 = 1;
const B64: u8 = 2;
const UPPER: u8 = 4;
const LOWER: u8 = 8;
const URL_SAFE: u8 = 16;
const ESCAPE: u8 = 32;

const CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let delims = b" \t\n\r\"'`<>,;()[]{}";
    let mut i = 0;
    while i < delims.len() {
        t[delims[i] as usize] = DELIM;
        i += 1;
    }
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        if b.is_ascii_uppercase() {
            t[c] = B64 | UPPER;
        } else if b.is_ascii_lowercase() {
            t[c] = B64 | LOWER;
        } else if b.is_ascii_digit() || b == b'+' || b == b'/' {
            t[c] = B64;
        } else if b == b'-' || b == b'_' {
            t[c] = B64 | URL_SAFE;
        } else if b == b'%' || b == b'\\' {
            t[c] = ESCAPE;
        }
        c += 1;
    }
    t
};

fn printable(s: &str) -> bool {
    let n = s.chars().count();
    n > 0 && s.chars().filter(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t')).count() * 10 >= n * 9
}

/// Spans of `text` that are encodings of a secret; `inner` scans a decoded
/// text and returns the id of the first rule that finds something.
pub fn encoded_secrets(text: &str, inner: impl Fn(&str) -> Option<String>) -> Vec<Span> {
    let b = text.as_bytes();
    let (std, url) = engines();
    let mut out = Vec::new();
    let mut budget = MAX_DECODED;
    let mut candidates = Candidates::new(b);
    while budget > 0 {
        let Some(tok) = candidates.next() else { break };
        if tok.len() < MIN_RUN || tok.len() > MAX_TOKEN {
            continue;
        }
        let all = b[tok.clone()].iter().fold(0, |a, &x| a | CLASS[x as usize]);
        let escapes = all & ESCAPE != 0;
        let runs =
            if all & (UPPER | LOWER) == UPPER | LOWER { base64_runs(&b[tok.clone()], tok.start) } else { Vec::new() };
        for (rs, j, url_safe) in runs {
            let mut re = j;
            while re < tok.end && re - j < 2 && b[re] == b'=' {
                re += 1;
            }
            let engine = if url_safe { &url } else { &std };
            let Ok(decoded) = engine.decode(&b[rs..j]) else { continue };
            budget = budget.saturating_sub(decoded.len());
            if let Ok(d) = std::str::from_utf8(&decoded) {
                if printable(d) {
                    if let Some(rule) = inner(d) {
                        // A run that starts at an escape's letter (`\nQUt…`)
                        // takes the backslash too, so no `\[` is left.
                        let backslashes = b[tok.start..rs].iter().rev().take_while(|&&c| c == b'\\').count();
                        out.push(Span::new(rs - backslashes % 2, re, rule));
                    }
                }
            }
        }
        if !escapes {
            continue;
        }
        // Percent-encoding and backslash escapes: unescape the token.
        let t = &text[tok.clone()];
        let unescaped = if t.contains('%') {
            percent_decode(t)
        } else if t.contains("\\u") || t.contains("\\x") || t.contains("\\/") {
            unescape(t)
        } else {
            None
        };
        if let Some(u) = unescaped {
            budget = budget.saturating_sub(u.len());
            if let Some(rule) = inner(&u) {
                // A token cut at an escaped delimiter (`…\"` inside a JSON
                // string) ends with that escape's backslash: left out, so
                // the escape stays whole and the string unbroken.
                let backslashes = b[tok.clone()].iter().rev().take_while(|&&c| c == b'\\').count();
                out.push(Span::new(tok.start, tok.end - backslashes % 2, rule));
            }
        }
    }
    out
}

/// The tokens (bytes between delimiters) that can hold an encoded secret,
/// in order: those with an escape character, or with an uppercase letter
/// in a run of 16+ base64 characters that also has a lowercase one. No
/// other token yields a span, so the rest of the text is passed over: a
/// vector search for uppercase letters and a memchr for escapes, each
/// resumed where it stopped (the next hit of each is kept), and each hit's
/// base64 run or token read once. Linear in the text.
struct Candidates<'b> {
    b: &'b [u8],
    /// Tokens before this are done.
    from: usize,
    /// The next uppercase letter and escape at or after the last search
    /// (`b.len()`: none; `None`: not searched yet).
    upper: Option<usize>,
    escape: Option<usize>,
}

impl<'b> Candidates<'b> {
    fn new(b: &'b [u8]) -> Self {
        Candidates { b, from: 0, upper: None, escape: None }
    }

    fn next(&mut self) -> Option<std::ops::Range<usize>> {
        let b = self.b;
        let is = |x: u8, class: u8| CLASS[x as usize] & class != 0;
        let mut at = self.from;
        loop {
            let upper = match self.upper {
                Some(u) if u >= at => u,
                _ => *self.upper.insert(find_upper(b, at).unwrap_or(b.len())),
            };
            let escape = match self.escape {
                Some(e) if e >= at => e,
                _ => *self.escape.insert(memchr::memchr2(b'%', b'\\', &b[at..]).map_or(b.len(), |p| at + p)),
            };
            let p = upper.min(escape);
            if p >= b.len() {
                return None;
            }
            if p == upper {
                // The uppercase letter's base64 run.
                let rs = p - b[at..p].iter().rev().take_while(|&&x| is(x, B64)).count();
                let re = p + b[p..].iter().take_while(|&&x| is(x, B64)).count();
                if re - rs < MIN_RUN || !b[rs..re].iter().any(|&x| is(x, LOWER)) {
                    at = re;
                    continue;
                }
            }
            let start = p - b[self.from..p].iter().rev().take_while(|&&x| !is(x, DELIM)).count();
            let end = p + b[p..].iter().take_while(|&&x| !is(x, DELIM)).count();
            self.from = end;
            return Some(start..end);
        }
    }
}

/// The first ASCII uppercase letter at or after `from`: 16 bytes a step
/// without an early exit, a loop the compiler turns into vector compares
/// (wasm SIMD, SSE2), then the exact place within the step.
fn find_upper(b: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while let Some(chunk) = b.get(i..i + 16) {
        if chunk.iter().fold(0u8, |a, &x| a | u8::from(x.wrapping_sub(b'A') < 26)) != 0 {
            break;
        }
        i += 16;
    }
    b[i..].iter().position(u8::is_ascii_uppercase).map(|p| i + p)
}

/// The runs of 16+ base64 characters of `tok` with both cases (offsets
/// from `at`), and whether each has a URL-safe character.
fn base64_runs(tok: &[u8], at: usize) -> Vec<(usize, usize, bool)> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < tok.len() {
        if CLASS[tok[i] as usize] & B64 == 0 {
            i += 1;
            continue;
        }
        let rs = i;
        let mut seen = 0;
        while let Some(&x) = tok.get(i) {
            let c = CLASS[x as usize];
            if c & B64 == 0 {
                break;
            }
            seen |= c;
            i += 1;
        }
        if i - rs >= MIN_RUN && seen & (UPPER | LOWER) == UPPER | LOWER {
            runs.push((at + rs, at + i, seen & URL_SAFE != 0));
        }
    }
    runs
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// `%XX` decoded (and `+` as space), if anything changed and it is UTF-8.
fn percent_decode(t: &str) -> Option<String> {
    let b = t.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut changed = false;
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push(h << 4 | l);
                i += 3;
                changed = true;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    if !changed {
        return None;
    }
    String::from_utf8(out).ok()
}

/// `\uXXXX`, `\xXX`, `\/` and `\\` resolved, if anything changed.
fn unescape(t: &str) -> Option<String> {
    let mut out = String::with_capacity(t.len());
    let mut chars = t.chars().peekable();
    let mut changed = false;
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some('u') => {
                chars.next();
                let h: String = chars.by_ref().take(4).collect();
                match u32::from_str_radix(&h, 16).ok().and_then(char::from_u32) {
                    Some(ch) => {
                        out.push(ch);
                        changed = true;
                    }
                    None => {
                        out.push_str("\\u");
                        out.push_str(&h);
                    }
                }
            }
            Some('x') => {
                chars.next();
                let h: String = chars.by_ref().take(2).collect();
                match u8::from_str_radix(&h, 16).ok().filter(u8::is_ascii) {
                    Some(v) => {
                        out.push(v as char);
                        changed = true;
                    }
                    None => {
                        out.push_str("\\x");
                        out.push_str(&h);
                    }
                }
            }
            Some('/') | Some('\\') => {
                out.push(chars.next().expect("peeked"));
                changed = true;
            }
            _ => out.push('\\'),
        }
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finder(d: &str) -> Option<String> {
        d.contains("ghp_").then(|| "github-token".to_string())
    }

    /// The tokens by their definition: split at delimiters, those with an
    /// escape or a 16+ base64 run with both letter cases.
    fn candidates_by_definition(b: &[u8]) -> Vec<std::ops::Range<usize>> {
        let mut out = Vec::new();
        let mut start = 0;
        for end in (0..=b.len()).filter(|&i| i == b.len() || CLASS[b[i] as usize] & DELIM != 0) {
            let tok = &b[start..end];
            let run_with_both = tok.split(|&x| CLASS[x as usize] & B64 == 0).any(|r| {
                let all = r.iter().fold(0, |a, &x| a | CLASS[x as usize]);
                r.len() >= MIN_RUN && all & (UPPER | LOWER) == UPPER | LOWER
            });
            if tok.iter().any(|&x| CLASS[x as usize] & ESCAPE != 0) || run_with_both {
                out.push(start..end);
            }
            start = end + 1;
        }
        out
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        #[test]
        fn candidates_are_the_tokens_that_can_hold_one(
            v in proptest::collection::vec(proptest::sample::select(vec![
                "a", "Z", "q9", "AbCdEfGh", "abcdefgh", "ABCDEFGH", "0123", "+/", "-_", "=", " ", "\n", "\"", ",", "{",
                "%", "\\", ".", ":", "é", "x", "Q",
            ]), 0..80)
        ) {
            let s = v.concat();
            let mut c = Candidates::new(s.as_bytes());
            let got: Vec<_> = std::iter::from_fn(|| c.next()).collect();
            proptest::prop_assert_eq!(got, candidates_by_definition(s.as_bytes()));
        }
    }

    #[test]
    fn base64_percent_and_escapes() {
        let tok = "ghp_4kLm9Pq2Rt7Vx3Yz6Ab1Cd5Ef0Gh2Ij4Kl6M";
        let b64 = base64::engine::general_purpose::STANDARD.encode(format!("x-access-token:{tok}"));
        let text = format!("extraheader = AUTHORIZATION: basic {b64}\n");
        let spans = encoded_secrets(&text, finder);
        assert_eq!(spans.len(), 1);
        assert_eq!(&text[spans[0].start..spans[0].end], b64);
        let pct = "https://x/cb?t=%67hp_4kLm9Pq2Rt7Vx3Yz6Ab1Cd5Ef0Gh2Ij4Kl6M&y=1";
        assert_eq!(encoded_secrets(pct, finder).len(), 1);
        let esc = r#"{"t": "\u0067hp_4kLm9Pq2Rt7Vx3Yz6Ab1Cd5Ef0Gh2Ij4Kl6M"}"#;
        assert_eq!(encoded_secrets(esc, finder).len(), 1);
        // Cut at an escaped quote: the escape stays whole.
        let quoted = r#"["\u0000ghp_4kLm9Pq2Rt7Vx3Yz6Ab1Cd5Ef0Gh2Ij4Kl6M\" x"]"#;
        let spans = encoded_secrets(quoted, finder);
        assert_eq!(spans.len(), 1);
        assert_eq!(&quoted[spans[0].end..], r#"\" x"]"#);
        // A base64 run right after an escape's backslash (`\b`: base64
        // of text starting with `l`): the backslash goes with it.
        let b64l = base64::engine::general_purpose::STANDARD.encode(format!("lx-access-token:{tok}"));
        assert!(b64l.starts_with('b'));
        let after = format!(r#"["\{b64l}"]"#);
        let spans = encoded_secrets(&after, finder);
        assert_eq!(spans.len(), 1);
        assert_eq!(&after[..spans[0].start], r#"[""#);
        let hashes = "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
        assert!(encoded_secrets(hashes, finder).is_empty());
    }
}

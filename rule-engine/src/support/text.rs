//! Decoding bytes to text, and positions in the original.
//!
//! Invalid UTF-8 is replaced by U+FFFD and counted, never dropped; the
//! [`OffsetMap`] from decoding lets every later position be reported in
//! bytes of the original input. [`Lines`] answers "which line is byte N on"
//! with one binary search over the newline positions (found with memchr).

use crate::support::edits::OffsetMap;

/// Text decoded from bytes, with the way back.
pub struct Decoded {
    /// The text.
    pub text: String,
    /// Text offsets → input byte offsets.
    pub map: OffsetMap,
    /// Invalid sequences replaced.
    pub invalid: u32,
}

/// Decodes `bytes` as UTF-8, replacing each invalid sequence by U+FFFD.
pub fn decode(bytes: &[u8]) -> Decoded {
    if let Ok(s) = std::str::from_utf8(bytes) {
        return Decoded { text: s.to_string(), map: OffsetMap::identity(), invalid: 0 };
    }
    let mut text = String::with_capacity(bytes.len() + 16);
    let mut map = OffsetMap::identity();
    let mut invalid = 0u32;
    let mut src = 0usize;
    for (valid, bad_bytes) in utf8_pieces(bytes) {
        text.push_str(valid);
        src += valid.len();
        let bad = bad_bytes.len();
        if bad > 0 {
            let out_start = text.len();
            text.push('\u{FFFD}');
            map.push(out_start, text.len(), src, src + bad);
            src += bad;
            invalid += 1;
        }
    }
    Decoded { text, map, invalid }
}

/// `data` as runs of valid UTF-8, each followed by the invalid bytes after
/// it (empty at the end), like `utf8_chunks` but validated with
/// `str::from_utf8`, whose ASCII fast path reads words at a time (the
/// data is nearly always valid, and usually ASCII).
pub fn utf8_pieces(mut data: &[u8]) -> impl Iterator<Item = (&str, &[u8])> {
    std::iter::from_fn(move || {
        if data.is_empty() {
            return None;
        }
        match std::str::from_utf8(data) {
            Ok(s) => {
                data = &[];
                Some((s, &[][..]))
            }
            Err(e) => {
                let (valid, rest) = data.split_at(e.valid_up_to());
                let (bad, rest) = rest.split_at(e.error_len().unwrap_or(rest.len()));
                data = rest;
                Some((std::str::from_utf8(valid).unwrap_or_default(), bad))
            }
        }
    })
}

/// Newline index of a text, for 1-based line numbers.
pub struct Lines {
    newlines: Vec<usize>,
    len: usize,
}

impl Lines {
    /// Indexes `text`.
    pub fn new(text: &str) -> Self {
        let newlines = memchr::memchr_iter(b'\n', text.as_bytes()).collect();
        Self { newlines, len: text.len() }
    }

    /// Number of lines: a final line without `\n` counts; an empty text has 0.
    pub fn count(&self) -> u64 {
        if self.len == 0 {
            return 0;
        }
        let ends_with_nl = self.newlines.last().is_some_and(|&p| p + 1 == self.len);
        self.newlines.len() as u64 + u64::from(!ends_with_nl)
    }

    /// 1-based line holding byte `off` (a newline belongs to its line).
    pub fn line_of(&self, off: usize) -> u64 {
        self.newlines.partition_point(|&p| p < off) as u64 + 1
    }
}

/// `s.lines()` (split at `\n`, a `\r` before it dropped, no empty last
/// line), the newlines found with memchr: `str::lines` goes through
/// `core`'s scalar search, slower in wasm.
pub fn str_lines(s: &str) -> impl Iterator<Item = &str> {
    let mut rest = s;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(i) => {
                let line = &rest[..i];
                rest = &rest[i + 1..];
                Some(line.strip_suffix('\r').unwrap_or(line))
            }
            None => Some(std::mem::take(&mut rest)),
        }
    })
}

/// `b` split at each `\n` (the slices between, as `b.split` gives them),
/// the newlines found with memchr: the sniffers read a few hundred lines
/// a call, and a closure per byte cost them more than their tests did.
pub fn split_lines(b: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = Some(b);
    std::iter::from_fn(move || {
        let r = rest?;
        match memchr::memchr(b'\n', r) {
            Some(i) => {
                rest = Some(&r[i + 1..]);
                Some(&r[..i])
            }
            None => {
                rest = None;
                Some(r)
            }
        }
    })
}

/// Whether byte `c` starts a character (is not `10xxxxxx`).
#[inline(always)]
fn starts_char(c: u8) -> bool {
    (c as i8) >= -0x40
}

/// How many of the eight bytes of `w` start a character: bit 7 of each
/// byte of `!w | w << 1` is set for one that does (bit 7 clear, or bit 6
/// set).
#[inline(always)]
fn starts_in_word(w: &[u8]) -> usize {
    const TOP: u64 = 0x8080_8080_8080_8080;
    let w = u64::from_le_bytes(w.try_into().expect("eight bytes"));
    ((!w | w << 1) & TOP).count_ones() as usize
}

/// Counts characters (Unicode scalar values) quickly.
pub fn char_count(s: &str) -> usize {
    // Eight bytes at a time: the byte-wise filter did not vectorise in
    // wasm (4 % of an 8 KiB call, counting twice).
    let words = s.as_bytes().chunks_exact(8);
    let rest = words.remainder().iter().filter(|&&c| starts_char(c)).count();
    words.fold(rest, |n, w| n + starts_in_word(w))
}

/// Byte offset after the first `n` characters of `s` (or `s.len()`).
pub fn byte_of_char(s: &str, n: usize) -> usize {
    // Whole words while their characters are among the first `n`, then
    // byte by byte: decoding every character was 9 % of fitting a 256 KiB
    // log in wasm (the tail's start is most of the text in).
    let b = s.as_bytes();
    let mut seen = 0;
    let mut at = 0;
    for w in b.chunks_exact(8) {
        let k = starts_in_word(w);
        if seen + k > n {
            break;
        }
        seen += k;
        at += 8;
    }
    for (i, &c) in b[at..].iter().enumerate() {
        if starts_char(c) {
            if seen == n {
                return at + i;
            }
            seen += 1;
        }
    }
    b.len()
}

/// `a == b`, 32 bytes at a time. The wasm build's `memcmp` goes byte by
/// byte: comparing an MCP text with its megabyte twin took it 3 ms, this
/// a tenth of that (XOR-accumulated words, which the compiler does not
/// turn back into a `memcmp` call).
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let word = |c: &[u8], i: usize| u64::from_ne_bytes(c[i..i + 8].try_into().expect("8 bytes"));
    let (ca, cb) = (a.chunks_exact(32), b.chunks_exact(32));
    // The last bytes a byte at a time, XOR-accumulated too (`==` on them
    // would be that `memcmp` call again).
    let rest = ca.remainder().iter().zip(cb.remainder()).fold(0, |d, (x, y)| d | (x ^ y)) == 0;
    rest && ca.zip(cb).all(|(x, y)| (0..4).fold(0, |acc, k| acc | (word(x, 8 * k) ^ word(y, 8 * k))) == 0)
}

/// Length of the longest common prefix of `a` and `b`: 32 bytes a step
/// through [`same_bytes`], then byte by byte where they differ.
pub fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 32 <= n && same_bytes(&a[i..i + 32], &b[i..i + 32]) {
        i += 32;
    }
    i + a[i..n].iter().zip(&b[i..n]).take_while(|(x, y)| x == y).count()
}

/// Length of the longest common suffix of `a` and `b` (as [`common_prefix`]).
pub fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[a.len() - n..], &b[b.len() - n..]);
    let mut k = 0;
    while k + 32 <= n && same_bytes(&a[n - k - 32..n - k], &b[n - k - 32..n - k]) {
        k += 32;
    }
    k + a[..n - k].iter().rev().zip(b[..n - k].iter().rev()).take_while(|(x, y)| x == y).count()
}

/// Largest char boundary ≤ `i`.
pub fn floor_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Smallest char boundary ≥ `i`.
pub fn ceil_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// A case-insensitive, leftmost-first automaton over fixed words, built
/// once into `cell` (the static word lists of defanging and error lines).
pub fn words_automaton(
    cell: &'static std::sync::OnceLock<aho_corasick::AhoCorasick>,
    words: &[&str],
) -> &'static aho_corasick::AhoCorasick {
    cell.get_or_init(|| {
        aho_corasick::AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(aho_corasick::MatchKind::LeftmostFirst)
            .build(words)
            .expect("static patterns")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn str_lines_are_lines() {
        for s in ["", "\n", "a", "a\n", "a\r\n", "a\r", "\r\n\r\n", "a\n\nb\r", "é\r\nx\ry\n\n", "a\r\r\nb"] {
            assert_eq!(str_lines(s).collect::<Vec<_>>(), s.lines().collect::<Vec<_>>(), "{s:?}");
        }
    }

    #[test]
    fn char_count_counts_characters() {
        let text = "ascii é 中文 😀\u{7f}\u{80}x".repeat(7);
        for end in (0..=text.len()).filter(|&e| text.is_char_boundary(e)) {
            assert_eq!(char_count(&text[..end]), text[..end].chars().count(), "{end}");
        }
    }

    #[test]
    fn byte_of_char_is_the_nth_characters_offset() {
        let whole = "ascii é 中文 😀\u{7f}\u{80}x".repeat(7);
        for end in (0..=whole.len()).filter(|&e| whole.is_char_boundary(e)) {
            let text = &whole[..end];
            for n in 0..=text.chars().count() + 2 {
                let want = text.char_indices().nth(n).map_or(text.len(), |(i, _)| i);
                assert_eq!(byte_of_char(text, n), want, "{end} {n}");
            }
        }
    }

    #[test]
    fn split_lines_splits_as_split_does() {
        for b in [&b""[..], b"\n", b"a", b"a\n", b"\na\n\nbc", b"ab\ncd\n\n"] {
            assert_eq!(split_lines(b).collect::<Vec<_>>(), b.split(|&c| c == b'\n').collect::<Vec<_>>());
        }
    }

    #[test]
    fn same_bytes_is_equality() {
        let a: Vec<u8> = (0..200u32).map(|i| (i * 7 % 251) as u8).collect();
        for n in [0, 1, 31, 32, 33, 64, 200] {
            assert!(same_bytes(&a[..n], &a[..n]));
            assert!(!same_bytes(&a[..n], &a[..n.saturating_sub(1)]) || n == 0);
            for i in 0..n {
                let mut b = a[..n].to_vec();
                b[i] ^= 0x10;
                assert!(!same_bytes(&a[..n], &b), "{n} {i}");
            }
        }
    }

    #[test]
    fn invalid_utf8_is_replaced_counted_and_mapped() {
        let d = decode(b"ab\xffcd\xe2\x82");
        assert_eq!(d.text, "ab\u{FFFD}cd\u{FFFD}");
        assert_eq!(d.invalid, 2);
        assert_eq!(d.map.to_src(5), 3); // 'c' is byte 3 of the input
        assert_eq!(d.map.to_src_end(d.text.len()), 7);
    }

    #[test]
    fn lines() {
        let l = Lines::new("a\nb\nc");
        assert_eq!(l.count(), 3);
        assert_eq!(l.line_of(0), 1);
        assert_eq!(l.line_of(1), 1);
        assert_eq!(l.line_of(2), 2);
        assert_eq!(Lines::new("a\n").count(), 1);
        assert_eq!(char_count("héllo€"), 6);
    }
}

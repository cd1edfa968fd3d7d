//! Value propagation: every other occurrence of a value found.

use super::spans::{Found, Span};

/// Bytes of a found value its other occurrences are looked up by; shorter
/// values are not propagated.
pub(super) const PROPAGATE_KEY: usize = 8;

/// Where in a value its key starts: the [`PROPAGATE_KEY`] bytes that end
/// 24 bytes in (or at the end of a shorter value). Not the first bytes:
/// thousands of values of one provider share a prefix (`sk-proj-`,
/// `sk_live_`), and one key shared by many values would make each lookup
/// compare them all.
pub(super) fn key_offset(len: usize) -> usize {
    len.min(24) - PROPAGATE_KEY
}

/// Every other occurrence of a value already found to be a secret is a
/// secret too: a token caught in `TOKEN=...` is also caught where the same
/// text prints it bare (a stack trace, a CSV cell). Values under
/// [`PROPAGATE_KEY`] bytes are not propagated (too likely to be ordinary
/// words); nor is a generic rule's value made of letters alone or of
/// words (the caller filters those: `scan.rs`).
///
/// One pass over the text reads the [`PROPAGATE_KEY`] bytes at each
/// position as a `u64` and tests one bit of a hashed bitmap of the values'
/// keys ([`key_offset`]), a two-bit Bloom filter small enough for the L1
/// cache. A position that passes looks
/// its key up among the values sorted by key (binary search), and each
/// value with that key is compared whole where it would start. Cost: O(n) with a small constant, plus
/// O(v log v) to sort v values. An Aho-Corasick automaton of the values
/// did the same search, but building it for the thousands of values of a
/// dense text cost more than the search (docs/benchmarks.md).
pub(super) fn propagate_values(text: &str, found: &[(String, String)], known: &Found, spans: &mut Vec<Span>) {
    let b = text.as_bytes();
    let key = |s: &[u8]| u64::from_le_bytes(s[..PROPAGATE_KEY].try_into().expect("PROPAGATE_KEY bytes"));
    let mut values: Vec<(u64, &str, &str)> = found
        .iter()
        .filter(|(v, _)| v.len() >= PROPAGATE_KEY)
        .map(|(v, r)| (key(&v.as_bytes()[key_offset(v.len())..]), v.as_str(), r.as_str()))
        .collect();
    if values.is_empty() || b.len() < PROPAGATE_KEY {
        return;
    }
    // A value found by several rules keeps the first rule (stable sort).
    values.sort_by(|x, y| x.0.cmp(&y.0).then_with(|| x.1.cmp(y.1)));
    values.dedup_by(|x, y| x.1 == y.1);
    // A Bloom filter with two bits per key, 32 KB at most so that it stays
    // in the L1 cache (it is read at every byte): about 2 % of positions
    // pass it with 16 000 values.
    let log = (values.len() * 16).next_power_of_two().clamp(1 << 12, 1 << 18).trailing_zeros();
    let slots = |k: u64| {
        let h = k.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ((h >> (64 - log)) as usize, ((h >> (64 - 2 * log)) & ((1 << log) - 1)) as usize)
    };
    // The keys alone, for the binary search: 8 bytes apart instead of 40.
    let keys: Vec<u64> = values.iter().map(|v| v.0).collect();
    let mut filter = vec![0u64; (1 << log) / 64];
    let has = |f: &[u64], s: usize| f[s / 64] & (1 << (s % 64)) != 0;
    for &(k, ..) in &values {
        let (s1, s2) = slots(k);
        filter[s1 / 64] |= 1 << (s1 % 64);
        filter[s2 / 64] |= 1 << (s2 % 64);
    }
    for j in 0..=b.len() - PROPAGATE_KEY {
        let k = key(&b[j..]);
        let (s1, s2) = slots(k);
        if !has(&filter, s1) || !has(&filter, s2) {
            continue;
        }
        let first = keys.partition_point(|&x| x < k);
        for (_, v, rule) in values[first..].iter().take_while(|v| v.0 == k) {
            // Every match is kept; where two values match at one start,
            // merging keeps the longer. A match where a rule found the
            // value is no other occurrence.
            let Some(start) = j.checked_sub(key_offset(v.len())) else { continue };
            let end = start + v.len();
            if b[start..].starts_with(v.as_bytes())
                && !known.bounds.contains_key(&(start, end))
                && !super::value::name_side(b, end)
            {
                spans.push(Span::new(start, end, (*rule).to_string()));
            }
        }
    }
}

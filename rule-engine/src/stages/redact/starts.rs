//! Where a keyword can begin: a filter in front of the keyword automaton.
//!
//! # Algorithm
//!
//! An unanchored Aho-Corasick search takes a state transition per byte, and
//! in wasm the contiguous NFA's transitions (a sparse state's list, the
//! failure links) are slow: about 80 MB/s, two fifths of a small
//! `sanitize` call. Yet most positions of a text begin no keyword. So:
//!
//! 1. At each position the next four bytes, case folded, are hashed into a
//!    bit set of the keywords' first four bytes, and the next three into
//!    one of the three-byte keywords (a two-byte keyword with every third
//!    byte); a one-byte keyword is a set of 256 bits. A position none of
//!    them holds begins no keyword. Eight bytes are read at once and five
//!    positions tested from them, without a branch.
//! 2. From each position that may, the same automaton walks *anchored*
//!    (no failure links) until it dies, and reports the keywords that
//!    begin there.
//!
//! Cost: two multiplies and three bit tests per byte, and an anchored walk
//! per candidate: in logs 3 to 7 % of positions begin a keyword's first
//! four bytes (0.7 to 2.5 % begin a keyword), and a collision adds about
//! one position in 32 (more past 2 048 keywords, where the sets stop
//! growing, or with many two-byte keywords, each of which sets up to 128
//! bits). Each set has 32 bits a keyword, from 1 Ki to 64 Ki bits (128 B to
//! 8 KiB).
//! Measured in wasm (session 35, docs/benchmarks.md): the keyword pass of
//! an 8 KiB `sanitize` call about 2.7 times as fast as the NFA's; on
//! texts of 64 KiB and more, where the DFA takes over
//! ([`super::DFA_MIN_TEXT`]), as fast as the DFA on logs and slower on
//! secret-dense text (and since session 40 the DFA's search in lanes is
//! faster than either).
//!
//! The hits are those of the unanchored overlapping search over the same
//! automaton, in its order: by end, then start (the longest first), then
//! keyword id (`keywords.rs`' tests compare the two on every text they
//! search). The empty keyword is the exception: its empty hits are not
//! found, and the pack builder refuses it.

use aho_corasick::automaton::Automaton;
use aho_corasick::nfa::contiguous::NFA;
use aho_corasick::{Anchored, Match, MatchKind};

/// The widest hash: 64 Ki bits a set, 8 KiB. A set has 32 bits a keyword
/// (a bit is set by chance for about one position in 32), and 1 Ki bits at
/// least.
const MAX_HASH_BITS: u32 = 16;

/// Positions filtered per block: their offsets fill a buffer without a
/// branch, then the walks run (in wasm a loop that also walks keeps too
/// much live to stay in registers).
const BLOCK: usize = 4096;

/// Case folded for the filter: bit 5 set in every byte. It maps each ASCII
/// capital to its small letter, and every other byte with bit 5 clear to
/// its partner (`_` and DEL, `@` and `` ` ``, a newline and `*`, a digit and
/// a control byte): a coarser filter, as sound.
const FOLD: u64 = 0x2020_2020_2020_2020;

/// A keyword automaton with the filter of where its keywords can begin.
pub(super) struct Starts {
    nfa: NFA,
    /// The hashed first four bytes (folded) of the keywords of four bytes
    /// or more.
    four: Box<[u64]>,
    /// The keywords of three bytes, hashed (folded); a two-byte keyword with
    /// every third byte.
    three: Box<[u64]>,
    /// The hashes' width: `32 - ` their bits.
    shift: u32,
    /// The one-byte keywords (folded), as 256 bits; none when there are no
    /// such keywords.
    one: Option<[u64; 4]>,
    /// The longest keyword's length in bytes (a hit's, too: case folding
    /// is ASCII's).
    longest: usize,
}

/// The bit of the four-byte set for the four folded bytes in the low 32
/// bits of `w`, the first lowest.
#[inline(always)]
fn hash4(w: u64, shift: u32) -> u32 {
    (w as u32).wrapping_mul(0x9E37_79B1) >> shift
}

/// The bit of the three-byte set for the three folded bytes in the low 24
/// bits of `w`.
#[inline(always)]
fn hash3(w: u64, shift: u32) -> u32 {
    (w as u32 & 0xFF_FFFF).wrapping_mul(0x85EB_CA6B) >> shift
}

/// Bit `bit` of `set`, as 0 or 1.
#[inline(always)]
fn bit(set: &[u64], bit: u32) -> usize {
    (set[(bit >> 6) as usize] >> (bit & 63)) as usize & 1
}

fn add(set: &mut [u64], bit: u32) {
    set[(bit >> 6) as usize] |= 1 << (bit & 63);
}

impl Starts {
    /// The automaton and its filter for `patterns` (the keyword
    /// automaton's settings: ASCII case-insensitive, every match).
    pub(super) fn build<P: AsRef<[u8]>>(
        patterns: impl IntoIterator<Item = P>,
    ) -> Result<Starts, aho_corasick::BuildError> {
        let patterns: Vec<P> = patterns.into_iter().collect();
        // The states of the first two levels are dense (aho-corasick's
        // default: three). Measured in session 15, when every tenant's
        // instance built the automaton of all its keywords (the pages its
        // build touches stay dirty): for the default rules' 378 keywords,
        // natively, depth 2 held 111 KiB and peaked at 458 KiB while
        // building, depth 3 203 and 827 KiB; in wasm depth 2 searched as
        // fast, and 1 000 tenants took 92 MiB less. Depth 1 would have saved
        // 250 MiB but cost 5–8 % of a small call (docs/benchmarks.md).
        let nfa = NFA::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .dense_depth(2)
            .build(&patterns)?;
        let bits = (patterns.len() * 32).next_power_of_two().trailing_zeros().clamp(10, MAX_HASH_BITS);
        let shift = 32 - bits;
        let (mut four, mut three) = (vec![0u64; 1 << (bits - 6)], vec![0u64; 1 << (bits - 6)]);
        let mut one: Option<[u64; 4]> = None;
        for p in &patterns {
            let f: Vec<u64> = p.as_ref().iter().map(|&b| u64::from(b) | (FOLD & 0xFF)).collect();
            match f[..] {
                [a, b, c, d, ..] => add(&mut four, hash4(a | b << 8 | c << 16 | d << 24, shift)),
                [a, b, c] => add(&mut three, hash3(a | b << 8 | c << 16, shift)),
                [a, b] => (0..=255u64).for_each(|c| add(&mut three, hash3(a | b << 8 | (c | 0x20) << 16, shift))),
                [a] => one.get_or_insert([0; 4])[(a >> 6) as usize] |= 1 << (a & 63),
                // The empty keyword: the pack builder refuses it (see the
                // module's docs).
                [] => debug_assert!(false, "an empty keyword"),
            }
        }
        let longest = patterns.iter().map(|p| p.as_ref().len()).max().unwrap_or(0);
        Ok(Starts { nfa, four: four.into(), three: three.into(), shift, one, longest })
    }

    /// The longest keyword's length in bytes.
    pub(super) fn longest(&self) -> usize {
        self.longest
    }

    /// Every hit of a keyword in `text`: by end, then start, then keyword
    /// id.
    pub(super) fn hits(&self, text: &str) -> Vec<Match> {
        let b = text.as_bytes();
        let mut out = Vec::new();
        // Positions with four bytes, a block at a time. The buffer is as
        // long as the text's positions, a block at most: most texts scanned
        // are short (a JSON string, a decoded candidate).
        let filtered = b.len().saturating_sub(3);
        let mut at = vec![0u16; filtered.min(BLOCK)];
        let mut from = 0;
        while from < filtered {
            let to = (from + BLOCK).min(filtered);
            let block = &b[from..to + 3];
            let n = match &self.one {
                Some(one) => self.candidates(block, one, &mut at),
                None => self.candidates(block, &[0; 4], &mut at),
            };
            at[..n].iter().for_each(|&i| self.walk(b, from + usize::from(i), &mut out));
            from = to;
        }
        // The last three positions have no four bytes: walked from, always.
        (filtered..b.len()).for_each(|i| self.walk(b, i, &mut out));
        out.sort_unstable_by_key(|m| (m.end(), m.start(), m.pattern()));
        out
    }

    /// The offsets in `b` (at most [`BLOCK`] + 3 bytes, and `at.len()` + 3)
    /// where a keyword may begin, all but the last three, into `at`: how
    /// many. Eight bytes are read at once, and five positions tested from
    /// them.
    #[inline(always)]
    fn candidates(&self, b: &[u8], one: &[u64; 4], at: &mut [u16]) -> usize {
        let (four, three, shift) = (&*self.four, &*self.three, self.shift);
        let test = |x: u64| {
            bit(four, hash4(x, shift))
                | bit(three, hash3(x, shift))
                | (one[(x as usize >> 6) & 3] >> (x & 63)) as usize & 1
        };
        let mut n = 0;
        let mut i = 0;
        while i + 8 <= b.len() {
            let x = u64::from_le_bytes(b[i..i + 8].try_into().expect("eight bytes")) | FOLD;
            for k in 0..5 {
                at[n] = (i + k) as u16;
                n += test(x >> (8 * k));
            }
            i += 5;
        }
        while i + 3 < b.len() {
            let x = u64::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3], 0, 0, 0, 0]) | FOLD;
            at[n] = i as u16;
            n += test(x);
            i += 1;
        }
        n
    }

    /// The keywords that begin at `at`, pushed to `out`.
    fn walk(&self, b: &[u8], at: usize, out: &mut Vec<Match>) {
        let nfa = &self.nfa;
        let Ok(mut sid) = nfa.start_state(Anchored::Yes) else { return };
        for (j, &byte) in b[at..].iter().enumerate() {
            sid = nfa.next_state(Anchored::Yes, sid, byte);
            if nfa.is_dead(sid) {
                return;
            }
            if nfa.is_match(sid) {
                // A match state lists the keywords its failure links end
                // in too: those began after `at`, and their own walk
                // reports them.
                for k in 0..nfa.match_len(sid) {
                    let pid = nfa.match_pattern(sid, k);
                    if nfa.pattern_len(pid) == j + 1 {
                        out.push(Match::new(pid, at..at + j + 1));
                    }
                }
            }
        }
    }
}

//! The keyword DFA's search of a long text, in lanes.
//!
//! # Algorithm
//!
//! An unanchored DFA search takes one transition a byte, and each
//! transition's table read needs the state the one before it read: the
//! search runs at the latency of a read, not at the machine's throughput.
//! The default keywords' DFA (1 503 keywords and error words) takes 4.3
//! MiB (4 559 572 bytes), far more than the first two cache levels hold;
//! in wasm its search of a log took ~6 ns a byte, a third of a 256 KiB
//! `sanitize` call (docs/benchmarks.md, session 40).
//!
//! So a long text is cut into [`LANES`] parts, and one search runs in each,
//! a transition of each lane in turn: the lanes' reads are independent and
//! overlap. A lane other than the first starts `longest - 1` bytes before
//! its part and reports only the hits that end in it. After `longest`
//! bytes a DFA's state is the same whichever earlier byte it started at
//! (the state is the text's longest suffix that begins a keyword, and no
//! keyword is longer), so a lane's hits are the whole search's hits, in
//! the same order: by end, and at one end in the order of the state's
//! matches (as the crate's overlapping search gives them). The lanes' parts
//! follow each other, so their hits, joined, are in order too.
//!
//! Cost: the same transitions, plus `longest - 1` bytes a lane.

use aho_corasick::automaton::{Automaton, StateID};
use aho_corasick::dfa::DFA;
use aho_corasick::{Anchored, Match};

/// How many searches run together. Four hid most of the reads' latency in
/// wasm (docs/benchmarks.md, session 40).
const LANES: usize = 4;

/// A text shorter than this a lane is searched in one.
const LANE_MIN: usize = 4 << 10;

/// Every hit of `dfa`'s keywords in `text` (an unanchored DFA, Standard
/// match semantics, `longest` its longest keyword's length), overlapping:
/// by end, then in the order of the state's matches.
pub(super) fn hits(dfa: &DFA, text: &[u8], longest: usize) -> Vec<Match> {
    let Ok(start) = dfa.start_state(Anchored::No) else { return Vec::new() };
    let lanes = if text.len() >= LANES * LANE_MIN.max(longest) { LANES } else { 1 };
    // Lane `l` searches `at[l]..to[l]` and reports the hits that end
    // past `part[l]`.
    let part: [usize; LANES] = std::array::from_fn(|l| (text.len() * l / lanes).min(text.len()));
    let to: [usize; LANES] = std::array::from_fn(|l| if l + 1 < lanes { part[l + 1] } else { text.len() });
    let mut at: [usize; LANES] = std::array::from_fn(|l| part[l].saturating_sub(longest.saturating_sub(1)));
    let mut sid = [start; LANES];
    let mut out: [Vec<Match>; LANES] = Default::default();
    if lanes == LANES {
        // The same number of bytes from each lane, zipped: no index to check.
        let steps = (0..LANES).map(|l| to[l] - at[l]).min().unwrap_or(0);
        let [a, b, c, d] = std::array::from_fn(|l| &text[at[l]..at[l] + steps]);
        let [mut sa, mut sb, mut sc, mut sd] = sid;
        for (i, (((&x, &y), &z), &w)) in a.iter().zip(b).zip(c).zip(d).enumerate() {
            sa = dfa.next_state(Anchored::No, sa, x);
            sb = dfa.next_state(Anchored::No, sb, y);
            sc = dfa.next_state(Anchored::No, sc, z);
            sd = dfa.next_state(Anchored::No, sd, w);
            if dfa.is_special(sa) | dfa.is_special(sb) | dfa.is_special(sc) | dfa.is_special(sd) {
                for (l, s) in [sa, sb, sc, sd].into_iter().enumerate() {
                    if dfa.is_match(s) {
                        push(dfa, s, at[l] + i + 1, part[l], &mut out[l]);
                    }
                }
            }
        }
        sid = [sa, sb, sc, sd];
        at.iter_mut().for_each(|a| *a += steps);
    }
    for l in 0..lanes {
        for &x in &text[at[l]..to[l]] {
            sid[l] = dfa.next_state(Anchored::No, sid[l], x);
            at[l] += 1;
            if dfa.is_match(sid[l]) {
                push(dfa, sid[l], at[l], part[l], &mut out[l]);
            }
        }
    }
    let [mut all, rest @ ..] = out;
    rest.iter().for_each(|o| all.extend_from_slice(o));
    all
}

/// The matches of match state `sid`, reached at `end`, pushed to `out` if
/// `end` is past `part`.
#[cold]
fn push(dfa: &DFA, sid: StateID, end: usize, part: usize, out: &mut Vec<Match>) {
    if end <= part {
        return;
    }
    for k in 0..dfa.match_len(sid) {
        let pid = dfa.match_pattern(sid, k);
        out.push(Match::new(pid, end - dfa.pattern_len(pid)..end));
    }
}

#[cfg(test)]
mod tests {
    use super::super::keywords::{keyword_automaton, keyword_dfa};
    use super::*;
    use aho_corasick::AhoCorasickKind;

    /// The lanes' hits against the crate's own overlapping search, hit for
    /// hit and in order.
    fn same_hits(patterns: &[&str], texts: &[String]) {
        let dfa = keyword_dfa(patterns).unwrap();
        let reference = keyword_automaton(patterns, AhoCorasickKind::ContiguousNFA).unwrap();
        let longest = patterns.iter().map(|p| p.len()).max().unwrap();
        for t in texts {
            let want: Vec<Match> = reference.find_overlapping_iter(t).collect();
            let got = hits(&dfa, t.as_bytes(), longest);
            if got != want {
                let at = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
                panic!("{} bytes: {} hits, want {}; first difference at hit {at}", t.len(), got.len(), want.len());
            }
        }
    }

    /// Each lane's first hits begin before its part, in every phase: a
    /// keyword as long as the longest, and overlapping shorter ones, cut at
    /// each of their bytes by each lane's start.
    #[test]
    fn hits_across_the_lanes_ends_are_found_once() {
        let patterns = ["abcdefgh", "defg", "h", "gha", "HAB"];
        let mut texts = Vec::new();
        for extra in 0..40 {
            let n = LANES * LANE_MIN + extra;
            let t: String = "abcdefgh-ab".chars().cycle().take(n).collect();
            texts.push(t);
        }
        // Under four lanes' length: one lane.
        texts.push("abcdefgh".repeat(100));
        texts.extend(["", "h", "abcdefg"].map(String::from));
        same_hits(&patterns, &texts);
    }

    /// The default keywords over long texts nobody wrote for this test: the
    /// repository's docs and rule files, joined, in capitals too, and cut
    /// at odd lengths.
    #[test]
    fn the_default_keywords_hits_are_the_crates() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
        let mut joined = String::new();
        for dir in ["docs", "rules/default", "examples"] {
            let mut paths: Vec<_> =
                std::fs::read_dir(format!("{root}/{dir}")).unwrap().flatten().map(|e| e.path()).collect();
            paths.sort();
            paths.iter().filter_map(|p| std::fs::read_to_string(p).ok()).for_each(|t| joined.push_str(&t));
        }
        assert!(joined.len() > 200_000, "{} bytes", joined.len());
        let mut texts = vec![joined.to_ascii_uppercase()];
        for n in [LANES * LANE_MIN, 70_001, 199_999] {
            let cut = (n..joined.len()).find(|&i| joined.is_char_boundary(i)).unwrap();
            texts.push(joined[..cut].to_string());
        }
        texts.push(joined);
        let words = super::super::keywords::shared_words();
        same_hits(&words, &texts);
    }
}

//! The keyword automaton: which rules run where.
//!
//! Every rule names keywords; one Aho-Corasick automaton over all of them
//! (ASCII case-insensitive, overlapping matches) finds their hits in one
//! pass, and only the rules of a hit's keyword run there. A filter of
//! where keywords can begin runs in front of it ([`super::starts`]): the
//! automaton walks from those positions only. Texts of
//! [`super::DFA_MIN_TEXT`] bytes and more take a DFA, one transition per
//! byte, searched in four lanes at once ([`super::lanes`]).
//!
//! Building it for the default rules' ~500 keywords allocates about half a
//! MiB at its peak, and in a component instance those pages stay dirty:
//! with a thousand tenants, each holding an instance, that was most of a
//! tenant's own memory. So the automaton over the default rules' keywords
//! and the error words ([`shared`]: the list is made at build time by
//! `build.rs` from `rules/default/*.toml`) is built once per process, and
//! in the pre-initialised component once at build time: the snapshot holds
//! it, and instances share its pages. A pack that carries most of those
//! keywords (every pack over the default rules does) runs the shared
//! automaton and a small one of its own other keywords, if it has any
//! ([`Keywords::Shared`]); a pack that does not builds its own
//! ([`Keywords::Own`]). Both give the same hits: a keyword's hits do not
//! depend on the other keywords of its automaton.

use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::iter::Peekable;
use std::sync::OnceLock;

use aho_corasick::dfa::DFA;
#[cfg(test)]
use aho_corasick::{AhoCorasick, AhoCorasickKind};
use aho_corasick::{Match, MatchKind, PatternID, StartKind};

use super::lanes;
use super::starts::Starts;
use crate::support::text::{ceil_boundary, floor_boundary};

/// Texts at least this long are scanned with a DFA of the keywords. The
/// contiguous NFA used otherwise, behind its filter ([`super::starts`]), is
/// ~0.4 MiB smaller per instance (which counts with a thousand tenants,
/// each calling with small outputs); the DFA made the keyword pass about
/// twice as fast as the unfiltered NFA (since session 35 the filtered NFA
/// is as fast on logs, slower on secret-dense text; since session 40 the
/// DFA is searched in four lanes, [`super::lanes`], about 2.5 times as
/// fast again), which counts on large
/// outputs, streams and an MCP text's drained middle (docs/benchmarks.md,
/// session 12: 1 MiB, not 64 KiB, left every `sanitize` call under the
/// 256 KiB cap on the NFA). The default keywords' DFA is built at build
/// time into the component's snapshot ([`shared_dfa`]); a pack with
/// its own automaton builds its DFA once per instance, on its first large
/// text. The same as `rules::FAST_MIN_TEXT`: an instance past it holds the
/// larger engines for both. Lanes over the DFA from 1 KiB on made an 8 KiB
/// call 7–10 % faster (session 40), but the default keywords' DFA is 4.3
/// MiB, and every page of it a small call reads would count in each
/// tenant's instance.
pub const DFA_MIN_TEXT: usize = 64 << 10;

/// The crate's own automaton of `patterns`, with the keyword pass's
/// settings (ASCII case-insensitive, overlapping matches): the reference
/// that tests hold [`Starts`] and [`lanes`] to.
#[cfg(test)]
pub(super) fn keyword_automaton<P: AsRef<[u8]>>(
    patterns: impl IntoIterator<Item = P>,
    kind: AhoCorasickKind,
) -> Result<AhoCorasick, aho_corasick::BuildError> {
    aho_corasick::AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        .kind(Some(kind))
        .build(patterns)
}

/// The default rules' keywords and the error words, in one automaton.
pub(super) struct Shared {
    /// The patterns, one per line, in the order of their ids: one
    /// allocation, so that a pack's compile reads a few pages of the
    /// snapshot, not one per pattern (every page a tenant's instance reads
    /// of the memory image counts in its resident set).
    lines: String,
    /// How many patterns.
    len: usize,
    automaton: Starts,
}

/// The shared automaton, built on first use (in the pre-initialised
/// component, at build time: see [`warm`]).
fn shared() -> Option<&'static Shared> {
    static SHARED: OnceLock<Option<Shared>> = OnceLock::new();
    SHARED
        .get_or_init(|| {
            let mut seen = std::collections::HashSet::new();
            let mut lines = String::new();
            let defaults = include_str!(concat!(env!("OUT_DIR"), "/default_keywords.txt")).lines();
            for k in defaults.chain(crate::support::error_words::WORDS.iter().copied()) {
                let k = k.to_ascii_lowercase();
                if seen.insert(k.clone()) {
                    lines.push_str(&k);
                    lines.push('\n');
                }
            }
            let automaton = Starts::build(lines.lines()).ok()?;
            Some(Shared { len: seen.len(), lines, automaton })
        })
        .as_ref()
}

/// The shared keywords, in the order of their ids.
#[cfg(test)]
pub(super) fn shared_words() -> Vec<&'static str> {
    shared().expect("the default keywords build").lines.lines().collect()
}

/// The shared keywords as a DFA, for texts of [`DFA_MIN_TEXT`] bytes and
/// more (about three times the NFA's speed in wasm). Built on first use,
/// and in the pre-initialised component at build time ([`warm`]): building
/// it for the default keywords took ~25 ms in wasm, half of a one-shot
/// `redact` of a 2 MB log, and left its heap dirty in every instance that
/// met a long text. In the snapshot it costs no instance either; a scan
/// reads its pages from the shared image, and only scans of long texts do.
///
fn shared_dfa() -> Option<&'static DFA> {
    static DFA: OnceLock<Option<DFA>> = OnceLock::new();
    DFA.get_or_init(|| shared().and_then(|s| keyword_dfa(s.lines.lines()).ok())).as_ref()
}

/// The keyword automaton as a DFA, for [`lanes::hits`]: unanchored, and
/// without the crate's prefilter (the lanes' search does not use it).
pub(super) fn keyword_dfa<P: AsRef<[u8]>>(
    patterns: impl IntoIterator<Item = P>,
) -> Result<DFA, aho_corasick::BuildError> {
    DFA::builder()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        .start_kind(StartKind::Unanchored)
        .prefilter(false)
        .build(patterns)
}

/// Builds the shared automata now: the component's build-time
/// pre-initialisation calls it, so that the snapshot holds them.
pub fn warm() {
    shared();
    shared_dfa();
}

/// A pack's keyword automata.
pub(super) enum Keywords {
    /// One automaton over the pack's keywords, with their own ids; the
    /// keywords, and their DFA built on the pack's first long text (see
    /// [`Keywords::hits_long`]).
    Own { automaton: Starts, patterns: Vec<String>, dfa: OnceLock<Option<Box<DFA>>> },
    /// The shared automaton (its pattern ids come first) and one over the
    /// pack's other keywords (ids from the shared list's length on).
    Shared { shared: &'static Shared, extra: Option<Starts> },
}

/// A pack's keywords mapped to automata: the automata, and for each of the
/// pack's own pattern ids (in `patterns` order) the id its hits carry.
pub(super) struct Mapped {
    pub keywords: Keywords,
    pub ids: Vec<usize>,
    /// How many pattern ids the hits can carry.
    pub len: usize,
}

impl Mapped {
    /// `by_own`, one value per pattern of the pack (in its order), moved to
    /// the ids its hits carry; the shared automaton's other ids get the
    /// default (no rule, not an error word).
    pub(super) fn remap<T: Clone + Default>(&self, by_own: Vec<T>) -> Vec<T> {
        let mut out = vec![T::default(); self.len];
        for (v, &id) in by_own.into_iter().zip(&self.ids) {
            out[id] = v;
        }
        out
    }
}

impl Keywords {
    /// The automata for a pack's `patterns` (lower-cased, each once;
    /// `index` maps each to its place): the shared one when the pack
    /// carries at least half of its patterns.
    pub(super) fn build(patterns: &[&str], index: &FxHashMap<&str, usize>) -> Result<Mapped, aho_corasick::BuildError> {
        if let Some(s) = shared() {
            let mut ids = vec![usize::MAX; patterns.len()];
            let mut known = 0;
            for (id, p) in s.lines.lines().enumerate() {
                if let Some(&i) = index.get(p) {
                    ids[i] = id;
                    known += 1;
                }
            }
            if 2 * known >= s.len {
                let mut extra_patterns = Vec::new();
                for (i, id) in ids.iter_mut().enumerate().filter(|(_, id)| **id == usize::MAX) {
                    *id = s.len + extra_patterns.len();
                    extra_patterns.push(patterns[i]);
                }
                let extra = if extra_patterns.is_empty() { None } else { Some(Starts::build(&extra_patterns)?) };
                let len = s.len + extra_patterns.len();
                return Ok(Mapped { keywords: Keywords::Shared { shared: s, extra }, ids, len });
            }
        }
        let automaton = Starts::build(patterns)?;
        let (ids, len) = ((0..patterns.len()).collect(), patterns.len());
        let patterns = patterns.iter().map(|p| p.to_string()).collect();
        Ok(Mapped { keywords: Keywords::Own { automaton, patterns, dfa: OnceLock::new() }, ids, len })
    }

    /// The hits in `text`, overlapping, in the order of their ends (one
    /// automaton's order; at equal ends the shared automaton's first).
    pub(super) fn hits<'t>(&'t self, text: &'t str) -> Box<dyn Iterator<Item = Match> + 't> {
        match self {
            Keywords::Own { automaton, .. } => Box::new(automaton.hits(text).into_iter()),
            Keywords::Shared { shared, extra } => {
                with_extra(shared.automaton.hits(text).into_iter(), shared.len, extra.as_ref(), text)
            }
        }
    }

    /// The longest keyword's length in bytes.
    fn longest(&self) -> usize {
        match self {
            Keywords::Own { automaton, .. } => automaton.longest(),
            Keywords::Shared { shared, extra } => {
                shared.automaton.longest().max(extra.as_ref().map_or(0, Starts::longest))
            }
        }
    }

    /// Where [`Self::hits`] puts `m`: by end, the shared automaton's hits
    /// before the pack's other ones at equal ends, then by start and id.
    fn order(&self, m: &Match) -> (usize, bool, usize, usize) {
        let extra = match self {
            Keywords::Own { .. } => false,
            Keywords::Shared { shared, .. } => m.pattern().as_usize() >= shared.len,
        };
        (m.end(), extra, m.start(), m.pattern().as_usize())
    }

    /// [`Self::hits`] of `text` (on the DFAs, [`Self::hits_long`], from
    /// [`DFA_MIN_TEXT`] bytes on), through `memo` (see [`HitsMemo`]): the
    /// same hits in the same order.
    ///
    pub(super) fn hits_memo(&self, text: &str, memo: &HitsMemo) -> Vec<Match> {
        let mut seen = memo.seen.borrow_mut();
        let l = self.longest();
        if let Some((t, th)) = seen.as_ref().filter(|_| l > 0) {
            let copies = copies_of(text.as_bytes(), t.as_bytes(), 2 * l);
            if !copies.is_empty() {
                return self.hits_around(text, &copies, th, l);
            }
        }
        let out: Vec<Match> = self.hits_any(text).collect();
        if seen.is_none() && (MEMO_MIN..=MEMO_MAX).contains(&text.len()) {
            *seen = Some((text.to_owned(), out.clone()));
        }
        out
    }

    /// [`Self::hits`], or [`Self::hits_long`] for a long text.
    fn hits_any<'t>(&'t self, text: &'t str) -> Box<dyn Iterator<Item = Match> + 't> {
        if text.len() >= DFA_MIN_TEXT {
            self.hits_long(text)
        } else {
            self.hits(text)
        }
    }

    /// The hits of `text`, which holds `copies` of parts of the memo's
    /// text (whose hits are `th`): a hit inside a copy is the memo's, moved
    /// (a hit depends on its own bytes only); the others are read around
    /// the copies, `l - 1` bytes (the longest keyword's, less one) into
    /// each, which holds every hit across a copy's edge.
    fn hits_around(&self, text: &str, copies: &[Part], th: &[Match], l: usize) -> Vec<Match> {
        let inside = |m: &Match| copies.iter().any(|c| c.at <= m.start() && m.end() <= c.at + c.len);
        let mut out = Vec::with_capacity(th.len() + 16);
        // In text order: the stretch before each copy (and after the last),
        // widened into its neighbours (copies of `2 * l` bytes or more keep
        // two such windows apart), then the copy's own hits. Each part is
        // in order, so the sort below merges a few runs.
        let mut from = 0;
        for c in copies.iter().map(Some).chain([None]) {
            let upto = c.map_or(text.len(), |c| c.at);
            if !(from == 0 && upto == 0) && from != text.len() {
                let ws = floor_boundary(text, from.saturating_sub(l - 1));
                let we = ceil_boundary(text, (upto + l - 1).min(text.len()));
                out.extend(
                    self.hits_any(&text[ws..we])
                        .map(|m| Match::new(m.pattern(), m.start() + ws..m.end() + ws))
                        .filter(|m| !inside(m)),
                );
            }
            let Some(c) = c else { break };
            // The memo's hits are in the order of their ends.
            let first = th.partition_point(|m| m.end() <= c.from);
            out.extend(
                th[first..]
                    .iter()
                    .take_while(|m| m.end() <= c.from + c.len)
                    .filter(|m| m.start() >= c.from)
                    .map(|m| Match::new(m.pattern(), m.start() - c.from + c.at..m.end() - c.from + c.at)),
            );
            from = c.at + c.len;
        }
        out.sort_unstable_by_key(|m| self.order(m));
        out
    }

    /// [`Self::hits`] for a long text, on DFAs: the shared one for the
    /// shared keywords (the pack's others stay on their small automaton);
    /// a pack with its own automaton builds its DFA once, on its first
    /// long text. Without a DFA, the NFA's hits.
    pub(super) fn hits_long<'t>(&'t self, text: &'t str) -> Box<dyn Iterator<Item = Match> + 't> {
        match self {
            Keywords::Own { automaton, patterns, dfa } => {
                match dfa.get_or_init(|| keyword_dfa(patterns).ok().map(Box::new)) {
                    Some(dfa) => Box::new(lanes::hits(dfa, text.as_bytes(), automaton.longest()).into_iter()),
                    None => self.hits(text),
                }
            }
            Keywords::Shared { shared, extra } => match shared_dfa() {
                Some(dfa) => {
                    let first = lanes::hits(dfa, text.as_bytes(), shared.automaton.longest());
                    with_extra(first.into_iter(), shared.len, extra.as_ref(), text)
                }
                None => self.hits(text),
            },
        }
    }
}

/// Texts shorter than this are not kept in a [`HitsMemo`]: their scan
/// costs little more than the search for them.
const MEMO_MIN: usize = 1024;

/// Texts longer than this are not kept: the copy and its hits stay within
/// a few MiB whatever the byte cap (the default cap is 256 KiB).
const MEMO_MAX: usize = 1 << 20;

/// The keyword hits of the first text of [`MEMO_MIN`] bytes or more that
/// a call scanned, for its later scans of texts that hold parts of it: the
/// final pass over a rendered text that shows the content, whole or as a
/// head and a tail around a marker, framed. A hit depends on its own bytes
/// only, so the hits within a copy are the text's, moved; the keyword pass
/// reads only the text between the copies and the longest keyword's length
/// into them, for the hits across their edges. One memo serves one pack's
/// scans (a [`super::Pass`]'s): hits carry that pack's ids.
#[derive(Default)]
pub struct HitsMemo {
    seen: RefCell<Option<(String, Vec<Match>)>>,
}

/// Where `text[at..at + len]` is `memo[from..from + len]`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Part {
    at: usize,
    from: usize,
    len: usize,
}

/// The copies of parts of `memo` in `text` that are worth reusing (`min`
/// bytes or more), in text order and apart: its longest prefix that
/// `text` holds (the whole of it, for content shown uncut) and its
/// longest suffix (the tail of a cut). Each is found from its first (last)
/// 32 bytes, a few places at most (a repetitive text would have one at
/// each byte), and grown by comparing.
fn copies_of(text: &[u8], memo: &[u8], min: usize) -> Vec<Part> {
    use crate::support::text::{common_prefix, common_suffix};
    let k = memo.len().min(32);
    if memo.len() < min {
        return Vec::new();
    }
    let mut head: Option<Part> = None;
    for at in memchr::memmem::find_iter(text, &memo[..k]).take(4) {
        let c = Part { at, from: 0, len: common_prefix(&text[at..], memo) };
        if c.len == memo.len() {
            // The whole of it (content shown uncut): nothing else to find.
            return vec![c];
        }
        if head.is_none_or(|h| c.len > h.len) {
            head = Some(c);
        }
    }
    // A tail ends near the text's end (only a frame follows it): looked
    // for in the last 4 KiB first, the reverse search being the slower.
    let needle = &memo[memo.len() - k..];
    let near = text.len().saturating_sub(4096);
    let ends: Vec<usize> = match memchr::memmem::rfind(&text[near..], needle) {
        Some(p) => vec![near + p],
        None => memchr::memmem::rfind_iter(text, needle).take(4).collect(),
    };
    let tail = ends.into_iter().map(|p| {
        let len = common_suffix(&text[..p + k], memo);
        Part { at: p + k - len, from: memo.len() - len, len }
    });
    let tail = tail.max_by_key(|c| (c.len, c.at));
    let mut out: Vec<Part> = head.into_iter().chain(tail).filter(|c| c.len >= min).collect();
    out.sort_unstable_by_key(|c| c.at);
    if let [a, b] = out[..] {
        if a.at + a.len > b.at {
            // Overlapping (a repetitive text): the longer one alone.
            out = vec![if b.len > a.len { b } else { a }];
        }
    }
    out
}

/// The hits of the shared keywords (`first`) and, when the pack has any,
/// of its `extra` ones in `text` (their ids moved up by `offset`), merged
/// by their ends.
fn with_extra<'t>(
    first: impl Iterator<Item = Match> + 't,
    offset: usize,
    extra: Option<&Starts>,
    text: &str,
) -> Box<dyn Iterator<Item = Match> + 't> {
    match extra {
        None => Box::new(first),
        Some(extra) => {
            let extra = extra
                .hits(text)
                .into_iter()
                .map(move |m| Match::new(PatternID::must(m.pattern().as_usize() + offset), m.range()));
            Box::new(ByEnd { a: first.peekable(), b: extra.peekable() })
        }
    }
}

/// Two streams of hits, each in the order of their ends, merged.
struct ByEnd<A: Iterator<Item = Match>, B: Iterator<Item = Match>> {
    a: Peekable<A>,
    b: Peekable<B>,
}

impl<A: Iterator<Item = Match>, B: Iterator<Item = Match>> Iterator for ByEnd<A, B> {
    type Item = Match;

    fn next(&mut self) -> Option<Match> {
        match (self.a.peek(), self.b.peek()) {
            (Some(a), Some(b)) if b.end() < a.end() => self.b.next(),
            (Some(_), _) => self.a.next(),
            (None, _) => self.b.next(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`Keywords::build`] of `patterns` (each once), with their index.
    fn build_of(patterns: &[String]) -> Mapped {
        let patterns: Vec<&str> = patterns.iter().map(String::as_str).collect();
        let index = patterns.iter().enumerate().map(|(i, p)| (*p, i)).collect();
        Keywords::build(&patterns, &index).unwrap()
    }

    fn hits(k: &Keywords, all: &[String], text: &str) -> Vec<(String, usize, usize)> {
        k.hits(text).map(|m| (all[m.pattern().as_usize()].clone(), m.start(), m.end())).collect()
    }

    /// Through a memo, a text that holds the memo's text whole gets the
    /// hits (and their order) of a scan of its own: hits across either end
    /// of the copy, an extra keyword at an end, the copy at the start, the
    /// end, or not there at all.
    #[test]
    fn a_memo_gives_the_hits_of_a_scan() {
        let s = shared().expect("the default keywords build");
        let mut patterns: Vec<String> = s.lines.lines().map(str::to_string).collect();
        patterns.push("acme_".into());
        patterns.push("ken=ab".into());
        let mapped = build_of(&patterns);
        let automaton = Starts::build(&patterns).unwrap();
        let own = Keywords::Own { automaton, patterns: patterns.clone(), dfa: OnceLock::new() };
        let line = "ERROR token=ab acme_x1 password: é GITHUB_TOKEN ghp_x sk_live_q\n";
        // Ends in the first half of a keyword, starts with the second.
        let t = format!("oken=ab {}acme", line.repeat(40));
        assert!(t.len() >= MEMO_MIN);
        for k in [&mapped.keywords, &own] {
            for (before, after) in [("[tool_result]\nT", "_x\n---"), ("", "_"), ("acme passw", ""), ("x", "y")] {
                let memo = HitsMemo::default();
                assert_eq!(k.hits_memo(&t, &memo), k.hits(&t).collect::<Vec<_>>());
                let f = format!("{before}{t}{after}");
                assert_eq!(k.hits_memo(&f, &memo), k.hits(&f).collect::<Vec<_>>(), "{before:?} {after:?}");
                let other = f.replace("acme_x1", "acme_x2");
                assert_eq!(k.hits_memo(&other, &memo), k.hits(&other).collect::<Vec<_>>());
            }
        }
    }

    /// Through a memo, a text that holds a head and a tail of the memo's
    /// text (a cut's render) gets the hits of a scan of its own, short and
    /// long (the DFAs' path): cuts inside keywords, joins that complete a
    /// keyword across them, a middle changed as redaction changes it.
    #[test]
    fn a_memo_gives_the_hits_of_a_cut() {
        let s = shared().expect("the default keywords build");
        let mut patterns: Vec<String> = s.lines.lines().map(str::to_string).collect();
        // Two that only a join makes: `acme_` then `zz`, `x_` then `ghp`.
        patterns.extend(["acme_".into(), "acme_zz".into(), "x_ghp".into()]);
        let mapped = build_of(&patterns);
        let automaton = Starts::build(&patterns).unwrap();
        let own = Keywords::Own { automaton, patterns: patterns.clone(), dfa: OnceLock::new() };
        let line = "ERROR token=ab acme_x1 password: é GITHUB_TOKEN ghp_x sk_live_q\n";
        for lines in [40, 1_500] {
            let t = line.repeat(lines);
            let n = t.len();
            // Head ends and tail starts: inside `GITHUB_TOKEN`, inside
            // `password`, on a line's end.
            let g = t.find("GITHUB_TO").unwrap() + line.len() * 3;
            let p = t.rfind("passw").unwrap() - line.len() * 9;
            let a = t.find("acme_x").unwrap() + line.len() * 4 + 5;
            let h = t.rfind("ghp_x").unwrap() - line.len() * 9;
            let cuts = [(g + 9, p + 5), (g + 4, t.len() - line.len() * 10), (line.len() * 7, p + 2), (a, h)];
            for (head_end, tail_start) in cuts {
                for (before, marker, after) in [
                    ("[tool_result]\n", "KEN [… cut …] passw", "\n[/tool_result]"),
                    ("", "\n[… cut …]\n", ""),
                    ("ghp_", "acme_", "_x"),
                    ("", "zz [… cut …] x_", ""),
                ] {
                    let cut = format!("{before}{}{marker}{}{after}", &t[..head_end], &t[tail_start..]);
                    let redacted = cut.replacen("acme_x1", "[REDACTED:x]", 1).replace(&t[n / 2..n / 2 + 70], "ok");
                    for k in [&mapped.keywords, &own] {
                        let memo = HitsMemo::default();
                        assert_eq!(k.hits_memo(&t, &memo), k.hits(&t).collect::<Vec<_>>());
                        for f in [&cut, &redacted] {
                            let want: Vec<Match> = k.hits(f).collect();
                            assert_eq!(k.hits_memo(f, &memo), want, "{lines} {head_end} {tail_start} {marker:?}");
                            if f.len() >= DFA_MIN_TEXT {
                                assert_eq!(k.hits_long(f).collect::<Vec<_>>(), want);
                            }
                        }
                        // Both parts were found: the memo did the work.
                        let c = copies_of(cut.as_bytes(), t.as_bytes(), 2 * k.longest());
                        assert_eq!(c.len(), 2, "{c:?} {lines} {head_end} {tail_start} {marker:?} {}", t.len());
                    }
                }
            }
        }
    }

    #[test]
    fn the_shared_automaton_and_an_own_one_find_the_same_hits() {
        let s = shared().expect("the default keywords build");
        // A pack of the default keywords and two of its own, one of which
        // overlaps a default keyword's hits.
        let mut patterns: Vec<String> = s.lines.lines().rev().map(str::to_string).collect();
        patterns.push("acme_".into());
        patterns.push("ken=ab".into());
        let mapped = build_of(&patterns);
        assert!(matches!(mapped.keywords, Keywords::Shared { extra: Some(_), .. }));
        let automaton = Starts::build(&patterns).unwrap();
        let own = Keywords::Own { automaton, patterns: patterns.clone(), dfa: OnceLock::new() };
        let text = "export GITHUB_TOKEN=abc acme_x1 password: hunter2 ERROR failed\nTOKEN=AB sk_live_q ghp_x";
        // Every pattern by the id its hits carry.
        let mut all: Vec<String> = s.lines.lines().map(str::to_string).collect();
        all.resize(mapped.len, String::new());
        for (i, &id) in mapped.ids.iter().enumerate() {
            all[id] = patterns[i].clone();
        }
        let mut shared_hits = hits(&mapped.keywords, &all, text);
        let mut own_hits = hits(&own, &patterns, text);
        // A long text's path: the shared DFA with the pack's own automaton,
        // and an own DFA; the same hits in the same order.
        let long = |k: &Keywords, all: &[String]| -> Vec<(String, usize, usize)> {
            k.hits_long(text).map(|m| (all[m.pattern().as_usize()].clone(), m.start(), m.end())).collect()
        };
        assert_eq!(long(&mapped.keywords, &all), shared_hits);
        assert_eq!(long(&own, &patterns), own_hits);
        assert!(shared_hits.iter().any(|h| h.0 == "acme_") && shared_hits.iter().any(|h| h.0 == "ken=ab"));
        assert!(shared_hits.windows(2).all(|w| w[0].2 <= w[1].2), "in the order of their ends");
        shared_hits.sort();
        own_hits.sort();
        assert_eq!(shared_hits, own_hits);
        // Each of the pack's ids maps to its pattern, and what rides on it moves along.
        for (i, p) in patterns.iter().enumerate() {
            assert_eq!(&all[mapped.ids[i]], p);
        }
        let moved = mapped.remap(patterns.clone());
        assert_eq!(moved.len(), all.len());
        for (id, p) in moved.iter().enumerate() {
            assert!(p.is_empty() || p == &all[id], "{id}: {p}");
        }
    }

    #[test]
    fn a_pack_of_few_keywords_builds_its_own() {
        let mapped = build_of(&["acme_".to_string(), "token".to_string()]);
        assert!(matches!(mapped.keywords, Keywords::Own { .. }));
        assert_eq!(mapped.ids, vec![0, 1]);
    }

    /// The filtered search's hits against the crate's own unanchored
    /// overlapping search, hit for hit and in order.
    fn same_hits(starts: &Starts, reference: &AhoCorasick, text: &str) {
        let want: Vec<Match> = reference.find_overlapping_iter(text).collect();
        let got = starts.hits(text);
        if got != want {
            let at = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
            panic!(
                "{} hits, want {}; first difference at hit {at}: {:?} / {:?}",
                got.len(),
                want.len(),
                got.get(at),
                want.get(at)
            );
        }
    }

    #[test]
    fn the_filter_finds_every_hit_of_the_unanchored_search() {
        let s = shared().expect("the default keywords build");
        let reference = keyword_automaton(s.lines.lines(), AhoCorasickKind::ContiguousNFA).unwrap();
        // Texts nobody wrote for this test: the repository's examples and
        // the rule files, which hold every keyword; and each in capitals.
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
        let mut texts: Vec<String> = Vec::new();
        for dir in ["examples", "rules/default", "docs"] {
            let mut paths: Vec<_> =
                std::fs::read_dir(format!("{root}/{dir}")).unwrap().flatten().map(|e| e.path()).collect();
            paths.sort();
            texts.extend(paths.iter().filter_map(|p| std::fs::read_to_string(p).ok()));
        }
        assert!(texts.len() > 20, "{} texts", texts.len());
        let upper: Vec<String> = texts.iter().map(|t| t.to_ascii_uppercase()).collect();
        texts.extend(upper);
        // Keywords glued to each other and to random bytes, cut anywhere:
        // hits at the text's ends, overlapping hits, one- and two-byte
        // keywords, non-ASCII bytes around them.
        let words: Vec<&str> = s.lines.lines().collect();
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..3000 {
            let mut t = String::new();
            for _ in 0..next() % 6 {
                let w = words[next() as usize % words.len()];
                // A prefix, cut where a character ends (the list holds `钉钉`).
                let cut = (next() as usize % (w.len() + 1)).max(if next() % 2 == 0 { w.len() } else { 0 });
                let w = &w[..(0..=cut).rev().find(|&i| w.is_char_boundary(i)).unwrap_or(0)];
                t.push_str(&if next() % 3 == 0 { w.to_ascii_uppercase() } else { w.to_string() });
                t.push_str(["", " ", "=", "é", "_", "\n", "@"][next() as usize % 7]);
            }
            let cut = (0..=t.len()).filter(|&i| t.is_char_boundary(i)).nth(next() as usize % (t.chars().count() + 1));
            texts.push(t[cut.unwrap_or(0)..].to_string());
        }
        texts.extend(["", "@", "fc", "q~", "ab", "Fd@", "a@b"].map(String::from));
        let starts = &s.automaton;
        let mut hits = 0;
        for t in &texts {
            same_hits(starts, &reference, t);
            hits += reference.find_overlapping_iter(t).count();
        }
        assert!(hits > 50_000, "{hits} hits");
        // A pack's own keywords, which have no one- or two-byte ones.
        let own = ["acme_", "ken=ab", "token", "oken", "ken"];
        let (starts, reference) =
            (Starts::build(own).unwrap(), keyword_automaton(own, AhoCorasickKind::ContiguousNFA).unwrap());
        for t in &texts {
            same_hits(&starts, &reference, t);
        }
    }
}

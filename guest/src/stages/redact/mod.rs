//! Secret and path redaction.
//!
//! # Algorithm
//!
//! 1. One Aho-Corasick pass (ASCII case-insensitive, overlapping) over the
//!    text finds every keyword of every rule: O(n + hits). The automaton is
//!    a contiguous NFA; texts of [`DFA_MIN_TEXT`] bytes and more use a DFA
//!    of the same keywords, built once per instance (about twice as fast,
//!    ~0.4 MiB larger).
//! 2. Each rule with a hit runs its regex where its matches can start
//!    ([`Anchor`], worked out from the regex on the rule's first hit):
//!    - *at a keyword hit*, when the regex's leading literals (expanded
//!      over small classes, optional characters and alternatives) each
//!      begin with one of its keywords: one anchored try per hit, which
//!      stops as soon as the regex cannot match;
//!    - *at a line start*, for `(?m)^` regexes: one anchored try per line
//!      start inside the windows around the hits;
//!    - otherwise *in windows* `window` bytes after and at most
//!      [`WINDOW_BEFORE`] bytes before each hit, merged, clipped to the
//!      hit's line unless the regex can span lines. Running 150 rules over
//!      the whole text is never done; rules without keywords are the
//!      exception and are refused by the pack builder.
//! 3. On the `regex` crate (below), an anchored try finds its match with a
//!    lazy DFA. The secret group comes from two more DFA runs where the
//!    regex is `P(G)` with G last ([`Split`]), and from the capture engine
//!    (a bounded backtracker, several times slower per byte) only where
//!    that does not settle it.
//! 4. A candidate is kept when its secret group clears the rule's entropy
//!    threshold and matches no allowlist (rule and global) and no stopword.
//!    A candidate another rule already found with the same bounds is not
//!    checked again ([`Found`]).
//! 5. Tenant path roots are literals: one more Aho-Corasick automaton.
//! 6. Every other occurrence of a value found is redacted too (one more
//!    pass, [`propagate_values`]), and base64, `%XX` and `\u` encoded spans
//!    whose decoding holds a secret ([`crate::stages::redact::encoded`]).
//! 7. Overlapping spans are merged so that no fragment of a secret
//!    survives; each span becomes `[REDACTED:<rule-id>]`.
//!
//! The replacement keeps nothing of the secret, not even its length.
//! Regexes, allowlists and anchor plans are built on a rule's first hit:
//! most rules never hit in a given instance, and a pack has hundreds.
//!
//! # The regex engines
//!
//! Rules are written in regex-lite's syntax, and [`Ruleset::compile_all`]
//! (which the pack builder runs) refuses a regex regex-lite does not
//! accept, so the rule format stays that small dialect. ASCII texts of
//! [`FAST_MIN_TEXT`] bytes and more run on the `regex` crate's engines,
//! which tiktoken-rs already links into the component; all other texts on
//! regex-lite. regex-lite has only a PikeVM: on text where every line holds
//! a secret it held redaction to 1.9× gitleaks' speed, the lazy DFA here
//! to 14× (BENCHMARKS.md). But an instance that uses the `regex` crate
//! holds ~0.1 MiB more, and a host keeps an instance per tenant, most of
//! them redacting small outputs. The `regex` crate compiles the rules over
//! bytes with Unicode off ([`compile_regex`]): `\d \s \w \b` and `(?i)`
//! are ASCII, as in regex-lite, and on ASCII text, where a byte is a
//! character, both engines find the same matches. Which one ran never
//! shows in the output (`engines_agree_on_ascii_text`).


pub(crate) mod encoded;

pub(crate) use entry::{Pass, Redacted};

/// The one redaction entry point. Every call site (the content, the
/// tool-error line, MCP structured content and links, each rendered
/// output, the streaming step) redacts through a [`Pass`], so the pack's
/// `detect` hook, lenient mode and the counts behave the same everywhere.
mod entry {
    use std::collections::BTreeMap;

    use serde_json::Value;

    use super::Span;
    use crate::api::SanitizeError;
    use crate::markup;
    use crate::pack::CompiledPack;
    use crate::stages::defang;
    use crate::support::edits::{self, Edit, OffsetMap};

    /// Replacements by rule id.
    pub(crate) type Counts = BTreeMap<String, u32>;

    /// One pack's rules, in strict or lenient mode.
    #[derive(Clone, Copy)]
    pub(crate) struct Pass<'p> {
        pack: &'p CompiledPack,
        lenient: bool,
    }

    /// A redacted text and the way back to its input.
    pub(crate) struct Redacted {
        /// The text with each secret replaced by `[REDACTED:<rule-id>]`.
        pub text: String,
        /// From positions in `text` back to positions in the input.
        pub map: OffsetMap,
        /// Look-alikes of the pipeline's markup made harmless.
        pub defanged: u32,
    }

    impl<'p> Pass<'p> {
        /// A pass over `pack`'s rules; `lenient` skips its strict-only
        /// (generic) rules.
        pub(crate) fn new(pack: &'p CompiledPack, lenient: bool) -> Self {
            Self { pack, lenient }
        }

        /// Every span to redact in `text`, merged and sorted: the rules'
        /// matches and the pack's own findings.
        pub(crate) fn spans(&self, text: &str) -> Vec<Span> {
            self.pack.ruleset.scan_mode(text, &self.pack.detect(text), self.lenient)
        }

        /// `text` with its secrets replaced, and with `defang` the
        /// look-alikes of the pipeline's markup outside them made harmless
        /// too; replacements are added to `counts`.
        pub(crate) fn redact(&self, text: &str, defang: bool, counts: &mut Counts) -> Redacted {
            let spans = self.spans(text);
            let mut list = to_edits(&spans, counts);
            let mut defanged = 0;
            if defang {
                let mut defangs = defang::edits(text);
                defangs.retain(|d| !spans.iter().any(|s| d.start < s.end && s.start < d.end));
                defanged = defangs.len() as u32;
                list.extend(defangs);
                list.sort_by_key(|e: &Edit| e.start);
            }
            let (text, map) = edits::apply(text, &list);
            Redacted { text, map, defanged }
        }

        /// [`Self::redact`] without defanging, keeping the text only.
        pub(crate) fn redact_text(&self, text: &str, counts: &mut Counts) -> String {
            self.redact(text, false, counts).text
        }

        /// Redacts every string of a JSON value, keys included (MCP
        /// structured content and resource links).
        pub(crate) fn redact_json(&self, v: &mut Value, counts: &mut Counts) {
            match v {
                Value::String(s) => *s = self.redact_text(s, counts),
                Value::Array(a) => a.iter_mut().for_each(|x| self.redact_json(x, counts)),
                Value::Object(o) => {
                    let entries: Vec<(String, Value)> = std::mem::take(o).into_iter().collect();
                    for (k, mut val) in entries {
                        self.redact_json(&mut val, counts);
                        o.insert(self.redact_text(&k, counts), val);
                    }
                }
                _ => {}
            }
        }

        /// A rule of the pack that failed to compile on first use.
        pub(crate) fn error(&self) -> Option<SanitizeError> {
            self.pack.ruleset.error().map(SanitizeError::InvalidPack)
        }
    }

    /// Replacement edits for `spans`, with counts by rule id added to
    /// `counts`.
    fn to_edits(spans: &[Span], counts: &mut Counts) -> Vec<Edit> {
        spans
            .iter()
            .map(|s| {
                *counts.entry(s.rule.clone()).or_default() += 1;
                Edit { start: s.start, end: s.end, with: markup::redacted(&s.rule) }
            })
            .collect()
    }
}

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::{Mutex, OnceLock};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use regex::bytes::{CaptureLocations, Regex, RegexBuilder};

use crate::api::RuleCount;
use crate::pack_api::{Finding, RuleSet};
use crate::support::text::{ceil_boundary, floor_boundary};

/// Default window after a keyword hit.
pub const DEFAULT_WINDOW: usize = 256;
/// Window before a keyword hit: a match starts at most this far before its
/// keyword (a variable name's prefix, a URL scheme, a hex body before a
/// suffix keyword). Small, so that sporadic hits scan little text.
pub const WINDOW_BEFORE: usize = 128;
/// Texts at least this long are scanned with a DFA of the keywords. The
/// contiguous NFA used otherwise is ~0.4 MiB smaller per instance (which
/// counts with a thousand tenants, each calling with small outputs); the
/// DFA makes the keyword pass about twice as fast, which counts on large
/// outputs and streams (BENCHMARKS.md). An instance builds it once, on its
/// first large text.
pub const DFA_MIN_TEXT: usize = 1 << 20;
/// ASCII texts at least this long run on the `regex` crate's engines;
/// others on regex-lite's. On ASCII text the two give the same matches
/// (see the module docs), so which one ran never shows in the output. The
/// `regex` crate is several times faster on text dense with secrets, but an
/// instance that uses it holds ~0.1 MiB more (BENCHMARKS.md), which a
/// thousand tenants' instances, each redacting small outputs, cannot
/// afford.
pub const FAST_MIN_TEXT: usize = 64 << 10;

struct CompiledRule {
    id: String,
    /// Path rules' matches are not propagated (a user name can be a word).
    propagate: bool,
    strict_only: bool,
    /// Source of the regex; compiled on the rule's first keyword hit (most
    /// rules never hit in a given call, and a pack has hundreds).
    src: String,
    /// Lower-case keywords.
    keywords: Vec<String>,
    /// Where matches can start (see [`Anchor`]) and the source of the
    /// `\A`-anchored form; worked out on the rule's first keyword hit.
    plan: OnceLock<(Anchor, Option<String>)>,
    /// The regex (or its anchored form), compiled on first use: for the
    /// `regex` crate, and for regex-lite.
    compiled: OnceLock<Option<Compiled>>,
    lite: OnceLock<Option<regex_lite::Regex>>,
    /// The regex can match across lines (`\n`, `(?s)`, `(?m)`, `[\s\S]`);
    /// other rules only look at the line of their keyword hit.
    multiline: bool,
    secret_group: usize,
    entropy: Option<f32>,
    window: usize,
    /// Allowlist regexes, compiled on the rule's first candidate.
    allow: Lazy,
    stopwords: Vec<String>,
}

/// Regexes compiled on first use: most rules never produce a candidate
/// in a given instance, and compiling a pack's allowlists up front cost
/// about a third of a fresh instance's start (BENCHMARKS.md).
struct Lazy {
    what: String,
    src: Vec<String>,
    compiled: OnceLock<Result<Vec<Regex>, String>>,
    lite: OnceLock<Result<Vec<regex_lite::Regex>, String>>,
}

impl Lazy {
    fn new(what: String, src: &[String]) -> Self {
        Self { what, src: src.to_vec(), compiled: OnceLock::new(), lite: OnceLock::new() }
    }

    /// Whether any regex of the list matches `s`, on the engine of the scan.
    fn matches(&self, s: &str, fast: bool) -> Result<bool, String> {
        if fast {
            return self.get().map(|l| l.iter().any(|a| a.is_match(s.as_bytes())));
        }
        let lite = self.lite.get_or_init(|| self.src.iter().map(|a| lite_regex(&self.what, a)).collect());
        lite.as_deref().map(|l| l.iter().any(|a| a.is_match(s))).map_err(Clone::clone)
    }

    /// The list as one regex where it can be (`(?:a)|(?:b)|…` in byte
    /// mode: one compiled regex costs less memory per instance than
    /// several), else one regex each (see [`compile_regex`]).
    fn get(&self) -> Result<&[Regex], String> {
        self.compiled
            .get_or_init(|| {
                if self.src.len() > 1 {
                    let one: Vec<String> = self.src.iter().map(|a| format!("(?:{a})")).collect();
                    if let Ok(re) = byte_regex(&one.join("|"), false) {
                        return Ok(vec![re]);
                    }
                }
                self.src.iter().map(|a| compile_regex(&self.what, a)).collect()
            })
            .as_deref()
            .map_err(Clone::clone)
    }
}

/// A pack's rules, compiled.
pub struct Ruleset {
    rules: Vec<CompiledRule>,
    keywords: Option<AhoCorasick>,
    /// The same keywords as a DFA, built on the first text of at least
    /// [`DFA_MIN_TEXT`] bytes (see there).
    keywords_dfa: OnceLock<Option<AhoCorasick>>,
    /// The keyword patterns, kept to build the DFA.
    patterns: Vec<String>,
    /// keyword pattern index → rule indices
    keyword_rules: Vec<Vec<usize>>,
    /// rules that run everywhere
    unanchored: Vec<usize>,
    global_allow: Lazy,
    /// Built on the first candidate (see [`Self::stopwords`]).
    global_stop: OnceLock<Option<AhoCorasick>>,
    stopwords: Vec<String>,
    roots: Option<AhoCorasick>,
    error: Mutex<Option<String>>,
}

/// A span to redact.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    /// Start byte.
    pub start: usize,
    /// End byte.
    pub end: usize,
    /// Rule id.
    pub rule: String,
}

/// The spans one scan has found so far, by rule, in the order found.
///
/// Several rules often find the same secret (a provider rule and the
/// generic assignment rules on `GITHUB_TOKEN=ghp_...`). A candidate with
/// the bounds of a span already found is not checked again and not added:
/// it would merge into that span, which keeps the first rule's id, and its
/// value is already propagated. (Unless only a path rule found it: path
/// matches are not propagated, secret matches are.)
#[derive(Default)]
struct Found {
    /// This scan runs the `regex` crate's engines (see [`FAST_MIN_TEXT`]).
    fast: bool,
    spans: Vec<Span>,
    /// (start, end) → whether a propagating rule found it
    bounds: rustc_hash::FxHashMap<(usize, usize), bool>,
}

impl Found {
    /// Adds the candidate `text[start..end]` if it is new and `rule`
    /// accepts it.
    fn offer(&mut self, set: &Ruleset, rule: &CompiledRule, text: &str, start: usize, end: usize) {
        // Only ASCII text reaches the byte-mode engine, whose bounds could
        // otherwise fall inside a character: kept on whole characters.
        let (start, end) = (floor_boundary(text, start), ceil_boundary(text, end));
        if start == end || self.bounds.get(&(start, end)).is_some_and(|&p| p || !rule.propagate) {
            return;
        }
        if set.accept(rule, &text[start..end], self.fast) {
            self.bounds.insert((start, end), rule.propagate);
            self.spans.push(Span { start, end, rule: rule.id.clone() });
        }
    }
}

/// Rule id reported for tenant path roots.
pub const TENANT_ROOT_RULE: &str = "tenant-path-root";

/// Compiles a rule's regex (regex-lite syntax) for the `regex` crate's
/// engines, over bytes, with Unicode off: `\d \s \w \b` and `(?i)` are
/// ASCII, as in regex-lite, and a class or `.` matches one byte, so the
/// automata stay small (a Unicode `[^\s]{1,256}` is thousands of NFA
/// states). It runs on ASCII text only ([`FAST_MIN_TEXT`]), where that is
/// regex-lite's matching. A regex with a non-ASCII character in a class
/// cannot be built that way and is compiled with Unicode on instead (on
/// ASCII text, the same matches).
fn compile_regex(what: &str, src: &str) -> Result<Regex, String> {
    byte_regex(src, false)
        .or_else(|_| byte_regex(src, true))
        .map_err(|e| format!("{what}: regex does not compile: {e}"))
}

/// `src` compiled over bytes, within this module's limits.
fn byte_regex(src: &str, unicode: bool) -> Result<Regex, regex::Error> {
    RegexBuilder::new(src).unicode(unicode).size_limit(REGEX_SIZE_LIMIT).dfa_size_limit(REGEX_DFA_LIMIT).build()
}

/// `src` for regex-lite. Refuses a regex outside regex-lite's syntax
/// (`\p{..}`, class set operations), which the `regex` crate would accept.
fn lite_regex(what: &str, src: &str) -> Result<regex_lite::Regex, String> {
    regex_lite::Regex::new(src).map_err(|e| format!("{what}: not regex-lite syntax: {e}"))
}

/// Most heap a compiled regex may take (its NFAs), and most its lazy DFA
/// may cache per search direction: a rule that needs more fails to
/// compile, and a pack with such a rule is refused. Rules are small; the
/// lazy DFA of one is a few KB in practice.
const REGEX_SIZE_LIMIT: usize = 1 << 20;
const REGEX_DFA_LIMIT: usize = 1 << 18;

/// Most literal prefixes [`leading_literals`] expands a regex into.
const MAX_PREFIXES: usize = 64;

/// Literal prefixes that every match of `s` starts with, or `None` when
/// some branch starts with something that is not a literal.
///
/// The regex's leading items are expanded into a set of strings: literal
/// characters, escaped punctuation, small classes (`[sb]`, `[_\-]`),
/// optional items (`x?`) and groups of alternatives, each alternative
/// expanded the same way. Expansion stops at the first item of another
/// kind (a large class, a repetition, an assertion) or past
/// [`MAX_PREFIXES`] strings; a string that stopped is still a prefix of
/// every match of its branch, which is all the caller needs.
fn leading_literals(s: &str) -> Option<Vec<String>> {
    // As one group, so that top-level alternatives are split too.
    let (prefixes, _) = expand_item(format!("(?:{s})").as_bytes())?;
    let out: Vec<String> = prefixes.into_iter().map(|(p, _)| p).collect();
    (!out.is_empty() && out.iter().all(|p| !p.is_empty())).then_some(out)
}

/// One parsed item: its expansions and how many bytes it took, or `None`
/// when it is not an expandable item.
fn expand_item(b: &[u8]) -> Option<(Vec<(String, bool)>, usize)> {
    let lit = |c: u8| c.is_ascii_alphanumeric() || b"_-:/@#%&=!,'\"~ <>".contains(&c);
    match *b.first()? {
        b'\\' => {
            let e = *b.get(1)?;
            b".-$/_~:@#%&=!,'\"()[]{}?*+|^\\ <>".contains(&e).then(|| (vec![((e as char).to_string(), true)], 2))
        }
        b'[' => {
            // A small class of single characters and escaped punctuation.
            let mut i = 1;
            let mut members = Vec::new();
            while i < b.len() && b[i] != b']' {
                let c = if b[i] == b'\\' {
                    i += 1;
                    *b.get(i).filter(|c| c.is_ascii_punctuation())?
                } else if b.get(i + 1) == Some(&b'-') && b.get(i + 2).is_some_and(|&c| c != b']') {
                    return None; // a range
                } else if b[i] == b'^' && i == 1 {
                    return None; // negated
                } else {
                    b[i]
                };
                members.push(((c as char).to_string(), true));
                i += 1;
            }
            (i < b.len() && !members.is_empty() && members.len() <= 8).then_some((members, i + 1))
        }
        b'(' => {
            let body = if b.starts_with(b"(?:") {
                3
            } else if b.get(1) == Some(&b'?') {
                return None; // flags, look-around
            } else {
                1
            };
            let (alts, close) = split_alternatives(&b[body..]);
            let close = body + close?;
            let mut out = Vec::new();
            for a in alts {
                let (p, _) = expand_seq(a)?;
                out.extend(p);
            }
            (out.len() <= MAX_PREFIXES).then_some((out, close + 1))
        }
        c if lit(c) => Some((vec![((c as char).to_string(), true)], 1)),
        _ => None,
    }
}

/// Expands a sequence of items; each string says whether it reached the
/// end of `b` (and may be continued by what follows the sequence).
fn expand_seq(b: &[u8]) -> Option<(Vec<(String, bool)>, usize)> {
    let mut set: Vec<(String, bool)> = vec![(String::new(), true)];
    let mut i = 0;
    while i < b.len() {
        let Some((mut items, used)) = expand_item(&b[i..]) else { break };
        let q = b.get(i + used).copied();
        if matches!(q, Some(b'*' | b'+' | b'{')) {
            break; // repeated: not a fixed prefix
        }
        let mut used = used;
        if q == Some(b'?') {
            items.push((String::new(), true));
            used += 1;
        }
        let grown = set.iter().filter(|(_, open)| *open).count() * items.len();
        if grown > MAX_PREFIXES {
            break;
        }
        let mut next = Vec::with_capacity(grown);
        for (p, open) in set {
            if !open {
                next.push((p, false));
                continue;
            }
            for (e, e_open) in &items {
                next.push((format!("{p}{e}"), *e_open));
            }
        }
        set = next;
        i += used;
    }
    let complete = i == b.len();
    Some((set.into_iter().map(|(p, open)| (p, open && complete)).collect(), i))
}

/// A rule's regex as it runs.
struct Compiled {
    /// The `\A`-anchored form for an anchored [`Anchor`], else the regex.
    regex: Regex,
    anchored: bool,
    /// How an anchored try finds the secret without capture groups.
    split: Option<Split>,
}

/// The engine a window search runs on (see [`FAST_MIN_TEXT`]).
enum Engine<'r> {
    Fast(&'r Regex),
    Lite(&'r regex_lite::Regex),
}

impl Engine<'_> {
    /// The first match at or after `pos` in `text[..end]`, and its group
    /// `group`.
    fn captures_at(
        &self,
        text: &str,
        end: usize,
        pos: usize,
        group: usize,
    ) -> Option<(Range<usize>, Option<Range<usize>>)> {
        match self {
            Engine::Fast(re) => re
                .captures_at(&text.as_bytes()[..end], pos)
                .map(|c| (c.get(0).expect("group 0").range(), c.get(group).map(|g| g.range()))),
            Engine::Lite(re) => re
                .captures_at(&text[..end], pos)
                .map(|c| (c.get(0).expect("group 0").range(), c.get(group).map(|g| g.range()))),
        }
    }
}

/// How the secret of an anchored try is found without capture groups,
/// whose engine (a backtracker) costs several times the lazy DFA that finds
/// the match.
enum Split {
    /// The secret is the whole match: group 0, or a group that spans the
    /// regex (`\b(ghp_[A-Za-z0-9]{36})\b`).
    Whole,
    /// The regex is `P(G)T`, the secret group G its last item and T only
    /// zero-width assertions: `\A(?:P)` and `\A(?:G)T`, compiled. Where P's
    /// own preferred match is followed by a match of G ending where the
    /// whole match ends, that is the secret (leftmost-first semantics try
    /// P's choices first, in P's order); elsewhere the capture engine runs.
    Parts(Regex, Regex),
}

/// `src` without its leading flag group (`(?im)`), and that group.
fn split_flags(src: &str) -> (&str, &str) {
    match src.strip_prefix("(?") {
        Some(r) if r.find(')').is_some_and(|i| r[..i].chars().all(|c| c.is_ascii_alphabetic())) => {
            let i = r.find(')').expect("checked");
            (&src[..i + 3], &r[i + 1..])
        }
        _ => ("", src),
    }
}

/// The sources of the [`Split`] of an anchored form `{flags}\A(?:{body})`
/// whose group `secret_group` is the last item of `body`: `None` for a
/// whole-match secret, `Some((P, G))` otherwise.
fn secret_split(anchored: &str, secret_group: usize) -> Option<Option<(String, String)>> {
    if secret_group == 0 {
        return Some(None);
    }
    let (flags, rest) = split_flags(anchored);
    let body = rest.strip_prefix("\\A(?:")?.strip_suffix(')')?;
    // The last group at the top level of `body`.
    let (mut depth, mut open, mut last) = (0usize, 0, None);
    for (i, t) in outside_classes(body.as_bytes()) {
        match t {
            Tok::Plain(b'(') => {
                if depth == 0 {
                    open = i;
                }
                depth += 1;
            }
            Tok::Plain(b')') if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    last = Some((open, i));
                }
            }
            _ => {}
        }
    }
    let (open, close) = last?;
    let (p, g, mut tail) = (&body[..open], &body[open + 1..close], &body[close + 1..]);
    while let Some(t) = ["\\b", "\\B", "\\z", "$"].iter().find_map(|a| tail.strip_prefix(a)) {
        tail = t;
    }
    // A capturing group, after no group that changes flags or numbering
    // (its number is checked against the compiled P, see `regexes`), and
    // with no assertion inside: G runs anchored on the text after P, where
    // an assertion at its start would not see what precedes it.
    let plain = |s: &str| s.match_indices("(?").all(|(i, _)| s[i..].starts_with("(?:"));
    if !tail.is_empty() || g.starts_with('?') || !plain(p) || has_assertion(g) {
        return None;
    }
    let tail = &body[close + 1..];
    Some((!p.is_empty()).then(|| (format!("{flags}\\A(?:{p})"), format!("{flags}\\A(?:{g}){tail}"))))
}

/// Whether `s` has an assertion (`^ $ \b \B \A \z \< \>`) outside a class.
fn has_assertion(s: &str) -> bool {
    outside_classes(s.as_bytes())
        .any(|(_, t)| matches!(t, Tok::Escaped(b'b' | b'B' | b'A' | b'z' | b'<' | b'>') | Tok::Plain(b'^' | b'$')))
}

/// A byte of a regex source outside its character classes.
#[derive(Clone, Copy)]
enum Tok {
    /// The byte after a `\`.
    Escaped(u8),
    Plain(u8),
}

/// The bytes of a regex source outside character classes (the brackets
/// included), with their indices; a `\` itself is not yielded. The one
/// lexer behind [`split_alternatives`], [`secret_split`] and
/// [`has_assertion`].
fn outside_classes(b: &[u8]) -> impl Iterator<Item = (usize, Tok)> + '_ {
    let (mut class, mut esc) = (false, false);
    b.iter().enumerate().filter_map(move |(i, &c)| {
        if esc {
            esc = false;
            return (!class).then_some((i, Tok::Escaped(c)));
        }
        match c {
            b'\\' => esc = true,
            b'[' if !class => class = true,
            b']' if class => class = false,
            _ if !class => return Some((i, Tok::Plain(c))),
            _ => {}
        }
        None
    })
}

/// Whether `s` has a `|` outside any group or class.
fn top_level_bar(s: &str) -> bool {
    split_alternatives(s.as_bytes()).0.len() > 1
}

/// The alternatives of `b` split at its top-level `|`, up to the `)` that
/// closes the group `b` is the inside of (its index) or to the end.
fn split_alternatives(b: &[u8]) -> (Vec<&[u8]>, Option<usize>) {
    let mut depth = 0usize;
    let mut alts = Vec::new();
    let mut last = 0;
    for (i, t) in outside_classes(b) {
        match t {
            Tok::Plain(b'(') => depth += 1,
            Tok::Plain(b')') if depth > 0 => depth -= 1,
            Tok::Plain(b')') => {
                alts.push(&b[last..i]);
                return (alts, Some(i));
            }
            Tok::Plain(b'|') if depth == 0 => {
                alts.push(&b[last..i]);
                last = i + 1;
            }
            _ => {}
        }
    }
    alts.push(&b[last..]);
    (alts, None)
}

/// How a rule's regex is run (decided once, from its source and keywords).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Anchor {
    /// Every match starts at a keyword hit: tried there, anchored. The bool
    /// says the regex starts with `\b`, checked by hand.
    Keyword(bool),
    /// Every match starts at a line start (`(?m)^...`): tried, anchored,
    /// at the line starts inside the windows around keyword hits.
    LineStart,
    /// Searched inside the windows around keyword hits.
    Window,
}

/// The anchor of a rule and the source of its anchored form (`\A`, so
/// that the regex engine stops as soon as no thread is left).
fn anchored_form(src: &str, keywords: &[String]) -> (Anchor, Option<String>) {
    let (flags, rest) = split_flags(src);
    if flags.contains('x') || top_level_bar(rest) {
        return (Anchor::Window, None);
    }
    if flags.contains('m') && rest.starts_with('^') {
        return (Anchor::LineStart, Some(format!("{flags}\\A(?:{rest})")));
    }
    let (wb, rest) = match rest.strip_prefix("\\b") {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let Some(lits) = leading_literals(rest) else { return (Anchor::Window, None) };
    let ok = lits.iter().all(|l| {
        let l = l.to_ascii_lowercase();
        keywords.iter().any(|k| l.starts_with(&k.to_ascii_lowercase()))
    });
    if ok {
        (Anchor::Keyword(wb), Some(format!("{flags}\\A(?:{rest})")))
    } else {
        (Anchor::Window, None)
    }
}

impl Ruleset {
    /// Compiles a rule set; errors name the rule.
    pub fn compile(set: &RuleSet) -> Result<Self, String> {
        let mut rules = Vec::with_capacity(set.rules.len());
        let mut kw_index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        let mut keyword_rules: Vec<Vec<usize>> = Vec::new();
        let mut unanchored = Vec::new();
        for (i, r) in set.rules.iter().enumerate() {
            let allow = Lazy::new(format!("rule `{}` allowlist", r.id), &r.allow_regexes);
            if r.keywords.is_empty() {
                unanchored.push(i);
            }
            let keywords: Vec<String> = r.keywords.iter().map(|k| k.to_ascii_lowercase()).collect();
            for k in &keywords {
                if k.is_empty() {
                    return Err(format!("rule `{}`: empty keyword", r.id));
                }
                let next = kw_index.len();
                let idx = *kw_index.entry(k.clone()).or_insert(next);
                if idx == keyword_rules.len() {
                    keyword_rules.push(Vec::new());
                }
                keyword_rules[idx].push(i);
            }
            let multiline = ["\\n", "(?s", "(?m", "(?is", "(?im", "[\\s\\S]"].iter().any(|m| r.regex.contains(m));
            rules.push(CompiledRule {
                src: r.regex.clone(),
                keywords,
                plan: OnceLock::new(),
                compiled: OnceLock::new(),
                lite: OnceLock::new(),
                multiline,
                id: r.id.clone(),
                propagate: r.kind == crate::pack_api::RuleKind::Secret,
                strict_only: r.strict_only,
                secret_group: r.secret_group as usize,
                entropy: r.entropy,
                window: if r.window == 0 { DEFAULT_WINDOW } else { r.window as usize },
                allow,
                stopwords: r.stopwords.iter().map(|s| s.to_ascii_lowercase()).collect(),
            });
        }
        let mut patterns: Vec<(String, usize)> = kw_index.into_iter().collect();
        patterns.sort_by_key(|(_, i)| *i);
        let patterns: Vec<String> = patterns.into_iter().map(|(k, _)| k).collect();
        let keywords = if patterns.is_empty() {
            None
        } else {
            Some(keyword_automaton(&patterns, AhoCorasickKind::ContiguousNFA).map_err(|e| format!("keywords: {e}"))?)
        };
        let global_allow = Lazy::new("global allowlist".into(), &set.allow_regexes);
        // Roots are read once over the text: the smaller NFA.
        let roots = literal_automaton(
            &set.path_roots,
            false,
            MatchKind::LeftmostLongest,
            AhoCorasickKind::ContiguousNFA,
            "path roots",
        )?;
        let stopwords = set.stopwords.clone();
        Ok(Self {
            rules,
            keywords,
            keywords_dfa: OnceLock::new(),
            patterns,
            keyword_rules,
            unanchored,
            global_allow,
            global_stop: OnceLock::new(),
            stopwords,
            roots,
            error: Mutex::new(None),
        })
    }

    /// Compiles every rule's regex now (pack builds and checks); the
    /// pipeline otherwise compiles each on first use. Also checks that each
    /// regex is regex-lite syntax, the rule format's dialect (see the
    /// module docs).
    pub fn compile_all(&self) -> Result<(), String> {
        for l in self.rules.iter().map(|r| &r.allow).chain([&self.global_allow]) {
            l.get()?;
        }
        self.stopwords();
        for r in &self.rules {
            self.regexes(r);
        }
        if let Some(e) = self.error() {
            return Err(e);
        }
        for l in self.rules.iter().map(|r| &r.allow).chain([&self.global_allow]) {
            l.matches("", false)?;
        }
        for r in &self.rules {
            lite_regex(&format!("rule `{}`", r.id), &r.src)?;
            self.lite(r);
        }
        self.error().map_or(Ok(()), Err)
    }

    /// The first rule that failed to compile on use, if any: the pack is
    /// unusable and the pipeline reports it as such.
    pub fn error(&self) -> Option<String> {
        self.error.lock().map(|e| e.clone()).unwrap_or(None)
    }

    /// Keeps the first compile error met on use (see [`Self::error`]).
    fn record_error(&self, e: String) {
        if let Ok(mut slot) = self.error.lock() {
            slot.get_or_insert(e);
        }
    }

    fn plan<'r>(&self, rule: &'r CompiledRule) -> &'r (Anchor, Option<String>) {
        rule.plan.get_or_init(|| anchored_form(&rule.src, &rule.keywords))
    }

    fn regexes<'r>(&self, rule: &'r CompiledRule) -> Option<&'r Compiled> {
        rule.compiled
            .get_or_init(|| {
                let what = format!("rule `{}`", rule.id);
                // An anchored rule needs only its anchored form (`\A(?:…)`
                // adds no group); a searched one only the regex.
                let built = match self.plan(rule).1.as_deref() {
                    Some(a) => compile_regex(&what, a).map(|re| {
                        let split = secret_split(a, rule.secret_group).and_then(|parts| match parts {
                            None => Some(Split::Whole),
                            // P holds exactly the groups before the secret's.
                            Some((p, g)) => match (compile_regex(&what, &p), compile_regex(&what, &g)) {
                                (Ok(p), Ok(g)) if p.captures_len() == rule.secret_group => Some(Split::Parts(p, g)),
                                _ => None,
                            },
                        });
                        Compiled { regex: re, anchored: true, split }
                    }),
                    None => {
                        compile_regex(&what, &rule.src).map(|re| Compiled { regex: re, anchored: false, split: None })
                    }
                };
                let checked = built.and_then(|c| {
                    if rule.secret_group >= c.regex.captures_len() {
                        return Err(format!("{what}: secret-group {} does not exist", rule.secret_group));
                    }
                    Ok(c)
                });
                checked.map_err(|e| self.record_error(e)).ok()
            })
            .as_ref()
    }

    /// The rule's regex (or its anchored form) for regex-lite.
    fn lite<'r>(&self, rule: &'r CompiledRule) -> Option<&'r regex_lite::Regex> {
        rule.lite
            .get_or_init(|| {
                let src = self.plan(rule).1.as_deref().unwrap_or(&rule.src);
                lite_regex(&format!("rule `{}`", rule.id), src).map_err(|e| self.record_error(e)).ok()
            })
            .as_ref()
    }

    /// Number of rules.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Every span to redact in `text`, merged and sorted: rule matches,
    /// custom findings, other occurrences of found values, and encoded
    /// spans (base64, percent, `\u` escapes) whose decoded text holds a
    /// secret.
    pub fn scan(&self, text: &str, custom: &[Finding]) -> Vec<Span> {
        self.scan_mode(text, custom, false)
    }

    /// [`Self::scan`], skipping strict-only rules when `lenient`.
    ///
    /// Invisible format characters (zero-width spaces and joiners, soft
    /// hyphens, bidi controls) are ignored for matching: a secret with a
    /// U+200B inside is still one secret. The scan then runs on a view
    /// without them and the spans are mapped back, covering the hidden
    /// characters too.
    pub fn scan_mode(&self, text: &str, custom: &[Finding], lenient: bool) -> Vec<Span> {
        if let Some((view, back)) = visible_view(text) {
            let spans = self.scan_visible(&view, &[], lenient);
            let mut mapped: Vec<Span> =
                spans.into_iter().map(|s| Span { start: back[s.start], end: back[s.end], rule: s.rule }).collect();
            // Custom findings are offsets into the original text.
            mapped.extend(custom_spans(text, custom));
            return merge(mapped);
        }
        self.scan_visible(text, custom, lenient)
    }

    fn scan_visible(&self, text: &str, custom: &[Finding], lenient: bool) -> Vec<Span> {
        let mut spans = self.scan_plain(text, custom, lenient);
        spans.extend(crate::stages::redact::encoded::encoded_secrets(text, |decoded| {
            self.scan_plain(decoded, &[], lenient).into_iter().next().map(|s| s.rule)
        }));
        merge(spans)
    }

    fn scan_plain(&self, text: &str, custom: &[Finding], lenient: bool) -> Vec<Span> {
        let mut out = Found { fast: text.len() >= FAST_MIN_TEXT && text.is_ascii(), ..Found::default() };
        // Per rule: keyword hit starts (keyword-anchored rules) or merged
        // windows (the others), in text order.
        let mut found: Vec<Vec<(usize, usize)>> = vec![Vec::new(); self.rules.len()];
        let ac = if text.len() >= DFA_MIN_TEXT {
            self.keywords_dfa
                .get_or_init(|| keyword_automaton(&self.patterns, AhoCorasickKind::DFA).ok())
                .as_ref()
                .or(self.keywords.as_ref())
        } else {
            self.keywords.as_ref()
        };
        if let Some(ac) = ac {
            for m in ac.find_overlapping_iter(text) {
                for &ri in &self.keyword_rules[m.pattern().as_usize()] {
                    let rule = &self.rules[ri];
                    let list = &mut found[ri];
                    if let Anchor::Keyword(_) = self.plan(rule).0 {
                        if list.last() != Some(&(m.start(), m.start())) {
                            list.push((m.start(), m.start()));
                        }
                        continue;
                    }
                    let w = rule.window;
                    let mut s = m.start().saturating_sub(w.min(WINDOW_BEFORE));
                    let mut e = m.end().saturating_add(w).min(text.len());
                    if !rule.multiline {
                        // Single-line rules: only the hit's line, so dense
                        // text does not merge into one text-wide window.
                        let b = text.as_bytes();
                        s = memchr::memrchr(b'\n', &b[s..m.start()]).map_or(s, |p| s + p + 1);
                        e = memchr::memchr(b'\n', &b[m.end()..e]).map_or(e, |p| m.end() + p);
                    }
                    let s = floor_boundary(text, s);
                    let e = ceil_boundary(text, e);
                    match list.last_mut() {
                        Some(last) if s <= last.1 => {
                            last.0 = last.0.min(s);
                            last.1 = last.1.max(e);
                        }
                        _ => list.push((s, e)),
                    }
                }
            }
        }
        for &ri in &self.unanchored {
            found[ri] = vec![(0, text.len())];
        }
        let mut propagate: Vec<(String, String)> = Vec::new();
        // Keyword-anchored rules first, then the others (the order decides
        // which rule id names a span two rules found).
        let keyword_anchored = |ri: &usize| matches!(self.plan(&self.rules[*ri]).0, Anchor::Keyword(_));
        let hit: Vec<usize> = (0..self.rules.len()).filter(|&ri| !found[ri].is_empty()).collect();
        let order = hit.iter().filter(|ri| keyword_anchored(ri)).chain(hit.iter().filter(|ri| !keyword_anchored(ri)));
        for &ri in order {
            let rule = &self.rules[ri];
            let list = &found[ri];
            if lenient && rule.strict_only {
                continue;
            }
            let before = out.spans.len();
            // Capture slots, made on the first try and reused by the others.
            let mut slots = None;
            match self.plan(rule).0 {
                Anchor::Keyword(_) => {
                    for &(h, _) in list {
                        self.try_at(text, rule, h, &mut slots, &mut out);
                    }
                }
                Anchor::LineStart => {
                    // Past the end of the last match, as a search would go on.
                    let mut done = 0;
                    for &(ws, we) in list {
                        for ls in line_starts(text.as_bytes(), ws, we) {
                            if ls >= done {
                                if let Some(end) = self.try_at(text, rule, ls, &mut slots, &mut out) {
                                    done = end;
                                }
                            }
                        }
                    }
                }
                Anchor::Window => {
                    for &(ws, we) in list {
                        self.scan_window(text, rule, ws, we, &mut out);
                    }
                }
            }
            if rule.propagate {
                for s in &out.spans[before..] {
                    propagate.push((text[s.start..s.end].to_string(), s.rule.clone()));
                }
            }
        }
        let mut spans = std::mem::take(&mut out.spans);
        if let Some(roots) = &self.roots {
            for m in roots.find_iter(text) {
                spans.push(Span { start: m.start(), end: m.end(), rule: TENANT_ROOT_RULE.into() });
            }
        }
        for s in custom_spans(text, custom) {
            propagate.push((text[s.start..s.end].to_string(), s.rule.clone()));
            spans.push(s);
        }
        propagate_values(text, &propagate, &out, &mut spans);
        merge(spans)
    }

    fn scan_window(&self, text: &str, rule: &CompiledRule, ws: usize, we: usize, out: &mut Found) {
        let engine = if out.fast {
            let Some(Compiled { regex, anchored: false, .. }) = self.regexes(rule) else { return };
            Engine::Fast(regex)
        } else {
            let Some(regex) = self.lite(rule) else { return };
            Engine::Lite(regex)
        };
        let captures_at = |end: usize, pos: usize| engine.captures_at(text, end, pos, rule.secret_group);
        let b = text.as_bytes();
        let mut pos = ws;
        while pos <= we {
            let mut end = we;
            let Some(mut caps) = captures_at(end, pos) else { break };
            // A match that runs into the window's end may be cut short by it
            // (a long token, a PEM block): widen the window and match again.
            // (A window that ends at a line end cannot cut a single-line match.)
            let line_end = b.get(end) == Some(&b'\n') && !rule.multiline;
            while !line_end && caps.0.end == end && end < b.len() {
                let grow = (end - ws).max(rule.window) * 2;
                end = ceil_boundary(text, (end + grow).min(b.len()));
                match captures_at(end, pos) {
                    Some(c) => caps = c,
                    None => break,
                }
            }
            let (whole, secret) = caps;
            if let Some(g) = secret {
                out.offer(self, rule, text, g.start, g.end);
            }
            pos = if whole.end > whole.start {
                whole.end
            } else if whole.end < end {
                ceil_boundary(text, whole.end + 1)
            } else {
                break;
            };
        }
    }

    /// Tries an anchored rule at `h` (a keyword hit or a line start);
    /// returns where its match ended, if it matched.
    fn try_at(
        &self,
        text: &str,
        rule: &CompiledRule,
        h: usize,
        slots: &mut Option<CaptureLocations>,
        out: &mut Found,
    ) -> Option<usize> {
        let b = text.as_bytes();
        let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        if self.plan(rule).0 == Anchor::Keyword(true) && h > 0 && word(b[h - 1]) == word(b[h]) {
            return None;
        }
        let fast = match out.fast {
            true => match self.regexes(rule) {
                Some(Compiled { regex, anchored: true, split }) => Some((regex, split)),
                _ => return None,
            },
            false => None,
        };
        let lite = if fast.is_none() { Some(self.lite(rule)?) } else { None };
        // The match in `text[h..end]`, and its secret, relative to `h`.
        let mut find = |end: usize| match (fast, lite) {
            (Some((re, split)), _) => fast_captures(re, split.as_ref(), &b[h..end], slots, rule.secret_group),
            (None, Some(re)) => re
                .captures(&text[h..end])
                .map(|c| (c.get(0).expect("group 0").range(), c.get(rule.secret_group).map(|g| g.range()))),
            (None, None) => None,
        };
        // Anchored: the regex stops where the match stops, so a generous
        // slice costs nothing.
        let mut end = ceil_boundary(text, (h + rule.window.max(4096)).min(text.len()));
        loop {
            let (whole, secret) = find(end)?;
            // Cut by the end of the slice: look further and try again.
            if h + whole.end == end && end < text.len() {
                end = ceil_boundary(text, (end + (end - h) * 2).min(text.len()));
                continue;
            }
            if let Some(g) = secret {
                out.offer(self, rule, text, h + g.start, h + g.end);
            }
            return Some(h + whole.end);
        }
    }

    /// The global stopwords, built on the first candidate (an instance
    /// that redacts nothing never builds them).
    fn stopwords(&self) -> Option<&AhoCorasick> {
        self.global_stop
            .get_or_init(|| {
                literal_automaton(
                    &self.stopwords,
                    true,
                    MatchKind::Standard,
                    AhoCorasickKind::ContiguousNFA,
                    "global stopwords",
                )
                .map_err(|e| self.record_error(e))
                .ok()
                .flatten()
            })
            .as_ref()
    }

    fn accept(&self, rule: &CompiledRule, secret: &str, fast: bool) -> bool {
        if memchr::memmem::find(secret.as_bytes(), crate::markup::REDACTED_PREFIX.as_bytes()).is_some() {
            return false;
        }
        if let Some(min) = rule.entropy {
            if shannon_entropy(secret.as_bytes()) < f64::from(min) {
                return false;
            }
        }
        if self.stopwords().is_some_and(|ac| ac.is_match(secret)) {
            return false;
        }
        if !rule.stopwords.is_empty() {
            let lower = secret.to_ascii_lowercase();
            if rule.stopwords.iter().any(|w| lower.contains(w.as_str())) {
                return false;
            }
        }
        let allow = |l: &Lazy| match l.matches(secret, fast) {
            Ok(m) => m,
            Err(e) => {
                self.record_error(e);
                false
            }
        };
        !allow(&rule.allow) && !allow(&self.global_allow)
    }
}

/// An anchored match of `re` in `hay` and its group `group`, on the
/// `regex` crate: by the lazy DFA alone where `split` settles the group,
/// else by the capture engine (`slots`, made on first use).
fn fast_captures(
    re: &Regex,
    split: Option<&Split>,
    hay: &[u8],
    slots: &mut Option<CaptureLocations>,
    group: usize,
) -> Option<(Range<usize>, Option<Range<usize>>)> {
    if let Some(split) = split {
        let m = re.find(hay)?;
        match split {
            Split::Whole => return Some((m.range(), Some(m.range()))),
            Split::Parts(p, g) => {
                if let Some(at) = p.find(hay).map(|pm| pm.end()) {
                    if let Some(gm) = g.find(&hay[at..]).filter(|gm| at + gm.end() == m.end()) {
                        return Some((m.range(), Some(at + gm.start()..at + gm.end())));
                    }
                }
            }
        }
    }
    let locs = slots.get_or_insert_with(|| re.capture_locations());
    re.captures_read(locs, hay)?;
    Some((locs.get(0).map(|(s, e)| s..e).expect("group 0"), locs.get(group).map(|(s, e)| s..e)))
}

/// The line starts in `b[from..to]`.
fn line_starts(b: &[u8], from: usize, to: usize) -> impl Iterator<Item = usize> + '_ {
    let first = (from == 0 || b[from - 1] == b'\n').then_some(from);
    first
        .into_iter()
        .chain(memchr::memchr_iter(b'\n', &b[from..to]).map(move |p| from + p + 1).filter(move |&ls| ls < to))
}

/// The keyword automaton: ASCII case-insensitive, overlapping matches.
fn keyword_automaton(patterns: &[String], kind: AhoCorasickKind) -> Result<AhoCorasick, aho_corasick::BuildError> {
    AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        .kind(Some(kind))
        .build(patterns)
}

/// An automaton over the non-empty `words`, or `None` when there are none.
fn literal_automaton(
    words: &[String],
    nocase: bool,
    semantics: MatchKind,
    kind: AhoCorasickKind,
    what: &str,
) -> Result<Option<AhoCorasick>, String> {
    let words: Vec<&str> = words.iter().map(String::as_str).filter(|w| !w.is_empty()).collect();
    if words.is_empty() {
        return Ok(None);
    }
    AhoCorasickBuilder::new()
        .ascii_case_insensitive(nocase)
        .match_kind(semantics)
        .kind(Some(kind))
        .build(words)
        .map(Some)
        .map_err(|e| format!("{what}: {e}"))
}

/// Findings from pack code are untrusted: anything that is not a non-empty
/// in-range span on character boundaries is dropped.
fn custom_spans(text: &str, custom: &[Finding]) -> Vec<Span> {
    custom
        .iter()
        .filter_map(|f| {
            let (s, e) = (f.start as usize, f.end as usize);
            (s < e && e <= text.len() && text.is_char_boundary(s) && text.is_char_boundary(e)).then(|| Span {
                start: s,
                end: e,
                rule: sanitize_rule_id(&f.rule_id),
            })
        })
        .collect()
}

fn invisible(c: char) -> bool {
    matches!(c, '\u{00AD}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

/// `text` without invisible format characters, and for each byte offset
/// of that view (and its end) the offset in `text`; `None` when there are
/// none (the common case, found with one memchr pass for their lead bytes).
fn visible_view(text: &str) -> Option<(String, Vec<usize>)> {
    let b = text.as_bytes();
    // Most tool output is ASCII: `is_ascii` reads words at a time.
    if b.is_ascii() {
        return None;
    }
    let maybe = memchr::memchr3(0xE2, 0xEF, 0xC2, b).is_some();
    if !maybe || !text.chars().any(invisible) {
        return None;
    }
    let mut view = String::with_capacity(text.len());
    let mut back = Vec::with_capacity(text.len() + 1);
    for (i, c) in text.char_indices() {
        if invisible(c) {
            continue;
        }
        for _ in 0..c.len_utf8() {
            back.push(i);
        }
        view.push(c);
    }
    // An end maps to the next visible character, so the span also covers
    // any hidden characters right after the secret (harmless to remove).
    back.push(text.len());
    Some((view, back))
}

/// Bytes of a found value its other occurrences are looked up by; shorter
/// values are not propagated.
const PROPAGATE_KEY: usize = 8;

/// Where in a value its key starts: the [`PROPAGATE_KEY`] bytes that end
/// 24 bytes in (or at the end of a shorter value). Not the first bytes:
/// thousands of values of one provider share a prefix (`sk-proj-`,
/// `sk_live_`), and one key shared by many values would make each lookup
/// compare them all.
fn key_offset(len: usize) -> usize {
    len.min(24) - PROPAGATE_KEY
}

/// Every other occurrence of a value already found to be a secret is a
/// secret too: a token caught in `TOKEN=...` is also caught where the same
/// text prints it bare (a stack trace, a CSV cell). Values under
/// [`PROPAGATE_KEY`] bytes are not propagated (too likely to be ordinary
/// words).
///
/// One pass over the text reads the [`PROPAGATE_KEY`] bytes at each
/// position as a `u64` and tests one bit of a hashed bitmap of the values'
/// keys ([`key_offset`]), a two-bit Bloom filter small enough for the L1
/// cache. A position that passes looks
/// its key up among the values sorted by key (binary search), and each
/// value with that key is compared whole where it would start. Cost: O(n) with a small constant, plus
/// O(v log v) to sort v values. An Aho-Corasick automaton of the values
/// did the same search, but building it for the thousands of values of a
/// dense text cost more than the search (BENCHMARKS.md).
fn propagate_values(text: &str, found: &[(String, String)], known: &Found, spans: &mut Vec<Span>) {
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
            if b[start..].starts_with(v.as_bytes()) && !known.bounds.contains_key(&(start, end)) {
                spans.push(Span { start, end, rule: (*rule).to_string() });
            }
        }
    }
}

/// Keeps a rule id from pack code printable and short.
fn sanitize_rule_id(id: &str) -> String {
    let cleaned: String =
        id.chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')).take(64).collect();
    if cleaned.is_empty() {
        "custom".into()
    } else {
        cleaned
    }
}

/// Shannon entropy in bits per byte.
pub fn shannon_entropy(s: &[u8]) -> f64 {
    if s.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &b in s {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// Sorts spans and merges overlapping ones (the first rule id wins).
fn merge(mut spans: Vec<Span>) -> Vec<Span> {
    spans.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
    let mut out: Vec<Span> = Vec::with_capacity(spans.len());
    for s in spans {
        match out.last_mut() {
            Some(last) if s.start < last.end => last.end = last.end.max(s.end),
            _ => out.push(s),
        }
    }
    out
}

/// Counts as WIT records, sorted by rule id.
pub fn counts_to_records(counts: &BTreeMap<String, u32>) -> Vec<RuleCount> {
    counts.iter().map(|(k, v)| RuleCount { rule_id: k.clone(), count: *v }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack_api::{Rule, RuleKind};

    fn rule(id: &str, regex: &str, kw: &[&str], group: u32) -> Rule {
        Rule {
            id: id.into(),
            description: String::new(),
            kind: RuleKind::Secret,
            regex: regex.into(),
            keywords: kw.iter().map(|s| s.to_string()).collect(),
            secret_group: group,
            entropy: None,
            window: 0,
            allow_regexes: vec![],
            stopwords: vec![],
            strict_only: false,
        }
    }

    fn set(rules: Vec<Rule>) -> RuleSet {
        RuleSet {
            rules,
            allow_regexes: vec![],
            stopwords: vec![],
            path_roots: vec!["/srv/acme".into()],
            budgets: vec![],
            lenient_tools: vec![],
        }
    }

    #[test]
    fn keyword_windows_find_secrets_and_merge() {
        let rs = Ruleset::compile(&set(vec![
            rule("aws", r"\b(AKIA[0-9A-Z]{16})\b", &["akia"], 1),
            rule("pw", r"(?i)password=(\S+)", &["password"], 1),
        ]))
        .unwrap();
        let text = "x AKIAIOSFODNN7EXAMPLE y PASSWORD=hunter22 /srv/acme/data";
        let spans = rs.scan(text, &[]);
        let ids: Vec<&str> = spans.iter().map(|s| s.rule.as_str()).collect();
        assert_eq!(ids, ["aws", "pw", TENANT_ROOT_RULE]);
        assert_eq!(&text[spans[1].start..spans[1].end], "hunter22");
    }

    #[test]
    fn anchored_forms() {
        let kw = |k: &[&str]| k.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let anchor = |re: &str, k: &[&str]| anchored_form(re, &kw(k)).0;
        assert_eq!(
            anchored_form(r"\b(ghp_[A-Za-z0-9]{36})\b", &kw(&["ghp_"])),
            (Anchor::Keyword(true), Some(r"\A(?:(ghp_[A-Za-z0-9]{36})\b)".into()))
        );
        assert_eq!(
            anchor(r"\b((?:ghp|gho)_[A-Za-z0-9]{36})\b", &["ghp_", "gho_"]),
            Anchor::Keyword(true),
            "expanded to ghp_ and gho_"
        );
        assert_eq!(anchor(r"\b((?:ghp|gho)_[A-Za-z0-9]{36})\b", &["ghp_"]), Anchor::Window, "gho_ is no keyword");
        assert_eq!(
            anchor(r"\b(NRAK-[A-Z]{3}|[a-f0-9]{36}NRAL)\b", &["nrak-", "nral"]),
            Anchor::Window,
            "one alternative has no literal"
        );
        assert_eq!(anchor(r"\b(NRAK-[A-Z]{3}|NRJS-[a-f]{3})\b", &["nrak-", "nrjs-"]), Anchor::Keyword(true));
        assert_eq!(anchor(r"(?i)password=(\S+)", &["password"]), Anchor::Keyword(false));
        assert_eq!(anchor(r"(?i)[A-Z_]*password=(\S+)", &["password"]), Anchor::Window);
        assert_eq!(anchor(r"\b(sk\.eyJ[A-Za-z0-9_\-]{50,})", &["sk.eyj"]), Anchor::Keyword(true));
        assert_eq!(anchor(r"\b(x+yz)", &["x"]), Anchor::Window);
        assert_eq!(anchor(r"\b(xox[abp]-[0-9]{10})", &["xoxa-", "xoxb-", "xoxp-"]), Anchor::Keyword(true));
        assert_eq!(anchor(r"\b(xox[a-p]-[0-9]{10})", &["xoxa-", "xoxb-"]), Anchor::Window, "ranges are not expanded");
        assert_eq!(anchor(r"(?i)api[_\-]?key=(\S+)", &["api_key", "api-key", "apikey"]), Anchor::Keyword(false));
        assert_eq!(anchor(r"(?i)api[_\-]?key=(\S+)", &["api_key", "api-key"]), Anchor::Window, "apikey is no keyword");
        assert_eq!(anchor(r"(?:/home|/Users)/(\w+)", &["/home/", "/users/"]), Anchor::Keyword(false));
        assert_eq!(anchor(r"abc|xyz", &["abc"]), Anchor::Window, "a top-level alternative without a keyword");
        assert_eq!(anchor(r"\babc|xyz", &["abc", "xyz"]), Anchor::Window, "\\b belongs to the first alternative only");
        assert_eq!(anchor(r"(?m)^\s*token:\s*(\S+)", &["token:"]), Anchor::LineStart);
        assert_eq!(anchor(r"(?m)^a|b", &["a", "b"]), Anchor::Window);
        assert_eq!(anchor(r"^\s*token:\s*(\S+)", &["token:"]), Anchor::Window, "^ without (?m) is the text start");
    }

    #[test]
    fn secret_splits() {
        let split = |a: &str, g| secret_split(a, g);
        let parts = |p: &str, g: &str| Some(Some((p.to_string(), g.to_string())));
        assert_eq!(split(r"\A(?:(ghp_[A-Za-z0-9]{36})\b)", 1), Some(None), "the group is the whole match");
        assert_eq!(split(r"\A(?:ghp_[a-z]+)", 0), Some(None));
        assert_eq!(
            split(r"(?i)\A(?:token\s*=\s*([^\s]{6,}))", 1),
            parts(r"(?i)\A(?:token\s*=\s*)", r"(?i)\A(?:[^\s]{6,})")
        );
        assert_eq!(split(r"\A(?:k(a)=(b)\b$)", 2), parts(r"\A(?:k(a)=)", r"\A(?:b)\b$"));
        assert_eq!(
            split(r"\A(?:k=[(](b))", 1),
            parts(r"\A(?:k=[(])", r"\A(?:b)"),
            "a parenthesis in a class is no group"
        );
        assert_eq!(split(r"\A(?:k=(\bb))", 1), None, "an assertion inside the group");
        assert_eq!(split(r"\A(?:k=([^$]b))", 1), parts(r"\A(?:k=)", r"\A(?:[^$]b)"), "no assertion in a class");
        assert_eq!(split(r"\A(?:k=(b)+)", 1), None, "a repeated group");
        assert_eq!(split(r"\A(?:k=(b)c)", 1), None, "the group is not last");
        assert_eq!(split(r"\A(?:(?i)k=(b))", 1), None, "flags inside");
        assert_eq!(split(r"\A(?:k=(?P<v>b))", 1), None, "not a plain group");
    }

    /// `text`'s spans on both engines: as it is (regex-lite) and followed
    /// by a filler that makes it long enough for the `regex` crate.
    fn both_engines(rs: &Ruleset, text: &str) -> (Vec<(usize, usize)>, Vec<(usize, usize)>) {
        let long = format!("{text}\n{}", ".".repeat(FAST_MIN_TEXT));
        let lite = rs.scan(text, &[]).iter().map(|s| (s.start, s.end)).collect();
        let fast = rs.scan(&long, &[]).iter().map(|s| (s.start, s.end)).collect();
        (lite, fast)
    }

    #[test]
    fn split_tries_find_what_capture_groups_find() {
        // P's own preferred match is not always the one the whole regex
        // takes: `"abcde` needs the quote in the secret to reach 6 bytes.
        let re = r#"(?i)token["']?\s*[:=]\s*["']?([^\s]{6,})"#;
        let rs = Ruleset::compile(&set(vec![rule("t", re, &["token"], 1)])).unwrap();
        let full = Regex::new(re).unwrap();
        for text in [
            "token: \"abcde",
            "token: \"abcdef\" x",
            "TOKEN='abcdefgh'",
            "token = ab token=abcdefghij",
            "token:\n  abcdefgh",
            "token:=:=abcdefgh",
        ] {
            let want: Vec<(usize, usize)> =
                full.captures_iter(text.as_bytes()).filter_map(|c| c.get(1)).map(|g| (g.start(), g.end())).collect();
            let (lite, fast) = both_engines(&rs, text);
            assert_eq!(fast, want, "{text:?}");
            assert_eq!(lite, want, "{text:?}");
        }
        assert!(matches!(
            rs.regexes(&rs.rules[0]),
            Some(Compiled { anchored: true, split: Some(Split::Parts(..)), .. })
        ));
    }

    #[test]
    fn engines_agree_on_ascii_text() {
        let rs = Ruleset::compile(&set(vec![
            rule("gh", r"\b(ghp_[A-Za-z0-9]{8})\b", &["ghp_"], 1),
            rule("env", r#"(?i)(?:password|token)["']?\s*[:=]\s*["']?([^\s"',;]{6,20})"#, &["password", "token"], 1),
            rule("ini", r"(?im)^\s*[a-z_]*secret\s*=\s*(\S{6,})\s*$", &["secret"], 1),
            rule("url", r"[a-z]+://[^\s:/@]+:([^\s/@]+)@", &["://"], 1),
            rule("ctx", r"(?i)\[api\][\s\S]{0,60}?key\s*=\s*([A-Za-z0-9]{8})\b", &["[api]"], 1),
        ]))
        .unwrap();
        let texts = [
            "TOKEN=ghp_abcd1234 and ghp_abcd1234 again",
            "x password: 'hunter2hunter' y; token=ab",
            "[db]\n  MY_SECRET = s3cr3tvalue\nsecret=short\n",
            "db at postgres://app:pa55word@db:5432/x and https://u:p@h",
            "[api]\nname = x\nKEY = abcdEFGH\n",
            "password=ghp_abcd1234,token=\"zzzzzzzz\"",
        ];
        for text in texts {
            let (lite, fast) = both_engines(&rs, text);
            assert!(!lite.is_empty(), "{text:?}");
            assert_eq!(fast, lite, "{text:?}");
        }
        // Each engine's regexes compiled, so both ran.
        assert!(rs.rules.iter().all(|r| r.lite.get().is_some() && r.compiled.get().is_some()));
    }

    #[test]
    fn non_ascii_text_runs_on_regex_lite() {
        // Counts are characters, long text or not: the `regex` crate runs
        // only on ASCII text, where bytes are characters.
        let rs = Ruleset::compile(&set(vec![rule("pw", r"pw=([^\s]{1,3})", &["pw="], 1)])).unwrap();
        let text = "pw=éééé end";
        let long = format!("{text}\n{}", ".".repeat(FAST_MIN_TEXT));
        for t in [text, long.as_str()] {
            let spans = rs.scan(t, &[]);
            assert_eq!(spans.iter().map(|s| &t[s.start..s.end]).collect::<Vec<_>>(), ["ééé"]);
        }
        assert!(rs.rules[0].compiled.get().is_none(), "the regex crate never ran");
        // A non-ASCII character in a class, for the `regex` crate: compiled
        // with Unicode on.
        assert!(compile_regex("x", r"pw=([^é\s]+)").is_ok());
        assert!(byte_regex(r"pw=([^é\s]+)", false).is_err());
    }

    #[test]
    fn line_start_rules_find_what_a_search_finds() {
        let rs =
            Ruleset::compile(&set(vec![rule("ini", r"(?im)^\s*[a-z_]*password\s*=\s*(\S{6,})\s*$", &["password"], 1)]))
                .unwrap();
        let text = "[db]\nhost = x\n  DB_PASSWORD = hunter2hunter\nx password = nope nope\npassword=abcdefgh\n";
        let found: Vec<&str> = rs.scan(text, &[]).iter().map(|s| &text[s.start..s.end]).collect();
        assert_eq!(found, ["hunter2hunter", "abcdefgh"]);
    }

    #[test]
    fn bad_regex_names_the_rule() {
        let err = Ruleset::compile(&set(vec![rule("broken", "(", &["x"], 0)])).unwrap().compile_all().err().unwrap();
        assert!(err.contains("broken"), "{err}");
        // The `regex` crate takes `\p{L}`; the rule format does not.
        let err = Ruleset::compile(&set(vec![rule("unicode", r"x(\p{L}+)", &["x"], 1)]))
            .unwrap()
            .compile_all()
            .err()
            .unwrap();
        assert!(err.contains("unicode") && err.contains("not regex-lite syntax"), "{err}");
    }

    #[test]
    fn custom_findings_are_checked() {
        let rs = Ruleset::compile(&set(vec![])).unwrap();
        let text = "héllo";
        let f = |s, e| Finding { rule_id: "c".into(), start: s, end: e };
        assert!(rs.scan(text, &[f(0, 100), f(2, 3), f(3, 3)]).is_empty());
        assert_eq!(rs.scan(text, &[f(0, 3)]).len(), 1);
    }
}

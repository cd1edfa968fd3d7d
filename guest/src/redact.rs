//! Secret and path redaction.
//!
//! # Algorithm
//!
//! 1. One Aho-Corasick pass (ASCII case-insensitive, overlapping) over the
//!    text finds every keyword of every rule: O(n + hits). The automaton is
//!    a contiguous NFA; texts of [`DFA_MIN_TEXT`] bytes and more use a DFA
//!    of the same keywords, built once per instance (about twice as fast,
//!    ~0.4 MiB larger).
//! 2. Each rule with a hit runs its regex-lite regex where its matches can
//!    start ([`Anchor`], worked out from the regex on the rule's first hit):
//!    - *at a keyword hit*, when the regex's leading literals (expanded
//!      over small classes, optional characters and alternatives) each
//!      begin with one of its keywords: one anchored try per hit, which
//!      stops as soon as the regex cannot match;
//!    - *at a line start*, for `(?m)^` regexes: one anchored try per line
//!      start inside the windows around the hits;
//!    - otherwise *in windows* `window` bytes after and at most
//!      [`WINDOW_BEFORE`] bytes before each hit, merged, clipped to the
//!      hit's line unless the regex can span lines. regex-lite searches at
//!      roughly 60 MB/s natively, so running 150 rules over the whole text
//!      is never done; rules without keywords are the exception and are
//!      refused by the pack builder.
//! 3. A candidate is kept when its secret group clears the rule's entropy
//!    threshold and matches no allowlist (rule and global) and no stopword.
//! 4. Tenant path roots are literals: one more Aho-Corasick automaton.
//! 5. Every other occurrence of a value found is redacted too (one more
//!    pass, over the values' prefixes), and base64, `%XX` and `\u` encoded
//!    spans whose decoding holds a secret ([`crate::decode`]).
//! 6. Overlapping spans are merged so that no fragment of a secret
//!    survives; each span becomes `[REDACTED:<rule-id>]`.
//!
//! The replacement keeps nothing of the secret, not even its length.
//! Regexes, allowlists and anchor plans are built on a rule's first hit:
//! most rules never hit in a given instance, and a pack has hundreds.

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex_lite::Regex;

use crate::api::RuleCount;
use crate::edits::Edit;
use crate::pack_api::{Finding, RuleSet};
use crate::text::{ceil_boundary, floor_boundary};

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
/// Marker prefix of a replacement; never itself treated as a secret.
pub const REDACTED_PREFIX: &str = "[REDACTED:";

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
    compiled: OnceLock<Option<(Regex, Option<Regex>)>>,
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
}

impl Lazy {
    fn new(what: String, src: &[String]) -> Self {
        Self { what, src: src.to_vec(), compiled: OnceLock::new() }
    }

    fn get(&self) -> Result<&[Regex], String> {
        self.compiled
            .get_or_init(|| self.src.iter().map(|a| compile_regex(&self.what, a)).collect())
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
    global_stop: Option<AhoCorasick>,
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

/// Rule id reported for tenant path roots.
pub const TENANT_ROOT_RULE: &str = "tenant-path-root";

fn compile_regex(what: &str, src: &str) -> Result<Regex, String> {
    Regex::new(src).map_err(|e| format!("{what}: regex does not compile: {e}"))
}

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

/// Whether `s` has a `|` outside any group or class.
fn top_level_bar(s: &str) -> bool {
    split_alternatives(s.as_bytes()).0.len() > 1
}

/// The alternatives of `b` split at its top-level `|`, up to the `)` that
/// closes the group `b` is the inside of (its index) or to the end.
fn split_alternatives(b: &[u8]) -> (Vec<&[u8]>, Option<usize>) {
    let (mut depth, mut class, mut esc) = (0usize, false, false);
    let mut alts = Vec::new();
    let mut last = 0;
    for (i, &c) in b.iter().enumerate() {
        if esc {
            esc = false;
            continue;
        }
        match c {
            b'\\' => esc = true,
            b'[' if !class => class = true,
            b']' if class => class = false,
            b'(' if !class => depth += 1,
            b')' if !class && depth > 0 => depth -= 1,
            b')' if !class => {
                alts.push(&b[last..i]);
                return (alts, Some(i));
            }
            b'|' if !class && depth == 0 => {
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
    let (flags, rest) = match src.strip_prefix("(?") {
        Some(r) if r.find(')').is_some_and(|i| r[..i].chars().all(|c| c.is_ascii_alphabetic())) => {
            let i = r.find(')').expect("checked");
            (&src[..i + 3], &r[i + 1..])
        }
        _ => ("", src),
    };
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
            Some(keyword_automaton(&patterns, aho_corasick::AhoCorasickKind::ContiguousNFA).map_err(|e| format!("keywords: {e}"))?)
        };
        let global_allow = Lazy::new("global allowlist".into(), &set.allow_regexes);
        let global_stop = literal_automaton(&set.stopwords, true, MatchKind::Standard, "global stopwords")?;
        let roots = literal_automaton(&set.path_roots, false, MatchKind::LeftmostLongest, "path roots")?;
        Ok(Self { rules, keywords, keywords_dfa: OnceLock::new(), patterns, keyword_rules, unanchored, global_allow, global_stop, roots, error: Mutex::new(None) })
    }

    /// Compiles every rule's regex now (pack builds and checks); the
    /// pipeline otherwise compiles each on first use.
    pub fn compile_all(&self) -> Result<(), String> {
        for l in self.rules.iter().map(|r| &r.allow).chain([&self.global_allow]) {
            l.get()?;
        }
        for r in &self.rules {
            self.regexes(r);
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

    fn regexes<'r>(&self, rule: &'r CompiledRule) -> Option<&'r (Regex, Option<Regex>)> {
        rule.compiled
            .get_or_init(|| {
                let what = format!("rule `{}`", rule.id);
                let built = compile_regex(&what, &rule.src).and_then(|re| {
                    if rule.secret_group >= re.captures_len() {
                        return Err(format!("{what}: secret-group {} does not exist", rule.secret_group));
                    }
                    let anchored = self.plan(rule).1.as_deref().map(|a| compile_regex(&what, a)).transpose()?;
                    Ok((re, anchored))
                });
                built.map_err(|e| self.record_error(e)).ok()
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
            let mut mapped: Vec<Span> = spans
                .into_iter()
                .map(|s| Span { start: back[s.start], end: back[s.end], rule: s.rule })
                .collect();
            // Custom findings are offsets into the original text.
            mapped.extend(custom_spans(text, custom));
            return merge(mapped);
        }
        self.scan_visible(text, custom, lenient)
    }

    fn scan_visible(&self, text: &str, custom: &[Finding], lenient: bool) -> Vec<Span> {
        let mut spans = self.scan_plain(text, custom, lenient);
        spans.extend(crate::decode::encoded_secrets(text, |decoded| {
            self.scan_plain(decoded, &[], lenient).into_iter().next().map(|s| s.rule)
        }));
        merge(spans)
    }

    fn scan_plain(&self, text: &str, custom: &[Finding], lenient: bool) -> Vec<Span> {
        let mut spans = Vec::new();
        // Per rule: keyword hit starts (keyword-anchored rules) or merged
        // windows (the others), in text order.
        let mut found: Vec<Vec<(usize, usize)>> = vec![Vec::new(); self.rules.len()];
        let ac = if text.len() >= DFA_MIN_TEXT {
            self.keywords_dfa
                .get_or_init(|| keyword_automaton(&self.patterns, aho_corasick::AhoCorasickKind::DFA).ok())
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
            let before = spans.len();
            match self.plan(rule).0 {
                Anchor::Keyword(_) => {
                    for &(h, _) in list {
                        self.try_at(text, rule, h, &mut spans);
                    }
                }
                Anchor::LineStart => {
                    // Past the end of the last match, as a search would go on.
                    let mut done = 0;
                    for &(ws, we) in list {
                        for ls in line_starts(text.as_bytes(), ws, we) {
                            if ls >= done {
                                if let Some(end) = self.try_at(text, rule, ls, &mut spans) {
                                    done = end;
                                }
                            }
                        }
                    }
                }
                Anchor::Window => {
                    for &(ws, we) in list {
                        self.scan_window(text, rule, ws, we, &mut spans);
                    }
                }
            }
            if rule.propagate {
                for s in &spans[before..] {
                    propagate.push((text[s.start..s.end].to_string(), s.rule.clone()));
                }
            }
        }
        if let Some(roots) = &self.roots {
            for m in roots.find_iter(text) {
                spans.push(Span { start: m.start(), end: m.end(), rule: TENANT_ROOT_RULE.into() });
            }
        }
        for s in custom_spans(text, custom) {
            propagate.push((text[s.start..s.end].to_string(), s.rule.clone()));
            spans.push(s);
        }
        propagate_values(text, &propagate, &mut spans);
        merge(spans)
    }

    fn scan_window(&self, text: &str, rule: &CompiledRule, ws: usize, we: usize, out: &mut Vec<Span>) {
        let Some((regex, _)) = self.regexes(rule) else { return };
        let window = &text[..we];
        let mut pos = ws;
        while pos <= window.len() {
            let mut hay = window;
            // Locate with `find_at` (no capture bookkeeping), then take the
            // groups of that one match only.
            let Some(found) = regex.find_at(hay, pos) else { break };
            let Some(mut caps) = regex.captures_at(&hay[..found.end()], found.start()) else { break };
            if caps.get(0).expect("group 0").end() == found.end() && found.end() == hay.len() {
                // Let the widening below see the real end of the haystack.
                if let Some(c) = regex.captures_at(hay, found.start()) {
                    caps = c;
                }
            }
            // A match that runs into the window's end may be cut short by it
            // (a long token, a PEM block): widen the window and match again.
            // (A window that ends at a line end cannot cut a single-line match.)
            let line_end = text.as_bytes().get(hay.len()) == Some(&b'\n') && !rule.multiline;
            while !line_end && caps.get(0).expect("group 0").end() == hay.len() && hay.len() < text.len() {
                let grow = (hay.len() - ws).max(rule.window) * 2;
                let wider = ceil_boundary(text, (hay.len() + grow).min(text.len()));
                hay = &text[..wider];
                match regex.captures_at(hay, pos) {
                    Some(c) => caps = c,
                    None => break,
                }
            }
            let whole = caps.get(0).expect("group 0");
            if let Some(g) = caps.get(rule.secret_group) {
                if g.start() < g.end() && self.accept(rule, g.as_str()) {
                    out.push(Span { start: g.start(), end: g.end(), rule: rule.id.clone() });
                }
            }
            pos = if whole.end() > whole.start() {
                whole.end()
            } else {
                match hay[whole.end()..].chars().next() {
                    Some(c) => whole.end() + c.len_utf8(),
                    None => break,
                }
            };
        }
    }

    /// Tries an anchored rule at `h` (a keyword hit or a line start);
    /// returns where its match ended, if it matched.
    fn try_at(&self, text: &str, rule: &CompiledRule, h: usize, out: &mut Vec<Span>) -> Option<usize> {
        let b = text.as_bytes();
        let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        if self.plan(rule).0 == Anchor::Keyword(true) && h > 0 && word(b[h - 1]) == word(b[h]) {
            return None;
        }
        let Some((_, Some(re))) = self.regexes(rule) else { return None };
        // Anchored: the regex stops where the match stops, so a generous
        // slice costs nothing.
        let mut end = ceil_boundary(text, (h + rule.window.max(4096)).min(text.len()));
        loop {
            let caps = re.captures(&text[h..end])?;
            let whole = caps.get(0).expect("group 0");
            // Cut by the end of the slice: look further and try again.
            if h + whole.end() == end && end < text.len() {
                end = ceil_boundary(text, (end + (end - h) * 2).min(text.len()));
                continue;
            }
            if let Some(g) = caps.get(rule.secret_group) {
                if g.start() < g.end() && self.accept(rule, g.as_str()) {
                    out.push(Span { start: h + g.start(), end: h + g.end(), rule: rule.id.clone() });
                }
            }
            return Some(h + whole.end());
        }
    }

    fn accept(&self, rule: &CompiledRule, secret: &str) -> bool {
        if secret.contains(REDACTED_PREFIX) {
            return false;
        }
        if let Some(min) = rule.entropy {
            if shannon_entropy(secret.as_bytes()) < f64::from(min) {
                return false;
            }
        }
        if self.global_stop.as_ref().is_some_and(|ac| ac.is_match(secret)) {
            return false;
        }
        if !rule.stopwords.is_empty() {
            let lower = secret.to_ascii_lowercase();
            if rule.stopwords.iter().any(|w| lower.contains(w.as_str())) {
                return false;
            }
        }
        let allow = |l: &Lazy| match l.get() {
            Ok(list) => list.iter().any(|a| a.is_match(secret)),
            Err(e) => {
                self.record_error(e);
                false
            }
        };
        !allow(&rule.allow) && !allow(&self.global_allow)
    }
}

/// The line starts in `b[from..to]`.
fn line_starts(b: &[u8], from: usize, to: usize) -> impl Iterator<Item = usize> + '_ {
    let first = (from == 0 || b[from - 1] == b'\n').then_some(from);
    first.into_iter().chain(memchr::memchr_iter(b'\n', &b[from..to]).map(move |p| from + p + 1).filter(move |&ls| ls < to))
}

/// The keyword automaton: ASCII case-insensitive, overlapping matches.
fn keyword_automaton(patterns: &[String], kind: aho_corasick::AhoCorasickKind) -> Result<AhoCorasick, aho_corasick::BuildError> {
    AhoCorasickBuilder::new().ascii_case_insensitive(true).match_kind(MatchKind::Standard).kind(Some(kind)).build(patterns)
}

/// An automaton over the non-empty `words`, or `None` when there are none.
fn literal_automaton(words: &[String], nocase: bool, kind: MatchKind, what: &str) -> Result<Option<AhoCorasick>, String> {
    let words: Vec<&str> = words.iter().map(String::as_str).filter(|w| !w.is_empty()).collect();
    if words.is_empty() {
        return Ok(None);
    }
    AhoCorasickBuilder::new()
        .ascii_case_insensitive(nocase)
        .match_kind(kind)
        .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
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
            (s < e && e <= text.len() && text.is_char_boundary(s) && text.is_char_boundary(e))
                .then(|| Span { start: s, end: e, rule: sanitize_rule_id(&f.rule_id) })
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

/// Bytes of a found value the propagation automaton is built from.
const PROPAGATE_PREFIX: usize = 12;

/// Every other occurrence of a value already found to be a secret is a
/// secret too: a token caught in `TOKEN=...` is also caught where the same
/// text prints it bare (a stack trace, a CSV cell). Values under 8 bytes
/// are not propagated (too likely to be ordinary words).
///
/// One overlapping Aho-Corasick pass over the text finds the first
/// [`PROPAGATE_PREFIX`] bytes of every value; each hit is then compared
/// with the whole values sharing that prefix (the longest that matches
/// wins). Building the automaton from short prefixes instead of whole
/// values keeps its cost low when a dense text yields thousands of values.
fn propagate_values(text: &str, found: &[(String, String)], spans: &mut Vec<Span>) {
    let mut values: Vec<&(String, String)> = found.iter().filter(|(v, _)| v.len() >= 8).collect();
    if values.is_empty() {
        return;
    }
    // Longest first within a prefix, so the first value that matches wins.
    values.sort_by(|a, b| a.0.as_bytes()[..PROPAGATE_PREFIX.min(a.0.len())].cmp(&b.0.as_bytes()[..PROPAGATE_PREFIX.min(b.0.len())]).then(b.0.len().cmp(&a.0.len())).then(a.cmp(b)));
    values.dedup_by(|a, b| a.0 == b.0);
    let prefix = |v: &str| -> String {
        let mut n = PROPAGATE_PREFIX.min(v.len());
        while !v.is_char_boundary(n) {
            n -= 1;
        }
        v[..n].to_string()
    };
    // prefix → the range of `values` that share it
    let mut prefixes: Vec<(String, std::ops::Range<usize>)> = Vec::new();
    for (i, (v, _)) in values.iter().enumerate() {
        let p = prefix(v);
        match prefixes.last_mut() {
            Some((last, r)) if *last == p => r.end = i + 1,
            _ => prefixes.push((p, i..i + 1)),
        }
    }
    let Ok(ac) = AhoCorasickBuilder::new()
        .match_kind(MatchKind::Standard)
        .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
        .build(prefixes.iter().map(|(p, _)| p.as_str()))
    else {
        return;
    };
    for m in ac.find_overlapping_iter(text) {
        let rest = &text.as_bytes()[m.start()..];
        let range = prefixes[m.pattern().as_usize()].1.clone();
        if let Some((v, rule)) = values[range].iter().map(|e| (&e.0, &e.1)).find(|(v, _)| rest.starts_with(v.as_bytes())) {
            spans.push(Span { start: m.start(), end: m.start() + v.len(), rule: rule.clone() });
        }
    }
}

/// Keeps a rule id from pack code printable and short.
fn sanitize_rule_id(id: &str) -> String {
    let cleaned: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(64)
        .collect();
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

/// Replacement edits for `spans`, with counts by rule id added to `counts`.
pub fn to_edits(spans: &[Span], counts: &mut BTreeMap<String, u32>) -> Vec<Edit> {
    spans
        .iter()
        .map(|s| {
            *counts.entry(s.rule.clone()).or_default() += 1;
            Edit { start: s.start, end: s.end, with: format!("{REDACTED_PREFIX}{}]", s.rule) }
        })
        .collect()
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
        RuleSet { rules, allow_regexes: vec![], stopwords: vec![], path_roots: vec!["/srv/acme".into()], budgets: vec![], lenient_tools: vec![] }
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
        assert_eq!(anchored_form(r"\b(ghp_[A-Za-z0-9]{36})\b", &kw(&["ghp_"])), (Anchor::Keyword(true), Some(r"\A(?:(ghp_[A-Za-z0-9]{36})\b)".into())));
        assert_eq!(anchor(r"\b((?:ghp|gho)_[A-Za-z0-9]{36})\b", &["ghp_", "gho_"]), Anchor::Keyword(true), "expanded to ghp_ and gho_");
        assert_eq!(anchor(r"\b((?:ghp|gho)_[A-Za-z0-9]{36})\b", &["ghp_"]), Anchor::Window, "gho_ is no keyword");
        assert_eq!(anchor(r"\b(NRAK-[A-Z]{3}|[a-f0-9]{36}NRAL)\b", &["nrak-", "nral"]), Anchor::Window, "one alternative has no literal");
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
    fn line_start_rules_find_what_a_search_finds() {
        let rs = Ruleset::compile(&set(vec![rule("ini", r"(?im)^\s*[a-z_]*password\s*=\s*(\S{6,})\s*$", &["password"], 1)])).unwrap();
        let text = "[db]\nhost = x\n  DB_PASSWORD = hunter2hunter\nx password = nope nope\npassword=abcdefgh\n";
        let found: Vec<&str> = rs.scan(text, &[]).iter().map(|s| &text[s.start..s.end]).collect();
        assert_eq!(found, ["hunter2hunter", "abcdefgh"]);
    }

    #[test]
    fn bad_regex_names_the_rule() {
        let err = Ruleset::compile(&set(vec![rule("broken", "(", &["x"], 0)])).unwrap().compile_all().err().unwrap();
        assert!(err.contains("broken"), "{err}");
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

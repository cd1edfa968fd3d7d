//! Scanning: the keyword pass, windows around its hits, anchored tries
//! at keyword hits and line starts, custom findings (over the view of a
//! text without its invisible characters, [`super::invisible`]).

use std::ops::Range;

use regex::bytes::{CaptureLocations, Regex};

use super::analysis::Anchor;
use super::invisible::visible_view;
use super::keywords::{HitsMemo, DFA_MIN_TEXT};
use super::propagate::propagate_values;
use crate::support::regions::{self, Gated};

use super::rules::{Compiled, CompiledRule, Engine, Ruleset, Split, FAST_MIN_TEXT};
use super::spans::{merge, Found, NonAscii, Span};
use super::{Mode, ALLOW_MARKER};
use crate::pack_api::Finding;
use crate::support::text::{ceil_boundary, floor_boundary};

/// Window before a keyword hit: a match starts at most this far before its
/// keyword (a variable name's prefix, a URL scheme, a hex body before a
/// suffix keyword). Small, so that sporadic hits scan little text.
pub const WINDOW_BEFORE: usize = 128;
/// Rule id reported for tenant path roots.
pub const TENANT_ROOT_RULE: &str = "tenant-path-root";

impl Ruleset {
    /// `scan_mode` in strict mode (the tests' shorthand).
    #[cfg(test)]
    pub fn scan(&self, text: &str, custom: &[Finding]) -> Vec<Span> {
        self.scan_mode(text, custom, Mode::default())
    }

    /// Every span to redact in `text`, merged and sorted: rule matches,
    /// custom findings, other occurrences of found values, and encoded
    /// spans (base64, percent, `\u` escapes) whose decoded text holds a
    /// secret; strict-only rules are skipped in lenient mode, and kept to
    /// string literals in code.
    ///
    /// Invisible format characters (zero-width spaces and joiners, soft
    /// hyphens, bidi controls) are ignored for matching: a secret with a
    /// U+200B inside is still one secret. The scan then runs on a view
    /// without them and the spans are mapped back, covering the hidden
    /// characters too.
    ///
    /// In JSON text, a span never splits a backslash escape (see
    /// [`whole_escapes`]).
    pub fn scan_mode(&self, text: &str, custom: &[Finding], mode: Mode) -> Vec<Span> {
        self.scan_mode_with(text, custom, mode, None, None).0
    }

    /// [`Self::scan_mode`], its keyword pass through `memo` ([`HitsMemo`]).
    pub fn scan_mode_memo(&self, text: &str, custom: &[Finding], mode: Mode, memo: Option<&HitsMemo>) -> Vec<Span> {
        self.scan_mode_with(text, custom, mode, None, memo).0
    }

    /// [`Self::scan_mode`], and where the error words of
    /// [`crate::support::error_words`] occur in `text`, found by the same
    /// keyword pass (in no particular order); `None` for a text with
    /// invisible characters, whose pass runs on a view without them.
    pub fn scan_mode_errors(
        &self,
        text: &str,
        custom: &[Finding],
        mode: Mode,
        memo: Option<&HitsMemo>,
    ) -> (Vec<Span>, Option<Vec<Range<usize>>>) {
        let mut errors = Vec::new();
        let (spans, found) = self.scan_mode_with(text, custom, mode, Some(&mut errors), memo);
        (spans, found.then_some(errors))
    }

    /// The spans, and whether `errors` was filled.
    fn scan_mode_with(
        &self,
        text: &str,
        custom: &[Finding],
        mode: Mode,
        errors: Option<&mut Vec<Range<usize>>>,
        memo: Option<&HitsMemo>,
    ) -> (Vec<Span>, bool) {
        let (mut spans, found) = self.scan_any(text, custom, mode, errors, memo);
        if mode.json {
            spans = whole_escapes(text, spans);
        }
        if mode.inline_allow {
            allow_marked_lines(text, &mut spans);
        }
        (spans, found)
    }

    fn scan_any(
        &self,
        text: &str,
        custom: &[Finding],
        mode: Mode,
        errors: Option<&mut Vec<Range<usize>>>,
        memo: Option<&HitsMemo>,
    ) -> (Vec<Span>, bool) {
        // A `cat -n` / `nl` listing is scanned without its line numbers,
        // so a rule that reads across lines (a `.netrc` entry, a key
        // block) reads the file as written; its lines are judged as the
        // sniffed file is (code, a test's code, or text). The text's shape
        // is read once, for the listing's view and the regions.
        let gated = (mode.regions && !mode.code).then(|| regions::shape(text));
        if let Some(gated) = gated {
            if let Some((view, back, class)) = regions::listing_view_gated(text, gated) {
                let test = class == regions::RegionClass::Test;
                let code = test || class == regions::RegionClass::Code;
                let inner = Mode { regions: false, code, ..mode }.over_tests(test);
                let (spans, _) = self.scan_any(&view, &[], inner, None, memo);
                let mut mapped: Vec<Span> = spans
                    .into_iter()
                    .map(|s| Span { start: back[s.start], end: back[s.end], rule: s.rule, from: back[s.from] })
                    .collect();
                mapped.extend(custom_spans(text, custom));
                return (merge(mapped), false);
            }
        }
        if let Some((view, back)) = visible_view(text) {
            let spans = self.scan_visible(&view, &[], mode, None, memo, None);
            let mut mapped: Vec<Span> = spans
                .into_iter()
                .map(|s| Span { start: back[s.start], end: back[s.end], rule: s.rule, from: back[s.from] })
                .collect();
            // Custom findings are offsets into the original text.
            mapped.extend(custom_spans(text, custom));
            return (merge(mapped), false);
        }
        let found = errors.is_some();
        (self.scan_visible(text, custom, mode, errors, memo, gated), found)
    }

    pub(super) fn scan_visible(
        &self,
        text: &str,
        custom: &[Finding],
        mode: Mode,
        errors: Option<&mut Vec<Range<usize>>>,
        memo: Option<&HitsMemo>,
        gated: Option<Gated>,
    ) -> Vec<Span> {
        let mut spans = self.scan_plain_with(text, custom, mode, errors, memo, gated);
        // Personal data the rules cannot validate (checksums, number
        // plans), with PII on and in error results.
        spans.extend(super::pii::find(text, mode));
        // Source code is scanned as written: its `\u` escapes and base64
        // blobs are its own test data (a decoded `\uD7FF` URL is not a
        // password someone printed).
        if !mode.code {
            spans.extend(crate::stages::redact::encoded::encoded_secrets(text, |decoded| {
                self.scan_plain(decoded, &[], Mode { regions: false, opaque_redactions: false, ..mode })
                    .into_iter()
                    .next()
                    .map(|s| s.rule)
            }));
        }
        merge(spans)
    }

    pub(super) fn scan_plain(&self, text: &str, custom: &[Finding], mode: Mode) -> Vec<Span> {
        self.scan_plain_with(text, custom, mode, None, None, None)
    }

    /// [`Self::scan_plain`], also pushing to `errors` where the error
    /// words of [`crate::support::error_words`] occur (same pass).
    fn scan_plain_with(
        &self,
        text: &str,
        custom: &[Finding],
        mode: Mode,
        mut errors: Option<&mut Vec<Range<usize>>>,
        memo: Option<&HitsMemo>,
        gated: Option<Gated>,
    ) -> Vec<Span> {
        let fast = text.len() >= FAST_MIN_TEXT;
        let non_ascii = if fast { NonAscii::of(text) } else { None };
        let gated = || gated.unwrap_or_else(|| regions::shape(text));
        let regions = (mode.regions && !mode.code).then(|| regions::detect_gated(text, gated())).flatten();
        // A short ASCII text runs the rules an earlier long text compiled
        // for the `regex` crate on it too: they cost no more memory now.
        let ascii = !fast && text.is_ascii();
        let mut out = Found { fast, ascii, non_ascii, code: mode.code, test: mode.test, regions, ..Found::default() };
        // Per rule with any: keyword hit starts (keyword-anchored rules)
        // or merged windows (the others), in text order, in `lists` with
        // the rule's index; `slot` is each rule's place there (`u32::MAX`:
        // none), made on the first hit of a rule that applies. Most short texts
        // (a decoded candidate, a JSON string) have none, and the others
        // meet a few of the pack's hundreds of rules: an empty list per
        // rule, made per text, was a tenth of a URL-heavy log's scan.
        let mut lists: Vec<(usize, Vec<(usize, usize)>)> = Vec::new();
        let mut slot: Vec<u32> = Vec::new();
        let n_rules = self.rules.len();
        let mut list_of = |ri: usize, lists: &mut Vec<(usize, Vec<(usize, usize)>)>| -> usize {
            if slot.is_empty() {
                slot = vec![u32::MAX; n_rules];
            }
            if slot[ri] == u32::MAX {
                slot[ri] = lists.len() as u32;
                lists.push((ri, Vec::new()));
            }
            slot[ri] as usize
        };
        let hits = match memo {
            Some(memo) => Box::new(self.keywords.hits_memo(text, memo).into_iter()),
            None if text.len() >= DFA_MIN_TEXT => self.keywords.hits_long(text),
            None => self.keywords.hits(text),
        };
        // A keyword hit inside a redaction's marker read as opaque starts no rule.
        let markup = if mode.opaque_redactions { crate::markup::lexicon::redactions(text) } else { Vec::new() };
        for m in hits {
            let pid = m.pattern().as_usize();
            if let (true, Some(e)) = (self.error_word[pid], errors.as_deref_mut()) {
                e.push(m.range());
            }
            if !markup.is_empty() && crate::markup::lexicon::holds(&markup, m.start(), m.end()) {
                continue;
            }
            for &ri in &self.keyword_rules[pid] {
                let rule = &self.rules[ri];
                // Rules this mode leaves out get no windows: in a tool's
                // output the keywords of the errors-only rules (`user`,
                // `fc`) can hit on every line.
                if !applies(rule, mode) {
                    continue;
                }
                let li = list_of(ri, &mut lists);
                let list = &mut lists[li].1;
                if let Anchor::Keyword(_) = self.plan(rule).anchor {
                    if list.last() != Some(&(m.start(), m.start())) {
                        list.push((m.start(), m.start()));
                    }
                    continue;
                }
                let w = rule.window;
                let mut s = m.start().saturating_sub(w.min(WINDOW_BEFORE));
                let mut e = m.end().saturating_add(w).min(text.len());
                let multiline = self.plan(rule).multiline;
                let b = text.as_bytes();
                // The last window already holds this hit's (a second
                // keyword on a line): nothing to add. A single-line
                // rule's window never leaves its line, so a window that
                // is a whole line holds any hit on it.
                if let Some(&(ls, le)) = list.last() {
                    let whole_line = (ls == 0 || b[ls - 1] == b'\n') && (le == b.len() || b[le] == b'\n');
                    if (ls <= s && e <= le) || (!multiline && whole_line && ls <= m.start() && m.end() <= le) {
                        continue;
                    }
                }
                if !multiline {
                    // Single-line rules: only the hit's line, so dense
                    // text does not merge into one text-wide window.
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
        for &ri in self.unanchored.iter().filter(|ri| applies(&self.rules[**ri], mode)) {
            let li = list_of(ri, &mut lists);
            lists[li].1 = vec![(0, text.len())];
        }
        // In rule order, as the rules are listed.
        lists.sort_unstable_by_key(|l| l.0);
        let mut propagate: Vec<(String, String)> = Vec::new();
        // Keyword-anchored rules first, then the others (the order decides
        // which rule id names a span two rules found).
        let keyword_anchored = |ri: usize| matches!(self.plan(&self.rules[ri]).anchor, Anchor::Keyword(_));
        let order =
            lists.iter().filter(|l| keyword_anchored(l.0)).chain(lists.iter().filter(|l| !keyword_anchored(l.0)));
        for (ri, list) in order {
            let rule = &self.rules[*ri];
            let before = out.spans.len();
            // Capture slots, made on the first try and reused by the others.
            let mut slots = None;
            match self.plan(rule).anchor {
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
                    // A generic rule's value was judged by its key; where
                    // it stands alone nothing vouches for it, so a value of
                    // letters alone or of words is not sought there:
                    // `plataformatec` after `"token" =>` is no reason to cut
                    // `blog.plataformatec.com.br` elsewhere. A password
                    // such as `k8Fz2Lq9wX` or `Tr0ub4dor&3x` is (a `set -x`
                    // trace, `docker inspect`'s `Args` print it again).
                    let value = &text[s.start..s.end];
                    if !(rule.strict_only && super::value::letters_or_words(value)) {
                        propagate.push((value.to_string(), s.rule.clone()));
                    }
                }
            }
        }
        let mut spans = std::mem::take(&mut out.spans);
        if let Some(roots) = &self.roots {
            for m in roots.find_iter(text) {
                spans.push(Span::new(m.start(), m.end(), TENANT_ROOT_RULE.into()));
            }
        }
        for s in custom_spans(text, custom) {
            propagate.push((text[s.start..s.end].to_string(), s.rule.clone()));
            spans.push(s);
        }
        propagate_values(text, &propagate, &out, &mut spans);
        merge(spans)
    }

    pub(super) fn scan_window(&self, text: &str, rule: &CompiledRule, ws: usize, we: usize, out: &mut Found) {
        let engine = if out.fast_over(text.len(), ws, we, self.plan(rule).multiline) {
            let Some(Compiled { regex, anchored: false, .. }) = self.regexes(rule) else { return };
            Engine::Fast(regex)
        } else if let (true, Some(Compiled { regex, anchored: false, .. })) = (out.ascii, self.compiled(rule)) {
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
            let line_end = b.get(end) == Some(&b'\n') && !self.plan(rule).multiline;
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
                out.offer(self, rule, text, whole.start, g.start, g.end);
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
    pub(super) fn try_at(
        &self,
        text: &str,
        rule: &CompiledRule,
        h: usize,
        slots: &mut Option<CaptureLocations>,
        out: &mut Found,
    ) -> Option<usize> {
        let b = text.as_bytes();
        let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        if self.plan(rule).anchor == Anchor::Keyword(true) && h > 0 && word(b[h - 1]) == word(b[h]) {
            return None;
        }
        let fast = match out.fast_over(text.len(), h, h, self.plan(rule).multiline) {
            true => match self.regexes(rule) {
                Some(Compiled { regex, anchored: true, split }) => Some((regex, split)),
                _ => return None,
            },
            false => match (out.ascii, self.compiled(rule)) {
                (true, Some(Compiled { regex, anchored: true, split })) => Some((regex, split)),
                _ => None,
            },
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
                out.offer(self, rule, text, h + whole.start, h + g.start, h + g.end);
            }
            return Some(h + whole.end);
        }
    }
}

/// An anchored match of `re` in `hay` and its group `group`, on the
/// `regex` crate: by the lazy DFA alone where `split` settles the group,
/// else by the capture engine (`slots`, made on first use).
pub(super) fn fast_captures(
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

/// `spans` of JSON text moved so that none splits a backslash escape: a
/// span right after an escaping backslash (`"\rk_live_…"`, where a rule
/// reads the escape's `r` as the key's first letter) takes the backslash,
/// and a span that ends with one gives it back. Either way the
/// replacement would otherwise leave a backslash escaping `[` or the
/// character after the span, which breaks the string. Not for other text:
/// there `C:\Users\jdoe` has separators, not escapes. Linear in the spans.
fn whole_escapes(text: &str, mut spans: Vec<Span>) -> Vec<Span> {
    let b = text.as_bytes();
    let odd_run_before = |at: usize| b[..at].iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 1;
    let mut moved = false;
    for s in &mut spans {
        if s.start > 0 && odd_run_before(s.start) {
            s.start -= 1;
            s.from = s.from.min(s.start);
            moved = true;
        }
        if s.end > s.start + 1 && odd_run_before(s.end) {
            // The span's last byte is a backslash that escapes what follows.
            s.end -= 1;
            moved = true;
        }
    }
    if moved {
        spans = merge(spans);
    }
    spans
}

/// Drops the spans on lines that hold [`ALLOW_MARKER`]. One memmem pass
/// finds the markers; a text without one costs nothing more.
fn allow_marked_lines(text: &str, spans: &mut Vec<Span>) {
    let b = text.as_bytes();
    let lines: Vec<(usize, usize)> = memchr::memmem::find_iter(b, ALLOW_MARKER.as_bytes())
        .map(|at| {
            let start = memchr::memrchr(b'\n', &b[..at]).map_or(0, |p| p + 1);
            let end = memchr::memchr(b'\n', &b[at..]).map_or(b.len(), |p| at + p);
            (start, end)
        })
        .collect();
    if !lines.is_empty() {
        spans.retain(|s| !lines.iter().any(|&(ls, le)| s.start < le && ls < s.end));
    }
}

/// The line starts in `b[from..to]`.
/// Whether `rule` runs in `mode`.
fn applies(rule: &CompiledRule, mode: Mode) -> bool {
    if rule.strict_only && (mode.lenient || (rule.tenant && mode.lenient_tenant)) {
        return false;
    }
    if rule.errors_only && !mode.scrub {
        return false;
    }
    // Personal data: with PII on, or in an error result; not in source
    // code, whose addresses and numbers its authors wrote (examples, test
    // fixtures, author lines), as home paths below.
    if rule.pii && !mode.scrub && (!mode.pii || mode.code) {
        return false;
    }
    // A home path in source code was written by its author (`/home/foo`
    // in a test), not printed by a tool about the user running it;
    // tenant roots still apply.
    !(mode.code && rule.path)
}

pub(super) fn line_starts(b: &[u8], from: usize, to: usize) -> impl Iterator<Item = usize> + '_ {
    let first = (from == 0 || b[from - 1] == b'\n').then_some(from);
    first
        .into_iter()
        .chain(memchr::memchr_iter(b'\n', &b[from..to]).map(move |p| from + p + 1).filter(move |&ls| ls < to))
}

/// Findings from pack code are untrusted: anything that is not a non-empty
/// in-range span on character boundaries is dropped.
pub(super) fn custom_spans(text: &str, custom: &[Finding]) -> Vec<Span> {
    custom
        .iter()
        .filter_map(|f| {
            let (s, e) = (f.start as usize, f.end as usize);
            (s < e && e <= text.len() && text.is_char_boundary(s) && text.is_char_boundary(e))
                .then(|| Span::new(s, e, sanitize_rule_id(&f.rule_id)))
        })
        .collect()
}

/// Keeps a rule id from pack code printable and short.
pub(super) fn sanitize_rule_id(id: &str) -> String {
    let cleaned: String =
        id.chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')).take(64).collect();
    if cleaned.is_empty() {
        "custom".into()
    } else {
        cleaned
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::stages::redact::rules::tests::{rule, set};

    #[test]
    fn spans_keep_backslash_escapes_whole() {
        let span = |t: &str, from: &str, to: &str| {
            let start = t.find(from).unwrap();
            Span::new(start, t.find(to).unwrap() + to.len(), "r".into())
        };
        let shown = |t: &str, s: Vec<Span>| {
            let mut out = t.to_string();
            for x in s.iter().rev() {
                out.replace_range(x.start..x.end, "[REDACTED:r]");
            }
            out
        };
        // An escape's letter read as a key's first letter: the backslash
        // goes with it (the fuzzer's json finding).
        let t = r#"["\rk_live_51Hq8vR2", 1]"#;
        let s = whole_escapes(t, vec![span(t, "rk_", "R2")]);
        assert_eq!(shown(t, s), r#"["[REDACTED:r]", 1]"#);
        // An escaped backslash before it: no escape to keep.
        let t = r#"["\\rk_live_51Hq8vR2"]"#;
        assert_eq!(shown(t, whole_escapes(t, vec![span(t, "rk_", "R2")])), r#"["\\[REDACTED:r]"]"#);
        // A span ending with the backslash of an escaped quote gives it back.
        let t = r#"["pw=abc\" x"]"#;
        let s = whole_escapes(t, vec![span(t, "abc", "abc\\")]);
        assert_eq!(shown(t, s), r#"["pw=[REDACTED:r]\" x"]"#);
        // Every case stays JSON.
        for (t, from, to) in [(r#"["\rk_live_51Hq8vR2", 1]"#, "rk_", "R2"), (r#"["pw=abc\" x"]"#, "w=", "\\")] {
            let fixed = shown(t, whole_escapes(t, vec![span(t, from, to)]));
            assert!(serde_json::from_str::<serde_json::Value>(&fixed).is_ok(), "{fixed}");
        }
    }

    #[test]
    fn keyword_windows_find_secrets_and_merge() {
        let rs = Ruleset::compile(&mut set(vec![
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

    /// Span bounds, in text order.
    pub type Bounds = Vec<(usize, usize)>;

    /// `text`'s spans on both engines: as it is (regex-lite, for the rules
    /// no long text has compiled for the `regex` crate yet; see
    /// `Found::ascii`) and followed by a filler that makes it long enough
    /// for the `regex` crate.
    pub fn both_engines(rs: &Ruleset, text: &str) -> (Bounds, Bounds) {
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
        let rs = Ruleset::compile(&mut set(vec![rule("t", re, &["token"], 1)])).unwrap();
        let full = Regex::new(re).unwrap();
        for text in [
            "token: \"abcde",
            "token: \"abcdef\" x",
            "TOKEN='qkvwzmrt'",
            "token = ab token=qkvwzmrtpx",
            "token:\n  qkvwzmrt",
            "token:=:=qkvwzmrt",
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
    fn line_start_rules_find_what_a_search_finds() {
        let rs = Ruleset::compile(&mut set(vec![rule(
            "ini",
            r"(?im)^\s*[a-z_]*password\s*=\s*(\S{6,})\s*$",
            &["password"],
            1,
        )]))
        .unwrap();
        let text = "[db]\nhost = x\n  DB_PASSWORD = hunter2hunter\nx password = nope nope\npassword=qkvwzmrt\n";
        let found: Vec<&str> = rs.scan(text, &[]).iter().map(|s| &text[s.start..s.end]).collect();
        assert_eq!(found, ["hunter2hunter", "qkvwzmrt"]);
    }

    #[test]
    fn custom_findings_are_checked() {
        let rs = Ruleset::compile(&mut set(vec![])).unwrap();
        let text = "héllo";
        let f = |s, e| Finding { rule_id: "c".into(), start: s, end: e };
        assert!(rs.scan(text, &[f(0, 100), f(2, 3), f(3, 3)]).is_empty());
        assert_eq!(rs.scan(text, &[f(0, 3)]).len(), 1);
    }
}

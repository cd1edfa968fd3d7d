//! Spans to redact: the spans one scan has found ([`Found`]), and merging
//! overlapping spans.

use super::rules::{CompiledRule, Ruleset};
use crate::support::text::{ceil_boundary, floor_boundary};

/// A span to redact.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    /// Start byte.
    pub start: usize,
    /// End byte.
    pub end: usize,
    /// Rule id.
    pub rule: String,
    /// Where the match that found it starts (at most `start`): a secret
    /// may need the text before it (`name: DB_PASSWORD` on the line
    /// before `value: …`), so a stream step that stops between the two
    /// takes the secret with it, not leaving it to a step that starts
    /// after its key.
    pub from: usize,
}

impl Span {
    /// A span whose match is itself (no context before it).
    pub fn new(start: usize, end: usize, rule: String) -> Self {
        Self { start, end, rule, from: start }
    }
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
pub(super) struct Found {
    /// The text is long enough for the `regex` crate's engines (see
    /// [`FAST_MIN_TEXT`]); they run on its ASCII stretches ([`Self::fast_in`]).
    pub(super) fast: bool,
    /// A short text (not [`Self::fast`]) that is ASCII: a rule whose
    /// `regex` engines an earlier long text made runs on them here too
    /// ([`super::rules::Ruleset::compiled`]).
    pub(super) ascii: bool,
    /// Where a long text is not ASCII; `None` for ASCII text.
    pub(super) non_ascii: Option<NonAscii>,
    pub(super) spans: Vec<Span>,
    /// (start, end) → whether a propagating rule found it
    pub(super) bounds: rustc_hash::FxHashMap<(usize, usize), bool>,
    /// The text is source code ([`super::Mode::code`]).
    pub(super) code: bool,
    /// The text is a test's code or data ([`super::Mode::test`]).
    pub(super) test: bool,
    /// In code: its inline test modules, found on the first candidate
    /// ([`crate::support::code::rust_test_modules`]).
    pub(super) test_modules: Option<Vec<std::ops::Range<usize>>>,
    /// Its regions that name their file ([`super::Mode::regions`]).
    pub(super) regions: Option<crate::support::regions::Regions>,
    /// Its string literals, found on a generic rule's first candidate.
    pub(super) literals: Option<Vec<std::ops::Range<usize>>>,
}

impl Found {
    /// Adds the candidate `text[start..end]` if it is new and `rule`
    /// accepts it.
    pub(super) fn offer(
        &mut self,
        set: &Ruleset,
        rule: &CompiledRule,
        text: &str,
        from: usize,
        start: usize,
        end: usize,
    ) {
        // Only ASCII text reaches the byte-mode engine, whose bounds could
        // otherwise fall inside a character: kept on whole characters.
        let (start, end) = (floor_boundary(text, start), ceil_boundary(text, end));
        if start == end || self.bounds.get(&(start, end)).is_some_and(|&p| p || !rule.propagate) {
            return;
        }
        use crate::support::regions::RegionClass;
        let class = self.regions.as_ref().and_then(|r| r.class_at(start));
        let code = self.code || class == Some(RegionClass::Code);
        // A home path in code, or in any file a region quotes, was written
        // by its author, not printed by a tool about the user running it
        // (see `scan::applies`). Error scrubbing still hides a server's
        // paths in the lines a traceback quotes.
        if rule.path && !rule.errors_only && !self.code && class.is_some() {
            return;
        }
        // A test's code and data hold fixtures on purpose: generic rules
        // are off there, as in lenient mode; a provider's rule still runs.
        let test = self.test
            || class == Some(RegionClass::Test)
            || (self.code
                && self
                    .test_modules
                    .get_or_insert_with(|| crate::support::code::rust_test_modules(text))
                    .iter()
                    .any(|m| m.contains(&start)));
        if rule.strict_only && test {
            return;
        }
        if code && rule.strict_only {
            let literals = self.literals.get_or_insert_with(|| crate::support::code::string_literals(text));
            if !crate::support::code::inside(literals, start, end) || !set.secret_shaped(&text[start..end]) {
                return;
            }
        }
        let candidate = &text[start..end];
        if !set.accept(rule, candidate, self.fast && candidate.is_ascii()) {
            return;
        }
        // There a value that reads as words, or is too short to be a
        // secret, is a fixture too, whatever rule found it
        // (`http://letme:in@yo.local`, `Aladdin:opensesame`); a provider's
        // random token, a key block, a JWT or a password such as
        // `Summer2024!` does not tokenize like words and is still redacted (a host test
        // holds the default rules' examples to that).
        if test && !(rule.path || rule.pii || rule.errors_only) && super::value::reads_as_fixture(candidate) {
            return;
        }
        // A generic rule's value must look like a secret: never the name
        // side of an assignment, a segment of an ARN or a handle an API
        // hands back (`NextToken`, `LockToken`: no credential), and not
        // text that tokenizes like words (but in a `.env` or a
        // configuration file, where a password of words is written as
        // is). After the rule's own checks, so only a candidate they keep
        // is tokenized.
        if rule.strict_only
            && (super::value::name_side(text.as_bytes(), end)
                || super::value::inside_arn(text.as_bytes(), from)
                || super::value::handle_token_name(text.as_bytes(), start)
                || (!matches!(class, Some(RegionClass::Env | RegionClass::Config))
                    && super::value::tokenizes_like_words(candidate)))
        {
            return;
        }
        self.bounds.insert((start, end), rule.propagate);
        self.spans.push(Span { start, end, rule: rule.id.clone(), from: from.min(start) });
    }
}

impl Found {
    /// Whether the `regex` crate's engines may run for a match that starts
    /// in `text[a..b]`: the text is long and all a match there can reach
    /// is ASCII, where they find what regex-lite finds (a byte is a
    /// character). A one-line regex reaches the end of `b`'s line (its
    /// match cannot cross it, however its window grows), another the end
    /// of the text. So a log with some non-ASCII lines (emoji, box
    /// drawing) runs them on all its other lines, instead of falling back
    /// to regex-lite everywhere.
    pub(super) fn fast_over(&self, len: usize, a: usize, b: usize, multiline: bool) -> bool {
        match (&self.non_ascii, self.fast) {
            (_, false) => false,
            (None, true) => true,
            // Lines are whole in `NonAscii`: the line of `b` meets `a..=b`.
            (Some(n), true) => !n.any_in(a, if multiline { len } else { b + 1 }),
        }
    }
}

/// The lines of a long text that are not ASCII, found in one pass (a
/// memchr for line ends, a word-at-a-time `is_ascii` per line) and queried
/// by binary search.
pub(super) struct NonAscii {
    /// `start..end` of each non-ASCII line, its `\n` included, in order.
    lines: Vec<(usize, usize)>,
}

impl NonAscii {
    /// `None` for an ASCII text.
    pub(super) fn of(text: &str) -> Option<Self> {
        let b = text.as_bytes();
        if b.is_ascii() {
            return None;
        }
        let mut lines: Vec<(usize, usize)> = Vec::new();
        let mut start = 0;
        let ends = memchr::memchr_iter(b'\n', b).map(|p| p + 1).chain(std::iter::once(b.len()));
        for end in ends {
            if start < end && !b[start..end].is_ascii() {
                match lines.last_mut() {
                    Some(l) if l.1 == start => l.1 = end,
                    _ => lines.push((start, end)),
                }
            }
            start = end;
        }
        Some(Self { lines })
    }

    /// Whether a line that meets `a..b` is not ASCII.
    fn any_in(&self, a: usize, b: usize) -> bool {
        let i = self.lines.partition_point(|l| l.1 <= a);
        self.lines.get(i).is_some_and(|l| l.0 < b)
    }
}

/// Sorts spans and merges overlapping ones (the first rule id wins).
pub(super) fn merge(mut spans: Vec<Span>) -> Vec<Span> {
    spans.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
    let mut out: Vec<Span> = Vec::with_capacity(spans.len());
    for s in spans {
        match out.last_mut() {
            Some(last) if s.start < last.end => {
                last.end = last.end.max(s.end);
                last.from = last.from.min(s.from);
            }
            _ => out.push(s),
        }
    }
    out
}

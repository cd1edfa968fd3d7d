//! Secret and path redaction.
//!
//! # Algorithm
//!
//! 1. One Aho-Corasick pass (ASCII case-insensitive, overlapping) over the
//!    text finds every keyword of every rule: O(n + hits). The automaton is
//!    a contiguous NFA, walked anchored from the positions where a hashed
//!    filter of the keywords' first bytes says one may begin ([`starts`]);
//!    texts of [`DFA_MIN_TEXT`] bytes and more use a DFA of the same
//!    keywords, searched in four lanes at once ([`lanes`]): for the
//!    default rules' keywords one DFA in the pre-initialised component's
//!    snapshot, shared by every instance; for a pack that builds its own
//!    automaton, one built per instance on its first long text.
//! 2. Each rule with a hit runs its regex where its matches can start
//!    ([`analysis::Anchor`], worked out on the rule's first hit from the
//!    regex parsed by `regex-syntax`, see [`analysis`]):
//!    - *at a keyword hit*, when the regex's prefix literals (from
//!      `hir::literal::Extractor`) each begin with one of its keywords and
//!      no assertion but a leading `\b` comes before them: one anchored
//!      try per hit, which stops as soon as the regex cannot match;
//!    - *at a line start*, for `(?m)^` regexes: one anchored try per line
//!      start inside the windows around the hits;
//!    - otherwise *in windows* `window` bytes after and at most
//!      [`WINDOW_BEFORE`] bytes before each hit, merged, clipped to the
//!      hit's line unless the regex can match a line end (read from its
//!      `Hir`: a class or literal holding `\n`, such as `\s`, `[^"]` or
//!      `(?s).`). Running 150 rules over
//!      the whole text is never done; rules without keywords are the
//!      exception and are refused by the pack builder.
//! 3. On the `regex` crate (below), an anchored try finds its match with a
//!    lazy DFA. The secret group comes from two more DFA runs where the
//!    regex is `P(G)` with G last ([`rules::Split`]), and from the capture engine
//!    (a bounded backtracker, several times slower per byte) only where
//!    that does not settle it.
//! 4. A candidate is kept when its secret group clears the rule's entropy
//!    threshold and matches no allowlist (rule and global) and no stopword.
//!    A generic rule's candidate must also not be a shape of code, a
//!    reference or a placeholder (the rule set's `generic` allowlist), and
//!    in source code ([`Mode::code`]) it must lie inside a string literal
//!    and be secret-shaped (length, entropy, character classes).
//!    A candidate another rule already found with the same bounds is not
//!    checked again ([`Found`]).
//! 5. Tenant path roots are literals: one more Aho-Corasick automaton.
//! 6. Every other occurrence of a value found is redacted too (one more
//!    pass, [`propagate_values`]; a generic rule's value unless it is
//!    letters alone or words), and base64, `%XX` and `\u` encoded spans
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
//! which tiktoken-rs already links into the component, and so does a
//! shorter ASCII text for each rule a long text has compiled there (a
//! decoded candidate in a stream); all other texts on regex-lite. regex-lite has only a PikeVM: on text where every line holds
//! a secret it held redaction to 1.9× gitleaks' speed, the lazy DFA here
//! to 14× (docs/benchmarks.md). But an instance that uses the `regex` crate
//! holds ~0.1 MiB more, and a host keeps an instance per tenant, most of
//! them redacting small outputs. The `regex` crate compiles the rules over
//! bytes with Unicode off ([`compile_regex`]): `\d \s \w \b` and `(?i)`
//! are ASCII, as in regex-lite, and on ASCII text, where a byte is a
//! character, both engines find the same matches. Which one ran never
//! shows in the output (`engines_agree_on_ascii_text`).
//!
//! # Files
//!
//! - [`pass`]: the one entry point, [`Pass`];
//! - [`rules`]: compiling a rule set, the engines;
//! - [`analysis`]: regex analysis on `regex-syntax` (anchors, anchored
//!   forms, line ends, secret group);
//! - [`scan`]: the keyword pass, windows, anchored tries;
//! - [`value`]: what counts as a secret value;
//! - [`propagate`]: other occurrences of a found value;
//! - [`encoded`]: base64, `%XX` and `\u` encoded secrets;
//! - [`pii`]: personal data found by code (cards, IBANs, phone numbers,
//!   SSNs, IP addresses), when PII is on and in error results;
//! - [`spans`]: spans, merging;
//! - [`value_hash`]: a redacted value as a report shows it (where each
//!   redaction was made is the pipeline's `stages/redact/sites.rs`).

pub mod analysis;
pub mod encoded;
pub mod invisible;
pub mod keywords;
pub mod lanes;
pub mod pass;
pub mod pii;
pub mod propagate;
pub mod rules;
pub mod scan;
pub mod spans;
pub mod starts;
pub mod value;
pub mod value_hash;

pub use keywords::HitsMemo;
pub use pass::{Pass, Redacted};
pub use value_hash::value_hash;

/// How a pass treats generic (`strict-only`) rules.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Mode {
    /// Lenient (documentation) mode: generic rules are off.
    pub lenient: bool,
    /// Lenient for the tenant's own generic rules only (a tool the
    /// tenant's pack lists as lenient).
    pub lenient_tenant: bool,
    /// Source code: generic rules look only inside string literals and
    /// want secret-shaped values there (the rule set's `generic` values).
    pub code: bool,
    /// A test's code or data (with `lenient`): generic rules are off, and
    /// a value that reads as words or is under 6 bytes is a fixture,
    /// whatever rule finds it (`http://letme:in@yo.local` is left).
    pub test: bool,
    /// Text that may interleave named files (grep hits, diffs, listings,
    /// diagnostics, tracebacks): each region is judged as the file it
    /// names, a code region as `code` is ([`crate::support::regions`]).
    pub regions: bool,
    /// A line holding [`ALLOW_MARKER`] is left alone (content the user
    /// controls); off for untrusted content.
    pub inline_allow: bool,
    /// An error result (or a tool the packs scrub): the `errors-only`
    /// rules run too.
    pub scrub: bool,
    /// Personal data is redacted: `pii` rules and [`pii`]'s detectors
    /// (the call's `pii` option, or a tool the packs list in `pii-tools`).
    /// In an error result (`scrub`) the `pii` rules and the number
    /// detectors run anyway.
    pub pii: bool,
    /// With `pii`: public IP addresses too.
    pub public_ip: bool,
    /// JSON text: a backslash escapes the character after it, so a span
    /// never splits an escape (elsewhere a backslash is text, such as a
    /// Windows path's separator, and stays where it is).
    pub json: bool,
    /// The final pass over a render: a keyword inside a redaction's marker
    /// (`[REDACTED:<id>]`, [`crate::markup::lexicon::spans`]) starts no
    /// rule. The rule id in `[REDACTED:github-token]` is not the tool's
    /// word `token`; read as one, it ran every rule keyed on `token` after
    /// each such redaction, compiling them in every instance that redacted
    /// anything. Other markup is read as before: a look-alike of a marker
    /// can reach a render where defanging did not see it (a JSON escape
    /// re-printed), and its words may still start rules.
    pub opaque_redactions: bool,
}

impl Mode {
    /// This mode over a test's code or data too (`test`): generic rules
    /// off, as in lenient mode, and word-like values left as fixtures.
    pub fn over_tests(self, test: bool) -> Self {
        Self { lenient: self.lenient || test, test: self.test || test, ..self }
    }
}

/// Inline marker that keeps a line from being redacted, as gitleaks'
/// `gitleaks:allow`.
pub const ALLOW_MARKER: &str = "result-sanitizer:allow";

/// Bytes a step over a stream (`entry/stream.rs`, the drain) keeps back
/// for the next: longer than any secret a rule matches, so one that
/// crosses a chunk boundary is seen whole. Here, below its three users.
pub const OVERLAP: usize = 64 * 1024;

/// Where a step over a stream commits unless a secret crosses that point:
/// [`OVERLAP`] bytes before the end of `data`, moved back to a UTF-8
/// boundary, then to the start of its line (just after the last `\n`
/// before it), so that the next step sees that line whole: a value after
/// the point is found with the context before it (`api_key = "` ... `"`).
/// The streaming `redact` step and the drain commit here; a host that runs
/// a stream's steps on several threads guesses with it.
pub fn usual_commit(data: &[u8]) -> usize {
    let mut commit = data.len().saturating_sub(OVERLAP);
    // Back to a character's first byte: three steps at most (a longer run
    // of continuation bytes is not UTF-8 and passes byte by byte, and an
    // unbounded walk back over one could leave nothing to commit).
    for _ in 0..3 {
        if commit > 0 && commit < data.len() && data[commit] & 0xC0 == 0x80 {
            commit -= 1;
        }
    }
    memchr::memrchr(b'\n', &data[..commit]).map_or(commit, |p| p + 1)
}

/// `at`, or past the matches of `spans` that cross it: a match whose
/// secret, or whose context and then its secret (`name: DB_PASSWORD`
/// before the point, its value after it), lie on both sides is taken by
/// the step that stops there, which sees it whole.
pub fn past_matches(spans: &[Span], mut at: usize) -> usize {
    while let Some(end) = spans.iter().filter(|s| s.from < at && s.end > at).map(|s| s.end).max() {
        at = end;
    }
    at
}

pub use keywords::DFA_MIN_TEXT;
pub use rules::Ruleset;
pub use spans::Span;

//! The one redaction entry point. Every call site (the content, the
//! tool-error line, MCP structured content and links, each rendered
//! output, the streaming step) redacts through a [`Pass`], so the pack's
//! `detect` hook, lenient mode and the counts behave the same everywhere.
//! A pack's findings ([`CompiledPack::findings`], what the pack builder
//! checks rules with) are a pass's spans, so they are defined here too.

use std::collections::BTreeMap;

use serde_json::Value;

use super::keywords::HitsMemo;
use super::{Mode, Span};
use crate::api::SanitizeError;
use crate::markup::defang;
use crate::markup::lexicon;
use crate::pack::CompiledPack;
use crate::pack_api::Finding;
use crate::support::edits::{self, Edit, OffsetMap};

/// Replacements by rule id.
pub type Counts = BTreeMap<String, u32>;

/// One pack's rules, in strict or lenient mode, over code or other text.
#[derive(Clone, Copy)]
pub struct Pass<'p> {
    pack: &'p CompiledPack,
    mode: Mode,
    /// The keyword hits of a text this pass scanned, for a later text that
    /// holds it (see [`HitsMemo`]).
    memo: Option<&'p HitsMemo>,
}

/// A redacted text and the way back to its input.
pub struct Redacted {
    /// The text with each secret replaced by `[REDACTED:<rule-id>]`.
    pub text: String,
    /// From positions in `text` back to positions in the input.
    pub map: OffsetMap,
    /// Look-alikes of the pipeline's markup made harmless.
    pub defanged: u32,
    /// What was replaced, in input positions.
    pub spans: Vec<Span>,
    /// Where the error words of [`crate::support::error_words`] occur in
    /// the input, found by the scan's keyword pass (in no particular
    /// order); `None` when the pass ran on a view of it (see
    /// [`Self::spans_and_error_words`]).
    pub error_words: Option<Vec<std::ops::Range<usize>>>,
}

impl<'p> Pass<'p> {
    /// A pass over `pack`'s rules; `lenient` skips its strict-only
    /// (generic) rules.
    pub fn new(pack: &'p CompiledPack, lenient: bool) -> Self {
        Self { pack, mode: Mode { lenient, ..Mode::default() }, memo: None }
    }

    /// The pass for a call of `tool`: lenient where the caller or the
    /// platform pack says so, and for the tenant's own generic rules
    /// where the tenant's pack does.
    pub fn for_tool(pack: &'p CompiledPack, lenient: bool, tool: &str) -> Self {
        Self { pack, mode: Mode { lenient, lenient_tenant: pack.tenant_lenient(tool), ..Mode::default() }, memo: None }
    }

    /// The same pass keeping the keyword hits of the first long text it
    /// scans in `memo`, for the rendered texts that show that one whole or
    /// as a head and a tail (the same spans, found with less of the
    /// keyword pass).
    pub fn memo(self, memo: &'p HitsMemo) -> Self {
        Self { memo: Some(memo), ..self }
    }

    /// The same pass honouring `result-sanitizer:allow` on a line (or not).
    pub fn inline_allow(self, inline_allow: bool) -> Self {
        Self { mode: Mode { inline_allow, ..self.mode }, ..self }
    }

    /// The same pass scrubbing (`scrub`) or not: an error result, or a
    /// tool the packs list in `scrub-tools`, gets the `errors-only` rules.
    pub fn scrub(self, scrub: bool) -> Self {
        Self { mode: Mode { scrub, ..self.mode }, ..self }
    }

    /// The same pass redacting personal data (`pii`), public IP addresses
    /// too with `public_ip` (see [`super::pii`]).
    pub fn pii(self, pii: bool, public_ip: bool) -> Self {
        Self { mode: Mode { pii, public_ip: pii && public_ip, ..self.mode }, ..self }
    }

    /// The same pass over source code (`code`) or other text: in code,
    /// generic rules look only inside string literals.
    pub fn over_code(self, code: bool) -> Self {
        Self { mode: Mode { code, ..self.mode }, ..self }
    }

    /// The same pass over a test's code (`test`): generic rules are off,
    /// as in lenient mode, and a value that reads as words is a fixture
    /// (they are written there on purpose).
    pub fn over_tests(self, test: bool) -> Self {
        Self { mode: self.mode.over_tests(test), ..self }
    }

    /// The same pass judging regions that name their file as that file
    /// (`regions`; see [`crate::support::regions`]).
    pub fn over_regions(self, regions: bool) -> Self {
        Self { mode: Mode { regions, ..self.mode }, ..self }
    }

    /// The same pass over JSON text (`json`) or other text: in JSON, a
    /// span never splits a backslash escape.
    pub fn over_json(self, json: bool) -> Self {
        Self { mode: Mode { json, ..self.mode }, ..self }
    }

    /// Every span to redact in `text`, merged and sorted: the rules'
    /// matches and the pack's own findings.
    pub fn spans(&self, text: &str) -> Vec<Span> {
        self.pack.ruleset.scan_mode_memo(text, &self.pack.detect(text), self.mode, self.memo)
    }

    /// [`Self::spans`], and the byte ranges of the error words in `text`
    /// (the pipeline's `strategies/error_lines.rs` reads their lines), found by the
    /// same keyword pass; `None` when they must be found apart.
    pub fn spans_and_error_words(&self, text: &str) -> (Vec<Span>, Option<Vec<std::ops::Range<usize>>>) {
        self.pack.ruleset.scan_mode_errors(text, &self.pack.detect(text), self.mode, self.memo)
    }

    /// `text` with its secrets replaced, and with `defang` the
    /// look-alikes of the pipeline's markup outside them made harmless
    /// too; replacements are added to `counts`.
    pub fn redact(&self, text: &str, defang: bool, counts: &mut Counts) -> Redacted {
        self.redact_joined(text, None, defang, counts)
    }

    /// [`Self::redact`] over a head and a tail joined at `join` (a host
    /// drained the middle between them): a match across the join is split
    /// there into two replacements, so the drained middle sits between
    /// them and every position on either side maps back to its own side.
    pub fn redact_joined(&self, text: &str, join: Option<usize>, defang: bool, counts: &mut Counts) -> Redacted {
        let (mut spans, error_words) = self.spans_and_error_words(text);
        if let Some(at) = join {
            if let Some(i) = spans.iter().position(|s| s.start < at && at < s.end) {
                let tail = Span { start: at, ..spans[i].clone() };
                spans[i].end = at;
                spans.insert(i + 1, tail);
            }
        }
        let mut list = self.edits_for(text, &spans, counts);
        let mut defanged = 0;
        if defang {
            let mut defangs = defang::edits(text);
            defangs.retain(|d| !spans.iter().any(|s| d.start < s.end && s.start < d.end));
            defanged = defangs.len() as u32;
            list.extend(defangs);
            list.sort_by_key(|e: &Edit| e.start);
        }
        let (text, map) = edits::apply(text, &list);
        Redacted { text, map, defanged, spans, error_words }
    }

    /// [`Self::redact`] without defanging, keeping the text only.
    pub fn redact_text(&self, text: &str, counts: &mut Counts) -> String {
        self.redact(text, false, counts).text
    }

    /// The final pass over a rendered text: [`Self::redact_text`], except
    /// that a span overlapping the pipeline's own markup (a marker, the
    /// boundary, a `[REDACTED:…]`, see [`lexicon::spans`]) is dropped, so no
    /// rule or pack finding rewrites it, and a keyword inside a redaction's
    /// marker starts no rule ([`Mode::opaque_redactions`]). Returns the text and how many
    /// spans were dropped. Caller text that markup carries (tool name,
    /// content type, call id) was redacted before it went in.
    pub fn redact_final(&self, text: &str, counts: &mut Counts) -> (String, u32) {
        let fin = Self { mode: Mode { opaque_redactions: true, ..self.mode }, ..*self };
        let mut spans = fin.spans(text);
        let before = spans.len();
        if before > 0 {
            let markup = lexicon::spans(text);
            // Both lists are sorted by start and markup spans are disjoint.
            spans.retain(|s| {
                let k = markup.partition_point(|m| m.1 <= s.start);
                markup.get(k).is_none_or(|m| m.0 >= s.end)
            });
        }
        let kept = (before - spans.len()) as u32;
        let (text, _) = edits::apply(text, &self.edits_for(text, &spans, counts));
        (text, kept)
    }

    /// Redacts every string of a JSON value, keys included (MCP
    /// structured content and resource links).
    pub fn redact_json(&self, v: &mut Value, counts: &mut Counts) {
        self.redact_json_keeping(v, "", counts)
    }

    /// [`Self::redact_json`], leaving strings equal to `keep` alone (a
    /// placeholder of the pipeline's own; `""` has nothing to redact).
    pub fn redact_json_keeping(&self, v: &mut Value, keep: &str, counts: &mut Counts) {
        crate::support::json::each_string(v, &mut |s| {
            if s != keep {
                *s = self.redact_text(s, counts);
            }
        });
    }

    /// A rule of the pack that failed to compile on first use.
    pub fn error(&self) -> Option<SanitizeError> {
        self.pack.ruleset.error().map(SanitizeError::InvalidPack)
    }
}

impl Pass<'_> {
    /// Replacement edits for `spans` of `text` (`[REDACTED:<id>]`, or the
    /// rule's replacement), with counts by rule id added to `counts`. In
    /// JSON, a personal number that stood bare (`"phone": 14155550132`)
    /// becomes a string, so the document still parses.
    fn edits_for(&self, text: &str, spans: &[Span], counts: &mut Counts) -> Vec<Edit> {
        let bare = if self.mode.json { super::pii::outside_json_strings(text, spans) } else { Vec::new() };
        spans
            .iter()
            .enumerate()
            .map(|(i, s)| {
                *counts.entry(s.rule.clone()).or_default() += 1;
                let with = self.pack.ruleset.replacement(&s.rule);
                let with = if bare.get(i) == Some(&true) { format!("\"{with}\"") } else { with };
                Edit { start: s.start, end: s.end, with }
            })
            .collect()
    }
}

// A pack's findings are what a `Pass` finds: defined here, with the
// pass, so that `pack.rs` (below the stages) needs no pass.
impl CompiledPack {
    /// What the first redaction pass finds in `text` (strict mode, custom
    /// findings included, overlapping spans merged): rule id and byte span.
    pub fn findings(&self, text: &str) -> Vec<Finding> {
        self.findings_as(text, false)
    }

    /// [`Self::findings`] as in a test's code or data, where generic rules
    /// are off and a value that reads as words is a fixture (the default
    /// rules' examples are held to being found there too).
    pub fn findings_in_tests(&self, text: &str) -> Vec<Finding> {
        self.findings_as(text, true)
    }

    fn findings_as(&self, text: &str, test: bool) -> Vec<Finding> {
        Pass::new(self, false)
            .scrub(true)
            .over_tests(test)
            .spans(text)
            .into_iter()
            .map(|s| Finding { rule_id: s.rule, start: s.start as u32, end: s.end as u32 })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::fixtures;
    use serde_json::json;

    fn pack() -> CompiledPack {
        fixtures::pack(vec![
            fixtures::rule(
                json!({"id": "tok", "regex": r"\b(tok_[a-z0-9]{12})\b", "keywords": ["tok_"], "secret_group": 1}),
            ),
            fixtures::rule(json!({
                "id": "generic", "regex": r"(?i)pw=([a-z0-9]{6,})", "keywords": ["pw="], "secret_group": 1, "strict_only": true
            })),
        ])
    }

    #[test]
    fn strict_and_lenient() {
        let p = pack();
        let text = "tok_abcdef123456 pw=h7xq2kz9";
        let mut counts = Counts::new();
        assert_eq!(Pass::new(&p, false).redact_text(text, &mut counts), "[REDACTED:tok] pw=[REDACTED:generic]");
        // Lenient mode skips the generic (strict-only) rule, not the provider one.
        assert_eq!(Pass::new(&p, true).redact_text(text, &mut counts), "[REDACTED:tok] pw=h7xq2kz9");
        assert_eq!((counts["tok"], counts["generic"]), (2, 1));
    }

    /// A provider's token is redacted wherever it appears again; a generic
    /// rule's value too, unless it is letters alone or words.
    #[test]
    fn generic_values_of_letters_alone_are_not_sought_elsewhere() {
        let p = fixtures::pack(vec![
            fixtures::rule(
                json!({"id": "tok", "regex": r"\b(tok_[a-z0-9]{12})\b", "keywords": ["tok_"], "secret_group": 1}),
            ),
            fixtures::rule(json!({
                "id": "generic", "regex": r"(?i)pw=([a-z0-9#]{6,})", "keywords": ["pw="], "secret_group": 1, "strict_only": true
            })),
        ]);
        let text = "pw=plataformatec pw=h7X#q2kz9Wm4 pw=k8Fz2Lq9wX tok_abcdef123456\n\
                    url: blog.plataformatec.com.br h7X#q2kz9Wm4 --pass k8Fz2Lq9wX again tok_abcdef123456\n";
        let mut counts = Counts::new();
        assert_eq!(
            Pass::new(&p, false).redact_text(text, &mut counts),
            "pw=[REDACTED:generic] pw=[REDACTED:generic] pw=[REDACTED:generic] [REDACTED:tok]\n\
             url: blog.plataformatec.com.br [REDACTED:generic] --pass [REDACTED:generic] again [REDACTED:tok]\n"
        );
        assert_eq!((counts["tok"], counts["generic"]), (2, 5));
    }

    /// In the final pass, a keyword inside the pipeline's markup (the rule
    /// id in `[REDACTED:api-token]`) starts no rule; the same word in the
    /// tool's text still does, and the content pass is unchanged.
    #[test]
    fn final_pass_reads_no_keyword_in_markup() {
        let p = fixtures::pack(vec![
            fixtures::rule(
                json!({"id": "api-token", "regex": r"\b(tok_[a-z0-9]{12})\b", "keywords": ["tok_"], "secret_group": 1}),
            ),
            fixtures::rule(json!({
                "id": "generic", "regex": r"(?i)token\W{1,3}([a-z0-9]{8,})", "keywords": ["token"], "secret_group": 1
            })),
        ]);
        let pass = Pass::new(&p, false);
        let mut counts = Counts::new();
        let rendered = pass.redact_text("tok_abcdef123456 value9x8y7z", &mut counts);
        assert_eq!(rendered, "[REDACTED:api-token] value9x8y7z");
        assert_eq!(pass.redact_final(&rendered, &mut counts), (rendered.clone(), 0));
        let named = "[REDACTED:api-token] token: value9x8y7z";
        assert_eq!(pass.redact_final(named, &mut counts).0, "[REDACTED:api-token] token: [REDACTED:generic]");
        assert_eq!(pass.redact_text(&rendered, &mut counts), "[REDACTED:api-token] [REDACTED:generic]");
    }

    #[test]
    fn defangs_outside_secrets_and_maps_back() {
        let p = pack();
        let text = "[truncated: fake] tok_abcdef123456";
        let r = Pass::new(&p, false).redact(text, true, &mut Counts::new());
        assert_eq!(r.text, "(truncated: fake] [REDACTED:tok]");
        assert_eq!(r.defanged, 1);
        assert_eq!(r.map.to_src_end(r.text.len()), text.len());
    }

    #[test]
    fn json_keys_and_values() {
        let p = pack();
        let mut v = json!({"tok_abcdef123456": ["pw=h7xq2kz9", 3], "ok": "fine"});
        let mut counts = Counts::new();
        Pass::new(&p, false).redact_json(&mut v, &mut counts);
        assert_eq!(v, json!({"[REDACTED:tok]": ["pw=[REDACTED:generic]", 3], "ok": "fine"}));
        assert_eq!(counts.values().sum::<u32>(), 2);
    }
}

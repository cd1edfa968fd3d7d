//! The record: the one builder of `sanitize-record`.
//!
//! Stages report to a [`RecordBuilder`] as they run (sizes in and out,
//! replacements by rule, blocks kept from the model); the pipeline then
//! adds what the chosen strategy kept and omitted and [`RecordBuilder::finish`]
//! closes it with the output's size. Nothing else constructs a record. The
//! redaction passes add to [`RecordBuilder::counts`] directly; the one field
//! set after `finish` is `round`, by `entry/round.rs`, once a round's shares
//! are known.

use std::collections::BTreeMap;

use crate::api::{
    Budget, ContentClass, LeftOut, Options, RuleCount, SanitizeRecord, Span, Stage, StageTrace, Strategy, StructureCuts,
};
use crate::pack::CompiledPack;
use crate::support::text;

/// Replacements by rule id.
pub(crate) type Counts = BTreeMap<String, u32>;

/// Counts as WIT records, sorted by rule id (the record's, and the
/// streaming and drain steps').
pub(crate) fn counts_to_records(counts: &BTreeMap<String, u32>) -> Vec<RuleCount> {
    counts.iter().map(|(k, v)| RuleCount { rule_id: k.clone(), count: *v }).collect()
}

/// No structure cuts at all; strategies add theirs.
pub(crate) fn no_cuts() -> StructureCuts {
    StructureCuts { items: 0, keys: 0, chars: 0, containers: 0, total_records: None, error_lines: 0 }
}

/// Nothing of an MCP result left out; stages add what they leave out.
pub(crate) fn no_left_out() -> LeftOut {
    LeftOut {
        not_carried: 0,
        unknown_media: 0,
        over_cap: 0,
        over_budget: 0,
        binary: 0,
        unknown_type: 0,
        structured_content: false,
    }
}

/// Whether `l` counts anything.
fn any_left_out(l: &LeftOut) -> bool {
    [l.not_carried, l.unknown_media, l.over_cap, l.over_budget, l.binary, l.unknown_type].iter().any(|&n| n > 0)
        || l.structured_content
}

/// Sizes of the decoded text, before any cut.
#[derive(Clone, Copy, Default)]
pub(crate) struct Decoded {
    /// Characters.
    pub chars: u64,
    /// Lines.
    pub lines: u64,
    /// Invalid UTF-8 sequences replaced.
    pub invalid: u32,
    /// Markup look-alikes defanged.
    pub defanged: u32,
}

/// A record under construction.
pub(crate) struct RecordBuilder {
    rec: SanitizeRecord,
    /// Replacements by rule, every pass together.
    pub counts: Counts,
    /// Cuts made in thinning MCP structured content, added to the text's.
    structured_cuts: Option<StructureCuts>,
    /// The tool error's message was cut (see `pipeline::tool_error_line`).
    error_line_cut: bool,
    /// MCP content left out, by why.
    left_out: LeftOut,
}

impl RecordBuilder {
    /// An empty record for one call.
    pub fn new(opts: &Options, budget: &Budget, pack: &CompiledPack, input_bytes: usize) -> Self {
        let rec = SanitizeRecord {
            class: ContentClass::Text,
            input_bytes: input_bytes as u64,
            original_bytes: input_bytes as u64,
            original_chars: 0,
            original_lines: 0,
            original_tokens: None,
            byte_cap_hit: false,
            truncated: false,
            strategy: Strategy::None,
            kept: Vec::new(),
            omitted: Vec::new(),
            invalid_utf8: 0,
            defanged: 0,
            redactions: Vec::new(),
            sites: Vec::new(),
            regions: Vec::new(),
            output_chars: 0,
            output_tokens: None,
            budget: *budget,
            encoding: opts.encoding,
            pack_name: pack.info.name.clone(),
            pack_version: pack.info.version.clone(),
            platform_name: pack.platform.name.clone(),
            platform_version: pack.platform.version.clone(),
            relaxed: pack.relaxed.clone(),
            markup_kept: 0,
            stages: Vec::new(),
            structure: None,
            user_only_blocks: 0,
            media_tokens: 0,
            left_out: None,
            recallable: false,
            round: None,
        };
        Self { rec, counts: Counts::new(), structured_cuts: None, error_line_cut: false, left_out: no_left_out() }
    }

    /// Regions of the text that name their file, by class.
    pub fn regions(&mut self, r: &crate::support::regions::Regions) {
        self.rec.regions =
            r.counts.iter().map(|(c, n)| crate::api::RegionCount { class: c.name().to_string(), count: *n }).collect();
    }

    /// Findings the final pass dropped to keep the pipeline's markup.
    pub fn markup_kept(&mut self, n: u32) {
        self.rec.markup_kept += n;
    }

    /// A stage ran: bytes in and out.
    pub fn stage(&mut self, stage: Stage, bytes_in: usize, bytes_out: usize) {
        self.rec.stages.push(StageTrace { stage, bytes_in: bytes_in as u64, bytes_out: bytes_out as u64 });
    }

    /// Triage decided the class.
    /// Where each redaction of the content was made (a report).
    pub fn sites(&mut self, sites: Vec<crate::api::RedactionSite>) {
        self.rec.sites = sites;
    }

    pub fn class(&mut self, class: ContentClass) {
        self.rec.class = class;
    }

    /// Estimated tokens of the media passed through.
    pub fn media_tokens(&self) -> u32 {
        self.rec.media_tokens
    }

    /// The budget applied.
    pub fn budget(&self) -> Budget {
        self.rec.budget
    }

    /// MCP blocks kept from the model, media tokens passed through, and
    /// what triage left out.
    pub fn mcp(&mut self, user_only_blocks: u32, media_tokens: u32, left_out: LeftOut) {
        self.rec.user_only_blocks = user_only_blocks;
        self.rec.media_tokens = media_tokens;
        self.left_out = left_out;
    }

    /// MCP structured content was left out (it did not fit, or was not to
    /// be thinned).
    pub fn structured_left_out(&mut self) {
        self.left_out.structured_content = true;
    }

    /// Cuts made in thinning MCP structured content.
    pub fn structured_cuts(&mut self, cuts: StructureCuts) {
        self.structured_cuts = Some(cuts);
    }

    /// Replacements made by one pass, added to the totals.
    pub fn add_counts(&mut self, counts: Counts) {
        for (k, v) in counts {
            *self.counts.entry(k).or_default() += v;
        }
    }

    /// Sizes of the text read: the input after a recall's slice, the whole
    /// output's size, whether the cap cut, and the decoded text.
    pub fn text(&mut self, input_bytes: usize, original_bytes: u64, cap_hit: bool, d: Decoded, recallable: bool) {
        let r = &mut self.rec;
        r.input_bytes = input_bytes as u64;
        r.original_bytes = original_bytes;
        r.byte_cap_hit = cap_hit;
        r.original_chars = d.chars;
        r.original_lines = d.lines;
        r.invalid_utf8 = d.invalid;
        // Added: the structured content's count may be in already.
        r.defanged += d.defanged;
        r.recallable = recallable;
    }

    /// More markup look-alikes defanged (in a JSON document's decoded
    /// strings, or an MCP result's structured content and links).
    pub fn defanged(&mut self, n: u32) {
        self.rec.defanged += n;
    }

    /// How the text was cut, and what the strategy left out.
    pub fn strategy(&mut self, strategy: Strategy, truncated: bool, structure: Option<StructureCuts>) {
        self.rec.strategy = strategy;
        self.rec.truncated = truncated;
        self.rec.structure = structure;
    }

    /// A span of the original present in the output.
    pub fn kept(&mut self, span: Span) {
        self.rec.kept.push(span);
    }

    /// A span of the original absent from the output.
    pub fn omitted(&mut self, span: Span) {
        self.rec.omitted.push(span);
    }

    /// Binary input: omitted whole, `original_bytes` of it.
    pub fn binary(&mut self, original_bytes: u64) {
        let r = &mut self.rec;
        r.class = ContentClass::Binary;
        r.original_bytes = original_bytes;
        r.truncated = true;
        r.strategy = Strategy::Omitted;
        r.omitted = vec![Span { start_byte: 0, end_byte: original_bytes, start_line: 0, end_line: 0 }];
    }

    /// The tool error's message was cut to its share of the budget.
    pub fn error_line_cut(&mut self) {
        self.error_line_cut = true;
    }

    /// Closes the record with the model-visible text and its token count
    /// (none when the budget was proved without counting).
    pub fn finish(mut self, out: &str, tokens: Option<u64>) -> SanitizeRecord {
        self.rec.truncated |= self.error_line_cut;
        if any_left_out(&self.left_out) {
            self.rec.left_out = Some(self.left_out);
            self.rec.truncated = true;
        }
        if let Some(sc) = self.structured_cuts.take() {
            // Structured content was thinned: its cuts join the text's.
            let r = self.rec.structure.get_or_insert_with(no_cuts);
            r.items += sc.items;
            r.keys += sc.keys;
            r.chars += sc.chars;
            r.containers += sc.containers;
            self.rec.truncated = true;
        }
        self.rec.redactions = counts_to_records(&self.counts);
        self.rec.output_chars = text::char_count(out) as u64;
        self.rec.output_tokens = tokens;
        self.rec
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{default_options, resolve};
    use crate::pack::fixtures;

    fn builder() -> RecordBuilder {
        let opts = default_options();
        let budget = resolve(&opts, &fixtures::rule_set(vec![])).unwrap();
        RecordBuilder::new(&opts, &budget, &fixtures::pack(vec![]), 10)
    }

    #[test]
    fn counts_add_up_and_structured_cuts_join_the_texts() {
        let mut b = builder();
        b.counts.insert("a".into(), 1);
        b.add_counts(Counts::from([("a".into(), 2), ("b".into(), 1)]));
        b.strategy(Strategy::HeadTailErrors, true, Some(StructureCuts { error_lines: 3, ..no_cuts() }));
        b.structured_cuts(StructureCuts { items: 5, ..no_cuts() });
        b.stage(Stage::Triage, 10, 10);
        let r = b.finish("héllo", Some(2));
        assert_eq!(
            r.redactions.iter().map(|c| (c.rule_id.as_str(), c.count)).collect::<Vec<_>>(),
            [("a", 3), ("b", 1)]
        );
        let s = r.structure.unwrap();
        assert_eq!((s.items, s.error_lines), (5, 3));
        assert_eq!((r.output_chars, r.output_tokens, r.truncated, r.pack_name.as_str()), (5, Some(2), true, "t"));
        assert_eq!(r.stages.len(), 1);
    }

    #[test]
    fn binary_is_omitted_whole() {
        let mut b = builder();
        b.binary(4096);
        let r = b.finish("binary output omitted, 10 bytes", None);
        assert_eq!((r.class, r.strategy, r.truncated), (ContentClass::Binary, Strategy::Omitted, true));
        assert_eq!((r.omitted.len(), r.omitted[0].end_byte), (1, 4096));
    }
}

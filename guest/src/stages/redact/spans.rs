//! Spans to redact: the spans one scan has found ([`Found`]), merging
//! overlapping spans, and the counts by rule id.

use std::collections::BTreeMap;

use super::rules::{CompiledRule, Ruleset};
use crate::api::RuleCount;
use crate::support::text::{ceil_boundary, floor_boundary};

/// A span to redact.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Span {
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
pub(super) struct Found {
    /// This scan runs the `regex` crate's engines (see [`FAST_MIN_TEXT`]).
    pub(super) fast: bool,
    pub(super) spans: Vec<Span>,
    /// (start, end) → whether a propagating rule found it
    pub(super) bounds: rustc_hash::FxHashMap<(usize, usize), bool>,
    /// The text is source code ([`super::Mode::code`]).
    pub(super) code: bool,
    /// Its string literals, found on a generic rule's first candidate.
    pub(super) literals: Option<Vec<std::ops::Range<usize>>>,
}

impl Found {
    /// Adds the candidate `text[start..end]` if it is new and `rule`
    /// accepts it.
    pub(super) fn offer(&mut self, set: &Ruleset, rule: &CompiledRule, text: &str, start: usize, end: usize) {
        // Only ASCII text reaches the byte-mode engine, whose bounds could
        // otherwise fall inside a character: kept on whole characters.
        let (start, end) = (floor_boundary(text, start), ceil_boundary(text, end));
        if start == end || self.bounds.get(&(start, end)).is_some_and(|&p| p || !rule.propagate) {
            return;
        }
        if self.code && rule.strict_only {
            let literals = self.literals.get_or_insert_with(|| crate::support::code::string_literals(text));
            if !crate::support::code::inside(literals, start, end) || !set.secret_shaped(&text[start..end]) {
                return;
            }
        }
        if set.accept(rule, &text[start..end], self.fast) {
            self.bounds.insert((start, end), rule.propagate);
            self.spans.push(Span { start, end, rule: rule.id.clone() });
        }
    }
}

/// Sorts spans and merges overlapping ones (the first rule id wins).
pub(super) fn merge(mut spans: Vec<Span>) -> Vec<Span> {
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
pub(crate) fn counts_to_records(counts: &BTreeMap<String, u32>) -> Vec<RuleCount> {
    counts.iter().map(|(k, v)| RuleCount { rule_id: k.clone(), count: *v }).collect()
}

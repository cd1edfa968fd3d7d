//! Counters a host exports: results seen, cut, redacted (by rule), recalls,
//! and the fuel the pipeline burned.
//!
//! Each result also emits a `tracing` event (target `result_sanitizer`)
//! with the same facts and no content: class, strategy, whether it was
//! cut, redaction count, output tokens, pack.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

use crate::api;

/// Live counters of one `Sanitizer`.
#[derive(Default, Debug)]
pub struct Metrics {
    results: AtomicU64,
    truncated: AtomicU64,
    redacted: AtomicU64,
    errors: AtomicU64,
    recalls: AtomicU64,
    recalls_after_truncation: AtomicU64,
    fuel: AtomicU64,
    by_rule: Mutex<BTreeMap<String, u64>>,
}

/// A copy of the counters, for export.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct MetricsSnapshot {
    /// Results sanitized.
    pub results: u64,
    /// Results that were cut.
    pub truncated: u64,
    /// Results with at least one redaction.
    pub redacted: u64,
    /// Calls that ended in an error.
    pub errors: u64,
    /// Recalls served.
    pub recalls: u64,
    /// Recalls of outputs whose first result was cut.
    pub recalls_after_truncation: u64,
    /// Redactions by rule id.
    pub redactions_by_rule: BTreeMap<String, u64>,
    /// Fuel the pipeline's calls burned, failed ones included (about one
    /// unit per wasm instruction; a pack's calls run on their own fuel and
    /// are not in it): the work done, the same on any machine, for cost
    /// accounting and for comparing builds where timings are noisy.
    pub fuel: u64,
}

impl Metrics {
    /// Counts one result and emits its event.
    pub(crate) fn result(&self, pack: &str, out: &api::Sanitized) {
        let r = &out.record;
        self.results.fetch_add(1, Relaxed);
        if r.truncated {
            self.truncated.fetch_add(1, Relaxed);
        }
        let redactions: u64 = r.redactions.iter().map(|c| u64::from(c.count)).sum();
        if redactions > 0 {
            self.redacted.fetch_add(1, Relaxed);
            let mut m = self.by_rule.lock().expect("metrics lock");
            for c in &r.redactions {
                *m.entry(c.rule_id.clone()).or_default() += u64::from(c.count);
            }
        }
        tracing::info!(
            target: "result_sanitizer",
            pack,
            class = ?r.class,
            strategy = ?r.strategy,
            truncated = r.truncated,
            redactions,
            output_tokens = r.output_tokens,
            "sanitized"
        );
    }

    /// Counts a failed call and emits its event (errors quote no input).
    pub(crate) fn error(&self, e: &crate::Error) {
        self.errors.fetch_add(1, Relaxed);
        tracing::warn!(target: "result_sanitizer", error = %e, "sanitize failed");
    }

    /// Adds the fuel one call into the pipeline burned.
    pub(crate) fn fuel(&self, used: u64) {
        self.fuel.fetch_add(used, Relaxed);
    }

    /// Counts a recall.
    pub(crate) fn recall(&self, after_truncation: bool) {
        self.recalls.fetch_add(1, Relaxed);
        if after_truncation {
            self.recalls_after_truncation.fetch_add(1, Relaxed);
        }
        tracing::info!(target: "result_sanitizer", after_truncation, "recall");
    }

    /// The counters now.
    pub fn snapshot(&self) -> MetricsSnapshot {
        MetricsSnapshot {
            results: self.results.load(Relaxed),
            truncated: self.truncated.load(Relaxed),
            redacted: self.redacted.load(Relaxed),
            errors: self.errors.load(Relaxed),
            recalls: self.recalls.load(Relaxed),
            recalls_after_truncation: self.recalls_after_truncation.load(Relaxed),
            redactions_by_rule: self.by_rule.lock().expect("metrics lock").clone(),
            fuel: self.fuel.load(Relaxed),
        }
    }
}

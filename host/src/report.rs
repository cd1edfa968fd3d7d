//! Why was this redacted? A report of a `redact` stream: one JSON line per
//! replacement with its rule, position and a keyed hash of the value,
//! never the value.
//!
//! The hash is HMAC-SHA256 under a key of the report (random per run
//! unless the caller gives one), cut to 16 hex digits: two findings of one
//! report with the same hash have the same value, and nobody without the
//! key can test a guess against it.

use std::io::Write;

use crate::api::RedactionSpan;
use crate::error::Result;

/// A report key: 32 bytes from the OS, fresh for each run or call.
pub fn random_key() -> Result<[u8; 32]> {
    let mut k = [0u8; 32];
    getrandom::fill(&mut k).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(k)
}

/// Where a report goes, and the position of the stream read so far.
pub struct Report<'w> {
    out: &'w mut dyn Write,
    key: [u8; 32],
    /// Bytes of the stream consumed by earlier steps.
    offset: u64,
    /// Line (from 1) and start byte of the line at `offset`.
    line: u64,
    line_start: u64,
}

impl<'w> Report<'w> {
    /// A report written to `out`, hashing under `key` (or a random key).
    pub fn new(out: &'w mut dyn Write, key: Option<[u8; 32]>) -> Result<Self> {
        let key = match key {
            Some(k) => k,
            None => random_key()?,
        };
        Ok(Self { out, key, offset: 0, line: 1, line_start: 0 })
    }

    /// Writes the spans of one step over `data`, of which `consumed` bytes
    /// were consumed; spans are in order and within them (checked by the
    /// host when the step returned).
    pub(crate) fn step(&mut self, data: &[u8], consumed: usize, spans: &[RedactionSpan]) -> Result<()> {
        let mut pos = 0usize;
        for s in spans {
            let (start, end) = (s.start as usize, s.end as usize);
            self.advance(&data[pos..start], pos);
            pos = start;
            let at = self.offset + start as u64;
            let hash = result_sanitizer_rule_engine::value_hash(&self.key, &data[start..end]);
            let line = serde_json::json!({
                "rule_id": s.rule_id,
                "line": self.line,
                "column": at - self.line_start + 1,
                "offset": at,
                "length": end - start,
                "hash": hash,
            });
            writeln!(self.out, "{line}")?;
        }
        self.advance(&data[pos..consumed], pos);
        self.offset += consumed as u64;
        Ok(())
    }

    /// Counts the lines of `bytes`, which start `at` bytes into the step.
    fn advance(&mut self, bytes: &[u8], at: usize) {
        for nl in memchr::memchr_iter(b'\n', bytes) {
            self.line += 1;
            self.line_start = self.offset + (at + nl + 1) as u64;
        }
    }
}

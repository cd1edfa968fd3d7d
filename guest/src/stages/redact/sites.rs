//! Where each redaction was made, for "why was this redacted?" (options
//! `report-key`): rule, original byte span, line and column, and the value
//! as a keyed hash (HMAC-SHA256 under the caller's key, 8 bytes in hex),
//! never the value ([`super::value_hash`]). Cost: one binary search per
//! site, one HMAC per value.

use super::value_hash::value_hash;
use super::Span;
use crate::api::RedactionSite;
use crate::support::located::Located;

/// The sites of `spans`, positions in `text` (the decoded text that was
/// redacted), mapped to the whole original output through `at` (a
/// recalled slice's base, a drained middle).
pub(crate) fn sites(text: &str, spans: &[Span], key: &str, at: &Located) -> Vec<RedactionSite> {
    let b = text.as_bytes();
    spans
        .iter()
        .map(|s| {
            let line_start = memchr::memrchr(b'\n', &b[..s.start]).map_or(0, |p| p + 1);
            RedactionSite {
                rule_id: s.rule.clone(),
                start_byte: at.decoded_byte(s.start),
                end_byte: at.decoded_byte_end(s.end),
                line: at.decoded_line(s.start),
                column: at.decoded_byte(s.start) - at.decoded_byte(line_start) + 1,
                hash: value_hash(key.as_bytes(), &b[s.start..s.end]),
            }
        })
        .collect()
}

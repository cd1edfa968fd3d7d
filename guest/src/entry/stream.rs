//! Streaming redaction: constant memory over unbounded input.
//!
//! The host sends `carry + chunk`; the pipeline redacts and returns the
//! redacted form of a prefix it is sure about, plus how many input bytes
//! that prefix consumed. Everything after the commit point is sent again
//! with the next chunk, so a secret that straddles a chunk boundary is seen
//! whole. The commit point is [`OVERLAP`] bytes before the end of the data
//! (longer than any secret a rule matches, PEM blocks included), moved
//! back to a UTF-8 boundary, and moved forward past any match that starts
//! before it. Bytes that are not valid UTF-8 pass through unchanged: output
//! equals input byte for byte wherever nothing matched.
//!
//! Memory: at most one chunk plus [`OVERLAP`] bytes, whatever the input.

use std::collections::BTreeMap;

use crate::api::{RedactRequest, RedactResponse, RedactionSpan, SanitizeError};
use crate::markup;
use crate::pack::CompiledPack;
use crate::stages::redact::{counts_to_records, Pass};

/// Bytes kept back for the next step.
pub const OVERLAP: usize = 64 * 1024;

/// One streaming step.
pub fn step(req: &RedactRequest, pack: &CompiledPack) -> Result<RedactResponse, SanitizeError> {
    let data = &req.data;
    let mut commit = if req.last { data.len() } else { data.len().saturating_sub(OVERLAP) };
    // Never split a UTF-8 sequence at the commit point.
    while commit < data.len() && commit > 0 && (data[commit] & 0xC0) == 0x80 {
        commit -= 1;
    }
    let mut out = Vec::with_capacity(data.len());
    let mut counts: BTreeMap<String, u32> = BTreeMap::new();
    let mut pos = 0usize;
    let code = req.content_type.as_deref().is_some_and(crate::support::code::is_code_type);
    let pass = Pass::new(pack, false)
        .over_code(code)
        .over_regions(req.content_type.is_none())
        .inline_allow(!req.untrusted)
        .pii(req.pii, req.pii_public_ip);
    let mut report = Vec::new();
    for (valid, invalid) in crate::support::text::utf8_pieces(data) {
        let start = pos;
        let spans = pass.spans(valid);
        let mut last = 0usize;
        let mut beyond = false;
        for s in &spans {
            if start + s.start >= commit {
                beyond = true; // found again, whole, in the next step
                break;
            }
            out.extend_from_slice(&valid.as_bytes()[last..s.start]);
            markup::push_redacted(&mut out, &s.rule);
            if req.report {
                let (a, b) = ((start + s.start) as u32, (start + s.end) as u32);
                report.push(RedactionSpan { rule_id: s.rule.clone(), start: a, end: b });
            }
            match counts.get_mut(&s.rule) {
                Some(n) => *n += 1,
                None => drop(counts.insert(s.rule.clone(), 1)),
            }
            last = s.end;
        }
        if beyond || start + valid.len() > commit {
            // The commit point falls in this run; a match that straddled
            // it was applied whole, so commit after it.
            let end = floor_char(valid, commit - start).max(last);
            out.extend_from_slice(&valid.as_bytes()[last..end]);
            let consumed = (start + end) as u32;
            if let Some(e) = pass.error() {
                return Err(e);
            }
            return Ok(RedactResponse { output: out, consumed, redactions: counts_to_records(&counts), spans: report });
        }
        out.extend_from_slice(&valid.as_bytes()[last..]);
        pos += valid.len();
        if pos >= commit && !req.last {
            break;
        }
        out.extend_from_slice(invalid);
        pos += invalid.len();
    }
    if let Some(e) = pass.error() {
        return Err(e);
    }
    Ok(RedactResponse { output: out, consumed: pos as u32, redactions: counts_to_records(&counts), spans: report })
}

fn floor_char(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::fixtures;
    use crate::pack::CompiledPack;

    fn pack() -> CompiledPack {
        fixtures::pack(vec![fixtures::rule(serde_json::json!({
            "id": "tok", "regex": r"\b(tok_[a-z0-9]{20})\b", "keywords": ["tok_"], "secret_group": 1
        }))])
    }

    /// Drives `step` the way a host does, with the given chunk size.
    fn run(input: &[u8], chunk: usize, p: &CompiledPack) -> Vec<u8> {
        let mut out = Vec::new();
        let mut carry: Vec<u8> = Vec::new();
        let mut chunks = input.chunks(chunk).peekable();
        loop {
            let next = chunks.next();
            if let Some(c) = next {
                carry.extend_from_slice(c);
            }
            let last = chunks.peek().is_none();
            let r = step(&crate::options::redact_request(carry.clone(), last), p).unwrap();
            out.extend_from_slice(&r.output);
            carry.drain(..r.consumed as usize);
            if last {
                assert!(carry.is_empty());
                break;
            }
        }
        out
    }

    #[test]
    fn secret_across_chunk_boundaries_and_invalid_bytes_pass_through() {
        let p = pack();
        let mut input = Vec::new();
        for i in 0..20_000 {
            input.extend_from_slice(format!("line {i} é ok\n").as_bytes());
            if i % 997 == 0 {
                input.extend_from_slice(b"token tok_abcdefghij0123456789 end\n\xff\xfe\n");
            }
        }
        let expected: Vec<u8> = {
            let mut e = Vec::new();
            let needle = b"tok_abcdefghij0123456789";
            let mut i = 0;
            while i < input.len() {
                if input[i..].starts_with(needle) {
                    e.extend_from_slice(b"[REDACTED:tok]");
                    i += needle.len();
                } else {
                    e.push(input[i]);
                    i += 1;
                }
            }
            e
        };
        for chunk in [OVERLAP + 1, OVERLAP + 7919, 3 * OVERLAP] {
            assert!(run(&input, chunk, &p) == expected, "chunk {chunk}");
        }
    }
}

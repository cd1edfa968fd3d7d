//! Streaming redaction: constant memory over unbounded input.
//!
//! The host sends `carry + chunk`; the pipeline redacts and returns the
//! redacted form of a prefix it is sure about, plus how many input bytes
//! that prefix consumed. Everything after the commit point is sent again
//! with the next chunk, so a secret that straddles a chunk boundary is seen
//! whole. The commit point is 64 KiB before the end of the data (longer
//! than any secret a rule matches, PEM blocks included), moved back to a
//! UTF-8 boundary and to the start of its line ([`usual_commit`]), then
//! forward past any match that crosses it ([`past_matches`]): its secret,
//! or its context before the point and its secret after it (a key's line
//! and then its value's), so that no value is left to a step that no
//! longer sees its key. Bytes that are not valid UTF-8 pass through
//! unchanged: output equals input byte for byte wherever nothing matched.
//!
//! Memory: a step's data is its carry (at most the overlap, or a chunk
//! and the overlap when the point's line is long) and a chunk, whatever
//! the input.

use std::collections::BTreeMap;

use crate::api::{RedactRequest, RedactResponse, RedactionSpan, SanitizeError};
use crate::markup;
use crate::pack::CompiledPack;
use crate::record::counts_to_records;
use crate::stages::redact::{past_matches, usual_commit, Pass};

/// How much of a stream asked to sniff is read to judge it: what
/// `sanitize` reads of a result to tell a test's code.
const SNIFF_BYTES: usize = 16 * 1024;

/// The content type a stream is judged to have from its first bytes, as
/// `sanitize` judges a result without one (`stages::triage`):
/// `text/x-source` for code, with `; test` for a test's; `""` for
/// anything else (plain text, where regions that name their file are
/// judged as that file).
fn sniffed(head: &[u8]) -> &'static str {
    match crate::stages::triage::refine(head, None) == crate::api::ContentClass::Code {
        true if crate::support::sniff::looks_like_test(head) => "text/x-source; test",
        true => "text/x-source",
        false => "",
    }
}

/// One streaming step.
pub fn step(req: &RedactRequest, pack: &CompiledPack) -> Result<RedactResponse, SanitizeError> {
    let data = &req.data;
    // A stream asked to sniff is judged once, on its first bytes: wait
    // for them (a step that consumes nothing), then say the judgment.
    let sniffed = match (req.sniff && req.content_type.is_none(), req.last) {
        (false, _) => None,
        (true, false) if data.len() < SNIFF_BYTES => {
            return Ok(RedactResponse {
                output: Vec::new(),
                consumed: 0,
                redactions: Vec::new(),
                spans: Vec::new(),
                content_type: None,
            });
        }
        (true, _) => Some(sniffed(&data[..data.len().min(SNIFF_BYTES)])),
    };
    let content_type = sniffed.or(req.content_type.as_deref()).filter(|t| !t.is_empty());
    // At a line start: a value after the point keeps its context.
    let mut commit = if req.last { data.len() } else { usual_commit(data) };
    let mut out = Vec::with_capacity(data.len());
    let mut counts: BTreeMap<String, u32> = BTreeMap::new();
    let mut pos = 0usize;
    let code = content_type.is_some_and(crate::support::code::is_code_type);
    // Not from a source nobody here controls (the judgment comes back as a
    // content type too, so an untrusted stream is never a test's).
    let test = code && !req.untrusted && content_type.is_some_and(crate::support::code::declares_test);
    let pass = Pass::new(pack, false)
        .over_code(code)
        .over_tests(test)
        .over_regions(content_type.is_none())
        .inline_allow(!req.untrusted)
        .pii(req.pii, req.pii_public_ip);
    let mut report = Vec::new();
    for (valid, invalid) in crate::support::text::utf8_pieces(data) {
        let start = pos;
        let spans = pass.spans(valid);
        if (start..start + valid.len()).contains(&commit) {
            commit = start + past_matches(&spans, commit - start);
        }
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
            return Ok(RedactResponse {
                output: out,
                consumed,
                redactions: counts_to_records(&counts),
                spans: report,
                content_type: sniffed.map(str::to_string),
            });
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
    Ok(RedactResponse {
        output: out,
        consumed: pos as u32,
        redactions: counts_to_records(&counts),
        spans: report,
        content_type: sniffed.map(str::to_string),
    })
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
    use crate::stages::redact::OVERLAP;

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
                input.extend_from_slice(b"token tok_qwhzkrmvtp0123456789 end\n\xff\xfe\n");
            }
        }
        let expected: Vec<u8> = {
            let mut e = Vec::new();
            let needle = b"tok_qwhzkrmvtp0123456789";
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

    const LOG_LINE: &[u8] = b"2026-12-06 INFO request handled ok\n";

    /// Log lines, then `text` from the start of a line at `at` (from the
    /// stream's start when `at` is 0), then more log lines.
    fn log_around(at: usize, text: &[u8]) -> Vec<u8> {
        let mut input = Vec::new();
        while input.len() + 40 < at {
            input.extend_from_slice(LOG_LINE);
        }
        if at > 0 {
            input.resize(at - 1, b'x');
            input.push(b'\n');
        }
        input.extend_from_slice(text);
        input.extend_from_slice(&LOG_LINE.repeat(4000));
        input
    }

    #[test]
    fn a_value_at_the_commit_point_is_seen_with_its_key() {
        // The key before the usual commit point, the value from it on: the
        // step that defers the value must hand the next one the whole line.
        let p = fixtures::pack(vec![fixtures::rule(serde_json::json!({
            "id": "kv", "regex": r#"api_key = "([A-Za-z0-9]{20})""#, "keywords": ["api_key"], "secret_group": 1
        }))]);
        let chunk = OVERLAP + 7919;
        let line = b"config: api_key = \"Zq8vR2mK7tLwX9pQ4nB6\"\n";
        let value_at = line.iter().position(|&c| c == b'Z').unwrap();
        for off in [-3i64, 0, 1, 7, 15] {
            let at = ((chunk - OVERLAP) as i64 + off) as usize - value_at;
            let out = String::from_utf8(run(&log_around(at, line), chunk, &p)).unwrap();
            assert!(out.contains("api_key = \"[REDACTED:kv]\""), "value {off} bytes after the point");
        }
        // A line too long to stop at its start: the point falls between
        // the key and the value, and the step takes the match across it.
        for off in [-5i64, 0, 9] {
            let mut long = vec![b'x'; ((chunk - OVERLAP) as i64 + off) as usize - value_at];
            long.extend_from_slice(line);
            let out = String::from_utf8(run(&log_around(0, &long), chunk, &p)).unwrap();
            assert!(out.contains("api_key = \"[REDACTED:kv]\""), "one long line, value {off} bytes after the point");
        }
    }

    #[test]
    fn a_value_on_the_line_after_its_key_is_seen_with_it() {
        // The key on one line, the value on the next, which starts at the
        // point: the step that stops there takes the match across it.
        let p = fixtures::pack(vec![fixtures::rule(serde_json::json!({
            "id": "env", "regex": r#"name: DB_PASSWORD\n\s*value: "([A-Za-z0-9]{20})""#, "keywords": ["name:"],
            "secret_group": 1
        }))]);
        let chunk = OVERLAP + 7919;
        let lines = b"- name: DB_PASSWORD\n  value: \"Zq8vR2mK7tLwX9pQ4nB6\"\n";
        let second = lines.iter().position(|&c| c == b'\n').unwrap() + 1;
        for off in [0, 2, 11] {
            let at = chunk - OVERLAP + off - second;
            let out = String::from_utf8(run(&log_around(at, lines), chunk, &p)).unwrap();
            assert!(out.contains("value: \"[REDACTED:env]\""), "the value's line {off} bytes after the point");
        }
    }

    #[test]
    fn a_sniffed_test_leaves_its_fixtures_whatever_the_chunks() {
        let p = fixtures::pack(vec![
            fixtures::rule(serde_json::json!({
                "id": "tok", "regex": r"\b(tok_[a-z0-9]{20})\b", "keywords": ["tok_"], "secret_group": 1
            })),
            fixtures::rule(serde_json::json!({
                "id": "url-pw", "regex": r"://[^\s:/@]{0,64}:([^\s/@]{1,64})@", "keywords": ["://"], "secret_group": 1
            })),
        ]);
        let mut src = String::from("package proxy\n\nimport \"testing\"\n\n");
        for i in 0..1200 {
            src.push_str(&format!(
                "func TestProxy{i}(t *testing.T) {{\n\tp := Parse(\"http://letme:in@yo.local\")\n}}\n"
            ));
        }
        src.push_str("func TestKeys(t *testing.T) {\n\tk := \"tok_q8vr2mk7tlx9w3zp4nbc\"\n");
        src.push_str("\tu := \"http://app:Zq8vR2mK7tLx9w@db\"\n}\n");
        assert!(src.len() > OVERLAP);
        let run = |chunk: usize, sniff: bool| -> (String, Option<String>) {
            let (mut out, mut carry, mut judged) = (Vec::new(), Vec::new(), None);
            let mut sniffing = sniff;
            let mut chunks = src.as_bytes().chunks(chunk).peekable();
            while let Some(c) = chunks.next() {
                carry.extend_from_slice(c);
                let last = chunks.peek().is_none();
                let req = RedactRequest {
                    sniff: sniffing,
                    content_type: judged.clone().filter(|t: &String| !t.is_empty()),
                    ..crate::options::redact_request(carry.clone(), last)
                };
                let r = step(&req, &p).unwrap();
                // Nothing is consumed before the stream is judged.
                assert!(r.content_type.is_some() || !sniffing || r.consumed == 0);
                if r.content_type.is_some() {
                    sniffing = false;
                    judged = r.content_type;
                }
                out.extend_from_slice(&r.output);
                carry.drain(..r.consumed as usize);
            }
            (String::from_utf8(out).unwrap(), judged)
        };
        let (whole, judged) = run(src.len(), true);
        assert_eq!(judged.as_deref(), Some("text/x-source; test"));
        // The fixture is left; a provider's token and a random password are not.
        assert_eq!(whole.matches("letme:in@").count(), 1200);
        assert!(whole.contains("[REDACTED:tok]") && whole.contains("app:[REDACTED:url-pw]@db"));
        for chunk in [1000, 16 * 1024 + 3, 50_000] {
            assert!(run(chunk, true).0 == whole, "chunk {chunk}");
        }
        // A diff of code is text (its regions name their files); a log too.
        let diff = "diff --git a/src/a.rs b/src/a.rs\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1,6 +1,6 @@ mod a {\n fn a() {\n     let x = 1;\n-    let y = 2;\n+    let y = 3;\n }\n fn b() {}\n";
        assert!(crate::support::sniff::looks_like_code(diff.as_bytes()));
        assert_eq!((sniffed(diff.as_bytes()), sniffed(&diff.as_bytes()[diff.find('@').unwrap()..])), ("", ""));
        assert_eq!(sniffed(b"INFO start\nINFO token=abc\n"), "");
        assert_eq!(sniffed(&src.as_bytes()[..SNIFF_BYTES]), "text/x-source; test");
        // Not asked to sniff: plain text, where the fixture is redacted.
        let (plain, none) = run(50_000, false);
        assert!(none.is_none() && !plain.contains("letme:in@"));
    }
}

//! Streaming `redact` with random chunking equals one-shot redaction, and
//! no planted secret survives either.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use result_sanitizer_fuzz::{pack, plant, standalone, SECRETS};
use result_sanitizer_pipeline::redact_step as step;
use result_sanitizer_rule_engine::api::RedactRequest;
use result_sanitizer_rule_engine::redact_request;

#[derive(Arbitrary, Debug)]
struct Case {
    data: Vec<u8>,
    plants: Vec<(u16, u8)>,
    /// Chunk lengths, cycled; small values stress the overlap logic.
    chunks: Vec<u16>,
    /// Repeat the data this many times (up to 8) to pass the 64 KiB overlap.
    repeat: u8,
    /// Redact personal data too (the detectors must be chunk-independent).
    pii: bool,
    /// Ask the pipeline to judge the stream, carrying its judgment as a
    /// host does (the output must not depend on the chunks either).
    sniff: bool,
}

fuzz_target!(|c: Case| {
    let one = plant(&c.data, &c.plants);
    let input = one.repeat(1 + c.repeat as usize % 8);
    let whole = step(&RedactRequest { pii: c.pii, sniff: c.sniff, ..redact_request(input.clone(), true) }, pack())
        .expect("redact")
        .output;
    let chunks: Vec<usize> =
        if c.chunks.is_empty() { vec![4096] } else { c.chunks.iter().map(|&n| 1 + n as usize).collect() };
    let (mut out, mut carry, mut pos, mut i) = (Vec::new(), Vec::new(), 0, 0);
    let (mut sniff, mut content_type) = (c.sniff, None);
    loop {
        let end = (pos + chunks[i % chunks.len()]).min(input.len());
        carry.extend_from_slice(&input[pos..end]);
        pos = end;
        i += 1;
        let last = pos == input.len();
        let req = RedactRequest {
            pii: c.pii,
            sniff,
            content_type: content_type.clone(),
            ..redact_request(carry.clone(), last)
        };
        let r = step(&req, pack()).expect("redact step");
        assert!(r.consumed as usize <= carry.len());
        assert!(r.content_type.is_some() || !sniff || r.consumed == 0, "consumed before judging");
        if let Some(t) = r.content_type {
            sniff = false;
            content_type = Some(t).filter(|t| !t.is_empty());
        }
        out.extend_from_slice(&r.output);
        carry.drain(..r.consumed as usize);
        if last {
            assert!(carry.is_empty(), "the last step consumes everything");
            break;
        }
    }
    assert!(out == whole, "chunked output differs from one-shot");
    if std::str::from_utf8(&input).is_ok() {
        assert!(std::str::from_utf8(&out).is_ok(), "UTF-8 in, UTF-8 out");
    }
    for s in SECRETS {
        assert!(!standalone(&String::from_utf8_lossy(&out), s), "a planted secret survived");
    }
});

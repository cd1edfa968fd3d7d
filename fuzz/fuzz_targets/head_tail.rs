//! A long output read as head + tail, its middle drained in random steps:
//! the drained sizes add up, the kept and omitted spans tile the whole
//! output with its own line numbers, and no planted secret shows.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use result_sanitizer_fuzz::{check_sanitized, pack, plant, standalone, SECRETS};
use result_sanitizer_pipeline::{drain_step, sanitize};
use result_sanitizer_rule_engine::api::OutputFormat;
use result_sanitizer_rule_engine::default_options;

#[derive(Arbitrary, Debug)]
struct Case {
    data: Vec<u8>,
    plants: Vec<(u16, u8)>,
    /// Step lengths, cycled.
    steps: Vec<u16>,
    /// Repeat the data this many times (up to 16) to pass the cap and the overlap.
    repeat: u8,
    /// Byte cap: 1024 plus this.
    cap: u16,
}

fn line_at(input: &[u8], at: u64) -> u64 {
    input[..at as usize].iter().filter(|&&b| b == b'\n').count() as u64 + 1
}

fuzz_target!(|c: Case| {
    let input = plant(&c.data, &c.plants).repeat(1 + c.repeat as usize % 16);
    let cap = 1024 + u64::from(c.cap);
    let (head, tail) = ((cap / 4 * 3) as usize, (cap - cap / 4 * 3) as usize);
    if input.len() <= head + tail {
        return;
    }
    let middle = &input[head..input.len() - tail];
    let steps: Vec<usize> =
        if c.steps.is_empty() { vec![70_000] } else { c.steps.iter().map(|&n| 1 + n as usize * 4).collect() };
    let mut gap = result_sanitizer_pipeline::empty_gap(head as u64);
    let (mut carry, mut pos, mut i) = (Vec::new(), 0, 0);
    loop {
        let end = (pos + steps[i % steps.len()]).min(middle.len());
        carry.extend_from_slice(&middle[pos..end]);
        pos = end;
        i += 1;
        let last = pos == middle.len();
        let r = drain_step(&gap, &carry, last, pack()).expect("drain step");
        assert!(r.consumed as usize <= carry.len());
        carry.drain(..r.consumed as usize);
        gap = r.gap;
        if last {
            assert!(carry.is_empty(), "the last step consumes everything");
            break;
        }
    }
    assert_eq!(gap.bytes as usize, middle.len());
    assert_eq!(gap.newlines as usize, middle.iter().filter(|&&b| b == b'\n').count());
    for l in &gap.error_lines {
        assert!(SECRETS.iter().all(|s| !standalone(&l.text, s)), "a planted secret in a kept error line");
    }
    let mut o = default_options();
    o.max_bytes = Some(cap);
    o.gap = Some(gap);
    let kept = [&input[..head], &input[input.len() - tail..]].concat();
    let out = sanitize(&kept, &o, pack()).expect("sanitize");
    check_sanitized(&out, OutputFormat::Mcp, None);
    let r = &out.record;
    assert_eq!(r.original_bytes, input.len() as u64);
    if r.class == result_sanitizer_rule_engine::api::ContentClass::Binary {
        return;
    }
    let mut spans: Vec<_> = r.kept.iter().chain(r.omitted.iter()).collect();
    spans.sort_by_key(|s| s.start_byte);
    let mut at = 0;
    for s in spans {
        assert_eq!(s.start_byte, at, "spans tile the output");
        assert_eq!(s.start_line, line_at(&input, s.start_byte));
        assert_eq!(s.end_line, line_at(&input, s.end_byte.max(s.start_byte + 1) - 1));
        at = s.end_byte;
    }
    assert_eq!(at, input.len() as u64);
});

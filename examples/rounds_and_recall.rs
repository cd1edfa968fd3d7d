//! Round budgets, recall and metrics in an embedding host.
//! Run with `target/release/examples/rounds_and_recall` after `make build`.
//!
//! 1. Three tool calls finish in one round; their results share 3 000
//!    tokens: each gets at least its floor, the rest by need and priority.
//! 2. A cut result is kept in an `OutputStore`; its marker offers
//!    `recall`, and the host serves the omitted lines through the same
//!    pipeline (redacted, budgeted).
//! 3. The counters a host would export.

use std::time::Duration;

use result_sanitizer_host::api::{RoundInput, RoundOptions, Slice, SliceUnit};
use result_sanitizer_host::recall::{OutputStore, StoreConfig};
use result_sanitizer_host::{default_options, Limits, Sanitizer};

fn main() -> Result<(), result_sanitizer_host::Error> {
    let s = Sanitizer::new(Limits::default())?;
    let pack = s.default_pack();

    // 1. One round of parallel calls.
    let grep = "src/main.rs:12: fn main() {\n".to_string();
    let build: String = (1..=5000).map(|i| format!("   Compiling crate-{i} v0.1.0\n")).collect();
    let tests: String = (1..=5000).map(|i| format!("test case_{i} ... ok\n")).collect();
    let call = |tool: &str, body: &str, priority: u32| {
        let mut o = default_options();
        o.tool = tool.into();
        o.call_id = format!("call_{tool}");
        RoundInput { input: body.as_bytes().to_vec(), options: o, priority }
    };
    let inputs = vec![call("grep", &grep, 1), call("build", &build, 1), call("test", &tests, 3)];
    let results = s.sanitize_round(pack, &inputs, &RoundOptions { round_tokens: 3000, min_tokens: 500 })?;
    for (input, r) in inputs.iter().zip(&results) {
        let r = r.as_ref().map_err(|e| result_sanitizer_host::Error::InvalidOutput(e.to_string()))?;
        let share = r.record.round.expect("every round result states its share");
        println!(
            "{:>5}: granted {:>4} of the round's {} tokens (needed {:>5}, priority {}), used {:?}",
            input.options.tool, share.tokens, share.round_tokens, share.need, share.priority, r.record.output_tokens
        );
    }

    // 2. Keep the full output, then recall part of what was cut.
    let store = OutputStore::new(StoreConfig { ttl: Duration::from_secs(600), ..StoreConfig::default() })?;
    let mut o = default_options();
    o.tool = "build".into();
    o.call_id = "call_build".into();
    o.max_tokens = Some(400);
    let out = s.sanitize_kept(pack, &store, "tenant-a", build.as_bytes(), &o)?;
    let v: serde_json::Value = serde_json::from_str(&out.message).expect("JSON");
    let text = v["content"][0]["text"].as_str().unwrap_or_default();
    let marker = text.lines().find(|l| l.contains("recallable")).unwrap_or_default();
    println!("\nmarker: {marker}");
    let back =
        s.recall(pack, &store, "tenant-a", "call_build", Slice { offset: 2500, limit: 3, unit: SliceUnit::Lines }, &o)?;
    let v: serde_json::Value = serde_json::from_str(&back.message).expect("JSON");
    println!("recall(lines 2500-2502):\n{}", v["content"][0]["text"].as_str().unwrap_or_default());
    match s.recall(pack, &store, "tenant-b", "call_build", Slice { offset: 0, limit: 10, unit: SliceUnit::Bytes }, &o) {
        Err(e) => println!("another tenant asking for it: {e}"),
        Ok(_) => unreachable!("other tenants' ids are refused"),
    }

    // 3. Metrics.
    println!("\nmetrics: {}", serde_json::to_string(&s.metrics()).expect("serializes"));
    Ok(())
}

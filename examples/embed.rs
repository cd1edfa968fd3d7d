//! Embedding the host library: one `Sanitizer` for the process, one call
//! per tool result. Run with `cargo run --release --example embed`.

use result_sanitizer_host::api::OutputFormat;
use result_sanitizer_host::io::{redact_stream, StreamOptions};
use result_sanitizer_host::{default_options, Limits, Sanitizer};

fn main() -> Result<(), result_sanitizer_host::Error> {
    // Loads the embedded pipeline and default pack (precompiled at build time).
    let sanitizer = Sanitizer::new(Limits::default())?;

    // What a tool returned: unbounded, untrusted, with a secret in it.
    let tool_output = format!(
        "{}\nERROR: upload failed, retrying with AWS_SECRET_ACCESS_KEY=Zq8vR2m+K7tLw3Yx9bN1cF4hJ6pD0sQ5uG8eT2aV\n",
        "uploading chunk ...\n".repeat(2_000)
    );

    let mut opts = default_options();
    opts.tool = "s3_upload".into();
    opts.call_id = "call_42".into();
    opts.format = OutputFormat::Openai;
    opts.max_tokens = Some(500);

    let out = sanitizer.sanitize(tool_output.as_bytes(), &opts)?;
    let v: serde_json::Value = serde_json::from_str(&out.message).expect("JSON");
    println!("message for the model: {}", serde_json::to_string_pretty(&v["message"]).unwrap());
    println!(
        "record: truncated={} strategy={:?} {} -> {:?} tokens, redactions={:?}",
        out.record.truncated,
        out.record.strategy,
        out.record.original_bytes,
        out.record.output_tokens,
        out.record.redactions.iter().map(|r| (&r.rule_id, r.count)).collect::<Vec<_>>()
    );

    // A long log redacted as a stream, on every core: no budget, no
    // wrapping, byte for byte the input where nothing matched, the same
    // output as on one thread.
    let log = tool_output.repeat(200); // ~8 MB
    let mut redacted = Vec::new();
    let mut stream = StreamOptions { threads: 0, ..StreamOptions::default() };
    let done = redact_stream(&sanitizer, sanitizer.default_pack(), log.as_bytes(), &mut redacted, &mut stream)?;
    println!(
        "streamed {} bytes in {} steps ({} run twice), {} replacements",
        log.len(),
        done.steps,
        done.rerun,
        done.replacements
    );
    Ok(())
}

//! `sanitize` with random bytes, planted secrets and random policies.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use result_sanitizer_fuzz::{check_sanitized, pack, plant, SECRETS};
use result_sanitizer_pipeline::sanitize;
use result_sanitizer_rule_engine::api::{InputKind, OutputFormat, ToolError};
use result_sanitizer_rule_engine::default_options;

#[derive(Arbitrary, Debug)]
struct Case {
    data: Vec<u8>,
    plants: Vec<(u16, u8)>,
    max_tokens: Option<u16>,
    max_chars: Option<u32>,
    max_bytes: Option<u32>,
    head_chars: Option<u16>,
    tail_chars: Option<u16>,
    format: u8,
    untrusted: bool,
    lenient: bool,
    /// A tool error, its message this many copies of a trace line long.
    tool_error: Option<u8>,
    content_type: u8,
}

fuzz_target!(|c: Case| {
    let input = plant(&c.data, &c.plants);
    let format = [OutputFormat::Mcp, OutputFormat::Openai, OutputFormat::Anthropic][c.format as usize % 3];
    let mut o = default_options();
    o.tool = "fuzz".into();
    o.format = format;
    o.input = InputKind::Raw;
    o.max_tokens = c.max_tokens.map(u32::from);
    o.max_chars = c.max_chars.map(|n| n % 200_000);
    o.max_bytes = c.max_bytes.map(|n| u64::from(n % 400_000));
    o.head_chars = c.head_chars.map(u32::from);
    o.tail_chars = c.tail_chars.map(u32::from);
    o.untrusted = c.untrusted;
    o.lenient = c.lenient;
    // The error message is redacted like the output: it carries a secret.
    // A long one (a stack trace) is cut to its share of the budget.
    o.tool_error = c.tool_error.map(|n| ToolError {
        code: "exit-status-1".into(),
        message: format!("failed with {}\n{}", SECRETS[1], "  at handler (src/server.rs:42)\n".repeat(n.into())),
    });
    o.content_type = [None, Some("text/plain"), Some("application/json"), Some("text/html"), Some("image/png")]
        [c.content_type as usize % 5]
        .map(String::from);
    // A typed error (options out of range) is a valid answer; a panic is not.
    if let Ok(out) = sanitize(&input, &o, pack()) {
        check_sanitized(&out, format, o.max_tokens);
    }
});

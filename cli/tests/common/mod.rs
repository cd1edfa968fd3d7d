//! Shared test fixtures: one sanitizer per test process (the pipeline is
//! deserialized once), exact token counting, the MCP schema.
#![allow(dead_code)]

use std::sync::OnceLock;

use result_sanitizer_host::api::{Encoding, Options, OutputFormat, Sanitized};
use result_sanitizer_host::{default_options, Limits, Sanitizer};

pub fn sanitizer() -> &'static Sanitizer {
    static S: OnceLock<Sanitizer> = OnceLock::new();
    S.get_or_init(|| Sanitizer::new(Limits::default()).expect("embedded components load"))
}

pub fn opts(tool: &str) -> Options {
    let mut o = default_options();
    o.tool = tool.into();
    o.call_id = "call_1".into();
    o
}

/// Exact token count with tiktoken-rs directly (no chunking).
pub fn tokens(text: &str, enc: Encoding) -> usize {
    let bpe = match enc {
        Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
        Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
    };
    bpe.encode_ordinary(text).len()
}

/// The message as JSON; the record it carries must match the record
/// schema (docs/record.schema.json).
pub fn json(s: &Sanitized) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(&s.message).expect("message is JSON");
    assert_record_valid(message_record(&v));
    v
}

/// The record inside a message of any format.
pub fn message_record(message: &serde_json::Value) -> &serde_json::Value {
    match message.get("_meta") {
        Some(meta) => &meta["result-sanitizer/record"],
        None => &message["record"],
    }
}

/// All model-visible text of a message, whatever its format.
pub fn visible_text(s: &Sanitized, format: OutputFormat) -> String {
    let v = json(s);
    match format {
        OutputFormat::Mcp => texts(&v["content"]),
        OutputFormat::Openai => v["message"]["content"].as_str().unwrap().to_string(),
        OutputFormat::Anthropic => texts(&v["message"]["content"]),
    }
}

fn texts(content: &serde_json::Value) -> String {
    content
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b.get("text").and_then(|t| t.as_str()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Validator for `CallToolResult` from the MCP 2025-11-25 schema (the
/// repository's copy in `tests/mcp-schema/`, MIT, see its NOTICE.md).
pub fn mcp_validator() -> &'static jsonschema::Validator {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    V.get_or_init(|| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/mcp-schema/schema-2025-11-25.json");
        let mut schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).expect("tests/mcp-schema schema")).unwrap();
        schema["$ref"] = "#/$defs/CallToolResult".into();
        jsonschema::validator_for(&schema).expect("schema compiles")
    })
}

pub fn assert_mcp_valid(v: &serde_json::Value) {
    let errors: Vec<String> = mcp_validator().iter_errors(v).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "MCP schema violations: {errors:?}");
}

/// Validator for the record, from the schema the project publishes.
pub fn record_validator() -> &'static jsonschema::Validator {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    V.get_or_init(|| {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/record.schema.json");
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).expect("docs/record.schema.json")).unwrap();
        jsonschema::validator_for(&schema).expect("record schema compiles")
    })
}

pub fn assert_record_valid(record: &serde_json::Value) {
    let errors: Vec<String> = record_validator().iter_errors(record).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "record schema violations: {errors:?}");
}

/// Runs the CLI with `args` and `stdin` as its input, written from a
/// thread so that an input larger than a pipe's buffer cannot deadlock
/// against the output.
pub fn cli_with_stdin(args: &[&str], stdin: &[u8]) -> std::process::Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_result-sanitizer"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// The pack template's core module (`examples/pack-template`), built for
/// wasm by `make build`: a pack with `detect` code, for `wrap_pack_core`.
pub fn pack_template_core() -> Vec<u8> {
    let core = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/wasm32-unknown-unknown/release/pack_template.wasm");
    std::fs::read(core).expect("the pack template is built by `make build`")
}

/// A fresh, empty directory for test `name` of this process.
pub fn tmpdir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("rs-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

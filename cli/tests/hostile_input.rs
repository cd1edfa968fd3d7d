//! Hostile and odd input through the real pipeline component.

mod common;

use result_sanitizer_host::io::StreamOptions;

use common::*;
use result_sanitizer_host::api::{InputKind, OutputFormat};
use result_sanitizer_host::Error;

#[test]
fn deeply_nested_and_huge_mcp_json_are_typed_errors_or_bounded() {
    let mut o = opts("x");
    o.input = InputKind::Mcp;
    let deep = format!(
        "{{\"content\": [{{\"type\": \"text\", \"text\": \"a\"}}], \"structuredContent\": {}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let e = sanitizer().sanitize(deep.as_bytes(), &o).unwrap_err();
    assert!(matches!(e, Error::InvalidInput(_)), "{e}");
    let items: Vec<String> = (0..1_000_000).map(|i| i.to_string()).collect();
    let big = format!(
        "{{\"content\": [{{\"type\": \"text\", \"text\": \"ok\"}}], \"structuredContent\": {{\"items\": [{}]}}}}",
        items.join(",")
    );
    let out = sanitizer().sanitize(big.as_bytes(), &o).unwrap();
    let v = json(&out);
    // Over its share of the budget: thinned, still JSON, first and last kept.
    let items = v["structuredContent"]["items"].as_array().expect("still an array");
    assert_eq!((items.first(), items.last()), (Some(&serde_json::json!(0)), Some(&serde_json::json!(999_999))));
    let note = items[items.len() - 2].as_str().unwrap();
    assert!(note.starts_with("[truncated: ") && note.contains("items omitted"), "{note}");
    assert!(v["content"][0]["text"].as_str().unwrap().contains("structuredContent thinned"));
    let cut = out.record.structure.as_ref().unwrap().items;
    assert_eq!(cut as usize, 1_000_000 - (items.len() - 1));
}

#[test]
fn crlf_mixed_newlines_and_nul_heavy_input() {
    let input = "line one\r\nline two\rline three\nDB_PASSWORD=Zq8vR2mK7tLw\r\n";
    let out = sanitizer().sanitize(input.as_bytes(), &opts("x")).unwrap();
    let text = visible_text(&out, OutputFormat::Mcp);
    assert!(!text.contains("Zq8vR2mK7tLw") && text.contains("line one\r\nline two\rline three\n"));
    let mut bin = vec![0u8; 10_000];
    bin.extend_from_slice(b"AKIAQ3EGRTZ7MBXK4WNP");
    let out = sanitizer().sanitize(&bin, &opts("x")).unwrap();
    assert!(out.is_error && !out.message.contains("AKIA"));
}

#[test]
fn zero_width_and_bidi_characters_do_not_break_the_pipeline() {
    // Invisible characters inside a secret do not split it for matching.
    let input = "token ghp_4kLm9Pq2Rt7Vx3Yz\u{200B}6Ab1Cd5Ef0Gh2Ij4Kl6M \u{202E}desrever\u{202C} ok and A\u{200D}KIAQ3EGRTZ7MBXK\u{2060}4WNP";
    let out = sanitizer().sanitize(input.as_bytes(), &opts("x")).unwrap();
    assert!(!out.is_error);
    let text = visible_text(&out, OutputFormat::Mcp);
    assert_eq!(text, "token [REDACTED:github-token] \u{202E}desrever\u{202C} ok and [REDACTED:aws-access-key-id]");
    // Streaming redaction too.
    let s = sanitizer();
    let mut out = Vec::new();
    result_sanitizer_host::io::redact_stream(
        s,
        s.default_pack(),
        input.as_bytes(),
        &mut out,
        &mut StreamOptions { chunk: 1 << 16, ..Default::default() },
    )
    .unwrap();
    assert!(!String::from_utf8_lossy(&out).contains("6Ab1Cd5Ef0Gh2Ij4Kl6M"));
}

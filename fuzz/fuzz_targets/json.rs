//! JSON tool results (raw JSON text and MCP results with
//! `structuredContent`, some holding a twin of the text) built from random
//! values with planted secrets: within budget, no secret, raw JSON stays
//! valid JSON, and a twin shows the text as the text block does.
#![no_main]

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use result_sanitizer_fuzz::{check_sanitized, pack, standalone, visible, SECRETS};
use result_sanitizer_pipeline::sanitize;
use result_sanitizer_rule_engine::api::{InputKind, OutputFormat};
use result_sanitizer_rule_engine::default_options;
use serde_json::{json, Map, Value};

/// A random JSON value, bounded in depth and in nodes (`left`); strings
/// sometimes carry a secret.
fn value(u: &mut Unstructured<'_>, depth: u32, left: &mut usize) -> arbitrary::Result<Value> {
    *left = left.saturating_sub(1);
    let pick = if depth == 0 || *left == 0 { u.int_in_range(0..=4)? } else { u.int_in_range(0..=6)? };
    Ok(match pick {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => json!(u.arbitrary::<i64>()?),
        3 => Value::String(u.arbitrary()?),
        4 => {
            let s: String = u.arbitrary()?;
            Value::String(format!("{s} {}\n", SECRETS[u.choose_index(SECRETS.len())?]))
        }
        5 => {
            let item = value(u, depth - 1, left)?;
            // Copies count against the node budget too.
            let n = u.int_in_range(0..=200)?.min(*left / nodes(&item));
            *left -= n * nodes(&item);
            // Long arrays of similar items, as APIs return them.
            Value::Array(
                (0..n).map(|i| if i % 7 == 0 { item.clone() } else { json!({"id": i, "v": item.clone()}) }).collect(),
            )
        }
        _ => {
            let mut m = Map::new();
            for _ in 0..u.int_in_range(0..=8)? {
                let k: String = u.arbitrary()?;
                m.insert(k, value(u, depth - 1, left)?);
            }
            Value::Object(m)
        }
    })
}

fn nodes(v: &Value) -> usize {
    1 + match v {
        Value::Array(a) => a.iter().map(nodes).sum(),
        Value::Object(m) => m.values().map(nodes).sum(),
        _ => 0,
    }
}

/// The text inside the untrusted-source frame, when `framed`.
fn unframed(text: &str, framed: bool) -> Option<&str> {
    match framed {
        false => Some(text),
        true => text.split_once("\n---\n").and_then(|(_, r)| r.strip_suffix("---\n[/tool_result]")),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(v) = value(&mut u, 6, &mut 5000) else { return };
    let mode = u.int_in_range(0..=2u8).unwrap_or(0);
    let (mcp, twin) = (mode > 0, mode == 2);
    let max_tokens = u.int_in_range(64u32..=4000).unwrap_or(500);
    let format = [OutputFormat::Mcp, OutputFormat::Openai, OutputFormat::Anthropic][u.choose_index(3).unwrap_or(0)];
    let untrusted = u.arbitrary::<bool>().unwrap_or(false);
    let mut o = default_options();
    o.untrusted = untrusted;
    o.tool = "api".into();
    o.format = format;
    o.max_tokens = Some(max_tokens);
    let input = if mcp {
        o.input = InputKind::Mcp;
        let text = serde_json::to_string_pretty(&v).unwrap();
        // A twin: the text again, as a string of the structured content.
        let structured = if twin { json!({"content": text, "value": v}) } else { v };
        serde_json::to_vec(&json!({"content": [{"type": "text", "text": text}], "structuredContent": structured}))
            .unwrap()
    } else {
        o.content_type = Some("application/json".into());
        o.max_bytes = Some(64 << 20);
        serde_json::to_vec_pretty(&v).unwrap()
    };
    if let Ok(out) = sanitize(&input, &o, pack()) {
        check_sanitized(&out, format, Some(max_tokens));
        if !mcp {
            // JSON in, JSON out: thinned, never a broken string.
            let text = visible(&out.message, format);
            let inner = unframed(&text, untrusted).expect("a framed text");
            assert!(serde_json::from_str::<Value>(inner).is_ok(), "JSON input gave non-JSON output");
        }
        if mcp && format == OutputFormat::Mcp {
            // structuredContent is kept whole or dropped with a note, and is
            // redacted when kept.
            let m: Value = serde_json::from_str(&out.message).unwrap();
            // The twin's placeholder never shows, unless the input had it
            // (then there is no twin).
            let placeholder = "\\u0000twin\\u0000";
            let had = String::from_utf8_lossy(&input).contains(placeholder);
            assert!(had || !out.message.contains(placeholder), "a twin's placeholder was left");
            if let Some(sc) = m.get("structuredContent") {
                let s = sc.to_string();
                assert!(SECRETS.iter().all(|x| !standalone(&s, x)));
                if let (true, false, Some(c)) = (twin, had, sc.get("content").and_then(Value::as_str)) {
                    // The text block's, without the boundary frame.
                    let inner = unframed(m["content"][0]["text"].as_str().unwrap(), untrusted).expect("a framed text");
                    assert!(inner == c || inner.strip_suffix('\n') == Some(c), "a twin shows the text as shown");
                }
            }
        }
    }
});

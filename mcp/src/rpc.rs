//! The JSON-RPC text the proxy writes itself: response and error lines,
//! `isError` results, the recall tool's definition; and reading what it
//! can from a message it cannot parse (its ids, its text repaired).

use serde_json::{json, Value};

/// JSON-RPC error code for requests the server never answered because
/// it went away (the implementation-defined server-error range).
pub const SERVER_GONE: i64 = -32000;
/// JSON-RPC "internal error": a response the proxy could not pass on.
pub const INTERNAL_ERROR: i64 = -32603;
/// JSON-RPC "invalid request": a request over the message cap.
pub const INVALID_REQUEST: i64 = -32600;

/// The definition of the recall tool added to `tools/list`.
pub(super) fn recall_tool_definition(name: &str) -> Value {
    json!({
        "name": name,
        "title": "Read truncated output",
        "description": format!("Reads a part of an earlier tool result that was cut to fit the context. A cut \
            result's markers say `{name}(call_id=ID, offset=N, limit=M)` (bytes) or `{name}(call_id=ID, \
            offset=L, limit=K, unit=lines)`: call this tool with those arguments. The part is redacted and \
            budgeted like the result it comes from."),
        "inputSchema": {
            "type": "object",
            "properties": {
                "call_id": { "type": "string", "description": "The call_id a marker names." },
                "offset": { "type": "integer", "minimum": 0, "description": "First byte (from 0) or line (from 1)." },
                "limit": { "type": "integer", "minimum": 1, "description": "Bytes or lines to read." },
                "unit": { "type": "string", "enum": ["bytes", "lines"], "default": "bytes" }
            },
            "required": ["call_id", "offset", "limit"]
        },
        "annotations": { "readOnlyHint": true, "openWorldHint": false }
    })
}

/// `bytes` as text JSON can parse, if invalid UTF-8 and lone UTF-16
/// surrogate escapes were all that stopped it: bad bytes become U+FFFD, as
/// does a `\\uD800`-`\\uDFFF` escape that is not half of a pair.
pub(super) fn repair(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let b = text.as_bytes();
    let hex = |at: usize| -> Option<u32> {
        let h = b.get(at..at + 4)?;
        u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()
    };
    let (mut out, mut i, mut from) = (String::with_capacity(text.len()), 0, 0);
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        if b.get(i + 1) != Some(&b'u') {
            i += 2;
            continue;
        }
        let Some(u) = hex(i + 2) else {
            i += 2;
            continue;
        };
        let pair = (0xD800..0xDC00).contains(&u)
            && b.get(i + 6..i + 8) == Some(&b"\\u"[..])
            && hex(i + 8).is_some_and(|l| (0xDC00..0xE000).contains(&l));
        if pair {
            i += 12;
        } else if (0xD800..0xE000).contains(&u) {
            out.push_str(&text[from..i]);
            out.push_str("\\ufffd");
            i += 6;
            from = i;
        } else {
            i += 6;
        }
    }
    out.push_str(&text[from..]);
    out
}

/// Ids a message's edges hold, as JSON text: the last ones of its tail
/// first (SDKs write `id` after `result`), then its head's.
pub(super) fn candidate_ids(head: &[u8], tail: &[u8]) -> Vec<String> {
    static RE: std::sync::OnceLock<regex_lite::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        regex_lite::Regex::new(r#""id"\s*:\s*(-?[0-9]+(?:\.[0-9]+)?|"(?:[^"\\]|\\.){0,512}"|null)"#).expect("regex")
    });
    let mut out = Vec::new();
    let mut from = |b: &[u8], rev: bool| {
        let s = String::from_utf8_lossy(b);
        let mut found: Vec<String> = re
            .captures_iter(&s)
            .filter_map(|c| serde_json::from_str::<Value>(&c[1]).ok())
            .map(|v| v.to_string())
            .collect();
        if rev {
            found.reverse();
        }
        out.extend(found);
    };
    // An id written before the payload (Python's SDK writes `id` first)
    // is the message's own; else the last one of the tail (TypeScript's
    // writes it last), before ids inside the payload.
    let h = String::from_utf8_lossy(head);
    let payload = ["\"result\"", "\"error\""].iter().filter_map(|k| h.find(k)).min().unwrap_or(h.len());
    let own = re
        .captures(&h)
        .filter(|c| c.get(0).is_some_and(|m| m.start() < payload))
        .and_then(|c| serde_json::from_str::<Value>(&c[1]).ok())
        .map(|v| v.to_string());
    from(tail, true);
    from(head, false);
    if let Some(own) = own {
        out.retain(|k| *k != own);
        out.insert(0, own);
    }
    out
}

pub(super) fn line(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).expect("a JSON value serializes")
}

/// A response's line with `result`, JSON text, written in as it is (a
/// pipeline message is megabytes at most, validated JSON already: parsing
/// it again to write it out would only copy it twice). JSON text with a
/// line break between its tokens (which no serializer here writes, but a
/// pipeline loaded from bytes could) would end the line early, so it is
/// written out again.
pub(super) fn result_line(jsonrpc: &Value, id: &Value, result: &str) -> Vec<u8> {
    if memchr::memchr2(b'\n', b'\r', result.as_bytes()).is_some() {
        return line(&json!({ "jsonrpc": jsonrpc, "id": id, "result": message_value(result) }));
    }
    let head = line(&json!({ "jsonrpc": jsonrpc, "id": id }));
    let mut out = Vec::with_capacity(head.len() + result.len() + 12);
    out.extend_from_slice(&head[..head.len() - 1]);
    out.extend_from_slice(b",\"result\":");
    out.extend_from_slice(result.as_bytes());
    out.push(b'}');
    out
}

/// The pipeline's message (validated JSON) as a value.
pub(super) fn message_value(message: &str) -> Value {
    serde_json::from_str(message).expect("the host validated the message as JSON")
}

/// An `isError` result with one text block.
pub(super) fn tool_error(text: &str) -> Value {
    json!({ "content": [{ "type": "text", "text": text }], "isError": true })
}

pub(super) fn error_response(id: &Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

#[cfg(test)]
mod tests {
    use super::candidate_ids;

    #[test]
    fn ids_from_the_edges() {
        let ids = candidate_ids(br#"{"jsonrpc":"2.0","result":{"content":[{"id":7"#, br#"aaa"}]},"id":"x-1"}"#);
        assert_eq!(ids, [r#""x-1""#, "7"]);
        // Written first (Python), the message's id wins over one inside
        // the payload at the tail.
        let ids = candidate_ids(br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"#, br#"{"id":9}]}}"#);
        assert_eq!(ids, ["3", "9"]);
    }

    #[test]
    fn repair_keeps_pairs_and_replaces_lone_surrogates_and_bad_bytes() {
        let r = super::repair(b"{\"t\":\"a\\ud83d\\ude00 b\\ud83d c\\\\ud83d \xff\"}");
        assert_eq!(r, "{\"t\":\"a\\ud83d\\ude00 b\\ufffd c\\\\ud83d \u{fffd}\"}");
        let v: serde_json::Value = serde_json::from_str(&r).unwrap();
        assert_eq!(v["t"], "a\u{1f600} b\u{fffd} c\\ud83d \u{fffd}");
    }
}

//! Placeholders never written back: a `tools/call` whose arguments hold
//! the pipeline's own markup (a `[REDACTED:<rule-id>]` placeholder, or a
//! `[truncated: ...]` marker) is answered by the proxy with an `isError`
//! result that says the placeholder is not the value, and never reaches
//! the server (`[guard] placeholder_arguments = "refuse"`, the default,
//! or `--placeholder-arguments refuse`). With `pass` it goes on as it is.
//!
//! A model that copies a placeholder from a result into a call would write
//! it into a file, a configuration or a command: the secret is not there
//! any more, and what is written in its place breaks what reads it.
//!
//! The markup looked for is the pipeline's (`rule-engine/src/markup/lexicon.rs`): the prefix
//! `[REDACTED:` followed by a rule id (letters, digits, `.`, `_`, `-`) and
//! `]`, and the marker prefix `[truncated:`, in any string of the
//! arguments (keys too), after JSON unescaping. A pack's rule with its own
//! replacement text is not recognized.

use std::sync::atomic::Ordering;

use serde::Deserialize;
use serde_json::{json, Value};

use super::peek::Request;
use super::Proxy;

/// The prefix of a redaction placeholder (`guest/src/markup/mod.rs`).
pub const REDACTED_PREFIX: &str = "[REDACTED:";
/// The prefix of every truncation marker (`guest/src/markup/marker.rs`).
pub const MARKER_PREFIX: &str = "[truncated:";

/// What to do with a call whose arguments hold a placeholder.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PlaceholderPolicy {
    /// Answer it with an `isError` result; the server never sees it.
    #[default]
    Refuse,
    /// Send it on as it is.
    Pass,
}

impl std::str::FromStr for PlaceholderPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "refuse" => Ok(Self::Refuse),
            "pass" => Ok(Self::Pass),
            _ => Err(format!("`{s}` is neither `refuse` nor `pass`")),
        }
    }
}

/// The config file's `[guard]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GuardConfig {
    /// A `tools/call` whose arguments hold a placeholder or a marker.
    pub placeholder_arguments: PlaceholderPolicy,
}

/// The markup found in a call's arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// `[REDACTED:<rule id>]`.
    Redacted(String),
    /// A `[truncated:` marker.
    Truncated,
}

/// The first placeholder or marker in `text`, if any.
pub fn find_in_text(text: &str) -> Option<Found> {
    let mut truncated = false;
    let mut at = 0;
    while let Some(i) = text[at..].find('[').map(|i| at + i) {
        let rest = &text[i..];
        if let Some(id) = rest.strip_prefix(REDACTED_PREFIX) {
            let n = id.bytes().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-')).count();
            if n > 0 && id.as_bytes().get(n) == Some(&b']') {
                return Some(Found::Redacted(id[..n].to_string()));
            }
        } else if rest.starts_with(MARKER_PREFIX) {
            truncated = true;
        }
        at = i + 1;
    }
    truncated.then_some(Found::Truncated)
}

/// The first placeholder in a JSON value's strings (keys too), with the
/// top-level argument it is in.
fn find_in_value(v: &Value) -> Option<Found> {
    match v {
        Value::String(s) => find_in_text(s),
        Value::Array(a) => a.iter().find_map(find_in_value),
        Value::Object(o) => o.iter().find_map(|(k, x)| find_in_text(k).or_else(|| find_in_value(x))),
        _ => None,
    }
}

/// The placeholder in the arguments of the `tools/call` `line`, and the
/// name of the argument that holds it (`None` when the name is not a plain
/// identifier, or the placeholder is in a key). Only a message that holds
/// a prefix or a `\u` escape (which could spell one) is parsed.
pub fn find_in_call(line: &[u8]) -> Option<(Found, Option<String>)> {
    let hit = |n: &[u8]| memchr::memmem::find(line, n).is_some();
    if !(hit(b"[REDACTED:") || hit(b"[truncated:") || hit(b"\\u")) {
        return None;
    }
    let m: Value = serde_json::from_slice(line).ok()?;
    let args = m.pointer("/params/arguments")?;
    if let Value::Object(o) = args {
        for (k, x) in o {
            if let Some(f) = find_in_text(k) {
                return Some((f, None));
            }
            if let Some(f) = find_in_value(x) {
                return Some((f, plain_name(k).then(|| k.clone())));
            }
        }
        return None;
    }
    find_in_value(args).map(|f| (f, None))
}

/// A name the message can quote: letters, digits, `_`, `-`, `.`, up to 64.
fn plain_name(s: &str) -> bool {
    (1..=64).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
}

/// The text of the refusal.
pub fn refusal_text(tool: &str, arg: Option<&str>, found: &Found, recall_tool: Option<&str>) -> String {
    let call = if plain_name(tool) { format!("This call of `{tool}`") } else { "This tool call".into() };
    let place = match arg {
        Some(a) => format!("its argument `{a}` holds"),
        None => "its arguments hold".into(),
    };
    match found {
        Found::Redacted(id) => format!(
            "[result-sanitizer] {call} was not sent: {place} `{REDACTED_PREFIX}{id}]`, a placeholder that \
             stands where a secret was removed from an earlier result. It is not the value and must not be \
             written into a file, a configuration, a command or a message. Ask the user for the real value (or \
             have it read where it is kept, such as an environment variable or a secret store), or leave that \
             part unchanged; then call again without the placeholder."
        ),
        Found::Truncated => {
            let read = match recall_tool {
                Some(t) => format!("read the missing part first (the marker names `{t}` and its arguments)"),
                None => "read the missing part first (the marker says how)".into(),
            };
            format!(
                "[result-sanitizer] {call} was not sent: {place} a `{MARKER_PREFIX} ...]` marker, which \
                 stands where part of an earlier result was cut. It is not the content that was cut and must not \
                 be written into a file, a configuration, a command or a message: {read}, then call again with \
                 the real content."
            )
        }
    }
}

/// The proxy's answer to `r` (the request `line`), when it is a
/// `tools/call` whose arguments hold a placeholder and the policy refuses
/// it: an `isError` result; counted, and logged without content.
pub fn check(proxy: &Proxy, r: &Request, line: &[u8], recall_tool: Option<&str>) -> Option<Vec<u8>> {
    if proxy.config.guard.placeholder_arguments == PlaceholderPolicy::Pass || r.method.as_deref() != Some("tools/call")
    {
        return None;
    }
    let id = r.id.as_ref()?;
    let (found, arg) = find_in_call(line)?;
    let tool = r.name.as_deref().unwrap_or_default();
    proxy.placeholder_refusals.fetch_add(1, Ordering::Relaxed);
    let kind = match &found {
        Found::Redacted(_) => "redacted",
        Found::Truncated => "truncated",
    };
    tracing::info!(target: "result_sanitizer::mcp", kind, "a tool call holding a placeholder was refused");
    let text = refusal_text(tool, arg.as_deref(), &found, recall_tool);
    let result = json!({ "content": [{ "type": "text", "text": text }], "isError": true });
    Some(serde_json::to_vec(&json!({ "jsonrpc": "2.0", "id": id, "result": result })).expect("JSON"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_markup_only() {
        assert_eq!(
            find_in_text("key=[REDACTED:aws-access-key-id] x"),
            Some(Found::Redacted("aws-access-key-id".into()))
        );
        assert_eq!(find_in_text("a\n[truncated: 12 lines omitted]\nb"), Some(Found::Truncated));
        assert_eq!(find_in_text("[REDACTED:] [REDACTED:a b] (truncated: x) [x]"), None);
        // A redaction wins over a marker seen before it.
        assert_eq!(find_in_text("[truncated: x] [REDACTED:r1]"), Some(Found::Redacted("r1".into())));
        let line = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"w","arguments":{"path":"a","content":"k=\u005bREDACTED:tok]"}}}"#;
        assert_eq!(find_in_call(line), Some((Found::Redacted("tok".into()), Some("content".into()))));
        let line =
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"w","arguments":{"content":"fine"}}}"#;
        assert_eq!(find_in_call(line), None);
    }
}

//! `prompts/get` results: what a prompt puts in the model's context goes
//! through the pipeline as a resource does.
//!
//! * each message's text (`TextContent`) is sanitized as raw output for the
//!   tool name `prompts/get` (budgets of `[tools."prompts/get"]`, kept for
//!   recall like a resource), its record in the block's `_meta`;
//! * an embedded resource (`EmbeddedResource`) has its text sanitized as a
//!   `resources/read` item is (content type from its `mimeType` or URI),
//!   its record in the resource's `_meta`; a blob passes;
//! * the prompt's `description` and a resource link's `name`, `title` and
//!   `description` are redacted (not budgeted: they are a line each);
//! * images and audio pass as they are (the pipeline reads text).
//!
//! Each text is budgeted on its own: a prompt of many messages can be
//! longer than one result.

use serde_json::{json, Value};

use result_sanitizer_host::Result;

/// The tool name a prompt's budgets and kept texts go under.
pub const TOOL: &str = "prompts/get";

/// What sanitizing a prompt needs of the session (implemented by
/// [`super::session::Session`]): this module does not reach into it.
pub trait Texts {
    /// One text sanitized as raw output for `tool`: the text as shown, and
    /// its record.
    fn text(&self, tool: &str, text: &str) -> Result<(String, Value)>;
    /// A resource's contents item sanitized in place for `tool`.
    fn resource_item(&self, tool: &str, item: &mut Value) -> Result<()>;
    /// Every string of a value redacted.
    fn redact(&self, v: &Value) -> Value;
}

/// A `GetPromptResult`, sanitized.
pub fn sanitize(session: &impl Texts, result: &Value) -> Result<Value> {
    let mut out = result.clone();
    redact_field(session, &mut out, "description");
    let Some(messages) = out.get_mut("messages").and_then(Value::as_array_mut) else { return Ok(out) };
    for m in messages {
        let Some(content) = m.get_mut("content") else { continue };
        // One block per message; a list is read as blocks too.
        match content {
            Value::Array(blocks) => {
                for b in blocks {
                    block(session, b)?;
                }
            }
            b => block(session, b)?,
        }
    }
    Ok(out)
}

/// One content block of a prompt message.
fn block(session: &impl Texts, b: &mut Value) -> Result<()> {
    match b.get("type").and_then(Value::as_str) {
        Some("text") => {
            let Some(text) = b.get("text").and_then(Value::as_str) else { return Ok(()) };
            let (text, record) = session.text(TOOL, text)?;
            b["text"] = text.into();
            set_record(b, record);
        }
        Some("resource") => {
            if let Some(r) = b.get_mut("resource") {
                session.resource_item(TOOL, r)?;
            }
        }
        Some("resource_link") => {
            for k in ["name", "title", "description"] {
                redact_field(session, b, k);
            }
        }
        _ => {}
    }
    Ok(())
}

/// A string member of an object, redacted in place.
fn redact_field(session: &impl Texts, v: &mut Value, key: &str) {
    if let Some(s) = v.get(key).filter(|s| s.is_string()) {
        let new = session.redact(s);
        v[key] = new;
    }
}

/// `record` in an object's `_meta` (made if missing).
pub fn set_record(item: &mut Value, record: Value) {
    match item.get_mut("_meta").and_then(Value::as_object_mut) {
        Some(meta) => {
            meta.insert("result-sanitizer/record".into(), record);
        }
        None => item["_meta"] = json!({ "result-sanitizer/record": record }),
    }
}

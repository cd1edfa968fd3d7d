//! One client's JSON-RPC stream: what each message becomes.
//!
//! A session remembers the client's requests by id until they are
//! answered, so that a response is sanitized as what it answers (a
//! `tools/call` of a named tool, a `resources/read`, a `tools/list`) and
//! so that, when the server goes away, each of them gets an error.
//! Transports ([`super::stdio`]) only move lines.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use super::Proxy;
use crate::api::{InputKind, Options, OutputFormat, OutputSource, Slice, SliceUnit};

/// JSON-RPC error code for requests the server never answered because
/// it went away (the implementation-defined server-error range).
pub const SERVER_GONE: i64 = -32000;
/// JSON-RPC "internal error": a response the proxy could not pass on.
pub const INTERNAL_ERROR: i64 = -32603;
/// JSON-RPC "invalid request": a request over the message cap.
pub const INVALID_REQUEST: i64 = -32600;

/// What to do with a message from the client.
pub enum FromClient {
    /// Send it to the server as it is.
    Forward,
    /// Answer the client with this line; the server never sees it.
    Reply(Vec<u8>),
}

/// What a pending request is, for its response.
#[derive(Clone, Debug)]
enum Kind {
    /// `tools/call` (or `tasks/result`) of this tool; the content type
    /// of the source file its arguments name, if one.
    ToolCall { tool: String, code: Option<String> },
    /// `tools/list`; `first` when it asked for the first page.
    ToolsList { first: bool },
    /// `resources/read`.
    Resource,
    /// Anything else: passed through, errored if the server goes away.
    Other,
}

/// One client's stream through the proxy.
pub struct Session {
    proxy: Arc<Proxy>,
    /// The output store's tenant: one per session.
    tenant: String,
    /// Client requests not answered yet, by their id as JSON text (so 1
    /// and "1" stay apart), with the id itself.
    pending: Mutex<HashMap<String, (Value, Kind)>>,
    /// The recall tool's name in this session.
    recall_name: Mutex<String>,
    /// Tool names of the server's listing in progress (pages).
    listed: Mutex<HashSet<String>>,
    /// Kept results: call id -> tool and code type, for the recall's
    /// options.
    kept: Mutex<HashMap<String, (String, Option<String>)>>,
    /// Tasks (2025-11-25): task id -> tool and code type, for `tasks/result`.
    tasks: Mutex<HashMap<String, (String, Option<String>)>>,
}

impl Session {
    /// A session of `proxy` whose kept results belong to `tenant`.
    pub fn new(proxy: Arc<Proxy>, tenant: &str) -> Self {
        let name = proxy.config.recall.tool.clone();
        Self {
            proxy,
            tenant: tenant.into(),
            pending: Mutex::default(),
            recall_name: Mutex::new(name),
            listed: Mutex::default(),
            kept: Mutex::default(),
            tasks: Mutex::default(),
        }
    }

    /// The proxy this session belongs to.
    pub fn proxy(&self) -> &Proxy {
        &self.proxy
    }

    /// Requests waiting for the server.
    pub fn pending(&self) -> usize {
        self.pending.lock().expect("pending lock").len()
    }

    /// The recall tool's name in this session, if recall is on.
    pub fn recall_tool(&self) -> Option<String> {
        self.proxy.config.recall.enabled.then(|| self.recall_name.lock().expect("name lock").clone())
    }

    /// Takes note of a message from the client: requests are remembered
    /// until answered; a call of the recall tool is answered here.
    pub fn from_client(&self, line: &[u8]) -> FromClient {
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            // Not JSON: the server answers it with a parse error.
            return FromClient::Forward;
        };
        match &v {
            Value::Array(batch) => {
                // Batches (2025-03-26) are noted element by element; the
                // recall tool is not served inside one.
                for m in batch {
                    self.note_request(m);
                }
                FromClient::Forward
            }
            m => match self.recall_call(m) {
                Some(reply) => FromClient::Reply(reply),
                None => {
                    self.note_request(m);
                    FromClient::Forward
                }
            },
        }
    }

    fn note_request(&self, m: &Value) {
        let (Some(method), Some(id)) = (m.get("method").and_then(Value::as_str), m.get("id")) else { return };
        let params = m.get("params");
        let kind = match method {
            "tools/call" => {
                let tool = params.and_then(|p| p.get("name")).and_then(Value::as_str).unwrap_or_default();
                Kind::ToolCall { tool: tool.into(), code: code_type(params.and_then(|p| p.get("arguments"))) }
            }
            "tasks/result" => {
                let task = params.and_then(|p| p.get("taskId")).and_then(Value::as_str).unwrap_or_default();
                let (tool, code) = self.tasks.lock().expect("tasks lock").get(task).cloned().unwrap_or_default();
                Kind::ToolCall { tool, code }
            }
            "tools/list" => Kind::ToolsList { first: params.and_then(|p| p.get("cursor")).is_none() },
            "resources/read" => Kind::Resource,
            _ => Kind::Other,
        };
        if let Kind::ToolsList { first: true } = kind {
            self.listed.lock().expect("listed lock").clear();
        }
        self.pending.lock().expect("pending lock").insert(id.to_string(), (id.clone(), kind));
    }

    /// The answer to a `tools/call` of the recall tool, if `m` is one.
    fn recall_call(&self, m: &Value) -> Option<Vec<u8>> {
        let name = self.recall_tool()?;
        if m.get("method").and_then(Value::as_str) != Some("tools/call") {
            return None;
        }
        let id = m.get("id")?;
        let params = m.get("params")?;
        if params.get("name").and_then(Value::as_str) != Some(name.as_str()) {
            return None;
        }
        let result = self.recall(params.get("arguments"));
        Some(line(&json!({ "jsonrpc": "2.0", "id": id, "result": result })))
    }

    fn recall(&self, args: Option<&Value>) -> Value {
        let arg = |k: &str| args.and_then(|a| a.get(k));
        let call_id = arg("call_id").and_then(Value::as_str);
        let offset = arg("offset").and_then(Value::as_u64);
        let limit = arg("limit").and_then(Value::as_u64);
        let unit = match arg("unit").and_then(Value::as_str) {
            None | Some("bytes") => Some(SliceUnit::Bytes),
            Some("lines") => Some(SliceUnit::Lines),
            Some(_) => None,
        };
        let (Some(call_id), Some(offset), Some(limit), Some(unit)) = (call_id, offset, limit, unit) else {
            let name = self.recall_tool().unwrap_or_default();
            return tool_error(&format!(
                "[result-sanitizer] {name} needs call_id (a string), offset and limit (integers \
                 from 0) and, optionally, unit (\"bytes\" or \"lines\"), as a marker of a cut result names them",
            ));
        };
        let (tool, code) = self.kept.lock().expect("kept lock").get(call_id).cloned().unwrap_or_default();
        let mut o = self.options(&tool, InputKind::Mcp);
        o.call_id = call_id.into();
        o.content_type = code;
        let p = &self.proxy;
        match p.sanitizer.recall(&p.pack, &p.store, &self.tenant, call_id, Slice { offset, limit, unit }, &o) {
            Ok(out) => message_value(&out.message),
            Err(e) => tool_error(&format!("[result-sanitizer] cannot read call_id={call_id}: {e}")),
        }
    }

    /// What a message from the server becomes: `None` to pass it on as
    /// it is, else the line to send instead.
    pub fn from_server(&self, line_in: &[u8]) -> Option<Vec<u8>> {
        let v = serde_json::from_slice::<Value>(line_in).ok()?;
        match v {
            Value::Array(batch) => {
                let mut changed = false;
                let out: Vec<Value> = batch
                    .into_iter()
                    .map(|m| match self.response(&m) {
                        Some(n) => {
                            changed = true;
                            n
                        }
                        None => m,
                    })
                    .collect();
                changed.then(|| line(&Value::Array(out)))
            }
            m => self.response(&m).map(|n| line(&n)),
        }
    }

    /// A response, sanitized as what it answers; `None`: unchanged.
    fn response(&self, m: &Value) -> Option<Value> {
        if m.get("method").is_some() {
            return None;
        }
        let id = m.get("id")?;
        let kind = self.pending.lock().expect("pending lock").remove(&id.to_string()).map(|(_, k)| k);
        let result = m.get("result")?;
        let kind = match kind {
            Some(k) => k,
            // An answer to nothing asked: a result that looks like a
            // tool's is still never passed on raw.
            None if result.get("content").is_some_and(Value::is_array) => {
                Kind::ToolCall { tool: String::new(), code: None }
            }
            None => return None,
        };
        let new = match kind {
            Kind::ToolCall { tool, code } => {
                if let Some(task) = result.pointer("/task/taskId").and_then(Value::as_str) {
                    // A task was created; its result comes by tasks/result.
                    self.tasks.lock().expect("tasks lock").insert(task.into(), (tool, code));
                    return None;
                }
                if !result.get("content").is_some_and(Value::is_array) {
                    return None;
                }
                self.sanitize_tool(&tool, code, result)
            }
            Kind::ToolsList { first } => self.tools_list(result, first)?,
            Kind::Resource => match self.sanitize_resource(result) {
                Ok(r) => r,
                Err(e) => {
                    return Some(error_response(
                        id,
                        INTERNAL_ERROR,
                        &format!("result-sanitizer: the resource was withheld: {e}"),
                    ))
                }
            },
            Kind::Other => return None,
        };
        // A new response rather than a copy of the old: the old result
        // can be megabytes.
        Some(json!({ "jsonrpc": m.get("jsonrpc").cloned().unwrap_or_else(|| "2.0".into()), "id": id, "result": new }))
    }

    fn options(&self, tool: &str, input: InputKind) -> Options {
        let mut o = self.proxy.config.options_for(&self.proxy.base, tool);
        o.input = input;
        o.format = OutputFormat::Mcp;
        o.source = OutputSource::Tool;
        // Markers name the tool that reads a cut result back.
        o.recall_tool = self.recall_tool();
        o
    }

    /// A fresh call id for a result kept for recall, noted with its tool.
    fn keep_id(&self, tool: &str, code: Option<String>) -> String {
        // Unique in the proxy: the store is shared by its sessions.
        let id = format!("call_{}", self.proxy.next_call.fetch_add(1, Ordering::Relaxed));
        self.kept.lock().expect("kept lock").insert(id.clone(), (tool.into(), code));
        id
    }

    /// Sanitizes raw `bytes` for `tool`, kept for recall when recall is on.
    fn sanitize(&self, tool: &str, bytes: &[u8], mut o: Options) -> crate::error::Result<crate::api::Sanitized> {
        let p = &self.proxy;
        if p.config.recall.enabled {
            o.call_id = self.keep_id(tool, None);
            p.sanitizer.sanitize_kept(&p.pack, &p.store, &self.tenant, bytes, &o)
        } else {
            p.sanitizer.sanitize_with(&p.pack, bytes, &o)
        }
    }

    /// A `CallToolResult`, sanitized; on failure an `isError` result
    /// saying why, never the result.
    fn sanitize_tool(&self, tool: &str, code: Option<String>, result: &Value) -> Value {
        match self.sanitize_call_result(tool, code, result) {
            Ok(out) => message_value(&out.message),
            Err(e) => tool_error(&format!("[result-sanitizer] the result of tool `{tool}` was withheld: {e}")),
        }
    }

    fn sanitize_call_result(
        &self,
        tool: &str,
        code: Option<String>,
        result: &Value,
    ) -> crate::error::Result<crate::api::Sanitized> {
        let p = &self.proxy;
        let bytes = serde_json::to_vec(result).expect("a JSON value serializes");
        let mut o = self.options(tool, InputKind::Mcp);
        // A source file read by a tool is redacted as code.
        o.content_type = code.clone();
        if !p.config.recall.enabled {
            return p.sanitizer.sanitize_with(&p.pack, &bytes, &o);
        }
        // What a recall slices is the joined text, so only the blocks that
        // make it are kept: structured content and media would otherwise
        // come back, whole, with every slice.
        o.call_id = self.keep_id(tool, code);
        let kept = p.store.put(&self.tenant, &o.call_id, &text_blocks(result))?;
        o.recall_bytes = (kept > 0).then_some(kept);
        let out = p.sanitizer.sanitize_with(&p.pack, &bytes, &o)?;
        p.store.set_truncated(&o.call_id, out.record.truncated);
        Ok(out)
    }

    /// A `ReadResourceResult` with each text item sanitized as raw output
    /// (its record in the item's `_meta`); blobs pass as they are.
    fn sanitize_resource(&self, result: &Value) -> crate::error::Result<Value> {
        let mut out = result.clone();
        let Some(items) = out.get_mut("contents").and_then(Value::as_array_mut) else { return Ok(out) };
        for item in items {
            let Some(text) = item.get("text").and_then(Value::as_str) else { continue };
            let uri = item.get("uri").and_then(Value::as_str).unwrap_or_default();
            let mut o = self.options("resources/read", InputKind::Raw);
            o.content_type = item
                .get("mimeType")
                .and_then(Value::as_str)
                .filter(|m| *m != "text/plain")
                .map(str::to_string)
                .or_else(|| result_sanitizer_pipeline::content_type_for_path(uri).map(str::to_string));
            let msg = message_value(&self.sanitize("resources/read", text.as_bytes(), o)?.message);
            let texts: Vec<&str> = msg["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            item["text"] = texts.join("\n").into();
            let record = msg["_meta"]["result-sanitizer/record"].clone();
            match item.get_mut("_meta").and_then(Value::as_object_mut) {
                Some(meta) => {
                    meta.insert("result-sanitizer/record".into(), record);
                }
                None => item["_meta"] = json!({ "result-sanitizer/record": record }),
            }
        }
        Ok(out)
    }

    /// A `tools/list` result with the recall tool added to its last page.
    fn tools_list(&self, result: &Value, first: bool) -> Option<Value> {
        self.recall_tool()?;
        let tools = result.get("tools")?.as_array()?;
        let mut listed = self.listed.lock().expect("listed lock");
        if first {
            listed.clear();
        }
        listed.extend(tools.iter().filter_map(|t| t.get("name").and_then(Value::as_str)).map(str::to_string));
        if result.get("nextCursor").is_some_and(|c| !c.is_null()) {
            return None;
        }
        let wanted = &self.proxy.config.recall.tool;
        let name = (1..)
            .map(|i| if i == 1 { wanted.clone() } else { format!("{wanted}_{i}") })
            .find(|n| !listed.contains(n))
            .expect("a free name");
        let mut current = self.recall_name.lock().expect("name lock");
        if name != *wanted && *current != name {
            tracing::warn!(target: "result_sanitizer::mcp", "the server has a tool named `{wanted}`; the recall tool is `{name}`");
            eprintln!("result-sanitizer mcp: the server has a tool named `{wanted}`; the recall tool is `{name}`");
        }
        *current = name.clone();
        let mut out = result.clone();
        out["tools"].as_array_mut()?.push(recall_tool_definition(&name));
        Some(out)
    }

    /// Answers for an oversized message from the server: `None` when no
    /// pending request's id is in its first or last bytes (it is dropped).
    pub fn oversized_from_server(&self, head: &[u8], tail: &[u8], size: u64) -> Option<Vec<u8>> {
        let cap = self.proxy.max_message_bytes;
        let mut pending = self.pending.lock().expect("pending lock");
        let key = candidate_ids(head, tail).into_iter().find(|k| pending.contains_key(k))?;
        let (id, kind) = pending.remove(&key).expect("present");
        let why =
            format!("a response of {size} bytes, over the proxy's message cap of {cap} bytes (--max-message-bytes)");
        Some(line(&match kind {
            Kind::ToolCall { tool, .. } => json!({
                "jsonrpc": "2.0",
                "id": id,
                "result": tool_error(&format!("[result-sanitizer] the result of tool `{tool}` was withheld: {why}")),
            }),
            _ => error_response(&id, INTERNAL_ERROR, &format!("result-sanitizer: withheld {why}")),
        }))
    }

    /// The error for an oversized message from the client (never sent on).
    pub fn oversized_from_client(&self, head: &[u8], tail: &[u8], size: u64) -> Vec<u8> {
        let id = candidate_ids(head, tail)
            .into_iter()
            .next()
            .and_then(|k| serde_json::from_str(&k).ok())
            .unwrap_or(Value::Null);
        let cap = self.proxy.max_message_bytes;
        line(&error_response(
            &id,
            INVALID_REQUEST,
            &format!("result-sanitizer: a message of {size} bytes is over the proxy's cap of {cap} bytes"),
        ))
    }

    /// Errors for every pending request (the server went away), at once.
    pub fn fail_pending(&self, why: &str) -> Vec<Vec<u8>> {
        let drained: Vec<(Value, Kind)> = self.pending.lock().expect("pending lock").drain().map(|(_, v)| v).collect();
        drained.into_iter().map(|(id, _)| line(&error_response(&id, SERVER_GONE, why))).collect()
    }
}

/// The content type of the source file a tool's arguments name (`path`,
/// `file`, `file_path`, `filename`, `uri`), if they name one.
fn code_type(args: Option<&Value>) -> Option<String> {
    ["path", "file", "file_path", "filePath", "filename", "uri"]
        .iter()
        .filter_map(|k| args?.get(*k)?.as_str())
        .find_map(result_sanitizer_pipeline::content_type_for_path)
        .map(str::to_string)
}

/// The definition of the recall tool added to `tools/list`.
fn recall_tool_definition(name: &str) -> Value {
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

/// Ids a message's edges hold, as JSON text: the last ones of its tail
/// first (SDKs write `id` after `result`), then its head's.
fn candidate_ids(head: &[u8], tail: &[u8]) -> Vec<String> {
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
    from(tail, true);
    from(head, false);
    out
}

/// A `CallToolResult` with only the blocks whose text the pipeline joins
/// (text, embedded text resources), in order, and its `isError`.
fn text_blocks(result: &Value) -> Vec<u8> {
    #[derive(serde::Serialize)]
    struct TextOnly<'a> {
        content: Vec<&'a Value>,
        #[serde(rename = "isError", skip_serializing_if = "Option::is_none")]
        is_error: Option<&'a Value>,
    }
    let content: Vec<&Value> = result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|b| match b.get("type").and_then(Value::as_str) {
            Some("text") => true,
            Some("resource") => b.pointer("/resource/text").is_some_and(Value::is_string),
            _ => false,
        })
        .collect();
    serde_json::to_vec(&TextOnly { content, is_error: result.get("isError") }).expect("a JSON value serializes")
}

fn line(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).expect("a JSON value serializes")
}

/// The pipeline's message (validated JSON) as a value.
fn message_value(message: &str) -> Value {
    serde_json::from_str(message).expect("the host validated the message as JSON")
}

/// An `isError` result with one text block.
fn tool_error(text: &str) -> Value {
    json!({ "content": [{ "type": "text", "text": text }], "isError": true })
}

fn error_response(id: &Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

#[cfg(test)]
mod tests {
    use super::candidate_ids;

    #[test]
    fn ids_from_the_edges() {
        let ids = candidate_ids(br#"{"jsonrpc":"2.0","result":{"content":[{"id":7"#, br#"aaa"}]},"id":"x-1"}"#);
        assert_eq!(ids, [r#""x-1""#, "7"]);
    }
}

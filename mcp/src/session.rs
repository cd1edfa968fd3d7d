//! One client's JSON-RPC stream: what each message becomes.
//!
//! A session remembers the client's requests by id until they are
//! answered, so that a response is sanitized as what it answers (a
//! `tools/call` of a named tool, a `resources/read`, a `tools/list`) and
//! so that, when the server goes away, each of them gets an error.
//! Transports ([`super::stdio`]) only move lines.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use std::borrow::Cow;

mod results;

use serde_json::{json, Value};

use super::peek::{code_type, Request, Response, ToolResult};
use super::rpc::{candidate_ids, error_response, line, recall_tool_definition, repair, result_line, tool_error};
pub use super::rpc::{INTERNAL_ERROR, INVALID_REQUEST, SERVER_GONE};
use super::Proxy;
use result_sanitizer_host::api::{InputKind, Slice, SliceUnit};

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
    /// of the source file its arguments name, if one; `task` when the call
    /// asked for a task (its answer is then a task, not a result).
    ToolCall { tool: String, code: Option<String>, task: bool },
    /// `tools/list`; `first` when it asked for the first page.
    ToolsList { first: bool },
    /// `resources/read`.
    Resource,
    /// `prompts/get` ([`super::prompts`]).
    Prompt,
    /// Anything else: passed through, errored if the server goes away.
    Other,
}

/// What a recall of a kept result needs: its tool, code type and input kind.
type Kept = (String, Option<String>, InputKind);

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
    /// Kept results: call id -> tool, code type and input kind (an MCP
    /// result's text blocks, or a resource's raw text), for the recall's
    /// options.
    kept: Mutex<HashMap<String, Kept>>,
    /// Tasks (2025-11-25): task id -> tool and code type, for `tasks/result`.
    tasks: Mutex<HashMap<String, (String, Option<String>)>>,
    /// The client's budget profile, from its `initialize`.
    profile: Mutex<Option<super::profiles::Profile>>,
    /// The server's tools' declared output schemas.
    schemas: super::schemas::Schemas,
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
            profile: Mutex::default(),
            schemas: Default::default(),
        }
    }

    /// The session's tenant in the output store.
    pub fn tenant(&self) -> &str {
        &self.tenant
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
        // One message is read for what is noted of it only (its arguments
        // can be megabytes); a batch, or what that read refuses, whole.
        if let Some(r) = Request::read(line) {
            return self.request(&r, line);
        }
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            // Not JSON: the server answers it with a parse error.
            return FromClient::Forward;
        };
        match &v {
            Value::Array(batch) => {
                // Batches (2025-03-26) are noted element by element; the
                // recall tool is not served inside one.
                for m in batch {
                    self.note_request(&Request::from_value(m));
                }
                FromClient::Forward
            }
            m => self.request(&Request::from_value(m), line),
        }
    }

    /// One request of the client (`line`): answered here or noted.
    fn request(&self, r: &Request, line: &[u8]) -> FromClient {
        if r.method.as_deref() == Some("initialize") {
            *self.profile.lock().expect("profile lock") = super::profiles::from_initialize(&self.proxy, line);
        }
        let recall = self.recall_tool();
        match self.recall_call(r, line).or_else(|| super::guard::check(&self.proxy, r, line, recall.as_deref())) {
            Some(reply) => FromClient::Reply(reply),
            None => {
                self.note_request(r);
                FromClient::Forward
            }
        }
    }

    fn note_request(&self, r: &Request) {
        let (Some(method), Some(id)) = (r.method.as_deref(), &r.id) else { return };
        let kind = match method {
            "tools/call" => {
                let tool = r.name.clone().unwrap_or_default();
                Kind::ToolCall { code: code_type(&tool, &r.paths), tool, task: r.task }
            }
            "tasks/result" => {
                let task = r.task_id.as_deref().unwrap_or_default();
                let (tool, code) = self.tasks.lock().expect("tasks lock").get(task).cloned().unwrap_or_default();
                Kind::ToolCall { tool, code, task: false }
            }
            "tools/list" => Kind::ToolsList { first: !r.cursor },
            "resources/read" => Kind::Resource,
            "prompts/get" => Kind::Prompt,
            _ => Kind::Other,
        };
        if let Kind::ToolsList { first: true } = kind {
            self.listed.lock().expect("listed lock").clear();
        }
        self.pending.lock().expect("pending lock").insert(id.to_string(), (id.clone(), kind));
    }

    /// The answer to a `tools/call` of the recall tool, if `r` is one.
    fn recall_call(&self, r: &Request, line: &[u8]) -> Option<Vec<u8>> {
        let name = self.recall_tool()?;
        if r.method.as_deref() != Some("tools/call") || r.name.as_deref() != Some(name.as_str()) {
            return None;
        }
        let id = r.id.as_ref()?;
        // Its arguments are read whole: they are a few numbers.
        let m: Value = serde_json::from_slice(line).ok()?;
        let result = self.recall(m.pointer("/params/arguments"));
        Some(result_line(&"2.0".into(), id, &result))
    }

    /// The recall tool's result, as JSON text.
    fn recall(&self, args: Option<&Value>) -> String {
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
            ))
            .to_string();
        };
        let p = &self.proxy;
        // The output's tool and kind: noted here, or kept with it (by
        // another replica sharing the store).
        let out = p.store.get(&self.tenant, call_id).and_then(|kept| {
            let noted = self.kept.lock().expect("kept lock").get(call_id).cloned();
            let (tool, code, input) = noted.or_else(|| kept.origin()).unwrap_or((String::new(), None, InputKind::Mcp));
            let mut o = self.options(&tool, input);
            o.call_id = call_id.into();
            o.content_type = code;
            p.sanitizer.recall_kept(&p.pack, &kept, call_id, Slice { offset, limit, unit }, &o).map(|out| (out, tool))
        });
        match out {
            Ok((out, tool)) => {
                p.telemetry.recall(&tool);
                out.message
            }
            Err(e) => tool_error(&format!("[result-sanitizer] cannot read call_id={call_id}: {e}")).to_string(),
        }
    }

    /// What a message from the server becomes: borrowed to pass it on as
    /// it is, owned to send that instead, `None` to drop it. A line that
    /// is not JSON is never passed on: invalid UTF-8 and lone surrogate
    /// escapes (which JavaScript servers write) are repaired, and what
    /// still does not parse answers the pending request it names with an
    /// error, or is dropped.
    pub fn from_server<'a>(&self, line_in: &'a [u8]) -> Option<Cow<'a, [u8]>> {
        let started = Instant::now();
        if let Some(out) = self.tool_response(line_in, started) {
            return Some(Cow::Owned(out));
        }
        let (v, repaired) = match serde_json::from_slice::<Value>(line_in) {
            Ok(v) => (v, false),
            Err(e) => match serde_json::from_str::<Value>(&repair(line_in)) {
                Ok(v) => (v, true),
                Err(_) => {
                    // The error's category only: its text can quote the input.
                    let why = format!("a message that is not JSON ({:?} error)", e.classify());
                    let edge = 4096.min(line_in.len());
                    return self.withhold(&line_in[..edge], &line_in[line_in.len() - edge..], &why).map(Cow::Owned);
                }
            },
        };
        let out = match v {
            Value::Array(batch) => {
                let answers: Vec<Option<Vec<u8>>> = batch.iter().map(|m| self.response(m, started)).collect();
                if !repaired && answers.iter().all(Option::is_none) {
                    return Some(Cow::Borrowed(line_in));
                }
                let mut out = vec![b'['];
                for (i, (m, a)) in batch.iter().zip(answers).enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    out.extend(a.unwrap_or_else(|| line(m)));
                }
                out.push(b']');
                out
            }
            m => match self.response(&m, started) {
                Some(l) => l,
                None if repaired => line(&m),
                None => return Some(Cow::Borrowed(line_in)),
            },
        };
        Some(Cow::Owned(out))
    }

    /// The answer to a pending `tools/call`, sanitized from its result as
    /// the server wrote it (see [`super::peek`]); `None` when `line_in` is
    /// not one, or needs more than its typed read (it is then read as a
    /// `Value`, the request still pending).
    fn tool_response(&self, line_in: &[u8], started: Instant) -> Option<Vec<u8>> {
        let r = Response::read(line_in)?;
        let json = r.result.get();
        let read = ToolResult::read(json)?;
        let key = r.id.to_string();
        let (tool, code) = {
            let mut pending = self.pending.lock().expect("pending lock");
            // A created task (no content) is noted on the `Value` path.
            match pending.get(&key) {
                Some((_, Kind::ToolCall { task, .. })) if read.content || !task => {}
                _ => return None,
            }
            match pending.remove(&key) {
                Some((_, Kind::ToolCall { tool, code, .. })) => (tool, code),
                _ => unreachable!("checked above"),
            }
        };
        let new = self.sanitize_tool(&tool, code, json, &read, started);
        Some(result_line(&r.jsonrpc.unwrap_or_else(|| "2.0".into()), &r.id, &new))
    }

    /// A response, sanitized as what it answers, written out; `None`:
    /// unchanged.
    fn response(&self, m: &Value, started: Instant) -> Option<Vec<u8>> {
        if m.get("method").is_some() {
            return None;
        }
        let id = m.get("id")?;
        let kind = self.pending.lock().expect("pending lock").remove(&id.to_string()).map(|(_, k)| k);
        let jsonrpc = m.get("jsonrpc").cloned().unwrap_or_else(|| "2.0".into());
        if let Some(error) = m.get("error") {
            // A server's error can quote what it was working on.
            let error = self.redact_json(error);
            return Some(line(&json!({ "jsonrpc": jsonrpc, "id": id, "error": error })));
        }
        let result = m.get("result")?;
        let kind = match kind {
            Some(k) => k,
            // An answer to nothing asked: a result that looks like a
            // tool's is still never passed on raw.
            None if result.get("content").is_some() => Kind::ToolCall { tool: String::new(), code: None, task: false },
            None => return None,
        };
        let new = match kind {
            Kind::ToolCall { tool, code, task } => {
                // A task was created (the call asked for one, and the
                // answer is a task, not a result); its result comes by
                // tasks/result.
                if task && result.get("content").is_none() {
                    if let Some(t) = result.pointer("/task/taskId").and_then(Value::as_str) {
                        self.tasks.lock().expect("tasks lock").insert(t.into(), (tool, code));
                        return None;
                    }
                }
                // Anything else is sanitized as a result, or withheld if
                // it is not one the pipeline reads.
                let json = result.to_string();
                let read = ToolResult::read(&json).expect("a Value writes JSON without duplicate keys");
                self.sanitize_tool(&tool, code, &json, &read, started)
            }
            Kind::ToolsList { first } => self.tools_list(result, first)?.to_string(),
            Kind::Resource => match self.sanitize_resource(result) {
                Ok(r) => r.to_string(),
                Err(e) => {
                    return Some(line(&error_response(
                        id,
                        INTERNAL_ERROR,
                        &format!("result-sanitizer: the resource was withheld: {e}"),
                    )))
                }
            },
            Kind::Prompt => match super::prompts::sanitize(self, result) {
                Ok(r) => r.to_string(),
                Err(e) => {
                    return Some(line(&error_response(
                        id,
                        INTERNAL_ERROR,
                        &format!("result-sanitizer: the prompt was withheld: {e}"),
                    )))
                }
            },
            Kind::Other => return None,
        };
        // A new response rather than a copy of the old: the old result
        // can be megabytes.
        Some(result_line(&jsonrpc, id, &new))
    }

    /// A `tools/list` result with the recall tool added to its last page.
    fn tools_list(&self, result: &Value, first: bool) -> Option<Value> {
        let tools = result.get("tools")?.as_array()?;
        self.schemas.note(tools, first);
        self.recall_tool()?;
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
        let why =
            format!("a response of {size} bytes, over the proxy's message cap of {cap} bytes (--max-message-bytes)");
        self.withhold(head, tail, &why)
    }

    /// Every string of a JSON value (keys too) redacted; a string the
    /// pipeline fails on is replaced by a note.
    fn redact_json(&self, v: &Value) -> Value {
        let p = &self.proxy;
        let redact = |s: &str| -> String {
            let req = result_sanitizer_host::api::RedactRequest {
                data: s.as_bytes().to_vec(),
                last: true,
                content_type: None,
                sniff: false,
                untrusted: true,
                report: false,
                pii: false,
                pii_public_ip: false,
            };
            match p.sanitizer.redact_request(&p.pack, &req) {
                Ok(r) => String::from_utf8_lossy(&r.output).into_owned(),
                Err(_) => "[result-sanitizer: withheld]".into(),
            }
        };
        match v {
            Value::String(s) => Value::String(redact(s)),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.redact_json(x)).collect()),
            Value::Object(o) => Value::Object(o.iter().map(|(k, x)| (redact(k), self.redact_json(x))).collect()),
            other => other.clone(),
        }
    }

    /// The answer, in place of a message the proxy cannot read (`why`), to
    /// the pending request whose id its first (`head`) or last (`tail`)
    /// bytes hold; `None` when there is none (the message is dropped).
    fn withhold(&self, head: &[u8], tail: &[u8], why: &str) -> Option<Vec<u8>> {
        let mut pending = self.pending.lock().expect("pending lock");
        let key = candidate_ids(head, tail).into_iter().find(|k| pending.contains_key(k))?;
        let (id, kind) = pending.remove(&key).expect("present");
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

impl super::prompts::Texts for Session {
    fn text(&self, tool: &str, text: &str) -> result_sanitizer_host::Result<(String, Value)> {
        self.sanitize_text(tool, text, self.options(tool, InputKind::Raw))
    }
    fn resource_item(&self, tool: &str, item: &mut Value) -> result_sanitizer_host::Result<()> {
        self.sanitize_resource_item(tool, item)
    }
    fn redact(&self, v: &Value) -> Value {
        self.redact_json(v)
    }
}

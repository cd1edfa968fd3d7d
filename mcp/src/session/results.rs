//! How a session sanitizes what it forwards: the options for a tool (the
//! proxy's config and the client's profile), results kept for recall
//! under fresh call ids, and the sanitizing of a `tools/call` result, a
//! resource and a single text. A second `impl Session` block, apart so
//! that `session.rs` keeps the message flow.

use std::sync::atomic::Ordering;
use std::time::Instant;

use serde_json::Value;

use super::Session;
use crate::peek::ToolResult;
use crate::prompts::set_record;
use crate::rpc::{message_value, tool_error};
use result_sanitizer_host::api::{InputKind, Options, OutputFormat, OutputSource, StructuredFit};
use result_sanitizer_host::recall::kept_meta;

impl Session {
    pub(super) fn options(&self, tool: &str, input: InputKind) -> Options {
        let mut o = self.proxy.config.options_for(&self.proxy.base, tool);
        o.input = input;
        o.format = OutputFormat::Mcp;
        o.source = OutputSource::Tool;
        // Markers name the tool that reads a cut result back.
        o.recall_tool = self.recall_tool();
        if let Some(p) = &*self.profile.lock().expect("profile lock") {
            crate::profiles::apply(&self.proxy, p, &mut o);
        }
        o
    }

    /// A fresh call id for a result kept for recall, noted with its tool.
    fn keep_id(&self, tool: &str, code: Option<String>, input: InputKind) -> String {
        // Unique in the proxy: the store is shared by its sessions.
        // The random part: unique over replicas sharing a store.
        let id = format!("call_{}_{}", self.proxy.call_prefix, self.proxy.next_call.fetch_add(1, Ordering::Relaxed));
        self.kept.lock().expect("kept lock").insert(id.clone(), (tool.into(), code, input));
        id
    }

    /// Sanitizes raw `bytes` for `tool`, kept for recall when recall is on.
    fn sanitize(
        &self,
        tool: &str,
        bytes: &[u8],
        mut o: Options,
    ) -> result_sanitizer_host::Result<result_sanitizer_host::api::Sanitized> {
        let p = &self.proxy;
        if p.config.recall.enabled {
            o.call_id = self.keep_id(tool, o.content_type.clone(), InputKind::Raw);
            p.sanitizer.sanitize_kept(&p.pack, &p.store, &self.tenant, bytes, &o)
        } else {
            p.sanitizer.sanitize_with(&p.pack, bytes, &o)
        }
    }

    /// A `CallToolResult` (`json`, read as `read`), sanitized, as JSON
    /// text; on failure an `isError` result saying why, never the result.
    /// Counted in the telemetry, with the pipeline's time and the proxy's
    /// since `started` (the server's line read).
    pub(super) fn sanitize_tool(
        &self,
        tool: &str,
        code: Option<String>,
        json: &str,
        read: &ToolResult,
        started: Instant,
    ) -> String {
        let t = Instant::now();
        let out = self.sanitize_call_result(tool, code, json, read);
        let pipeline = t.elapsed();
        let (message, record) = match out {
            // Validated JSON (the host parsed it): passed on as it is.
            Ok(out) => (out.message, Some(out.record)),
            Err(e) => (
                tool_error(&format!("[result-sanitizer] the result of tool `{tool}` was withheld: {e}")).to_string(),
                None,
            ),
        };
        let r = record.as_ref();
        self.proxy.telemetry.call(&crate::telemetry::Call {
            tool,
            bytes_in: json.len() as u64,
            bytes_out: message.len() as u64,
            tokens: r.map_or(0, |r| r.output_tokens.unwrap_or(r.output_chars)),
            truncated: r.is_some_and(|r| r.truncated),
            redactions: r.map_or_else(Vec::new, |r| {
                r.redactions.iter().map(|c| (c.rule_id.clone(), u64::from(c.count))).collect()
            }),
            error: r.is_none(),
            pipeline,
            proxy: started.elapsed(),
        });
        message
    }

    fn sanitize_call_result(
        &self,
        tool: &str,
        code: Option<String>,
        json: &str,
        read: &ToolResult,
    ) -> result_sanitizer_host::Result<result_sanitizer_host::api::Sanitized> {
        let mut o = self.options(tool, InputKind::Mcp);
        // A source file read by a tool is redacted as code.
        o.content_type = code.clone();
        // A declared output schema: thinned keeping its shape, checked, left
        // out when it still does not validate (see [`crate::schemas`]).
        let checker;
        (o.structured_fit, checker) = self.schemas.fit_for(tool);
        let out = self.sanitize_call_result_with(tool, code, json, read, &mut o)?;
        match checker {
            Some(c) if crate::schemas::rejects(&c, tool, &out.message) => {
                o.structured_fit = StructuredFit::Omitted;
                self.proxy.sanitizer.sanitize_with(&self.proxy.pack, json.as_bytes(), &o)
            }
            _ => Ok(out),
        }
    }

    /// [`Self::sanitize_call_result`] with options `o` (given a call id
    /// when the result is kept for recall).
    fn sanitize_call_result_with(
        &self,
        tool: &str,
        code: Option<String>,
        json: &str,
        read: &ToolResult,
        o: &mut Options,
    ) -> result_sanitizer_host::Result<result_sanitizer_host::api::Sanitized> {
        let p = &self.proxy;
        let bytes = json.as_bytes();
        if !p.config.recall.enabled {
            return p.sanitizer.sanitize_with(&p.pack, bytes, o);
        }
        // What a recall slices is the joined text, so only the blocks that
        // make it are kept: structured content and media would otherwise
        // come back, whole, with every slice.
        let owned;
        let blocks: &[u8] = if read.only_text {
            bytes
        } else {
            owned = read.text_blocks(json).expect("read from this JSON");
            &owned
        };
        if blocks.len() > p.store.max_item_bytes() {
            // A cut prefix of the blocks' JSON would not parse: not kept,
            // and the markers say so.
            return p.sanitizer.sanitize_with(&p.pack, bytes, o);
        }
        o.call_id = self.keep_id(tool, code, InputKind::Mcp);
        let kept = p.store.put_with(&self.tenant, &o.call_id, blocks, &kept_meta(o))?;
        o.recall_bytes = (kept > 0).then_some(kept);
        let out = p.sanitizer.sanitize_with(&p.pack, bytes, o)?;
        p.store.set_truncated(&self.tenant, &o.call_id, out.record.truncated);
        Ok(out)
    }

    /// A `ReadResourceResult` with each text item sanitized as raw output
    /// (its record in the item's `_meta`); blobs pass as they are.
    pub(super) fn sanitize_resource(&self, result: &Value) -> result_sanitizer_host::Result<Value> {
        let mut out = result.clone();
        let Some(items) = out.get_mut("contents").and_then(Value::as_array_mut) else { return Ok(out) };
        for item in items {
            self.sanitize_resource_item("resources/read", item)?;
        }
        Ok(out)
    }

    /// A resource's contents item (`TextResourceContents` or
    /// `BlobResourceContents`): its text sanitized as raw output for `tool`
    /// (content type from its `mimeType`, or its URI's file name), the
    /// record in its `_meta`; a blob passes.
    pub(super) fn sanitize_resource_item(&self, tool: &str, item: &mut Value) -> result_sanitizer_host::Result<()> {
        let Some(text) = item.get("text").and_then(Value::as_str) else { return Ok(()) };
        let uri = item.get("uri").and_then(Value::as_str).unwrap_or_default();
        let mut o = self.options(tool, InputKind::Raw);
        o.content_type = item
            .get("mimeType")
            .and_then(Value::as_str)
            .filter(|m| *m != "text/plain")
            .map(str::to_string)
            .or_else(|| result_sanitizer_rule_engine::content_type_for_path(uri).map(str::to_string));
        let (text, record) = self.sanitize_text(tool, text, o)?;
        item["text"] = text.into();
        set_record(item, record);
        Ok(())
    }

    /// One text sanitized as raw output for `tool` (kept for recall when
    /// recall is on): the text as shown, and its record.
    pub(super) fn sanitize_text(
        &self,
        tool: &str,
        text: &str,
        o: Options,
    ) -> result_sanitizer_host::Result<(String, Value)> {
        let msg = message_value(&self.sanitize(tool, text.as_bytes(), o)?.message);
        let texts: Vec<&str> = msg["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect();
        Ok((texts.join("\n"), msg["_meta"]["result-sanitizer/record"].clone()))
    }
}

//! The upstream MCP server in this process, and the client's side of the
//! wire: POSTs, JSON-RPC calls, nonces and recall routes in answers.

use super::*;

/// The upstream's text for a call: service-log lines, each behind the
/// call's nonce, cut at `size` bytes.
pub(crate) fn payload(lines: &[&str], nonce: &str, size: usize) -> String {
    let mut out = String::with_capacity(size + 256);
    let tag = format!("@@{nonce}@@ ");
    let mut i = 0;
    while out.len() < size {
        out.push_str(&tag);
        out.push_str(lines[i % lines.len()]);
        out.push('\n');
        i += 1;
    }
    out.truncate(size);
    out
}

/// A stateless Streamable HTTP MCP server (JSON answers, no session id):
/// `tools/call payload {nonce, size}` returns `payload(nonce, size)`.
pub(crate) fn upstream(server: Arc<tiny_http::Server>, lines: Arc<Vec<&'static str>>, calls: Arc<AtomicUsize>) {
    use tiny_http::{Header, Response};
    let json_ct = Header::from_bytes("Content-Type", "application/json").unwrap();
    while let Ok(mut req) = server.recv() {
        if *req.method() != tiny_http::Method::Post {
            let status = if *req.method() == tiny_http::Method::Delete { 200 } else { 405 };
            let _ = req.respond(Response::empty(status));
            continue;
        }
        let mut body = Vec::new();
        let _ = req.as_reader().read_to_end(&mut body);
        let Ok(m) = serde_json::from_slice::<Value>(&body) else {
            let _ = req.respond(Response::empty(400));
            continue;
        };
        let Some(id) = m.get("id").cloned() else {
            let _ = req.respond(Response::empty(202));
            continue;
        };
        let result = match m["method"].as_str().unwrap_or_default() {
            "initialize" => json!({ "protocolVersion": "2025-06-18", "capabilities": { "tools": {} },
                "serverInfo": { "name": "bench-upstream", "version": "1" } }),
            "tools/list" => json!({ "tools": [{ "name": "payload", "description": "a log of the size asked for",
                "inputSchema": { "type": "object", "properties": { "nonce": { "type": "string" },
                "size": { "type": "integer" } } } }] }),
            "tools/call" => {
                calls.fetch_add(1, Ordering::Relaxed);
                let a = &m["params"]["arguments"];
                let text =
                    payload(&lines, a["nonce"].as_str().unwrap_or("?"), a["size"].as_u64().unwrap_or(0) as usize);
                json!({ "content": [{ "type": "text", "text": text }] })
            }
            "ping" => json!({}),
            other => {
                let e = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32601, "message": format!("no method {other}") } });
                let _ = req.respond(Response::from_data(serde_json::to_vec(&e).unwrap()).with_header(json_ct.clone()));
                continue;
            }
        };
        let out = serde_json::to_vec(&json!({ "jsonrpc": "2.0", "id": id, "result": result })).unwrap();
        let _ = req.respond(Response::from_data(out).with_header(json_ct.clone()));
    }
}

/// How a POST ended.
pub(crate) enum Posted {
    Ok {
        status: u16,
        sid: Option<String>,
        body: Vec<u8>,
    },
    /// A transport error: refused, reset, cut short, timed out.
    Transport(String),
}

pub(crate) fn post(agent: &ureq::Agent, url: &str, sid: Option<&str>, body: &[u8]) -> Posted {
    let mut r = agent
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json")
        .header("MCP-Protocol-Version", "2025-06-18");
    if let Some(s) = sid {
        r = r.header("Mcp-Session-Id", s);
    }
    match r.send(body) {
        Ok(mut resp) => {
            let status = resp.status().as_u16();
            let sid = resp.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(String::from);
            match resp.body_mut().with_config().limit(64 << 20).read_to_vec() {
                Ok(body) => Posted::Ok { status, sid, body },
                Err(e) => Posted::Transport(e.to_string()),
            }
        }
        Err(e) => Posted::Transport(e.to_string()),
    }
}

pub(crate) fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(60)))
        .http_status_as_error(false)
        .max_idle_connections_per_host(2)
        .build()
        .into()
}

pub(crate) fn call(id: u64, name: &str, arguments: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": name, "arguments": arguments } }))
    .unwrap()
}

pub(crate) fn text_of(v: &Value) -> String {
    v["result"]["content"]
        .as_array()
        .map(|a| a.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"))
        .unwrap_or_default()
}

/// Every nonce (`@@...@@`) in `text`.
pub(crate) fn nonces(text: &str) -> HashSet<&str> {
    let mut out = HashSet::new();
    let mut rest = text;
    while let Some(i) = rest.find("@@") {
        rest = &rest[i + 2..];
        match rest.find("@@") {
            Some(j) if j <= 16 => {
                out.insert(&rest[..j]);
                rest = &rest[j + 2..];
            }
            _ => {}
        }
    }
    out
}

/// The recall route in a marker: call id and offset (bytes).
pub(crate) fn route(text: &str) -> Option<(String, usize)> {
    let rest = text.split("call_id=").nth(1)?;
    let id = rest.split([',', ')', ' ']).next()?.to_string();
    let off = rest.split("offset=").nth(1)?.split([',', ')', ' ']).next()?.parse().ok()?;
    Some((id, off))
}

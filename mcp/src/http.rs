//! The Streamable HTTP transport (`--listen ADDR -- SERVER_CMD`): one
//! endpoint, `/mcp`, for any number of clients; each session (its
//! `MCP-Session-Id`, drawn at `initialize`) gets a server process of its
//! own on stdio and a [`Session`] of its own (ids, kept results).
//!
//! * `POST` carries client messages. Only notifications or responses: 202.
//!   Requests: answered on an SSE stream (or one JSON body when the client
//!   does not accept `text/event-stream`) that closes after their
//!   responses; server requests and notifications that come meanwhile go
//!   on it too.
//! * `GET` opens the session's stream for server messages sent while no
//!   POST stream is open (kept alive with comments).
//! * `DELETE` ends the session and stops its server.
//! * A session no request has used for `--session-idle` seconds (none in
//!   progress, no stream open) ends as if deleted: a client that went
//!   away without `DELETE` does not hold its slot and server for good.
//! * `Origin`, when sent, must be a loopback host (DNS rebinding);
//!   `MCP-Protocol-Version`, when sent, must be one this proxy speaks.
//! * With a shared recall store (Redis), a session id carries a tag made
//!   with the store's key, and the client's `initialize` is kept (sealed)
//!   in the store: a replica that is sent a POST for a session it does not
//!   have takes it up when the tag checks out ([`adopt`]), with a server of
//!   its own to which it replays that `initialize`.
//!
//! tiny_http buffers a body of unknown length, which would hold SSE
//! events back; streams are therefore written on the request's raw
//! writer, the status line and headers first, then the body through
//! `chunked_transfer`'s encoder, flushed after every event.

//!
//! The transport's parts: this file routes requests (`handle`, `post`);
//! `sessions` holds the open sessions, their servers and their taking up
//! by another replica; `reply` writes what goes back (plain answers,
//! JSON-RPC errors, SSE streams).

mod reply;
mod sessions;

use std::io::Read;
use std::sync::atomic::Ordering;
use std::sync::mpsc::channel;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tiny_http::{Method, Request, Response, Server};

use self::reply::{get_stream, header, json_reply, plain, rpc_error, sse};
use self::sessions::{
    adopt, end_idle_sessions, end_session, keep_initialize, mark_ended, start_session, HttpSession, InUse, Sessions,
    Spawner, State,
};
use super::session::FromClient;
use super::upstream::Upstream;
use super::Proxy;
use result_sanitizer_host::{Error, Result};

/// Protocol versions accepted in `MCP-Protocol-Version`.
pub const PROTOCOL_VERSIONS: [&str; 3] = ["2025-03-26", "2025-06-18", "2025-11-25"];
/// Sessions open at once unless `--max-sessions` says otherwise: each
/// runs a server process and keeps results for recall.
pub const DEFAULT_MAX_SESSIONS: u32 = 32;
/// Seconds a session may go unused before it ends, unless
/// `--session-idle` says otherwise (0: never). A connected SDK client
/// keeps its GET stream open, so this ends only sessions whose client is
/// gone or silent.
pub const DEFAULT_SESSION_IDLE_SECS: u64 = 1800;

/// How the HTTP transport bounds its sessions.
#[derive(Clone, Copy, Debug)]
pub struct SessionLimits {
    /// Sessions open at once; a new one past that is refused with 503
    /// until one ends.
    pub max_sessions: usize,
    /// A session unused this long ends; `None`: never.
    pub idle: Option<Duration>,
}

/// Serves `/mcp` on `listen` until the process ends, its sessions bounded
/// by `limits`.
pub fn run(proxy: Arc<Proxy>, listen: &str, upstream: &Upstream, limits: SessionLimits) -> Result<i32> {
    let cannot =
        |e: &dyn std::fmt::Display| Error::Io(std::io::Error::other(format!("cannot listen on {listen}: {e}")));
    let listener = std::net::TcpListener::bind(listen).map_err(|e| cannot(&e))?;
    no_delay(&listener);
    let server = Server::from_listener(listener, None).map_err(|e| cannot(&e))?;
    eprintln!("result-sanitizer mcp: listening on http://{listen}/mcp");
    let state = Arc::new(State {
        proxy,
        upstream: upstream.clone(),
        sessions: Sessions::default(),
        max_sessions: limits.max_sessions,
        spawner: Spawner::new(),
    });
    if let Some(idle) = limits.idle {
        let st = state.clone();
        std::thread::spawn(move || end_idle_sessions(&st, idle));
    }
    for req in server.incoming_requests() {
        let st = state.clone();
        std::thread::spawn(move || handle(&st, req));
    }
    Ok(0)
}

/// Sets `TCP_NODELAY` on the listening socket; the connections it accepts
/// inherit it (Linux). tiny_http writes a response's head and body in
/// separate writes: with Nagle's algorithm on, a body under a segment
/// waits for the head's ACK, which the client delays (40 ms on Linux), so
/// a keep-alive client saw about 40 ms added to a JSON answer of a few KiB
/// (`bench_gateway`, #42).
fn no_delay(listener: &std::net::TcpListener) {
    if let Err(e) = socket2::SockRef::from(listener).set_tcp_nodelay(true) {
        tracing::warn!(target: "result_sanitizer::mcp", "cannot set TCP_NODELAY on the listener: {e}");
    }
}

/// Origins of this machine only: a page elsewhere must not drive a local
/// server through the browser (DNS rebinding).
fn origin_ok(origin: &str) -> bool {
    let rest = origin.split_once("://").map_or(origin, |(_, r)| r);
    let host = if rest.starts_with('[') {
        rest.split(']').next().map(|h| &h[1..]).unwrap_or_default()
    } else {
        rest.split([':', '/']).next().unwrap_or_default()
    };
    matches!(host, "localhost" | "127.0.0.1" | "::1")
}

fn handle(st: &State, req: Request) {
    let path = req.url().split('?').next().unwrap_or_default();
    if path == "/metrics" && *req.method() == Method::Get {
        // Counts and ids only (telemetry.rs); for a scraper on this host.
        let body = st.proxy.telemetry().exposition();
        let ct = tiny_http::Header::from_bytes("Content-Type", super::telemetry::Telemetry::CONTENT_TYPE)
            .expect("a valid header");
        let _ = req.respond(Response::from_string(body).with_header(ct));
        return;
    }
    if path != "/mcp" {
        return plain(req, 404, "not found: the MCP endpoint is /mcp");
    }
    if let Some(o) = header(&req, "Origin") {
        if !origin_ok(o) {
            return plain(req, 403, "forbidden: Origin is not this machine");
        }
    }
    if let Some(v) = header(&req, "MCP-Protocol-Version") {
        if !PROTOCOL_VERSIONS.contains(&v) {
            let supported = PROTOCOL_VERSIONS.join(", ");
            return plain(req, 400, &format!("bad request: unsupported MCP-Protocol-Version (supported: {supported})"));
        }
    }
    let sid = header(&req, "MCP-Session-Id").map(str::to_string);
    let used = sid.as_ref().and_then(|id| st.sessions.lock().expect("sessions lock").by_id.get(id).map(InUse::take));
    // Another replica's session (shared store): taken up here.
    let used = used.or_else(|| sid.as_deref().filter(|_| *req.method() != Method::Delete).and_then(|id| adopt(st, id)));
    if sid.is_some() && used.as_ref().is_none_or(|u| !u.0.alive.load(Ordering::SeqCst)) {
        return plain(req, 404, "not found: no such session");
    }
    let session = used.as_ref().map(|u| u.0.clone());
    match req.method() {
        Method::Post => post(st, req, session),
        Method::Get => match session {
            Some(s) => get_stream(req, &s),
            None => plain(req, 400, "bad request: MCP-Session-Id is required"),
        },
        Method::Delete => match session {
            Some(s) => {
                end_session(st, &s);
                mark_ended(st, &s);
                plain(req, 200, "")
            }
            None => plain(req, 400, "bad request: MCP-Session-Id is required"),
        },
        _ => plain(req, 405, "method not allowed"),
    }
}

fn post(st: &State, mut req: Request, session: Option<Arc<HttpSession>>) {
    let cap = st.proxy.max_message_bytes;
    let mut body = Vec::new();
    if req.as_reader().take(cap as u64 + 1).read_to_end(&mut body).is_err() {
        return plain(req, 400, "bad request: the body could not be read");
    }
    if body.len() > cap {
        return rpc_error(
            req,
            413,
            -32600,
            &format!("result-sanitizer: a message over the proxy's cap of {cap} bytes"),
        );
    }
    let Ok(v) = serde_json::from_slice::<Value>(&body) else {
        return rpc_error(req, 400, -32700, "parse error: the body is not JSON");
    };
    let msgs: Vec<&Value> = match &v {
        Value::Array(a) => a.iter().collect(),
        m => vec![m],
    };
    let is_init = msgs.iter().any(|m| m.get("method").and_then(Value::as_str) == Some("initialize"));
    // A new session is in use until this request ends (`_in_use` drops).
    let (s, new_id, _in_use) = match (session, is_init) {
        (Some(s), _) => (s, None, None),
        (None, true) => match start_session(st, None) {
            Ok(Some((id, u))) => (u.0.clone(), Some(id), Some(u)),
            Ok(None) => {
                let n = st.max_sessions;
                let why = format!("result-sanitizer: {n} sessions are open (--max-sessions); end one (DELETE) first");
                return rpc_error(req, 503, -32000, &why);
            }
            Err(e) => return rpc_error(req, 500, -32603, &format!("result-sanitizer: {e}")),
        },
        (None, false) => return plain(req, 400, "bad request: MCP-Session-Id is required"),
    };
    // Requests wait for their responses on this POST's stream.
    let ids: Vec<String> =
        msgs.iter().filter(|m| m.get("method").is_some()).filter_map(|m| m.get("id")).map(Value::to_string).collect();
    let (tx, rx) = channel::<Vec<u8>>();
    {
        let mut w = s.waiters.lock().expect("waiters lock");
        for id in &ids {
            w.insert(id.clone(), tx.clone());
        }
    }
    if new_id.is_some() {
        keep_initialize(st, &s, &msgs);
    }
    match s.session.from_client(&body) {
        FromClient::Forward => {
            if !s.to_server(&body) {
                s.waiters.lock().expect("waiters lock").retain(|k, _| !ids.contains(k));
                // Its input is closed: the session can do nothing more.
                end_session(st, &s);
                return rpc_error(req, 502, -32000, "result-sanitizer: the MCP server is gone");
            }
            // A server that exited meanwhile may have had its pending
            // requests failed before these were noted: fail them too (the
            // reader clears `alive` before it fails what is pending).
            if !s.alive.load(Ordering::SeqCst) {
                for e in s.session.fail_pending("result-sanitizer: the MCP server exited before answering this request")
                {
                    s.route(e);
                }
            }
        }
        FromClient::Reply(line) => {
            let _ = tx.send(line);
        }
    }
    if ids.is_empty() {
        return plain(req, 202, "");
    }
    let accept = header(&req, "Accept").unwrap_or_default().to_string();
    if accept.contains("text/event-stream") {
        s.streams.lock().expect("streams lock").push(tx.clone());
        drop(tx);
        sse(req, &s, new_id.as_deref(), rx, Some(ids.len()));
    } else {
        drop(tx);
        json_reply(req, new_id.as_deref(), &rx, ids.len(), matches!(v, Value::Array(_)));
    }
}

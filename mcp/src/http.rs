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

use std::collections::{HashMap, VecDeque};
use std::io::{BufReader, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tiny_http::{Header, Method, Request, Response, Server};

use super::lines::{read_line_capped, Line};
use super::session::{FromClient, Session};
use super::upstream::{Backend, Upstream};
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
/// Server messages held for a GET stream that is not open.
const BACKLOG: usize = 1000;
/// A comment on idle streams this often (a closed client is noticed).
const KEEPALIVE: Duration = Duration::from_secs(15);

/// One HTTP session: its server process and where its messages go.
struct HttpSession {
    session: Session,
    server_in: Mutex<Option<Box<dyn Write + Send>>>,
    signal: Arc<dyn Fn(i32) + Send + Sync>,
    /// Open POST streams waiting for responses, by request id (JSON text).
    waiters: Mutex<HashMap<String, Sender<Vec<u8>>>>,
    /// Open SSE streams for server requests and notifications, newest last.
    streams: Mutex<Vec<Sender<Vec<u8>>>>,
    /// Held for the next GET stream when none is open.
    backlog: Mutex<VecDeque<Vec<u8>>>,
    alive: AtomicBool,
    /// Requests in progress on the session (streams included); taken and
    /// checked under the sessions lock, so that an idle session is never
    /// ended while a request is starting on it.
    in_use: AtomicUsize,
    /// When the last request on the session ended (or it started).
    last_use: Mutex<Instant>,
}

impl HttpSession {
    /// Sends one client message to the server; false if it is gone.
    fn to_server(&self, msg: &[u8]) -> bool {
        let mut g = self.server_in.lock().expect("stdin lock");
        let Some(w) = g.as_mut() else { return false };
        let ok = super::lines::write_line(w, msg).and_then(|()| w.flush()).is_ok();
        if !ok {
            *g = None;
        }
        ok
    }

    /// Delivers a (sanitized) server message to the client.
    fn route(&self, msg: Vec<u8>) {
        let v: Option<Value> = serde_json::from_slice(&msg).ok();
        let response_id =
            v.as_ref().filter(|m| m.get("method").is_none()).and_then(|m| m.get("id")).map(Value::to_string);
        if let Some(id) = response_id {
            if id == ADOPT_ID_JSON && !self.waiters.lock().expect("waiters lock").contains_key(&id) {
                return; // the answer to a replayed initialize, late
            }
            if let Some(tx) = self.waiters.lock().expect("waiters lock").remove(&id) {
                let _ = tx.send(msg);
                return;
            }
        }
        let mut streams = self.streams.lock().expect("streams lock");
        while let Some(tx) = streams.last() {
            if tx.send(msg.clone()).is_ok() {
                return;
            }
            streams.pop();
        }
        let mut b = self.backlog.lock().expect("backlog lock");
        if b.len() == BACKLOG {
            b.pop_front();
        }
        b.push_back(msg);
    }

    fn stop(&self) {
        self.alive.store(false, Ordering::SeqCst);
        self.server_in.lock().expect("stdin lock").take();
        (self.signal)(libc::SIGTERM);
    }

    /// Whether no request has used the session for `idle`.
    fn idle_for(&self, idle: Duration) -> bool {
        self.in_use.load(Ordering::SeqCst) == 0 && self.last_use.lock().expect("last-use lock").elapsed() >= idle
    }
}

/// A request using a session, from when it was found (under the sessions
/// lock) until it ends: the session is not idle meanwhile.
struct InUse(Arc<HttpSession>);

impl InUse {
    /// Call with the sessions lock held.
    fn take(s: &Arc<HttpSession>) -> Self {
        s.in_use.fetch_add(1, Ordering::SeqCst);
        Self(s.clone())
    }
}

impl Drop for InUse {
    fn drop(&mut self) {
        *self.0.last_use.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        self.0.in_use.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Starts servers from one thread that lives as long as the proxy: the
/// parent-death signal of a child follows the thread that spawned it.
struct Spawner(Mutex<Sender<SpawnRequest>>);

/// Where the server comes from, its message cap, and where it goes.
type SpawnRequest = (Upstream, usize, Sender<Result<Backend>>);

impl Spawner {
    fn new() -> Self {
        let (tx, rx) = channel::<SpawnRequest>();
        std::thread::spawn(move || {
            for (up, cap, back) in rx {
                let _ = back.send(up.start(cap));
            }
        });
        Self(Mutex::new(tx))
    }

    fn spawn(&self, up: &Upstream, cap: usize) -> Result<Backend> {
        let (tx, rx) = channel();
        self.0.lock().expect("spawner lock").send((up.clone(), cap, tx)).expect("the spawner thread runs");
        rx.recv().expect("the spawner thread answers")
    }
}

/// Open sessions by id. A session leaves when the client ends it
/// (DELETE) or its server exits, so that neither its kept results nor its
/// slot outlive it.
type Sessions = Arc<Mutex<Open>>;

#[derive(Default)]
struct Open {
    by_id: HashMap<String, Arc<HttpSession>>,
    /// Sessions whose server is starting: they count against the cap, so
    /// that initializes at once cannot pass it together.
    starting: usize,
}

struct State {
    proxy: Arc<Proxy>,
    upstream: Upstream,
    sessions: Sessions,
    max_sessions: usize,
    spawner: Spawner,
}

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

/// Ends, for good, each session unused for `idle`: checked a few times
/// per `idle` (at most every 30 s), so one ends within a quarter of
/// `idle` after it became due (or 30 s).
fn end_idle_sessions(st: &State, idle: Duration) {
    let tick = (idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(30));
    loop {
        std::thread::sleep(tick);
        let due: Vec<Arc<HttpSession>> = {
            let mut open = st.sessions.lock().expect("sessions lock");
            let ids: Vec<String> =
                open.by_id.iter().filter(|(_, s)| s.idle_for(idle)).map(|(k, _)| k.clone()).collect();
            ids.iter().filter_map(|k| open.by_id.remove(k)).collect()
        };
        for s in due {
            s.stop();
        }
    }
}

fn header<'r>(req: &'r Request, name: &'static str) -> Option<&'r str> {
    req.headers().iter().find(|h| h.field.equiv(name)).map(|h| h.value.as_str())
}

fn plain(req: Request, status: u16, text: &str) {
    let _ = req.respond(Response::from_string(text).with_status_code(status));
}

/// A JSON-RPC error body with no id (the request could not be read).
fn rpc_error(req: Request, status: u16, code: i64, message: &str) {
    let body = serde_json::json!({ "jsonrpc": "2.0", "id": null, "error": { "code": code, "message": message } });
    let h = Header::from_bytes("Content-Type", "application/json").expect("header");
    let _ = req.respond(Response::from_string(body.to_string()).with_status_code(status).with_header(h));
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

/// Ends a session: its server is stopped and it leaves the map.
fn end_session(st: &State, s: &Arc<HttpSession>) {
    s.stop();
    st.sessions.lock().expect("sessions lock").by_id.retain(|_, v| !Arc::ptr_eq(v, s));
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

/// A new session and its server, in use by the request that started it,
/// or `None` when `max_sessions` are open. With `id` (a session taken
/// up) that is open already: that one, and an empty id.
fn start_session(st: &State, id: Option<String>) -> Result<Option<(String, InUse)>> {
    {
        let mut open = st.sessions.lock().expect("sessions lock");
        // Taken up by a request at the same time.
        if let Some(s) = id.as_ref().and_then(|id| open.by_id.get(id)) {
            return Ok(Some((String::new(), InUse::take(s))));
        }
        if open.by_id.len() + open.starting >= st.max_sessions {
            return Ok(None);
        }
        open.starting += 1;
    }
    // Gives the slot back if starting fails or panics.
    let slot = Starting(&st.sessions);
    let (id, s) = new_session(st, id)?;
    let mut open = st.sessions.lock().expect("sessions lock");
    std::mem::forget(slot);
    open.starting -= 1;
    // A server that exited already was not found in the map by its
    // reader (which clears `alive` before it looks): not added, or it
    // would hold its slot for good.
    if !s.alive.load(Ordering::SeqCst) {
        return Err(Error::Io(std::io::Error::other("the MCP server exited as it started")));
    }
    let used = InUse::take(&s);
    open.by_id.insert(id.clone(), s);
    Ok(Some((id, used)))
}

/// A session slot taken while its server starts; dropped only when
/// starting did not finish (an error or a panic), to give the slot back.
struct Starting<'a>(&'a Mutex<Open>);

impl Drop for Starting<'_> {
    fn drop(&mut self) {
        let mut open = self.0.lock().unwrap_or_else(|e| e.into_inner());
        open.starting -= 1;
    }
}

/// Starts a session's server, and the thread that reads it.
fn new_session(st: &State, id: Option<String>) -> Result<(String, Arc<HttpSession>)> {
    let id = match id {
        Some(id) => id,
        None => fresh_id(&st.proxy)?,
    };
    let cap = st.proxy.max_message_bytes;
    let backend = st.spawner.spawn(&st.upstream, cap)?;
    let stdout = backend.output;
    let wait = backend.wait;
    let signal = backend.signal.clone();
    let s = Arc::new(HttpSession {
        session: Session::new(st.proxy.clone(), &id),
        server_in: Mutex::new(Some(backend.input)),
        signal: backend.signal,
        waiters: Mutex::default(),
        streams: Mutex::default(),
        backlog: Mutex::default(),
        alive: AtomicBool::new(true),
        in_use: AtomicUsize::new(0),
        last_use: Mutex::new(Instant::now()),
    });
    let reader = s.clone();
    let sessions = st.sessions.clone();
    let sid = id.clone();
    std::thread::spawn(move || {
        let mut r = BufReader::with_capacity(1 << 16, stdout);
        loop {
            match read_line_capped(&mut r, cap) {
                Ok(Line::Message(m)) => match reader.session.from_server(&m) {
                    Some(std::borrow::Cow::Borrowed(_)) => reader.route(m),
                    Some(std::borrow::Cow::Owned(l)) => reader.route(l),
                    None => eprintln!("result-sanitizer mcp: dropped a message from the server that is not JSON (answering no pending request)"),
                },
                Ok(Line::Oversized { head, tail, size }) => {
                    if let Some(l) = reader.session.oversized_from_server(&head, &tail, size) {
                        reader.route(l);
                    }
                }
                Ok(Line::Eof) | Err(_) => break,
            }
        }
        let status = wait();
        reader.alive.store(false, Ordering::SeqCst);
        // Requests with its id now get 404, which tells a client to start
        // a new session; its kept results go with it. It leaves before its
        // pending requests are answered, so a client told of the exit
        // finds its slot free.
        sessions.lock().expect("sessions lock").by_id.retain(|k, v| k != &sid || !Arc::ptr_eq(v, &reader));
        let how = status.map_or("without a status".to_string(), |s| s.to_string());
        let why = format!("result-sanitizer: the MCP server exited ({how}) before answering this request");
        for e in reader.session.fail_pending(&why) {
            reader.route(e);
        }
        signal(libc::SIGKILL);
    });
    Ok((id, s))
}

/// Writes an SSE response on the raw connection: the head, then each
/// message as an event, until `responses` responses went out (a POST) or
/// the client goes (a GET).
fn sse(req: Request, s: &HttpSession, new_id: Option<&str>, rx: Receiver<Vec<u8>>, responses: Option<usize>) {
    let mut head = String::from(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n",
    );
    if let Some(id) = new_id {
        head.push_str(&format!("Mcp-Session-Id: {id}\r\n"));
    }
    head.push_str("\r\n");
    let mut raw = req.into_writer();
    if raw.write_all(head.as_bytes()).and_then(|()| raw.flush()).is_err() {
        return;
    }
    let mut w = chunked_transfer::Encoder::with_flush_after_write(FlushEach(&mut raw));
    let mut left = responses;
    loop {
        match rx.recv_timeout(KEEPALIVE) {
            Ok(msg) => {
                let is_response = serde_json::from_slice::<Value>(&msg)
                    .ok()
                    .is_some_and(|m| m.get("method").is_none() && m.get("id").is_some());
                let mut ev = Vec::with_capacity(msg.len() + 20);
                ev.extend_from_slice(b"event: message\ndata: ");
                ev.extend_from_slice(&msg);
                ev.extend_from_slice(b"\n\n");
                if w.write_all(&ev).is_err() {
                    break;
                }
                if is_response {
                    if let Some(n) = left.as_mut() {
                        *n -= 1;
                        if *n == 0 {
                            break;
                        }
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                if w.write_all(b": keep-alive\n\n").is_err() || !s.alive.load(Ordering::SeqCst) && responses.is_none() {
                    break;
                }
            }
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    drop(w);
    let _ = raw.flush();
}

/// A writer flushed after every write: the encoder writes each chunk
/// but does not flush tiny_http's buffer under it.
struct FlushEach<W: Write>(W);

impl<W: Write> Write for FlushEach<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.0.write(buf)?;
        self.0.flush()?;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

fn get_stream(req: Request, s: &Arc<HttpSession>) {
    let accept = header(&req, "Accept").unwrap_or_default();
    if !accept.contains("text/event-stream") {
        return plain(req, 406, "not acceptable: the stream is text/event-stream");
    }
    let (tx, rx) = channel::<Vec<u8>>();
    for m in s.backlog.lock().expect("backlog lock").drain(..) {
        let _ = tx.send(m);
    }
    // The GET stream takes server messages only when no POST stream is
    // open: it goes first in the list.
    s.streams.lock().expect("streams lock").insert(0, tx);
    sse(req, s, None, rx, None);
}

fn json_reply(req: Request, new_id: Option<&str>, rx: &Receiver<Vec<u8>>, n: usize, batch: bool) {
    let mut out = Vec::new();
    while out.len() < n {
        match rx.recv() {
            Ok(m) => out.push(serde_json::from_slice::<Value>(&m).unwrap_or(Value::Null)),
            Err(_) => break,
        }
    }
    let body = if batch || out.len() != 1 { Value::Array(out) } else { out.remove(0) };
    let mut resp = Response::from_string(body.to_string())
        .with_header(Header::from_bytes("Content-Type", "application/json").expect("header"));
    if let Some(id) = new_id {
        resp = resp.with_header(Header::from_bytes("Mcp-Session-Id", id).expect("header"));
    }
    let _ = req.respond(resp);
}

/// The id of the `initialize` a replica replays when it takes a session up
/// (as JSON text), and its kept copy's name in the store.
const ADOPT_ID: &str = "result-sanitizer-adopt";
const ADOPT_ID_JSON: &str = "\"result-sanitizer-adopt\"";
const INIT_KEPT: &str = "initialize";
const ENDED_KEPT: &str = "ended";
/// How long a replica waits for its server to answer the replayed
/// `initialize`.
const ADOPT_WAIT: Duration = Duration::from_secs(30);

/// A new session id: 32 random hex digits; with a shared store, 32 more:
/// the store key's tag of the first, so any replica holding the key can
/// tell an id it drew from a guessed one.
fn fresh_id(proxy: &Proxy) -> Result<String> {
    let hex = result_sanitizer_host::digest::hex;
    let mut id = hex(&result_sanitizer_host::report::random_key()?[..16]);
    if let Some(k) = &proxy.shared_key {
        let tag = k.tag("mcp-session-id", &[id.as_bytes()]);
        id.push_str(&hex(&tag[..16]));
    }
    Ok(id)
}

/// Whether `id` was drawn by a replica holding the shared store's key.
fn tagged(proxy: &Proxy, id: &str) -> bool {
    let Some(k) = &proxy.shared_key else { return false };
    if id.len() != 64 || !id.is_ascii() {
        return false;
    }
    let want = result_sanitizer_host::digest::hex(&k.tag("mcp-session-id", &[&id.as_bytes()[..32]])[..16]);
    want.bytes().zip(id[32..].bytes()).fold(0u8, |d, (a, b)| d | (a ^ b)) == 0
}

/// Keeps a new session's `initialize` (sealed) in the shared store, for a
/// replica that takes the session up.
fn keep_initialize(st: &State, s: &HttpSession, msgs: &[&Value]) {
    if !st.proxy.store.is_shared() {
        return;
    }
    if let Some(init) = msgs.iter().find(|m| m.get("method").and_then(Value::as_str) == Some("initialize")) {
        let _ = st.proxy.store.put(s.session.tenant(), INIT_KEPT, init.to_string().as_bytes());
    }
}

/// Notes in the shared store that the client ended the session
/// (`DELETE`): no replica takes it up after that.
fn mark_ended(st: &State, s: &HttpSession) {
    if st.proxy.store.is_shared() {
        let _ = st.proxy.store.put(s.session.tenant(), ENDED_KEPT, b"");
    }
}

/// Takes up a session another replica started (its id tagged with the
/// shared key): a session of this replica under the same id, so the same
/// tenant in the store, with a server of its own, to which the client's
/// `initialize` kept in the store is replayed (its answer dropped), then
/// `notifications/initialized`. `None` when the id is not tagged, its
/// `initialize` is not kept (expired, or the store cannot be reached), the
/// client ended it, no slot is free, or the server does not start.
fn adopt(st: &State, id: &str) -> Option<InUse> {
    if !tagged(&st.proxy, id) {
        return None;
    }
    let store = &st.proxy.store;
    let init = store.get(id, INIT_KEPT).ok().and_then(|k| serde_json::from_slice::<Value>(&k.bytes).ok())?;
    if store.get(id, ENDED_KEPT).is_ok() {
        return None;
    }
    let (new_id, used) = start_session(st, Some(id.to_string())).ok().flatten()?;
    if new_id.is_empty() {
        return Some(used); // taken up by a request at the same time
    }
    let s = used.0.clone();
    let mut m = init;
    m["id"] = ADOPT_ID.into();
    let line = m.to_string().into_bytes();
    let (tx, rx) = channel();
    s.waiters.lock().expect("waiters lock").insert(ADOPT_ID_JSON.into(), tx);
    if let FromClient::Forward = s.session.from_client(&line) {
        s.to_server(&line);
    }
    let answered = rx.recv_timeout(ADOPT_WAIT).is_ok();
    s.waiters.lock().expect("waiters lock").remove(ADOPT_ID_JSON);
    if answered {
        s.to_server(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }
    tracing::info!(target: "result_sanitizer::mcp", "took up a session of another replica (its server answered the replayed initialize: {answered})");
    Some(used)
}

//! The open sessions of the HTTP transport: each one's server process and
//! where its messages go, the cap on how many are open, their ending (by
//! the client, by their server's exit, or idle), and, with a shared
//! recall store, the taking up of another replica's session.

use std::collections::{HashMap, VecDeque};
use std::io::{BufReader, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::lines::{read_line_capped, Line};
use crate::session::{FromClient, Session};
use crate::upstream::{Backend, Upstream};
use crate::Proxy;
use result_sanitizer_host::{Error, Result};

/// Server messages held for a GET stream that is not open.
const BACKLOG: usize = 1000;

/// One HTTP session: its server process and where its messages go.
pub(super) struct HttpSession {
    pub(super) session: Session,
    server_in: Mutex<Option<Box<dyn Write + Send>>>,
    signal: Arc<dyn Fn(i32) + Send + Sync>,
    /// Open POST streams waiting for responses, by request id (JSON text).
    pub(super) waiters: Mutex<HashMap<String, Sender<Vec<u8>>>>,
    /// Open SSE streams for server requests and notifications, newest last.
    pub(super) streams: Mutex<Vec<Sender<Vec<u8>>>>,
    /// Held for the next GET stream when none is open.
    pub(super) backlog: Mutex<VecDeque<Vec<u8>>>,
    pub(super) alive: AtomicBool,
    /// Requests in progress on the session (streams included); taken and
    /// checked under the sessions lock, so that an idle session is never
    /// ended while a request is starting on it.
    in_use: AtomicUsize,
    /// When the last request on the session ended (or it started).
    last_use: Mutex<Instant>,
}

impl HttpSession {
    /// Sends one client message to the server; false if it is gone.
    pub(super) fn to_server(&self, msg: &[u8]) -> bool {
        let mut g = self.server_in.lock().expect("stdin lock");
        let Some(w) = g.as_mut() else { return false };
        let ok = crate::lines::write_line(w, msg).and_then(|()| w.flush()).is_ok();
        if !ok {
            *g = None;
        }
        ok
    }

    /// Delivers a (sanitized) server message to the client.
    pub(super) fn route(&self, msg: Vec<u8>) {
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

    pub(super) fn stop(&self) {
        self.alive.store(false, Ordering::SeqCst);
        self.server_in.lock().expect("stdin lock").take();
        (self.signal)(libc::SIGTERM);
    }

    /// Whether no request has used the session for `idle`.
    pub(super) fn idle_for(&self, idle: Duration) -> bool {
        self.in_use.load(Ordering::SeqCst) == 0 && self.last_use.lock().expect("last-use lock").elapsed() >= idle
    }
}

/// A request using a session, from when it was found (under the sessions
/// lock) until it ends: the session is not idle meanwhile.
pub(super) struct InUse(pub(super) Arc<HttpSession>);

impl InUse {
    /// Call with the sessions lock held.
    pub(super) fn take(s: &Arc<HttpSession>) -> Self {
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
pub(super) struct Spawner(Mutex<Sender<SpawnRequest>>);

/// Where the server comes from, its message cap, and where it goes.
type SpawnRequest = (Upstream, usize, Sender<Result<Backend>>);

impl Spawner {
    pub(super) fn new() -> Self {
        let (tx, rx) = channel::<SpawnRequest>();
        std::thread::spawn(move || {
            for (up, cap, back) in rx {
                let _ = back.send(up.start(cap));
            }
        });
        Self(Mutex::new(tx))
    }

    pub(super) fn spawn(&self, up: &Upstream, cap: usize) -> Result<Backend> {
        let (tx, rx) = channel();
        self.0.lock().expect("spawner lock").send((up.clone(), cap, tx)).expect("the spawner thread runs");
        rx.recv().expect("the spawner thread answers")
    }
}

/// Open sessions by id. A session leaves when the client ends it
/// (DELETE) or its server exits, so that neither its kept results nor its
/// slot outlive it.
pub(super) type Sessions = Arc<Mutex<Open>>;

#[derive(Default)]
pub(super) struct Open {
    pub(super) by_id: HashMap<String, Arc<HttpSession>>,
    /// Sessions whose server is starting: they count against the cap, so
    /// that initializes at once cannot pass it together.
    starting: usize,
}

pub(super) struct State {
    pub(super) proxy: Arc<Proxy>,
    pub(super) upstream: Upstream,
    pub(super) sessions: Sessions,
    pub(super) max_sessions: usize,
    pub(super) spawner: Spawner,
}

/// Ends, for good, each session unused for `idle`: checked a few times
/// per `idle` (at most every 30 s), so one ends within a quarter of
/// `idle` after it became due (or 30 s).
pub(super) fn end_idle_sessions(st: &State, idle: Duration) {
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

/// Ends a session: its server is stopped and it leaves the map.
pub(super) fn end_session(st: &State, s: &Arc<HttpSession>) {
    s.stop();
    st.sessions.lock().expect("sessions lock").by_id.retain(|_, v| !Arc::ptr_eq(v, s));
}

/// A new session and its server, in use by the request that started it,
/// or `None` when `max_sessions` are open. With `id` (a session taken
/// up) that is open already: that one, and an empty id.
pub(super) fn start_session(st: &State, id: Option<String>) -> Result<Option<(String, InUse)>> {
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
pub(super) fn keep_initialize(st: &State, s: &HttpSession, msgs: &[&Value]) {
    if !st.proxy.store.is_shared() {
        return;
    }
    if let Some(init) = msgs.iter().find(|m| m.get("method").and_then(Value::as_str) == Some("initialize")) {
        let _ = st.proxy.store.put(s.session.tenant(), INIT_KEPT, init.to_string().as_bytes());
    }
}

/// Notes in the shared store that the client ended the session
/// (`DELETE`): no replica takes it up after that.
pub(super) fn mark_ended(st: &State, s: &HttpSession) {
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
pub(super) fn adopt(st: &State, id: &str) -> Option<InUse> {
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

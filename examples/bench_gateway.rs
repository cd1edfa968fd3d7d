//! The proxy as a gateway under load and faults (#42), on loopback: two
//! `result-sanitizer mcp --listen` replicas in front of one HTTP upstream
//! MCP server, sharing one real `redis-server` as their recall store (one
//! key, from `--recall-key-file`). Client sessions (64 by default) run at
//! once; each sends its requests to the two replicas in turn (no sticky
//! routing: one request to A, the next to B), `--calls` tools/call in all
//! (default 20 000): mostly 8 KiB results, one in 50 of 1 MiB.
//!
//! - **Upstream**: a minimal Streamable HTTP MCP server in this process
//!   (tiny_http, JSON answers, stateless): its one tool returns a service
//!   log of the size asked for, every line of which starts with the
//!   call's nonce (`@@s07c00123@@`), so a response given to the wrong
//!   request is seen in any slice of it.
//! - **Checks on every response**: its JSON-RPC id is the request's, every
//!   nonce in it is the call's; an 8 KiB result is the upstream's text
//!   exactly; a 1 MiB one shows the nonce at its head and carries a recall
//!   route. Lost (no answer), duplicated (an earlier id again) and
//!   misrouted (another id or nonce) answers are counted.
//! - **Recall across replicas**: each cut result is recalled (4 KiB at the
//!   marker's offset) through the replica that did NOT keep it; the slice
//!   must be the upstream's text at that offset. The same session then
//!   tries a call id of another session: it must be refused.
//! - **Added time**: some calls (every 4th 8 KiB one, every 1 MiB one) are
//!   also made directly to the upstream by the same client code, in the
//!   same run; added = proxied less direct, at p50 and p99. Under load
//!   that is mostly queueing on the machine's cores, so a first phase
//!   (500 calls, one in 5 of 1 MiB, each made both ways) runs one session
//!   alone: the proxy's own cost per call.
//! - **Faults**: at 30 % of the calls replica A is killed (SIGKILL) and
//!   started again a second later; at 60 % Redis is stopped and started
//!   again on the same port and directory (no persistence, as the docs
//!   advise: what it held is gone). A call that fails with a transport
//!   error (in flight at the kill, or sent to A while it is down) is
//!   counted as "failed during fault" and retried once on the other
//!   replica: the retry must succeed with the right answer.
//! - **Tenants**: at the end a third proxy with another key on the same
//!   Redis must not read any kept result nor take up a session.
//!
//! Every server listens on 127.0.0.1 and is killed at the end (a guard,
//! also on a panic).
//!
//!   target/release/examples/bench_gateway [--calls N] [--sessions N] [--keep-logs]

use std::collections::HashSet;
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

#[path = "bench_inputs.rs"]
#[allow(dead_code)]
mod inputs;

const KEY: &str = "6a1f0e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1";
const OTHER_KEY: &str = "another tenant's key, of at least thirty-two bytes";
const SMALL: usize = 8 << 10;
const BIG: usize = 1 << 20;
const RECALL_LIMIT: usize = 4096;
/// Calls of the one-session phase (one in 5 of 1 MiB).
const QUIET_CALLS: usize = 500;
/// A request that takes longer than this is counted as stalled.
const STALL: Duration = Duration::from_secs(5);

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn wait_listening(port: u16, what: &str) {
    let end = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < end, "{what} does not listen on {port}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The processes of the run; every one is killed when this is dropped
/// (at the end, or while a panic unwinds).
struct Fleet {
    dir: PathBuf,
    bin: PathBuf,
    redis_port: u16,
    upstream_url: String,
    redis: Option<Child>,
    replicas: Vec<(u16, Option<Child>)>,
    others: Vec<Child>,
    /// Keeps `dir` (the proxies' logs) after a failed run.
    keep: bool,
}

impl Fleet {
    fn redis_url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.redis_port)
    }

    fn start_redis(&mut self) {
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &self.redis_port.to_string(), "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start redis-server ({e}): run `make redis-deps`"));
        self.redis = Some(child);
        wait_listening(self.redis_port, "redis-server");
    }

    /// Stops Redis as a service manager would (SIGTERM, then waits).
    fn stop_redis(&mut self) {
        if let Some(mut c) = self.redis.take() {
            // SAFETY: kill(2) on our own child.
            unsafe { libc::kill(c.id() as libc::pid_t, libc::SIGTERM) };
            let _ = c.wait();
        }
    }

    fn proxy(&self, port: u16, key_env: Option<&str>, log: &str) -> Child {
        let mut c = Command::new(&self.bin);
        c.args(["mcp", "--listen", &format!("127.0.0.1:{port}"), "--recall-store", &self.redis_url()]);
        c.args(["--max-sessions", "512", "--upstream", &self.upstream_url]);
        match key_env {
            Some(k) => {
                c.env("RESULT_SANITIZER_RECALL_KEY", k);
            }
            None => {
                c.arg("--recall-key-file").arg(self.dir.join("recall.key"));
                c.env_remove("RESULT_SANITIZER_RECALL_KEY");
            }
        }
        let log = std::fs::OpenOptions::new().create(true).append(true).open(self.dir.join(log)).unwrap();
        let child = c.stdin(Stdio::null()).stdout(Stdio::null()).stderr(log).spawn().expect("the proxy starts");
        wait_listening(port, "the proxy");
        child
    }

    fn start_replica(&mut self, i: usize) {
        let port = self.replicas[i].0;
        let child = self.proxy(port, None, &format!("replica-{i}.log"));
        self.replicas[i].1 = Some(child);
    }

    fn kill_replica(&mut self, i: usize) {
        if let Some(mut c) = self.replicas[i].1.take() {
            let _ = c.kill(); // SIGKILL
            let _ = c.wait();
        }
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        for i in 0..self.replicas.len() {
            self.kill_replica(i);
        }
        for c in &mut self.others {
            let _ = c.kill();
            let _ = c.wait();
        }
        if let Some(mut c) = self.redis.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// The upstream's text for a call: service-log lines, each behind the
/// call's nonce, cut at `size` bytes.
fn payload(lines: &[&str], nonce: &str, size: usize) -> String {
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
fn upstream(server: Arc<tiny_http::Server>, lines: Arc<Vec<&'static str>>, calls: Arc<AtomicUsize>) {
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
enum Posted {
    Ok {
        status: u16,
        sid: Option<String>,
        body: Vec<u8>,
    },
    /// A transport error: refused, reset, cut short, timed out.
    Transport(String),
}

fn post(agent: &ureq::Agent, url: &str, sid: Option<&str>, body: &[u8]) -> Posted {
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

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(60)))
        .http_status_as_error(false)
        .max_idle_connections_per_host(2)
        .build()
        .into()
}

fn call(id: u64, name: &str, arguments: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": name, "arguments": arguments } }))
    .unwrap()
}

fn text_of(v: &Value) -> String {
    v["result"]["content"]
        .as_array()
        .map(|a| a.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"))
        .unwrap_or_default()
}

/// Every nonce (`@@...@@`) in `text`.
fn nonces(text: &str) -> HashSet<&str> {
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
fn route(text: &str) -> Option<(String, usize)> {
    let rest = text.split("call_id=").nth(1)?;
    let id = rest.split([',', ')', ' ']).next()?.to_string();
    let off = rest.split("offset=").nth(1)?.split([',', ')', ' ']).next()?.parse().ok()?;
    Some((id, off))
}

#[derive(Default)]
struct Tally {
    ok: usize,
    lost: usize,
    duplicated: usize,
    misrouted: usize,
    wrong_content: usize,
    http_errors: usize,
    /// Answers (or errors) that took over `STALL`.
    stalled: usize,
    failed_in_flight: usize,
    failed_while_down: usize,
    retried_ok: usize,
    recall_ok: usize,
    /// Right recalls answered by replica A after its restart, and after
    /// Redis came back.
    recall_ok_a_back: usize,
    recall_ok_redis_back: usize,
    recall_wrong: usize,
    not_kept: usize,
    recall_unavailable: usize,
    recall_lost: usize,
    foreign_refused: usize,
    foreign_leaked: usize,
    examples: Vec<String>,
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.ok += o.ok;
        self.lost += o.lost;
        self.duplicated += o.duplicated;
        self.misrouted += o.misrouted;
        self.wrong_content += o.wrong_content;
        self.http_errors += o.http_errors;
        self.stalled += o.stalled;
        self.failed_in_flight += o.failed_in_flight;
        self.failed_while_down += o.failed_while_down;
        self.retried_ok += o.retried_ok;
        self.recall_ok += o.recall_ok;
        self.recall_ok_a_back += o.recall_ok_a_back;
        self.recall_ok_redis_back += o.recall_ok_redis_back;
        self.recall_wrong += o.recall_wrong;
        self.not_kept += o.not_kept;
        self.recall_unavailable += o.recall_unavailable;
        self.recall_lost += o.recall_lost;
        self.foreign_refused += o.foreign_refused;
        self.foreign_leaked += o.foreign_leaked;
        for e in &o.examples {
            self.note(e.clone());
        }
    }

    fn note(&mut self, what: String) {
        if self.examples.len() < 5 {
            self.examples.push(what);
        }
    }
}

/// One timed call: size, proxied or direct, round trip, when it ended
/// (since the run's start), and the replica that answered.
struct Sample {
    size: usize,
    proxied: bool,
    took: Duration,
    ended: Duration,
    replica: usize,
}

/// What all sessions share.
struct Run {
    replicas: [String; 2],
    upstream: String,
    calls: usize,
    /// One call in this many is of 1 MiB; one in `direct_every` (and every
    /// 1 MiB one) is also made directly to the upstream.
    big_every: usize,
    direct_every: usize,
    /// Starts every nonce of the phase.
    prefix: &'static str,
    next: AtomicUsize,
    done: AtomicUsize,
    start: Instant,
    /// When replica A was killed (since `start`).
    killed_at: Mutex<Option<Duration>>,
    /// When replica A listened again, and when Redis was back.
    a_back_at: Mutex<Option<Duration>>,
    redis_back_at: Mutex<Option<Duration>>,
    lines: Arc<Vec<&'static str>>,
    /// Kept results: (session id, call id, nonce), for the cross checks.
    kept: Mutex<Vec<(String, String, String)>>,
}

impl Run {
    fn new(replicas: [String; 2], upstream: &str, lines: &Arc<Vec<&'static str>>, calls: usize) -> Self {
        Run {
            replicas,
            upstream: upstream.into(),
            calls,
            big_every: 50,
            direct_every: 4,
            prefix: "s",
            next: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            start: Instant::now(),
            killed_at: Mutex::new(None),
            a_back_at: Mutex::new(None),
            redis_back_at: Mutex::new(None),
            lines: lines.clone(),
            kept: Mutex::new(Vec::new()),
        }
    }
}

fn session(run: &Run, s: usize) -> (Tally, Vec<Sample>) {
    let agent = agent();
    let mut t = Tally::default();
    let mut samples = Vec::new();
    // Initialize at replica s % 2; its later requests alternate.
    let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "bench-gateway", "version": "1" } } });
    let mut turn = s;
    let mut sid = None;
    for _ in 0..20 {
        if let Posted::Ok { status: 200, sid: Some(id), .. } =
            post(&agent, &run.replicas[turn % 2], None, &serde_json::to_vec(&init).unwrap())
        {
            sid = Some(id);
            break;
        }
        turn += 1;
        std::thread::sleep(Duration::from_millis(200));
    }
    let sid = sid.expect("a session id");
    let note = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let _ = post(&agent, &run.replicas[turn % 2], Some(&sid), note);
    turn += 1;
    let mut id: u64 = 0;
    let mut answered: HashSet<u64> = HashSet::new();

    // Sends one request through the replicas (the next in turn; once
    // more on the other after a transport error); the answer, checked
    // for its id, and the replica that gave it.
    let through = |t: &mut Tally, turn: &mut usize, body: &[u8], timed: Option<usize>| {
        let mut samples = Vec::new();
        let first = *turn % 2;
        *turn += 1;
        for (attempt, r) in [first, 1 - first].into_iter().enumerate() {
            let sent = run.start.elapsed();
            let t0 = Instant::now();
            let p = post(&agent, &run.replicas[r], Some(&sid), body);
            let took = t0.elapsed();
            if took > STALL {
                t.stalled += 1;
                t.note(format!(
                    "a request to replica {r} sent at t={:.2} s was answered {:.1} s later",
                    sent.as_secs_f64(),
                    took.as_secs_f64()
                ));
            }
            match p {
                Posted::Ok { status: 200, body: b, .. } => {
                    let v: Value = serde_json::from_slice(&b).unwrap_or(Value::Null);
                    if attempt == 1 {
                        t.retried_ok += 1;
                    }
                    if let Some(size) = timed {
                        let ended = run.start.elapsed();
                        samples.push(Sample { size, proxied: true, took, ended, replica: r });
                    }
                    return (Some((v, r)), samples);
                }
                Posted::Ok { status, body: b, .. } => {
                    t.http_errors += 1;
                    t.note(format!(
                        "HTTP {status} from replica {r} at t={:.2} s (sent at {:.2} s, session {s}, turn {}): {}",
                        run.start.elapsed().as_secs_f64(),
                        sent.as_secs_f64(),
                        *turn,
                        String::from_utf8_lossy(&b[..b.len().min(200)])
                    ));
                    return (None, samples);
                }
                Posted::Transport(e) => {
                    if attempt == 1 {
                        t.lost += 1;
                        t.note(format!("retry failed on replica {r}: {e}"));
                        return (None, samples);
                    }
                    let killed = *run.killed_at.lock().unwrap();
                    if killed.is_some_and(|k| k > sent) {
                        t.failed_in_flight += 1;
                    } else {
                        t.failed_while_down += 1;
                    }
                }
            }
        }
        (None, samples)
    };

    loop {
        let c = run.next.fetch_add(1, Ordering::Relaxed);
        if c >= run.calls {
            break;
        }
        let size = if c % run.big_every == run.big_every - 1 { BIG } else { SMALL };
        let nonce = format!("{}{s:02}c{c:05}", run.prefix);
        let expected = payload(&run.lines, &nonce, size);
        id += 1;
        let body = call(id, "payload", json!({ "nonce": nonce, "size": size }));
        // The same call, directly, for the added time.
        if size == BIG || c.is_multiple_of(run.direct_every) {
            let t0 = Instant::now();
            if let Posted::Ok { status: 200, body: b, .. } = post(&agent, &run.upstream, None, &body) {
                let took = t0.elapsed();
                let v: Value = serde_json::from_slice(&b).unwrap_or(Value::Null);
                assert_eq!(text_of(&v), expected, "the upstream answers directly");
                samples.push(Sample { size, proxied: false, took, ended: run.start.elapsed(), replica: 2 });
            }
        }
        let (got, mut timed) = through(&mut t, &mut turn, &body, Some(size));
        samples.append(&mut timed);
        run.done.fetch_add(1, Ordering::Relaxed);
        let Some((v, kept_by)) = got else { continue };
        // The answer is this request's, once, with this call's content.
        let got_id = v["id"].as_u64();
        if got_id != Some(id) {
            if got_id.is_some_and(|g| answered.contains(&g)) {
                t.duplicated += 1;
            } else {
                t.misrouted += 1;
            }
            t.note(format!("id {id} answered with {:?}", v["id"]));
            continue;
        }
        answered.insert(id);
        let text = text_of(&v);
        let seen = nonces(&text);
        if seen.len() != 1 || !seen.contains(nonce.as_str()) {
            t.misrouted += 1;
            t.note(format!("call {nonce}: nonces {seen:?}"));
            continue;
        }
        if size == SMALL {
            if text != expected {
                t.wrong_content += 1;
                t.note(format!("call {nonce}: 8 KiB text differs ({} bytes)", text.len()));
                continue;
            }
            t.ok += 1;
            continue;
        }
        // 1 MiB: cut, its head shown, a route to the rest.
        let head = expected.lines().next().unwrap();
        if !text.contains(&format!("{head}\n")) || !text.contains("[truncated:") {
            t.wrong_content += 1;
            t.note(format!("call {nonce}: 1 MiB head or marker missing: {}", &text[..text.len().min(300)]));
            continue;
        }
        t.ok += 1;
        if !text.contains("recallable") {
            t.not_kept += 1; // cut while Redis was away: the marker says so
            continue;
        }
        let Some((call_id, offset)) = route(&text) else {
            t.wrong_content += 1;
            t.note(format!("call {nonce}: no recall route"));
            continue;
        };
        // Recalled through the replica that did not keep it.
        id += 1;
        let body =
            call(id, "read_truncated_output", json!({ "call_id": call_id, "offset": offset, "limit": RECALL_LIMIT }));
        turn = kept_by + 1; // the other replica next
        let (got, _) = through(&mut t, &mut turn, &body, None);
        let Some((v, recalled_by)) = got else { continue };
        let now = run.start.elapsed();
        let after = |at: &Mutex<Option<Duration>>| at.lock().unwrap().is_some_and(|t| now > t);
        if v["id"].as_u64() != Some(id) {
            t.misrouted += 1;
            t.note(format!("recall {id} answered with {:?}", v["id"]));
            continue;
        }
        answered.insert(id);
        let rt = text_of(&v);
        if v["result"]["isError"] == true {
            if rt.contains("reach") {
                t.recall_unavailable += 1;
            } else {
                t.recall_lost += 1; // kept before Redis restarted
            }
        } else {
            let want = &expected[offset..offset + RECALL_LIMIT];
            // The slice's whole lines, as the upstream wrote them.
            let inner = want.split('\n').skip(1).take(3).collect::<Vec<_>>().join("\n");
            let seen = nonces(&rt);
            if seen.len() == 1 && seen.contains(nonce.as_str()) && rt.contains(&inner) {
                t.recall_ok += 1;
                if recalled_by == 0 && after(&run.a_back_at) {
                    t.recall_ok_a_back += 1;
                }
                if after(&run.redis_back_at) {
                    t.recall_ok_redis_back += 1;
                }
            } else {
                t.recall_wrong += 1;
                t.note(format!("recall of {nonce} at {offset}: {}", &rt[..rt.len().min(300)]));
            }
        }
        // Another session's kept result, from this session: refused.
        let foreign = run.kept.lock().unwrap().iter().rev().find(|k| k.0 != sid).cloned();
        run.kept.lock().unwrap().push((sid.clone(), call_id, nonce.clone()));
        if let Some((_, other_call, other_nonce)) = foreign {
            id += 1;
            let body = call(id, "read_truncated_output", json!({ "call_id": other_call, "offset": 0, "limit": 4096 }));
            if let (Some((v, _)), _) = through(&mut t, &mut turn, &body, None) {
                let ft = text_of(&v);
                if v["result"]["isError"] == true && !ft.contains(&format!("@@{other_nonce}@@")) {
                    t.foreign_refused += 1;
                } else {
                    t.foreign_leaked += 1;
                    t.note(format!("{other_call} of another session read: {}", &ft[..ft.len().min(200)]));
                }
            }
        }
    }
    let _ = agent.delete(&run.replicas[turn % 2]).header("Mcp-Session-Id", &sid).call();
    (t, samples)
}

fn pct(v: &mut [Duration], p: usize) -> Duration {
    v.sort();
    v[((v.len() * p) / 100).min(v.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let arg = |name: &str| std::env::args().skip_while(|a| a != name).nth(1);
    let calls: usize = arg("--calls").map_or(20_000, |n| n.parse().expect("--calls N"));
    let sessions: usize = arg("--sessions").map_or(64, |n| n.parse().expect("--sessions N"));
    let keep_logs = std::env::args().any(|a| a == "--keep-logs");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let bin = root.join("target/release/result-sanitizer");
    assert!(bin.exists(), "build first: {}", bin.display());

    // The upstream, in this process.
    let log: &'static str = String::from_utf8(inputs::service_log(1 << 20)).unwrap().leak();
    let lines = Arc::new(log.lines().collect::<Vec<_>>());
    let up_port = free_port();
    let listener = TcpListener::bind(("127.0.0.1", up_port)).expect("the upstream listens");
    {
        // TCP_NODELAY, inherited by its connections (Linux), as the proxy's
        // listener: tiny_http writes head and body apart, and Nagle would
        // hold the body for the head's delayed ACK (40 ms).
        use std::os::fd::AsRawFd;
        let one: libc::c_int = 1;
        // SAFETY: setsockopt(2) on our own socket, with an int option value.
        let r = unsafe {
            libc::setsockopt(
                listener.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_NODELAY,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        assert_eq!(r, 0, "TCP_NODELAY on the upstream's listener");
    }
    let server = Arc::new(tiny_http::Server::from_listener(listener, None).expect("the upstream serves"));
    let upstream_calls = Arc::new(AtomicUsize::new(0));
    for _ in 0..8 {
        let (s, l, c) = (server.clone(), lines.clone(), upstream_calls.clone());
        std::thread::spawn(move || upstream(s, l, c));
    }
    let upstream_url = format!("http://127.0.0.1:{up_port}/mcp");

    let dir = std::env::temp_dir().join(format!("rs-bench-gateway-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("recall.key"), format!("{KEY}\n")).unwrap();
    let mut fleet = Fleet {
        dir,
        bin,
        redis_port: free_port(),
        upstream_url: upstream_url.clone(),
        redis: None,
        replicas: vec![(free_port(), None), (free_port(), None)],
        others: Vec::new(),
        keep: false,
    };
    fleet.start_redis();
    fleet.start_replica(0);
    fleet.start_replica(1);
    let url = |p: u16| format!("http://127.0.0.1:{p}/mcp");
    let replicas = [url(fleet.replicas[0].0), url(fleet.replicas[1].0)];
    println!(
        "MCP gateway under load: 2 replicas (HTTP) -> 1 HTTP upstream, 1 redis-server, {sessions} sessions, {calls} tools/call"
    );

    // First one session alone (no queueing): what the proxy adds to a
    // call on an idle machine; every call also made directly.
    let mut quiet = Run::new(replicas.clone(), &upstream_url, &lines, QUIET_CALLS);
    (quiet.big_every, quiet.direct_every, quiet.prefix) = (5, 1, "q");
    let (quiet_tally, quiet_samples) = session(&quiet, 0);

    // Then the load, and the faults.
    let run = Arc::new(Run::new(replicas, &upstream_url, &lines, calls));
    let workers: Vec<_> = (0..sessions)
        .map(|s| {
            let run = run.clone();
            std::thread::spawn(move || session(&run, s))
        })
        .collect();

    // The faults, from this thread, as the calls go.
    let wait_for = |n: usize| {
        while run.done.load(Ordering::Relaxed) < n && !workers.iter().all(|w| w.is_finished()) {
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    wait_for(calls * 3 / 10);
    let kill_at_call = run.done.load(Ordering::Relaxed);
    let t_kill = run.start.elapsed();
    *run.killed_at.lock().unwrap() = Some(t_kill);
    fleet.kill_replica(0);
    std::thread::sleep(Duration::from_secs(1));
    fleet.start_replica(0);
    let t_back = run.start.elapsed();
    *run.a_back_at.lock().unwrap() = Some(t_back);
    wait_for(calls * 6 / 10);
    let redis_at_call = run.done.load(Ordering::Relaxed);
    let t_redis_down = run.start.elapsed();
    fleet.stop_redis();
    std::thread::sleep(Duration::from_secs(1));
    fleet.start_redis();
    let t_redis_up = run.start.elapsed();
    // Redis answers now; the proxies retry it at most once a second.
    *run.redis_back_at.lock().unwrap() = Some(t_redis_up);

    let mut tally = Tally::default();
    tally.add(&quiet_tally);
    let mut samples = Vec::new();
    for w in workers {
        let (t, s) = w.join().expect("a session thread panicked");
        tally.add(&t);
        samples.extend(s);
    }
    let wall = run.start.elapsed();

    // Another tenant: a proxy with another key on the same Redis reads
    // none of the kept results and takes up no session.
    let c_port = free_port();
    let c = fleet.proxy(c_port, Some(OTHER_KEY), "tenant-c.log");
    fleet.others.push(c);
    let agent = agent();
    let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "other-tenant", "version": "1" } } });
    let Posted::Ok { sid: Some(c_sid), .. } = post(&agent, &url(c_port), None, &serde_json::to_vec(&init).unwrap())
    else {
        panic!("the other tenant's proxy answers initialize")
    };
    let kept = run.kept.lock().unwrap().clone();
    let sample: Vec<_> = kept.iter().rev().take(50).collect();
    let (mut tenant_refused, mut tenant_leaked, mut takeover_refused) = (0, 0, 0);
    for (i, (owner_sid, call_id, nonce)) in sample.iter().enumerate() {
        let body =
            call(i as u64 + 1, "read_truncated_output", json!({ "call_id": call_id, "offset": 0, "limit": 4096 }));
        if let Posted::Ok { status: 200, body: b, .. } = post(&agent, &url(c_port), Some(&c_sid), &body) {
            let v: Value = serde_json::from_slice(&b).unwrap_or(Value::Null);
            if v["result"]["isError"] == true && !text_of(&v).contains(&format!("@@{nonce}@@")) {
                tenant_refused += 1;
            } else {
                tenant_leaked += 1;
            }
        }
        // The owner's session id itself, at the other tenant: not taken up.
        if i < 10 {
            match post(&agent, &url(c_port), Some(owner_sid), &body) {
                Posted::Ok { status: 404, .. } => takeover_refused += 1,
                Posted::Ok { status, body: b, .. } => {
                    tenant_leaked += 1;
                    tally.note(format!("tenant C took up a session: {status} {}", String::from_utf8_lossy(&b)));
                }
                Posted::Transport(e) => tally.note(format!("tenant C: {e}")),
            }
        }
    }

    // The table.
    let row = |label: &str, size: usize, samples: &[Sample]| {
        let mut d: Vec<Duration> = samples.iter().filter(|x| x.size == size && !x.proxied).map(|x| x.took).collect();
        let mut p: Vec<Duration> = samples.iter().filter(|x| x.size == size && x.proxied).map(|x| x.took).collect();
        if d.is_empty() || p.is_empty() {
            return;
        }
        let (d50, d99, p50, p99) = (pct(&mut d, 50), pct(&mut d, 99), pct(&mut p, 50), pct(&mut p, 99));
        println!(
            "| {label} | {} | {} | {} / {} | {} / {} | {} / {} |",
            p.len(),
            d.len(),
            ms(d50),
            ms(d99),
            ms(p50),
            ms(p99),
            ms(p50.saturating_sub(d50)),
            ms(p99.saturating_sub(d99))
        );
    };
    println!();
    println!(
        "| result, phase | proxied calls | direct calls | direct p50 / p99 | proxied p50 / p99 | added p50 / p99 |"
    );
    println!("|---|---|---|---|---|---|");
    row("8 KiB, 1 session alone", SMALL, &quiet_samples);
    row("1 MiB, 1 session alone", BIG, &quiet_samples);
    row(&format!("8 KiB, {sessions} sessions, faults"), SMALL, &samples);
    row(&format!("1 MiB, {sessions} sessions, faults"), BIG, &samples);
    let proxied = samples.iter().filter(|x| x.proxied).count();
    let during = |a: Duration, b: Duration, r: Option<usize>| {
        samples.iter().filter(|x| x.proxied && x.ended >= a && x.ended <= b && r.is_none_or(|r| x.replica == r)).count()
    };
    println!();
    println!(
        "{} proxied calls answered in {:.1} s ({:.0} calls/s through the gateway), upstream served {} tools/call",
        proxied,
        wall.as_secs_f64(),
        proxied as f64 / wall.as_secs_f64(),
        upstream_calls.load(Ordering::Relaxed)
    );
    println!(
        "responses (both phases): right {} | lost {} | duplicated {} | misrouted {} | wrong content {} | HTTP errors {} | \
         stalled over {} s {}",
        tally.ok,
        tally.lost,
        tally.duplicated,
        tally.misrouted,
        tally.wrong_content,
        tally.http_errors,
        STALL.as_secs(),
        tally.stalled
    );
    println!(
        "recall through the other replica: right {} | wrong {} | cut while Redis was away (marker: not kept) {} | \
         store unreachable {} | kept before the Redis restart, gone {}",
        tally.recall_ok, tally.recall_wrong, tally.not_kept, tally.recall_unavailable, tally.recall_lost
    );
    println!(
        "another session's call id: refused {} | read {}; another tenant (other key, same Redis): refused {} | read {} | \
         session ids not taken up {}/{}",
        tally.foreign_refused,
        tally.foreign_leaked,
        tenant_refused,
        tenant_leaked,
        takeover_refused,
        sample.len().min(10)
    );
    println!(
        "fault 1, SIGKILL replica A after {kill_at_call} calls (t={:.1} s), restarted {:.1} s later: failed during fault {} \
         (in flight {}, sent to A while down or on a dead connection {}); retried on the other replica: {} right, {} failed again (lost); \
         replica B answered {} calls while A was down; after its restart A answered {} calls and {} recalls of \
         results B kept",
        t_kill.as_secs_f64(),
        (t_back - t_kill).as_secs_f64(),
        tally.failed_in_flight + tally.failed_while_down,
        tally.failed_in_flight,
        tally.failed_while_down,
        tally.retried_ok,
        tally.lost,
        during(t_kill, t_back, Some(1)),
        during(t_back, wall, Some(0)),
        tally.recall_ok_a_back,
    );
    println!(
        "fault 2, Redis stopped after {redis_at_call} calls (t={:.1} s), started again {:.1} s later: {} calls answered \
         meanwhile; after it was back, {} right recalls through the other replica",
        t_redis_down.as_secs_f64(),
        (t_redis_up - t_redis_down).as_secs_f64(),
        during(t_redis_down, t_redis_up, None),
        tally.recall_ok_redis_back,
    );
    for e in &tally.examples {
        println!("  e.g. {e}");
    }
    if tally.stalled > 0 {
        println!(
            "  stalled calls: tiny_http's task pool once queued new connections behind live ones (patched in \
             third_party/tiny_http; docs/benchmarks.md, issue #42 section)"
        );
    }
    let bad = tally.lost
        + tally.duplicated
        + tally.misrouted
        + tally.wrong_content
        + tally.http_errors
        + tally.stalled
        + tally.recall_wrong
        + tally.foreign_leaked
        + tenant_leaked;
    let recovered = tally.recall_ok_a_back > 0 && tally.recall_ok_redis_back > 0;
    let verdict = if bad == 0 && recovered { "PASS" } else { "FAIL" };
    println!("acceptance: {verdict}");
    let _ = std::io::stdout().flush();
    if verdict == "FAIL" || keep_logs {
        fleet.keep = true;
        println!("the processes' logs are kept in {}", fleet.dir.display());
        drop(fleet);
        if verdict == "FAIL" {
            std::process::exit(1);
        }
    }
}

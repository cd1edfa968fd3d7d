//! The shared recall store on Redis (#42): a real `redis-server` (Debian's
//! package, `make redis-deps`) started per test on a free loopback port,
//! without persistence, stopped when the test ends.
//!
//! What is checked: Redis's own contents (SCAN + GET of every key) hold no
//! planted secret, no plain line of the output, no tenant or call id; one
//! session never reads another's; a value copied under another key does
//! not open; Redis going away is said in the markers and a recall, and
//! keeping resumes when it is back; two proxy replicas over HTTP sharing
//! one Redis recall each other's results (the session taken up by the
//! replica that did not start it, its `initialize` replayed); the proxy
//! refuses a Redis store without a key.

mod common;

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{opts, sanitizer, visible_text};
use result_sanitizer_host::api::{OutputFormat, Slice, SliceUnit};
use result_sanitizer_host::recall::{OutputStore, RecallError, RedisConfig, StoreConfig, StoreKey};
use result_sanitizer_host::Error;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_result-sanitizer");
const GH: &str = "ghp_4kLm9Pq2Rt7Vx3Yz6Ab1Cd5Ef0Gh2Ij4Kl6M";
const KEY: &str = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";

/// A `redis-server` of this test: loopback, a free port, no persistence;
/// stopped (and its directory removed) when dropped.
struct Redis {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl Redis {
    fn start() -> Self {
        let dir = std::env::temp_dir().join(format!("rs-redis-{}-{}", std::process::id(), free_port()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut r = Self { child: None, port: free_port(), dir };
        r.run();
        r
    }

    /// Starts the server (again) on its port.
    fn run(&mut self) {
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &self.port.to_string(), "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start redis-server ({e}): these tests need the real Redis server on PATH; \
                     run `make redis-deps` (apt-get install redis-server)"
                )
            });
        self.child = Some(child);
        let end = Instant::now() + Duration::from_secs(10);
        while self.conn_opt().is_none() {
            assert!(Instant::now() < end, "redis-server did not answer on port {}", self.port);
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    fn conn_opt(&self) -> Option<redis::Connection> {
        let mut c = redis::Client::open(self.url()).ok()?.get_connection().ok()?;
        redis::cmd("PING").query::<String>(&mut c).ok()?;
        Some(c)
    }

    fn conn(&self) -> redis::Connection {
        self.conn_opt().expect("a connection to the test's redis-server")
    }

    /// Every key and its value (SCAN + GET).
    fn dump(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut c = self.conn();
        let mut cursor = 0u64;
        let mut keys: Vec<Vec<u8>> = Vec::new();
        loop {
            let (next, batch): (u64, Vec<Vec<u8>>) =
                redis::cmd("SCAN").arg(cursor).arg("COUNT").arg(1000).query(&mut c).unwrap();
            keys.extend(batch);
            if next == 0 {
                break;
            }
            cursor = next;
        }
        keys.into_iter()
            .map(|k| {
                let v: Vec<u8> = redis::cmd("GET").arg(&k).query(&mut c).unwrap();
                (k, v)
            })
            .collect()
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn store(r: &Redis) -> OutputStore {
    let key = Arc::new(StoreKey::from_secret(KEY.as_bytes()).unwrap());
    OutputStore::new(StoreConfig { redis: Some(RedisConfig { url: r.url(), key }), ..StoreConfig::default() }).unwrap()
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// A build log with a planted secret and a planted plain line in the part
/// that a 500-token budget cuts.
fn planted_log() -> String {
    (1..=3000)
        .map(|i| match i {
            1500 => format!("line {i}: export GITHUB_TOKEN={GH}\n"),
            1600 => format!("line {i}: PLANTED-PLAIN-LINE the deploy went to host blue-42\n"),
            _ => format!("line {i}: value ok\n"),
        })
        .collect()
}

fn recall_err(r: result_sanitizer_host::Result<result_sanitizer_host::api::Sanitized>) -> RecallError {
    match r {
        Err(Error::Recall(e)) => e,
        other => panic!("expected a refusal, got {:?}", other.map(|o| o.record.truncated)),
    }
}

#[test]
fn redis_holds_only_sealed_values_under_hashed_keys_and_sessions_stay_apart() {
    let r = Redis::start();
    let s = sanitizer();
    let pack = s.default_pack();
    let st = store(&r);
    assert!(st.is_shared());
    let log = planted_log();
    let mut o = opts("build");
    o.max_tokens = Some(500);
    o.call_id = "call_abc_1".into();
    let out = s.sanitize_kept(pack, &st, "session-alpha", log.as_bytes(), &o).unwrap();
    assert!(out.record.truncated && out.record.recallable);
    let t = visible_text(&out, OutputFormat::Mcp);
    assert!(t.contains("not shown but recallable"), "{t}");
    assert!(!t.contains("PLANTED-PLAIN-LINE"), "the planted line is in the cut part");

    // Redis's own contents: no secret, no plain line, no tenant, no call id.
    let dump = r.dump();
    assert!(!dump.is_empty());
    for (k, v) in &dump {
        let key = String::from_utf8_lossy(k);
        assert!(key.starts_with("rs:recall:"), "{key}");
        for planted in [GH, "PLANTED-PLAIN-LINE", "line 1600", "value ok", "session-alpha", "call_abc_1", "build"] {
            assert!(!contains(k, planted) && !contains(v, planted), "`{planted}` in Redis under {key}");
        }
    }
    let ttl: i64 = redis::cmd("PTTL").arg(&dump[0].0).query(&mut r.conn()).unwrap();
    assert!(ttl > 0 && ttl <= 15 * 60 * 1000, "{ttl}");

    // The owner reads it back (redacted), from any store with the key.
    let sl = Slice { offset: 1595, limit: 10, unit: SliceUnit::Lines };
    let other_replica = store(&r);
    let back = s.recall(pack, &other_replica, "session-alpha", "call_abc_1", sl, &o).unwrap();
    let bt = visible_text(&back, OutputFormat::Mcp);
    assert!(bt.contains("PLANTED-PLAIN-LINE"), "{bt}");
    let sl = Slice { offset: 1495, limit: 10, unit: SliceUnit::Lines };
    let bt = visible_text(&s.recall(pack, &st, "session-alpha", "call_abc_1", sl, &o).unwrap(), OutputFormat::Mcp);
    assert!(bt.contains("[REDACTED:github-token]") && !bt.contains(GH), "{bt}");
    let kept = st.get("session-alpha", "call_abc_1").unwrap();
    assert_eq!(kept.origin().map(|(tool, _, _)| tool), Some("build".to_string()));
    assert!(kept.truncated);

    // Another session: the same call id is unknown to it.
    let sl = Slice { offset: 0, limit: 10, unit: SliceUnit::Bytes };
    assert_eq!(recall_err(s.recall(pack, &st, "session-beta", "call_abc_1", sl, &o)), RecallError::Unknown);
    // Another key: nothing opens (and other names).
    let key2 = Arc::new(StoreKey::from_secret(b"another key of at least thirty-two bytes!").unwrap());
    let st2 = OutputStore::new(StoreConfig {
        redis: Some(RedisConfig { url: r.url(), key: key2 }),
        ..StoreConfig::default()
    })
    .unwrap();
    assert_eq!(recall_err(s.recall(pack, &st2, "session-alpha", "call_abc_1", sl, &o)), RecallError::Unknown);
    // The id is taken.
    assert!(matches!(st.put("session-alpha", "call_abc_1", b"x"), Err(Error::Recall(RecallError::Duplicate))));

    // A value copied under another session's key does not open there.
    let before: Vec<Vec<u8>> = r.dump().into_iter().map(|(k, _)| k).collect();
    assert_eq!(st.put("session-beta", "call_abc_2", b"beta's own output\n").unwrap(), 18);
    let beta_key = r.dump().into_iter().map(|(k, _)| k).find(|k| !before.contains(k)).expect("beta's entry");
    let alpha_value = r.dump().into_iter().find(|(k, _)| !k.ends_with(b":t") && k != &beta_key).unwrap().1;
    let _: () = redis::cmd("SET").arg(&beta_key).arg(&alpha_value).query(&mut r.conn()).unwrap();
    assert!(matches!(st.get("session-beta", "call_abc_2"), Err(Error::Recall(RecallError::Unknown))));
}

#[test]
fn redis_down_is_said_in_markers_and_recalls_and_keeping_resumes() {
    let mut r = Redis::start();
    let s = sanitizer();
    let pack = s.default_pack();
    let st = store(&r);
    let log = planted_log();
    let mut o = opts("build");
    o.max_tokens = Some(500);
    o.call_id = "call_up_1".into();
    assert!(s.sanitize_kept(pack, &st, "t", log.as_bytes(), &o).unwrap().record.recallable);

    r.stop();
    o.call_id = "call_down_1".into();
    let started = Instant::now();
    let out = s.sanitize_kept(pack, &st, "t", log.as_bytes(), &o).expect("served while Redis is down");
    let t = visible_text(&out, OutputFormat::Mcp);
    assert!(!out.record.recallable && out.record.truncated, "{t}");
    assert!(t.contains("not kept") && !t.contains("recallable"), "{t}");
    let sl = Slice { offset: 0, limit: 10, unit: SliceUnit::Bytes };
    assert_eq!(recall_err(s.recall(pack, &st, "t", "call_up_1", sl, &o)), RecallError::Unavailable);
    // More results while it is down: served, none waits on Redis long.
    for i in 0..5 {
        o.call_id = format!("call_down_{}", i + 2);
        assert!(!s.sanitize_kept(pack, &st, "t", log.as_bytes(), &o).unwrap().record.recallable);
    }
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());

    // Back (empty: no persistence); after the retry pause, kept again.
    r.run();
    std::thread::sleep(Duration::from_millis(1100));
    o.call_id = "call_back_1".into();
    let out = s.sanitize_kept(pack, &st, "t", log.as_bytes(), &o).unwrap();
    assert!(out.record.recallable, "{}", visible_text(&out, OutputFormat::Mcp));
    let sl = Slice { offset: 1599, limit: 2, unit: SliceUnit::Lines };
    let bt = visible_text(&s.recall(pack, &st, "t", "call_back_1", sl, &o).unwrap(), OutputFormat::Mcp);
    assert!(bt.contains("PLANTED-PLAIN-LINE"), "{bt}");
}

#[test]
fn a_redis_store_without_a_key_is_refused_at_start() {
    let out = Command::new(BIN)
        .args(["mcp", "--recall-store", "redis://127.0.0.1:1/0", "--", "true"])
        .env_remove("RESULT_SANITIZER_RECALL_KEY")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("needs a key") && err.contains("RESULT_SANITIZER_RECALL_KEY"), "{err}");
    let out = Command::new(BIN)
        .args(["mcp", "--recall-store", "redis://127.0.0.1:1/0", "--", "true"])
        .env("RESULT_SANITIZER_RECALL_KEY", "short")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("at least 32"));
}

/// A `result-sanitizer mcp --listen` replica; killed when dropped.
struct Replica {
    child: Child,
    url: String,
}

impl Replica {
    fn start(redis: &Redis) -> Self {
        let port = free_port();
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/mcp/plain_server.py");
        let child = Command::new(BIN)
            .args(["mcp", "--listen", &format!("127.0.0.1:{port}"), "--recall-store", &redis.url(), "--"])
            .args(["env", &format!("PLAIN_SECRET={GH}"), "python3"])
            .arg(script)
            .env("RESULT_SANITIZER_RECALL_KEY", KEY)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let end = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < end, "the replica did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self { child, url: format!("http://127.0.0.1:{port}/mcp") }
    }

    /// POSTs one message (JSON answers): the session id, if one came, and
    /// the body.
    fn post(&self, sid: Option<&str>, body: &Value) -> (Option<String>, String) {
        let mut c = Command::new("curl");
        c.args(["-s", "-m", "60", "-D", "-", "-X", "POST", &self.url, "--data-binary", "@-"]);
        c.args(["-H", "Content-Type: application/json", "-H", "Accept: application/json"]);
        if let Some(s) = sid {
            c.args(["-H", &format!("MCP-Session-Id: {s}")]);
        }
        let mut child = c.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("curl runs");
        let mut stdin = child.stdin.take().unwrap();
        let text = body.to_string();
        let writer = std::thread::spawn(move || std::io::Write::write_all(&mut stdin, text.as_bytes()));
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap().unwrap();
        let out = String::from_utf8(out.stdout).unwrap();
        let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
        let sid = head
            .lines()
            .find_map(|h| h.to_ascii_lowercase().starts_with("mcp-session-id:").then(|| h[15..].trim().to_string()));
        (sid, body.to_string())
    }
}

impl Replica {
    /// The status of a request with no body.
    fn status(&self, method: &str, sid: &str) -> String {
        let out = Command::new("curl")
            .args(["-s", "-m", "30", "-o", "/dev/null", "-w", "%{http_code}", "-X", method, &self.url])
            .args(["-H", &format!("MCP-Session-Id: {sid}"), "-H", "Accept: text/event-stream"])
            .output()
            .expect("curl runs");
        String::from_utf8(out.stdout).unwrap()
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text_of(body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
    v["result"]["content"]
        .as_array()
        .unwrap_or_else(|| panic!("a result: {body}"))
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn two_replicas_over_http_recall_each_others_results() {
    let r = Redis::start();
    let (a, b) = (Replica::start(&r), Replica::start(&r));
    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "claude-code", "version": "1" } } });
    let (sid, body) = a.post(None, &init);
    let sid = sid.unwrap_or_else(|| panic!("a session id: {body}"));
    assert_eq!(sid.len(), 64, "{sid}");
    a.post(Some(&sid), &json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));

    // A big result with a secret and a plain line in its middle, at A.
    let big: String = (0..6000)
        .map(|i| match i {
            3000 => format!("row {i}: token {GH}\n"),
            3001 => format!("row {i}: PLANTED-PLAIN-LINE blue-42\n"),
            _ => format!("row {i}: the proxy cut this result and kept the rest\n"),
        })
        .collect();
    let call = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": "echo", "arguments": { "text": big } } });
    let (_, body) = a.post(Some(&sid), &call);
    let t = text_of(&body);
    assert!(!t.contains("PLANTED-PLAIN-LINE") && !body.contains(GH));
    let call_id = t
        .split("call_id=")
        .nth(1)
        .and_then(|rest| rest.split([',', ')', ' ']).next())
        .unwrap_or_else(|| panic!("a recall route in {t}"))
        .to_string();
    assert!(call_id.starts_with("call_") && call_id.matches('_').count() == 2, "{call_id}");

    // Recalled through B, which never saw the session.
    let line = big.find("row 2995:").unwrap();
    let recall = |id: u64, offset: usize, limit: usize| {
        json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": "read_truncated_output",
            "arguments": { "call_id": call_id, "offset": offset, "limit": limit } } })
    };
    let (_, body) = b.post(Some(&sid), &recall(3, line, 600));
    let bt = text_of(&body);
    assert!(bt.contains("PLANTED-PLAIN-LINE") && bt.contains("[REDACTED:github-token]"), "{bt}");
    assert!(!body.contains(GH));
    // B replayed the session's initialize to its own server, so the
    // client's profile (claude-code: 24 000 characters) holds there too.
    let (_, body) = b.post(Some(&sid), &recall(4, 0, big.len()));
    let bt = text_of(&body);
    assert!(bt.chars().count() <= 24_000 && bt.contains("[truncated:"), "{}", bt.chars().count());
    // And B's own server answers the session's calls.
    let echo = json!({ "jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": { "name": "echo", "arguments": { "text": "hello from B" } } });
    assert_eq!(text_of(&b.post(Some(&sid), &echo).1), "hello from B");

    // Another session, at B: A's call id is not its own.
    let (sid2, _) = b.post(None, &init);
    let sid2 = sid2.expect("a second session");
    let (_, body) = b.post(Some(&sid2), &recall(6, 0, 100));
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["result"]["isError"], true, "{body}");
    assert!(!body.contains("row 0"), "{body}");
    // An id not drawn with the key is not taken up.
    let forged = format!("{}{}", &sid[..32], "0".repeat(32));
    let (_, body) = b.post(Some(&forged), &recall(7, 0, 100));
    assert!(!body.contains("row 0"), "{body}");

    // The client ends the session (at A): a replica that does not hold it
    // no longer takes it up.
    assert_eq!(a.status("DELETE", &sid), "200");
    let c = Replica::start(&r);
    let (_, body) = c.post(Some(&sid), &recall(8, 0, 100));
    assert!(body.starts_with("not found"), "{body}");

    // Redis's contents: nothing planted, no session id.
    for (k, v) in r.dump() {
        for planted in [GH, "PLANTED-PLAIN-LINE", "row 3001", &sid, &call_id, "claude-code"] {
            assert!(!contains(&k, planted) && !contains(&v, planted), "`{planted}` in Redis");
        }
    }
}

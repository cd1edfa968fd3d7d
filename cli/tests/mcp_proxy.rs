//! `result-sanitizer mcp` with real parts: the official TypeScript and
//! Python SDK clients (tests/mcp/driver.mjs, driver.py), the reference
//! servers `server-everything` and `server-filesystem`, and the MCP
//! Inspector's CLI, all installed by `make mcp-deps` (tests/mcp/
//! package-lock.json, and PyPI `mcp` in target/mcp-venv). Every result the
//! proxy emits is checked against the MCP schema.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_result-sanitizer");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn mcp_dir() -> PathBuf {
    let d = root().join("tests/mcp");
    assert!(
        d.join("node_modules/.npm-ci.stamp").exists() && python().exists(),
        "the MCP test clients and servers are not installed: run `make mcp-deps`"
    );
    d
}

fn python() -> PathBuf {
    root().join("target/mcp-venv/bin/python")
}

fn node_bin(name: &str) -> String {
    mcp_dir().join("node_modules/.bin").join(name).display().to_string()
}

fn everything() -> Vec<String> {
    vec!["node".into(), node_bin("mcp-server-everything")]
}

fn filesystem(dir: &Path) -> Vec<String> {
    vec!["node".into(), node_bin("mcp-server-filesystem"), dir.display().to_string()]
}

/// The proxy's command line in front of `server`.
fn proxied(flags: &[&str], server: &[String]) -> Vec<String> {
    let mut v = vec!["mcp".to_string()];
    v.extend(flags.iter().map(|s| s.to_string()));
    v.push("--".into());
    v.extend(server.iter().cloned());
    v
}

/// A validator for one definition of the MCP 2025-11-25 schema.
fn validator(def: &str) -> jsonschema::Validator {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    let schema = SCHEMA.get_or_init(|| {
        let p = root().join("tests/mcp-schema/schema-2025-11-25.json");
        serde_json::from_str(&std::fs::read_to_string(p).expect("tests/mcp-schema")).unwrap()
    });
    let mut s = schema.clone();
    s["$ref"] = format!("#/$defs/{def}").into();
    jsonschema::validator_for(&s).expect("schema compiles")
}

fn assert_valid(def: &str, v: &Value) {
    let errors: Vec<String> = validator(def).iter_errors(v).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{def} schema violations: {errors:?} in {}", trunc(v));
}

fn trunc(v: &Value) -> String {
    v.to_string().chars().take(600).collect()
}

/// A sanitized tool result: valid, with the pipeline's record.
fn assert_sanitized(r: &Value) {
    assert_valid("CallToolResult", r);
    assert!(r.pointer("/_meta/result-sanitizer~1record").is_some(), "no record: {}", trunc(r));
}

fn texts(r: &Value) -> String {
    r["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A test client (one of the SDKs) driven line by line.
struct Driver {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

#[derive(Clone, Copy, Debug)]
enum Sdk {
    TypeScript,
    Python,
}

/// How the client reaches the proxy.
#[derive(Clone, Copy, Debug)]
enum Via {
    Stdio,
    Http,
}

/// A proxy serving Streamable HTTP on a free port, stopped on drop.
struct Listener {
    child: Child,
    url: String,
}

impl Listener {
    fn start(args: Vec<String>) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let addr = format!("127.0.0.1:{port}");
        let mut full = vec!["mcp".to_string(), "--listen".into(), addr.clone()];
        full.extend(args.into_iter().skip(1));
        let child = Command::new(BIN).args(full).current_dir(mcp_dir()).spawn().unwrap();
        let end = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(&addr).is_err() {
            assert!(Instant::now() < end, "the proxy does not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self { child, url: format!("http://{addr}/mcp") }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A client of `sdk` through the proxy (`args`: `mcp ... -- SERVER`),
/// and the HTTP listener when there is one.
fn connect(sdk: Sdk, via: Via, args: Vec<String>) -> (Driver, Option<Listener>) {
    match via {
        Via::Stdio => (Driver::stdio(sdk, args), None),
        Via::Http => {
            let l = Listener::start(args);
            (Driver::start(sdk, json!({ "url": l.url })), Some(l))
        }
    }
}

impl Driver {
    fn start(sdk: Sdk, target: Value) -> Self {
        let dir = mcp_dir();
        let mut cmd = match sdk {
            Sdk::TypeScript => {
                let mut c = Command::new("node");
                c.arg(dir.join("driver.mjs"));
                c
            }
            Sdk::Python => {
                let mut c = Command::new(python());
                c.arg(dir.join("driver.py"));
                c
            }
        };
        let mut child = cmd
            .arg(target.to_string())
            .current_dir(&dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the driver starts");
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Self { child, input, output }
    }

    fn stdio(sdk: Sdk, args: Vec<String>) -> Self {
        Self::start(sdk, json!({ "command": BIN, "args": args }))
    }

    fn send(&mut self, cmd: Value) {
        writeln!(self.input, "{cmd}").unwrap();
        self.input.flush().unwrap();
    }

    fn answer(&mut self) -> Result<Value, String> {
        let mut line = String::new();
        self.output.read_line(&mut line).unwrap();
        assert!(!line.is_empty(), "the driver exited");
        let mut v: Value = serde_json::from_str(&line).unwrap();
        match v.get_mut("ok") {
            Some(ok) => Ok(ok.take()),
            None => Err(v["error"].as_str().unwrap_or_default().to_string()),
        }
    }

    fn cmd(&mut self, cmd: Value) -> Result<Value, String> {
        self.send(cmd);
        self.answer()
    }

    fn call(&mut self, name: &str, args: Value) -> Value {
        let r = self.cmd(json!({ "op": "call", "name": name, "args": args }));
        r.unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    fn tools(&mut self) -> Vec<Value> {
        let r = self.cmd(json!({ "op": "list_tools" })).unwrap();
        assert_valid("ListToolsResult", &r);
        r["tools"].as_array().unwrap().clone()
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = writeln!(self.input, "{}", json!({ "op": "close" }));
        let end = Instant::now() + Duration::from_secs(5);
        while Instant::now() < end {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A made-up AWS-style access key id (no account has it), put together
/// at run time so that no file of the repository holds one. It cannot
/// say FAKE or EXAMPLE: the rules skip documentation values.
fn fake_key() -> String {
    ["AKIA", "R7WQ", "ZT3M", "XK5P", "LN2V"].concat()
}

/// A directory with a large text file and a file holding a fake key.
struct Files {
    dir: PathBuf,
    big: String,
}

impl Files {
    fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("rs-mcp-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let big: String =
            (0..16_000).map(|i| format!("line {i:06}: the quick brown fox jumps over the lazy dog\n")).collect();
        std::fs::write(dir.join("big.txt"), &big).unwrap();
        std::fs::write(
            dir.join("creds.txt"),
            format!("[default]\naws_access_key_id = {}\nregion = eu-west-1\n", fake_key()),
        )
        .unwrap();
        Self { dir: dir.canonicalize().unwrap(), big }
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The lines of recalled slices, without the pipeline's markers.
fn slice_lines(text: &str) -> String {
    text.split_inclusive('\n').filter(|l| !l.starts_with("[truncated:")).collect()
}

/// A large file read through the proxy comes back cut, with markers that
/// name the recall; read back slice by slice through the added tool, it
/// is the whole file. A planted key is redacted.
fn cut_file_reads_back_whole(sdk: Sdk, via: Via) {
    let files = Files::new(&format!("{sdk:?}-{via:?}"));
    let (mut d, _l) = connect(sdk, via, proxied(&[], &filesystem(&files.dir)));
    let tools = d.tools();
    let recall = tools.iter().find(|t| t["name"] == "read_truncated_output").expect("the recall tool is listed");
    assert_valid("Tool", recall);

    let r = d.call("read_text_file", json!({ "path": files.path("big.txt") }));
    assert_sanitized(&r);
    let text = texts(&r);
    assert!(text.len() < files.big.len() / 10, "the result was cut ({} bytes)", text.len());
    assert!(text.starts_with("[truncated: partial output"), "{}", &text[..200]);
    let m = regex_lite::Regex::new(r"read_truncated_output\(call_id=([A-Za-z0-9_]+), offset=(\d+)").unwrap();
    let caps = m.captures(&text).expect("a marker names the added tool");
    let call_id = caps[1].to_string();
    assert!(r["structuredContent"].to_string().len() < 200_000, "structured content is budgeted too");

    let (mut whole, mut line) = (String::new(), 1u64);
    while line <= 16_000 {
        let s = d.call(
            "read_truncated_output",
            json!({ "call_id": call_id, "offset": line, "limit": 400, "unit": "lines" }),
        );
        assert_sanitized(&s);
        assert_ne!(s["isError"], true, "{}", trunc(&s));
        let part = slice_lines(&texts(&s));
        assert_eq!(part.lines().count(), 400, "slice at line {line}");
        whole.push_str(&part);
        line += 400;
    }
    assert!(whole == files.big, "the slices put together are the file");
    // A byte slice too, and a refused id.
    let s = d.call("read_truncated_output", json!({ "call_id": call_id, "offset": 57, "limit": 57 }));
    assert_eq!(slice_lines(&texts(&s)), "line 000001: the quick brown fox jumps over the lazy dog\n");
    let s = d.call("read_truncated_output", json!({ "call_id": "call_999", "offset": 0, "limit": 10 }));
    assert_valid("CallToolResult", &s);
    assert_eq!(s["isError"], true);
    assert!(texts(&s).contains("no output is kept under this call id"), "{}", trunc(&s));

    let key = fake_key();
    let r = d.call("read_text_file", json!({ "path": files.path("creds.txt") }));
    assert_sanitized(&r);
    assert!(!r.to_string().contains(&key), "the key was redacted");
    assert!(texts(&r).contains("region = eu-west-1"));
    let redactions = &r["_meta"]["result-sanitizer/record"]["redactions"];
    assert!(redactions.to_string().contains("aws-access-key-id"), "{redactions}");
}

#[test]
fn ts_client_reads_a_cut_file_back_through_the_recall_tool() {
    cut_file_reads_back_whole(Sdk::TypeScript, Via::Stdio);
}

#[test]
fn python_client_reads_a_cut_file_back_through_the_recall_tool() {
    cut_file_reads_back_whole(Sdk::Python, Via::Stdio);
}

#[test]
fn ts_client_over_http_reads_a_cut_file_back() {
    cut_file_reads_back_whole(Sdk::TypeScript, Via::Http);
}

#[test]
fn python_client_over_http_reads_a_cut_file_back() {
    cut_file_reads_back_whole(Sdk::Python, Via::Http);
}

/// Arguments for each tool of server-everything.
fn everything_args(tool: &str) -> Value {
    let data = format!("data:text/plain,hello%20{}", fake_key());
    match tool {
        "echo" => json!({ "message": format!("the key is {}", fake_key()) }),
        "get-annotated-message" => json!({ "messageType": "success", "includeImage": true }),
        "get-resource-links" => json!({ "count": 2 }),
        "get-resource-reference" => json!({ "resourceType": "Text", "resourceId": 2 }),
        "get-structured-content" => json!({ "location": "Chicago" }),
        "get-sum" => json!({ "a": 2, "b": 3 }),
        "gzip-file-as-resource" => json!({ "name": "hello.txt.gz", "data": data, "outputType": "resource" }),
        "trigger-long-running-operation" => json!({ "duration": 1, "steps": 4 }),
        "trigger-sampling-request" => json!({ "prompt": "say hi", "maxTokens": 20 }),
        "trigger-url-elicitation" => json!({ "url": "https://example.com/consent" }),
        "simulate-research-query" => json!({ "topic": "wasm components" }),
        _ => json!({}),
    }
}

/// Every tool of server-everything, called by a real client through the
/// proxy: each result sanitized and valid; sampling, elicitation and roots
/// requests from the server and progress and log notifications pass.
fn every_everything_tool(sdk: Sdk, via: Via) {
    let (mut d, _l) = connect(sdk, via, proxied(&[], &everything()));
    let tools = d.tools();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"read_truncated_output"));
    for must in ["echo", "trigger-sampling-request", "trigger-long-running-operation"] {
        assert!(names.contains(&must), "{must} is listed: {names:?}");
    }
    let mut called = 0;
    for t in &tools {
        let name = t["name"].as_str().unwrap();
        if name == "read_truncated_output" {
            continue;
        }
        let task = t.pointer("/execution/taskSupport") == Some(&json!("required"));
        if task && matches!(sdk, Sdk::Python) {
            // The driver's Python client has no task API wired.
            continue;
        }
        let r = d
            .cmd(json!({ "op": "call", "name": name, "args": everything_args(name), "task": task }))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_sanitized(&r);
        assert!(!r.to_string().contains(&fake_key()), "{name}: the key was redacted");
        called += 1;
    }
    // All but the recall tool (and, for Python, the task-only tool).
    let skipped = if matches!(sdk, Sdk::Python) { 2 } else { 1 };
    assert_eq!(called, names.len() - skipped, "tools called of {names:?}");
    for must in ["get-roots-list", "trigger-elicitation-request", "simulate-research-query", "gzip-file-as-resource"] {
        assert!(names.contains(&must), "{must} is listed: {names:?}");
    }
    let echo = d.call("echo", everything_args("echo"));
    assert!(texts(&echo).contains("the key is"), "{}", trunc(&echo));

    let resources = d.cmd(json!({ "op": "list_resources" })).unwrap();
    let uri = resources["resources"][0]["uri"].as_str().unwrap().to_string();
    let r = d.cmd(json!({ "op": "read", "uri": uri })).unwrap();
    assert_valid("ReadResourceResult", &r);
    assert!(r.pointer("/contents/0/_meta/result-sanitizer~1record").is_some(), "{}", trunc(&r));

    let stats = d.cmd(json!({ "op": "stats" })).unwrap();
    assert!(stats["sampled"].as_u64().unwrap() >= 1, "sampling passed: {stats}");
    assert!(stats["progress"].as_u64().unwrap() >= 2, "progress passed: {stats}");
    assert!(stats["roots"].as_u64().unwrap() >= 1, "roots passed: {stats}");
    assert!(stats["elicited"].as_u64().unwrap() >= 1, "elicitation passed: {stats}");
}

#[test]
fn ts_client_calls_every_tool_of_server_everything() {
    every_everything_tool(Sdk::TypeScript, Via::Stdio);
}

#[test]
fn python_client_calls_every_tool_of_server_everything() {
    every_everything_tool(Sdk::Python, Via::Stdio);
}

#[test]
fn ts_client_over_http_calls_every_tool_of_server_everything() {
    every_everything_tool(Sdk::TypeScript, Via::Http);
}

#[test]
fn python_client_over_http_calls_every_tool_of_server_everything() {
    every_everything_tool(Sdk::Python, Via::Http);
}

/// curl's status code for a POST of `body` with extra headers.
fn http_status(url: &str, headers: &[&str], body: &str) -> String {
    let mut c = Command::new("curl");
    c.args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", url, "-d", body]);
    c.args(["-H", "Content-Type: application/json", "-H", "Accept: application/json, text/event-stream"]);
    for h in headers {
        c.args(["-H", h]);
    }
    String::from_utf8(c.output().expect("curl runs").stdout).unwrap()
}

#[test]
fn http_checks_origin_protocol_version_and_session() {
    let l = Listener::start(proxied(&[], &everything()));
    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "curl", "version": "1" } } })
    .to_string();
    let list = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }).to_string();
    assert_eq!(http_status(&l.url, &["Origin: http://attacker.example"], &init), "403");
    assert_eq!(http_status(&l.url, &["Origin: http://localhost:3000"], &init), "200");
    assert_eq!(http_status(&l.url, &["MCP-Protocol-Version: 2024-01-01"], &list), "400");
    assert_eq!(http_status(&l.url, &[], &list), "400", "no session");
    assert_eq!(http_status(&l.url, &["MCP-Session-Id: nosuchsession"], &list), "404");
    for v in ["2025-06-18", "2025-11-25"] {
        // A session, then a request in it with each protocol version.
        let out = Command::new("curl")
            .args(["-s", "-D", "-", "-o", "/dev/null", "-X", "POST", &l.url, "-d", &init])
            .args(["-H", "Content-Type: application/json", "-H", "Accept: application/json, text/event-stream"])
            .output()
            .unwrap();
        let head = String::from_utf8_lossy(&out.stdout).to_string();
        let sid = head
            .lines()
            .find_map(|h| h.strip_prefix("Mcp-Session-Id: ").or_else(|| h.strip_prefix("mcp-session-id: ")))
            .unwrap_or_else(|| panic!("a session id in {head}"))
            .trim()
            .to_string();
        let sid_h = format!("MCP-Session-Id: {sid}");
        let ver_h = format!("MCP-Protocol-Version: {v}");
        let note = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string();
        assert_eq!(http_status(&l.url, &[&sid_h, &ver_h], &note), "202");
        assert_eq!(http_status(&l.url, &[&sid_h, &ver_h], &list), "200", "{v}");
    }
}

/// A POST to the proxy's endpoint with `Accept: application/json` only:
/// the status, the headers and the body.
fn post_json_only(url: &str, headers: &[&str], body: &str) -> (String, String) {
    let mut c = Command::new("curl");
    c.args(["-s", "-m", "20", "-D", "-", "-X", "POST", url, "-d", body]);
    c.args(["-H", "Content-Type: application/json", "-H", "Accept: application/json"]);
    for h in headers {
        c.args(["-H", h]);
    }
    let out = String::from_utf8(c.output().expect("curl runs").stdout).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").expect("headers, then a body");
    (head.to_string(), body.to_string())
}

/// A client that does not accept `text/event-stream` gets each answer as
/// one JSON body, sanitized like a streamed one.
#[test]
fn http_answers_a_json_only_client_with_json_bodies() {
    let l = Listener::start(proxied(&[], &everything()));
    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "curl", "version": "1" } } });
    let (head, body) = post_json_only(&l.url, &[], &init.to_string());
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.to_ascii_lowercase().contains("content-type: application/json"), "{head}");
    let v: Value = serde_json::from_str(&body).expect("one JSON body");
    assert_eq!(v["id"], 1);
    assert_valid("InitializeResult", &v["result"]);
    let sid = session_id(&head).expect("a session id");
    let sid_h = format!("MCP-Session-Id: {sid}");
    let ver_h = "MCP-Protocol-Version: 2025-11-25";
    let note = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string();
    assert_eq!(http_status(&l.url, &[&sid_h, ver_h], &note), "202");
    let key = fake_key();
    let call = json!({ "jsonrpc": "2.0", "id": "c-1", "method": "tools/call",
        "params": { "name": "echo", "arguments": { "message": format!("key {key} here") } } });
    let (head, body) = post_json_only(&l.url, &[&sid_h, ver_h], &call.to_string());
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let v: Value = serde_json::from_str(&body).expect("one JSON body");
    assert_eq!(v["id"], "c-1");
    assert_valid("CallToolResult", &v["result"]);
    assert_sanitized(&v["result"]);
    assert_eq!(texts(&v["result"]), "Echo: key [REDACTED:aws-access-key-id] here");
    assert!(!body.contains(&key));
}

/// A client that keeps its connection open (as the SDKs and load
/// balancers do) gets each JSON answer of a few KiB without a Nagle stall:
/// tiny_http writes a response's head and body apart, and without
/// `TCP_NODELAY` the body waited for the head's delayed ACK, 40 ms on
/// Linux (found by `bench_gateway`, #42).
#[test]
fn http_answers_a_kept_connection_without_a_nagle_stall() {
    // Python's standard library only: no `make mcp-deps` needed.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr = format!("127.0.0.1:{port}");
    let child = Command::new(BIN)
        .args(["mcp", "--listen", &addr, "--", "python3"])
        .arg(root().join("tests/mcp/plain_server.py"))
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let l = Listener { child, url: format!("http://{addr}/mcp") };
    let end = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(&addr).is_err() {
        assert!(Instant::now() < end, "the proxy does not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    let agent: ureq::Agent = ureq::Agent::config_builder().timeout_global(Some(Duration::from_secs(20))).build().into();
    let post = |sid: Option<&str>, body: &Value| {
        let mut r = agent.post(&l.url).header("Content-Type", "application/json").header("Accept", "application/json");
        if let Some(s) = sid {
            r = r.header("Mcp-Session-Id", s);
        }
        let mut resp = r.send(body.to_string()).expect("the proxy answers");
        let sid = resp.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(String::from);
        (sid, resp.body_mut().read_to_string().unwrap())
    };
    let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "keep-alive", "version": "1" } } });
    let sid = post(None, &init).0.expect("a session id");
    post(Some(&sid), &json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    let mut took = Vec::new();
    for i in 1..=30 {
        let call = json!({ "jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": { "name": "sized", "arguments": { "bytes": 6000 } } });
        let t = Instant::now();
        let (_, body) = post(Some(&sid), &call);
        took.push(t.elapsed());
        assert!(body.contains(&format!("\"id\":{i}")) && body.len() > 6000, "{}", &body[..body.len().min(300)]);
    }
    took.sort();
    assert!(took[15] < Duration::from_millis(25), "median {:?}: {took:?}", took[15]);
}

/// A burst of keep-alive connections to a listener that has just started
/// (a replica restarted behind a load balancer): every first request is
/// answered at once. tiny_http 0.12 runs each connection as a task of its
/// `TaskPool` for as long as the connection lives, and its `spawn` counted
/// an idle thread that was notified but had not woken yet as idle again,
/// so tasks queued behind it waited until some other connection closed
/// (1–5 of 64 unanswered after 3 s in 2 runs of 3). Found by
/// `bench_gateway` (#42): calls to a restarted replica stalled for the
/// rest of the run. Fixed in third_party/tiny_http (PATCHED.md).
#[test]
fn http_answers_a_burst_of_new_kept_connections_at_once() {
    use std::io::Read;
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr = format!("127.0.0.1:{port}");
    let child = Command::new(BIN).args(["mcp", "--listen", &addr, "--", "true"]).stdin(Stdio::null()).spawn().unwrap();
    let _l = Listener { child, url: format!("http://{addr}/mcp") };
    let end = Instant::now() + Duration::from_secs(20);
    // Connected once and closed: that task is done before the burst.
    while std::net::TcpStream::connect(&addr).is_err() {
        assert!(Instant::now() < end, "the proxy does not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    let clients: Vec<_> = (0..64)
        .map(|_| {
            let addr = addr.clone();
            std::thread::spawn(move || {
                let mut c = std::net::TcpStream::connect(&addr).unwrap();
                c.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
                c.write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
                let mut buf = [0u8; 64];
                let answered = c.read(&mut buf).is_ok_and(|n| n > 0);
                (answered, c) // the connection stays open until all have read
            })
        })
        .collect();
    let done: Vec<_> = clients.into_iter().map(|h| h.join().unwrap()).collect();
    let unanswered = done.iter().filter(|(a, _)| !a).count();
    assert_eq!(unanswered, 0, "{unanswered} of 64 new kept connections got no answer within 3 s");
}

/// The `Mcp-Session-Id` header of a response head.
fn session_id(head: &str) -> Option<String> {
    head.lines().find_map(|h| h.to_ascii_lowercase().starts_with("mcp-session-id:").then(|| h[15..].trim().to_string()))
}

/// Sessions are bounded (`--max-sessions`); one whose server exited
/// leaves: its id gets 404 and its slot is free for a new session.
#[test]
fn http_sessions_are_bounded_and_a_dead_one_leaves() {
    let l = Listener::start(proxied(&["--max-sessions", "2"], &odd_server(None)));
    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "curl", "version": "1" } } })
    .to_string();
    let open = || {
        let (head, _) = post_json_only(&l.url, &[], &init);
        (head.lines().next().unwrap_or_default().to_string(), session_id(&head))
    };
    let (a, b) = (open().1.expect("a first session"), open().1.expect("a second session"));
    let (status, none) = open();
    assert!(status.starts_with("HTTP/1.1 503") && none.is_none(), "{status}");
    let (a_h, b_h) = (format!("MCP-Session-Id: {a}"), format!("MCP-Session-Id: {b}"));
    // a's server exits in the middle of a request, which gets an error.
    let exit = json!({ "jsonrpc": "2.0", "id": 9, "method": "odd/exit" }).to_string();
    let (_, body) = post_json_only(&l.url, &[&a_h], &exit);
    let v: Value = serde_json::from_str(&body).expect("one JSON body");
    assert!(v["error"]["message"].as_str().is_some_and(|m| m.contains("exited")), "{body}");
    let list = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }).to_string();
    assert_eq!(http_status(&l.url, &[&a_h], &list), "404");
    let end = Instant::now() + Duration::from_secs(5);
    let c = loop {
        match open() {
            (_, Some(c)) => break c,
            (status, None) => assert!(Instant::now() < end, "the dead session's slot stays taken: {status}"),
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_ne!(c, a);
    assert_eq!(http_status(&l.url, &[&b_h], &list), "200", "the other session is untouched");
}

/// A server that exits as it starts: every initialize is answered at once,
/// with an error, and leaves no session holding the one slot.
#[test]
fn http_a_server_that_exits_at_once_gets_errors_and_keeps_no_slot() {
    let l = Listener::start(proxied(&["--max-sessions", "1"], &["false".to_string()]));
    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "curl", "version": "1" } } })
    .to_string();
    for round in 0..5 {
        let (head, body) = post_json_only(&l.url, &[], &init);
        let status = head.lines().next().unwrap_or_default();
        assert!(!status.contains(" 503"), "round {round}: a slot is still taken: {status}");
        let v: Value = serde_json::from_str(&body).unwrap_or_else(|_| panic!("round {round}: {head}{body}"));
        assert!(v["error"]["message"].is_string(), "round {round}: {body}");
    }
}

/// A session no request uses for `--session-idle` ends: its id gets 404
/// and its slot is free (a client gone without `DELETE` holds neither for
/// good); an open GET stream keeps a session in use however long.
#[test]
fn http_an_idle_session_ends_and_an_open_stream_keeps_one() {
    let l = Listener::start(proxied(&["--max-sessions", "1", "--session-idle", "2"], &odd_server(None)));
    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "curl", "version": "1" } } })
    .to_string();
    let list = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }).to_string();
    let open = || {
        let (head, _) = post_json_only(&l.url, &[], &init);
        (head.lines().next().unwrap_or_default().to_string(), session_id(&head))
    };
    // Unused: it ends, and the one slot is free again.
    let a = open().1.expect("a session");
    let a_h = format!("MCP-Session-Id: {a}");
    let (status, none) = open();
    assert!(status.starts_with("HTTP/1.1 503") && none.is_none(), "the slot is taken: {status}");
    let t = Instant::now();
    let b = loop {
        match open() {
            (_, Some(b)) => break b,
            (status, None) => assert!(t.elapsed() < Duration::from_secs(10), "the idle session stays: {status}"),
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(t.elapsed() >= Duration::from_millis(1500), "ended before it was idle: {:?}", t.elapsed());
    assert_eq!(http_status(&l.url, &[&a_h], &list), "404");
    // Its GET stream open for twice the idle time: still in use.
    let b_h = format!("MCP-Session-Id: {b}");
    let mut get = Killed(
        Command::new("curl")
            .args(["-s", "-N", "-o", "/dev/null", "-m", "5", &l.url, "-H", "Accept: text/event-stream", "-H", &b_h])
            .spawn()
            .unwrap(),
    );
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(http_status(&l.url, &[&b_h], &list), "200", "a session with an open stream ended");
    let _ = get.0.wait();
}

/// The recall tool never takes a server tool's name.
#[test]
fn the_recall_tool_is_renamed_when_the_server_has_its_name() {
    let files = Files::new("rename");
    let mut d = Driver::stdio(Sdk::TypeScript, proxied(&["--recall-tool", "read_file"], &filesystem(&files.dir)));
    let tools = d.tools();
    let named = |n: &str| tools.iter().filter(|t| t["name"] == n).count();
    assert_eq!((named("read_file"), named("read_file_2")), (1, 1));
    let r = d.call("read_text_file", json!({ "path": files.path("big.txt") }));
    let marker = regex_lite::Regex::new(r"read_file_2\(call_id=([A-Za-z0-9_]+)").unwrap();
    let id = marker.captures(&texts(&r)).expect("the markers name the renamed tool")[1].to_string();
    let s = d.call("read_file_2", json!({ "call_id": id, "offset": 2, "limit": 1, "unit": "lines" }));
    assert_eq!(slice_lines(&texts(&s)), "line 000001: the quick brown fox jumps over the lazy dog\n");
    // The server's own read_file still answers.
    let own = d.call("read_file", json!({ "path": files.path("creds.txt") }));
    assert!(texts(&own).contains("region = eu-west-1"));
}

#[test]
fn no_recall_adds_no_tool() {
    let mut d = Driver::stdio(Sdk::TypeScript, proxied(&["--no-recall"], &everything()));
    assert!(d.tools().iter().all(|t| t["name"] != "read_truncated_output"));
}

#[test]
fn inspector_cli_lists_the_tools_through_the_proxy() {
    let dir = mcp_dir();
    let mut args = vec![node_bin("mcp-inspector"), "--cli".into(), BIN.into()];
    args.extend(proxied(&[], &everything()));
    args.extend(["--method".into(), "tools/list".into()]);
    let out = Command::new("node").args(&args).current_dir(&dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).expect("the inspector prints JSON");
    assert_valid("ListToolsResult", &v);
    let names: Vec<&str> = v["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"echo") && names.contains(&"read_truncated_output"), "{names:?}");
}

/// A server command that writes its pid to `pidfile`, then becomes the server.
fn with_pidfile(pidfile: &Path, server: &[String]) -> Vec<String> {
    let quoted: Vec<String> = server.iter().map(|a| format!("'{a}'")).collect();
    vec!["sh".into(), "-c".into(), format!("echo $$ > '{}'; exec {}", pidfile.display(), quoted.join(" "))]
}

fn read_pid(pidfile: &Path) -> libc::pid_t {
    let end = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(p) = std::fs::read_to_string(pidfile).ok().and_then(|s| s.trim().parse().ok()) {
            return p;
        }
        assert!(Instant::now() < end, "the server wrote no pid");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn alive(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

#[test]
fn killing_the_server_mid_call_gives_the_client_an_error_within_a_second() {
    for sdk in [Sdk::TypeScript, Sdk::Python] {
        let pidfile = std::env::temp_dir().join(format!("rs-mcp-kill-{sdk:?}-{}.pid", std::process::id()));
        let _ = std::fs::remove_file(&pidfile);
        let mut d = Driver::stdio(sdk, proxied(&[], &with_pidfile(&pidfile, &everything())));
        let pid = read_pid(&pidfile);
        // Connected first: a server killed before it answered `initialize`
        // fails the client's connect, not the call under test.
        assert!(!d.tools().is_empty());
        d.send(
            json!({ "op": "call", "name": "trigger-long-running-operation", "args": { "duration": 30, "steps": 30 } }),
        );
        std::thread::sleep(Duration::from_millis(1500));
        // SAFETY: SIGKILL to the server this test started.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
        let t = Instant::now();
        let e = d.answer().expect_err("the call fails");
        let took = t.elapsed();
        assert!(took < Duration::from_secs(1), "{sdk:?}: the error came after {took:?}");
        assert!(!e.is_empty(), "{sdk:?}");
        let _ = std::fs::remove_file(&pidfile);
    }
}

/// A raw JSON-RPC client on the proxy's stdio: the test itself.
struct Raw {
    child: Child,
    input: Option<ChildStdin>,
    output: BufReader<ChildStdout>,
}

impl Raw {
    fn start(args: Vec<String>) -> Self {
        let mut child = Command::new(BIN)
            .args(args)
            .current_dir(mcp_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let input = child.stdin.take();
        let output = BufReader::new(child.stdout.take().unwrap());
        Self { child, input, output }
    }

    fn send(&mut self, v: &Value) {
        let w = self.input.as_mut().unwrap();
        writeln!(w, "{v}").unwrap();
        w.flush().unwrap();
    }

    /// The next message; every one must be valid JSON-RPC for MCP.
    fn next(&mut self) -> Value {
        let mut line = String::new();
        self.output.read_line(&mut line).unwrap();
        assert!(!line.is_empty(), "the proxy closed its stdout");
        let v: Value = serde_json::from_str(&line).expect("one JSON message per line");
        assert_valid("JSONRPCMessage", &v);
        v
    }

    /// The response to `id`, passing over notifications and requests.
    fn response(&mut self, id: &Value) -> Value {
        loop {
            let v = self.next();
            if v.get("method").is_none() && &v["id"] == id {
                return v;
            }
        }
    }

    fn init(&mut self) {
        self.send(&json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "raw", "version": "1" } } }));
        let r = self.response(&json!(0));
        assert_valid("InitializeResult", &r["result"]);
        self.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Ids of every JSON type a request may have come back as they were, and
/// every message on the wire is valid.
#[test]
fn ids_of_every_type_and_every_message_valid_on_the_wire() {
    let mut p = Raw::start(proxied(&[], &everything()));
    p.init();
    for id in [json!("a string id"), json!(7), json!(-3), json!("")] {
        p.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": "get-sum", "arguments": { "a": 1, "b": 2 } } }));
        let r = p.response(&id);
        assert_eq!(r["id"], id);
        assert_sanitized(&r["result"]);
        assert_valid("JSONRPCResultResponse", &r);
    }
    // Unknown methods pass, and so does the server's answer.
    p.send(&json!({ "jsonrpc": "2.0", "id": "u", "method": "no/such/method" }));
    let r = p.response(&json!("u"));
    assert!(r["error"]["code"].is_i64(), "{r}");
    p.send(&json!({ "jsonrpc": "2.0", "id": 9, "method": "tools/list" }));
    assert_valid("ListToolsResult", &p.response(&json!(9))["result"]);
}

/// The client closes stdin: the proxy stops the server and exits.
#[test]
fn client_disconnect_stops_the_server() {
    let pidfile = std::env::temp_dir().join(format!("rs-mcp-eof-{}.pid", std::process::id()));
    let _ = std::fs::remove_file(&pidfile);
    let mut p = Raw::start(proxied(&[], &with_pidfile(&pidfile, &everything())));
    p.init();
    let pid = read_pid(&pidfile);
    assert!(alive(pid));
    p.input.take();
    let end = Instant::now() + Duration::from_secs(8);
    let status = loop {
        if let Some(s) = p.child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < end, "the proxy did not exit");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    std::thread::sleep(Duration::from_millis(100));
    assert!(!alive(pid), "the server was stopped");
    let _ = std::fs::remove_file(&pidfile);
}

/// A response over the message cap is never held whole: the tool's
/// result becomes an error result saying so.
#[test]
fn an_oversized_response_becomes_an_error_result() {
    let files = Files::new("oversized");
    let mut d = Driver::stdio(Sdk::TypeScript, proxied(&["--max-message-bytes", "100000"], &filesystem(&files.dir)));
    let r = d.call("read_text_file", json!({ "path": files.path("big.txt") }));
    assert_valid("CallToolResult", &r);
    assert_eq!(r["isError"], true);
    let t = texts(&r);
    assert!(t.contains("withheld") && t.contains("message cap of 100000 bytes"), "{t}");
    // The session goes on.
    let r = d.call("read_text_file", json!({ "path": files.path("creds.txt") }));
    assert_sanitized(&r);
}

/// The pipeline failing on one result (its fuel here) makes that result
/// an error result saying why, never the raw one; the next one passes.
#[test]
fn a_result_the_pipeline_fails_on_is_withheld() {
    let files = Files::new("fuel");
    // A fresh instance's first call compiles the packs (about 20M units
    // with the default pack's 286 rules); the large file needs over 200M.
    let mut d = Driver::stdio(Sdk::TypeScript, proxied(&["--fuel", "60000000"], &filesystem(&files.dir)));
    let r = d.call("read_text_file", json!({ "path": files.path("big.txt") }));
    assert_valid("CallToolResult", &r);
    assert_eq!(r["isError"], true, "{}", trunc(&r));
    let t = texts(&r);
    assert!(t.contains("withheld") && t.contains("fuel"), "{t}");
    assert!(!t.contains("line 000001"), "nothing of the raw result");
    let r = d.call("read_text_file", json!({ "path": files.path("creds.txt") }));
    assert_sanitized(&r);
    assert!(!r.to_string().contains(&fake_key()));
}

/// server-everything serving Streamable HTTP itself, stopped on drop.
struct HttpServer {
    child: Child,
    url: String,
}

impl HttpServer {
    fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new("node")
            .args([node_bin("mcp-server-everything"), "streamableHttp".into()])
            .env("PORT", port.to_string())
            .current_dir(mcp_dir())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let addr = format!("127.0.0.1:{port}");
        let end = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(&addr).is_err() {
            assert!(Instant::now() < end, "server-everything does not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self { child, url: format!("http://{addr}/mcp") }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `--upstream URL`: a server reached over Streamable HTTP, behind the
/// proxy on stdio and on HTTP, with sampling and progress passing.
#[test]
fn an_http_upstream_behind_both_transports() {
    let server = HttpServer::start();
    for (sdk, via) in [(Sdk::TypeScript, Via::Stdio), (Sdk::Python, Via::Http)] {
        let args = vec!["mcp".to_string(), "--upstream".into(), server.url.clone()];
        let (mut d, _l) = connect(sdk, via, args);
        let tools = d.tools();
        assert!(tools.iter().any(|t| t["name"] == "read_truncated_output"), "{sdk:?} {via:?}");
        let r = d.call("echo", everything_args("echo"));
        assert_sanitized(&r);
        assert!(!r.to_string().contains(&fake_key()), "{sdk:?} {via:?}: redacted");
        let r = d.call("trigger-sampling-request", everything_args("trigger-sampling-request"));
        assert_sanitized(&r);
        let r = d.call("trigger-long-running-operation", everything_args("trigger-long-running-operation"));
        assert_sanitized(&r);
        let stats = d.cmd(json!({ "op": "stats" })).unwrap();
        assert!(stats["sampled"].as_u64().unwrap() >= 1, "{sdk:?} {via:?}: {stats}");
        assert!(stats["progress"].as_u64().unwrap() >= 1, "{sdk:?} {via:?}: {stats}");
    }
}

/// A source file read through a tool (its `path` argument names it) is
/// redacted as code: generic rules look only inside string literals. The
/// same text in a .txt file is redacted as text.
#[test]
fn a_source_file_read_by_a_tool_is_redacted_as_code() {
    let files = Files::new("code");
    let (bare, quoted) = (["Xk9m", "Q2vL", "p7zzQ"].concat(), ["Rt5w", "N8qZ", "c3vB", "x7Lk"].concat());
    let text = format!("def connect():\n    DB_PASSWORD={bare}\n    secret = \"{quoted}\"\n");
    std::fs::write(files.dir.join("settings.py"), &text).unwrap();
    std::fs::write(files.dir.join("settings.txt"), &text).unwrap();
    let (mut d, _l) = connect(Sdk::TypeScript, Via::Stdio, proxied(&[], &filesystem(&files.dir)));
    let code = texts(&d.call("read_text_file", json!({ "path": files.path("settings.py") })));
    assert!(code.contains(&bare) && !code.contains(&quoted), "{code}");
    let plain = texts(&d.call("read_text_file", json!({ "path": files.path("settings.txt") })));
    assert!(!plain.contains(&bare) && !plain.contains(&quoted), "{plain}");
}

/// tests/mcp/odd_server.py, on stdio or (`http`) serving Streamable HTTP on
/// `port`, with the fake key as its secret.
fn odd_server(http: Option<u16>) -> Vec<String> {
    let mut v = vec!["env".into(), format!("ODD_SECRET={}", fake_key()), "python3".into()];
    v.push(root().join("tests/mcp/odd_server.py").display().to_string());
    if let Some(port) = http {
        v.extend(["--http".into(), port.to_string()]);
    }
    v
}

/// What real servers sometimes send and serde_json or the schema do not
/// take never reaches the client raw: repaired and sanitized, withheld as
/// an error, or (a server's error) redacted. Over stdio, and from an HTTP
/// upstream whose JSON bodies are pretty-printed (several lines each).
#[test]
fn odd_server_messages_never_pass_raw() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let cmd = odd_server(Some(port));
    let _http = Killed(Command::new(&cmd[0]).args(&cmd[1..]).spawn().unwrap());
    let end = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < end, "odd_server.py does not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    let key = fake_key();
    let upstream = format!("http://127.0.0.1:{port}/mcp");
    for args in [proxied(&[], &odd_server(None)), vec!["mcp".into(), "--upstream".into(), upstream]] {
        let mut p = Raw::start(args.clone());
        p.init();
        for (i, tool) in
            ["lone_surrogate", "bad_utf8", "deep", "trailing", "forged_task", "no_content", "error", "plain"]
                .iter()
                .enumerate()
        {
            let id = json!(i + 10);
            p.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": tool } }));
            let v = p.response(&id);
            let via = &args[1];
            assert!(!v.to_string().contains(&key), "{via} {tool}: the secret passed: {v}");
            match *tool {
                "lone_surrogate" | "bad_utf8" | "forged_task" | "plain" => {
                    assert_sanitized(&v["result"]);
                    assert!(texts(&v["result"]).contains("[REDACTED:aws-access-key-id]"), "{via} {tool}: {v}");
                }
                "deep" | "trailing" | "no_content" => {
                    assert_valid("CallToolResult", &v["result"]);
                    assert_eq!(v["result"]["isError"], true, "{via} {tool}: {v}");
                    assert!(texts(&v["result"]).contains("withheld"), "{via} {tool}: {v}");
                }
                _ => {
                    let e = &v["error"];
                    assert_eq!(e["code"], -32001, "{via} {tool}: {v}");
                    assert!(e["message"].as_str().unwrap().contains("[REDACTED:aws-access-key-id]"), "{v}");
                    assert!(e["data"]["detail"].as_str().unwrap().contains("[REDACTED:"), "{v}");
                }
            }
        }
        if args[1] == "--" {
            // The lone surrogate became U+FFFD, the rest of the text kept.
            p.send(
                &json!({ "jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": { "name": "lone_surrogate" } }),
            );
            let v = p.response(&json!(99));
            assert!(texts(&v["result"]).contains("cut \u{fffd}"), "{v}");
        }
    }
}

/// A child process killed when dropped (also when a test fails).
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A long resource is cut, and its recall reads it as the raw text it was
/// kept as.
#[test]
fn a_cut_resource_reads_back_through_the_recall_tool() {
    let mut p = Raw::start(proxied(&[], &odd_server(None)));
    p.init();
    p.send(&json!({ "jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": { "uri": "odd://big" } }));
    let v = p.response(&json!(1));
    assert_valid("ReadResourceResult", &v["result"]);
    let text = v["result"]["contents"][0]["text"].as_str().unwrap();
    let m = regex_lite::Regex::new(r"read_truncated_output\(call_id=([A-Za-z0-9_]+), offset=(\d+)").unwrap();
    let id = m.captures(text).expect("a marker names the recall tool")[1].to_string();
    let args = json!({ "call_id": id, "offset": 20000, "limit": 2, "unit": "lines" });
    p.send(&json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": "read_truncated_output", "arguments": args } }));
    let r = p.response(&json!(2));
    assert_ne!(r["result"]["isError"], true, "{r}");
    assert_eq!(slice_lines(&texts(&r["result"])), "line 020000\nline 020001\n", "{r}");
}

/// A result over the recall store's item bound is not kept (a cut prefix of
/// it would not parse): its markers say so instead of naming the recall.
#[test]
fn a_result_over_the_item_bound_is_not_offered_for_recall() {
    let dir = std::env::temp_dir().join(format!("rs-mcp-item-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("proxy.toml");
    std::fs::write(&config, "[recall]\nmax_item_bytes = 100000\n").unwrap();
    let mut p = Raw::start(proxied(&["--config", config.to_str().unwrap()], &odd_server(None)));
    p.init();
    p.send(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "big" } }));
    let v = p.response(&json!(1));
    assert_sanitized(&v["result"]);
    let t = texts(&v["result"]);
    assert!(t.contains("[truncated:") && !t.contains("read_truncated_output("), "{t}");
    assert!(t.contains("call the tool again"), "{t}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `mcp --platform-pack` serves that pack as the floor, as `sanitize` does.
#[test]
fn the_proxy_serves_a_platform_pack() {
    let dir = std::env::temp_dir().join(format!("rs-mcp-platform-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rules = dir.join("platform.toml");
    std::fs::write(
        &rules,
        "[pack]\nname = \"platform\"\nversion = \"1.0.0\"\ntenant = \"*\"\n\n[[rules]]\nid = \"odd-word\"\nregex = '\\b(cut)\\b'\n\
         keywords = [\"cut\"]\nsecret_group = 1\nexamples = [\"a cut here\"]\ncounter_examples = [\"cutting\"]\n",
    )
    .unwrap();
    let pack = dir.join("platform.wasm");
    let out = Command::new(BIN).args(["pack", "build"]).arg(&rules).arg("-o").arg(&pack).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut p = Raw::start(proxied(&["--platform-pack", pack.to_str().unwrap()], &odd_server(None)));
    p.init();
    p.send(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "lone_surrogate" } }));
    let v = p.response(&json!(1));
    let r = &v["result"]["_meta"]["result-sanitizer/record"];
    assert_eq!(r["platform_name"], "platform", "{v}");
    // The platform's rule and the default pack's (the tenant's here) both run.
    let t = texts(&v["result"]);
    assert!(t.contains("[REDACTED:odd-word]") && t.contains("[REDACTED:aws-access-key-id]"), "{t}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// tests/mcp/plain_server.py (stdio), with the fake key as its secret: it
/// answers `seen` with the tool calls it received.
fn plain_server() -> Vec<String> {
    let script = root().join("tests/mcp/plain_server.py").display().to_string();
    vec!["env".into(), format!("PLAIN_SECRET={}", fake_key()), "python3".into(), script]
}

/// The tool calls plain_server.py received (one JSON line each).
fn seen(d: &mut Driver) -> Vec<Value> {
    let r = d.call("seen", json!({}));
    texts(&r).lines().filter(|l| l.starts_with('{')).map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// A call whose arguments carry a placeholder (`[REDACTED:...]`) or a
/// truncation marker is answered by the proxy with an `isError` result
/// that says it is not the value, and the server never sees it; a call
/// without one goes through. Both SDKs, stdio and HTTP.
#[test]
fn a_call_carrying_a_placeholder_is_refused_and_never_reaches_the_server() {
    for (sdk, via) in [(Sdk::TypeScript, Via::Stdio), (Sdk::Python, Via::Http)] {
        let (mut d, _l) = connect(sdk, via, proxied(&[], &plain_server()));
        let placeholder = "[REDACTED:aws-access-key-id]";
        let r = d.call("echo", json!({ "text": format!("[default]\naws_access_key_id = {placeholder}\n") }));
        assert_valid("CallToolResult", &r);
        assert_eq!(r["isError"], true, "{sdk:?} {via:?}: {}", trunc(&r));
        let t = texts(&r);
        assert!(t.contains("not the value") && t.contains(placeholder) && t.contains("`text`"), "{t}");
        // A marker line, in a nested argument.
        let marker = "[truncated: byte cap of 262144 bytes reached; bytes 262144-912000 were not read]";
        let r = d.call("echo", json!({ "text": "fine", "extra": { "lines": ["a", marker] } }));
        assert_eq!(r["isError"], true, "{}", trunc(&r));
        assert!(texts(&r).contains("was cut"), "{}", trunc(&r));
        // Without one, the call goes through.
        let r = d.call("echo", json!({ "text": "region = eu-west-1" }));
        assert_sanitized(&r);
        assert_ne!(r["isError"], true);
        assert_eq!(texts(&r), "region = eu-west-1");
        let calls = seen(&mut d);
        assert_eq!(
            calls,
            [json!({ "name": "echo", "arguments": { "text": "region = eu-west-1" } })],
            "{sdk:?} {via:?}"
        );
    }
}

/// With `--placeholder-arguments pass` (or `[guard] placeholder_arguments
/// = "pass"`), the same call goes to the server.
#[test]
fn a_call_carrying_a_placeholder_passes_when_configured() {
    let dir = std::env::temp_dir().join(format!("rs-mcp-guard-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("proxy.toml");
    std::fs::write(&config, "[guard]\nplaceholder_arguments = \"pass\"\n").unwrap();
    let config = config.display().to_string();
    let flags: [&[&str]; 2] = [&["--placeholder-arguments", "pass"], &["--config", &config]];
    for flags in flags {
        let mut d = Driver::stdio(Sdk::TypeScript, proxied(flags, &plain_server()));
        let text = "aws_access_key_id = [REDACTED:aws-access-key-id]";
        let r = d.call("echo", json!({ "text": text }));
        assert_sanitized(&r);
        assert_ne!(r["isError"], true, "{flags:?}: {}", trunc(&r));
        assert_eq!(texts(&r), text);
        assert_eq!(seen(&mut d), [json!({ "name": "echo", "arguments": { "text": text } })], "{flags:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `prompts/get`: a key planted in a message's text and in an embedded
/// resource comes back redacted, with the pipeline's record; a prompt
/// without one is unchanged. Both SDKs.
#[test]
fn prompts_get_returns_a_planted_key_redacted() {
    let key = fake_key();
    for (sdk, via) in [(Sdk::TypeScript, Via::Stdio), (Sdk::Python, Via::Http)] {
        let (mut d, _l) = connect(sdk, via, proxied(&[], &plain_server()));
        let r = d.cmd(json!({ "op": "get_prompt", "name": "planted" })).unwrap();
        assert_valid("GetPromptResult", &r);
        assert!(!r.to_string().contains(&key), "{sdk:?} {via:?}: the key passed");
        let m = &r["messages"];
        let text = m[0]["content"]["text"].as_str().unwrap();
        assert_eq!(text, "Deploy with key [REDACTED:aws-access-key-id] to eu-west-1.");
        assert!(m[0]["content"]["_meta"]["result-sanitizer/record"]["redactions"].to_string().contains("aws"));
        let res = &m[1]["content"]["resource"];
        let t = res["text"].as_str().unwrap();
        assert!(
            t.contains("aws_access_key_id = [REDACTED:aws-access-key-id]") && t.contains("region = eu-west-1"),
            "{t}"
        );
        assert!(res["_meta"]["result-sanitizer/record"].is_object(), "{}", trunc(&r));
        let r = d.cmd(json!({ "op": "get_prompt", "name": "plain" })).unwrap();
        assert_valid("GetPromptResult", &r);
        assert_eq!(r["messages"][0]["content"]["text"], "Say hello.");
    }
}

/// plain_server.py's `sized(bytes)` text, as it writes it.
fn prose(size: usize) -> String {
    let words: Vec<&str> = "the proxy reads each result and cuts what does not fit, keeping the \
        head and the tail with a marker that says where the rest is"
        .split_whitespace()
        .collect();
    let mut out = String::new();
    let mut i = 0;
    while out.len() < size {
        let line: Vec<&str> = (0..12).map(|k| words[(i + k) % words.len()]).collect();
        out.push_str(&format!("{i:06} {}\n", line.join(" ")));
        i += 1;
    }
    out.truncate(size);
    out
}

/// Whether `text` is under the limit of the client named `client`, as
/// that client counts (docs/mcp-proxy.md, "Client budget profiles"):
/// Claude Code warns past 10 000 tokens (here at most 4 characters a
/// token, and the record's o200k count), Codex keeps 10 000 tokens counted
/// as bytes / 4, Gemini CLI 40 000 characters; Cursor as Claude Code.
fn under_client_limit(client: &str, text: &str, tokens: u64) -> bool {
    let chars = text.chars().count();
    match client {
        "claude-code" | "cursor-vscode" => chars <= 40_000 && tokens <= 10_000,
        "codex-mcp-client" => text.len().div_ceil(4) <= 10_000 && tokens <= 10_000,
        "gemini-cli-mcp-client" => chars <= 40_000,
        _ => unreachable!(),
    }
}

/// Per-client budgets: with each profiled client's `clientInfo.name`, a
/// 200 KiB result arrives under that client's own limit, cut by the proxy
/// (markers), and the recall route the marker names reads the rest, also
/// under the limit. The config file raises every tool's budgets over
/// those limits (a gateway's operator may): a profile is a ceiling over
/// them, and a client without one gets them (so the check can fail).
#[test]
fn each_profiled_client_gets_a_200_kib_result_under_its_limit_with_recall() {
    let size = 200 * 1024;
    let whole = prose(size);
    let dir = std::env::temp_dir().join(format!("rs-mcp-profiles-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("proxy.toml");
    std::fs::write(&config, "[defaults]\nmax_chars = 150000\nmax_tokens = 40000\n").unwrap();
    let config = config.display().to_string();
    let marker =
        regex_lite::Regex::new(r"read_truncated_output\(call_id=([A-Za-z0-9_]+), offset=(\d+), limit=(\d+)\)").unwrap();
    for client in ["result-sanitizer-test", "claude-code", "codex-mcp-client", "gemini-cli-mcp-client", "cursor-vscode"]
    {
        let args = proxied(&["--config", &config], &plain_server());
        let mut d = Driver::start(Sdk::TypeScript, json!({ "command": BIN, "args": args, "clientName": client }));
        let r = d.call("sized", json!({ "bytes": size }));
        assert_sanitized(&r);
        assert_ne!(r["isError"], true, "{client}");
        let text = texts(&r);
        let tokens = r["_meta"]["result-sanitizer/record"]["output_tokens"].as_u64().unwrap();
        if client == "result-sanitizer-test" {
            assert!(text.chars().count() > 100_000, "the file's budgets are over the clients' limits ({})", text.len());
            continue;
        }
        eprintln!("{client}: {} chars, {} bytes, {tokens} tokens", text.chars().count(), text.len());
        assert!(
            under_client_limit(client, &text, tokens),
            "{client}: {} chars, {} bytes, {tokens} tokens",
            text.chars().count(),
            text.len()
        );
        assert!(text.contains("[truncated:"), "{client}: cut by the proxy");
        let caps = marker.captures(&text).unwrap_or_else(|| panic!("{client}: a marker names the recall"));
        let (call_id, offset, limit): (String, usize, usize) =
            (caps[1].to_string(), caps[2].parse().unwrap(), caps[3].parse().unwrap());
        assert!(offset + limit <= size, "{client}");
        let s = d.call("read_truncated_output", json!({ "call_id": call_id, "offset": offset, "limit": limit }));
        assert_sanitized(&s);
        assert_ne!(s["isError"], true, "{client}: {}", trunc(&s));
        let part = texts(&s);
        let tokens = s["_meta"]["result-sanitizer/record"]["output_tokens"].as_u64().unwrap();
        assert!(under_client_limit(client, &part, tokens), "{client}: the recall is budgeted too");
        // What it shows is the result's text from the offset the marker named.
        let first = part.lines().find(|l| !l.starts_with("[truncated:") && !l.is_empty()).unwrap();
        assert!(whole[offset..].starts_with(first), "{client}: the recall starts at byte {offset}: {first:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// tests/mcp/schema_server.py: tools that declare an `outputSchema`.
fn schema_server() -> Vec<String> {
    vec![python().display().to_string(), mcp_dir().join("schema_server.py").display().to_string()]
}

/// #39: a tool that declares an `outputSchema` keeps, thinned, a
/// `structuredContent` that validates: the real TypeScript client checks
/// it (and throws when it does not validate). Its text, a JSON document
/// over the byte cap, comes back as one, both ends shown, with the notes
/// in a block of their own.
#[test]
fn ts_client_accepts_thinned_structured_content_of_a_tool_with_an_output_schema() {
    let (mut d, _l) = connect(Sdk::TypeScript, Via::Stdio, proxied(&[], &schema_server()));
    let tools = d.tools();
    let t = tools.iter().find(|t| t["name"] == "list_items").expect("listed");
    assert!(t["outputSchema"]["properties"]["items"].is_object(), "{t}");
    let n: u64 = 20_000;
    let r = d.call("list_items", json!({ "n": n }));
    assert_valid("CallToolResult", &r);
    assert_ne!(r["isError"], true, "{}", trunc(&r));
    let s = &r["structuredContent"];
    let items = s["items"].as_array().expect("items, an array still");
    let k = items.len() as u64;
    assert!((2..1000).contains(&k), "thinned to {k} items");
    assert!(items.iter().all(|i| i["id"].is_u64() && i["name"].is_string() && i["tags"].is_array()));
    assert_eq!((items[0]["id"].as_u64(), items[k as usize - 1]["id"].as_u64()), (Some(0), Some(n - 1)));
    assert_eq!(s["total"], n);
    // The text: the SDK's JSON form of the same result, closed around its
    // drained middle (it is over the byte cap).
    let blocks = r["content"].as_array().unwrap();
    let doc: Value = serde_json::from_str(blocks[0]["text"].as_str().unwrap()).expect("the text parses");
    let shown = doc["items"].as_array().expect("the text's items");
    assert_eq!(shown[0]["id"], 0);
    let last = shown.iter().rev().find(|i| i.is_object()).unwrap();
    assert_eq!(last["id"], n - 1, "the text's end is shown");
    let note = shown.iter().find_map(|i| i.as_str()).expect("a note where the middle was");
    assert!(note.starts_with("[truncated: ") && note.contains(&format!(" of {n}; bytes ")), "{note}");
    // The notes: where the structured content was cut, exactly.
    let notes = blocks[1]["text"].as_str().expect("a notes block");
    let said = format!("/items: {} items omitted (indexes {}-{} of {n})", n - k, k - 1, n - 2);
    assert!(notes.contains(&said), "{notes}");
    let rec = &r["_meta"]["result-sanitizer/record"];
    assert_eq!(rec["truncated"], true);
    assert!(rec["structure"]["items"].as_u64().unwrap() >= n - k);
}

/// One raw JSON-RPC exchange with the proxy (`flags`) in front of
/// `server`: the answers to `requests` (after initialize), by id; then
/// its input closes and it exits.
fn raw_exchange(flags: &[&str], server: &[String], requests: &[Value]) -> Vec<Value> {
    let mut child = Command::new(BIN)
        .args(proxied(flags, server))
        .current_dir(mcp_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut ask = |m: &Value, id: Option<u64>| -> Option<Value> {
        writeln!(input, "{m}").unwrap();
        input.flush().unwrap();
        let id = id?;
        loop {
            let mut line = String::new();
            assert!(output.read_line(&mut line).unwrap() > 0, "the proxy closed");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return Some(v);
            }
        }
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    ask(&init, Some(0)).unwrap();
    ask(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}), None);
    let out = requests.iter().map(|r| ask(r, r["id"].as_u64()).unwrap()).collect();
    drop(input);
    let _ = child.wait();
    out
}

/// #39: thinned, a structured content that cannot validate (the schema
/// asks for at least 1 000 items) is never sent: the proxy leaves it out,
/// the text says why; the TypeScript client then reports the missing
/// structured content rather than an invalid one.
#[test]
fn structured_content_that_cannot_validate_thinned_is_left_out_with_a_note() {
    let call = |id: u64| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "at_least", "arguments": {"n": 5000}}});
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let answers = raw_exchange(&[], &schema_server(), &[list, call(2)]);
    let tools = answers[0]["result"]["tools"].as_array().unwrap();
    let schema = &tools.iter().find(|t| t["name"] == "at_least").unwrap()["outputSchema"];
    assert_eq!(schema["properties"]["items"]["minItems"], 1000, "{schema}");
    let r = &answers[1]["result"];
    assert_valid("CallToolResult", r);
    assert!(r.get("structuredContent").is_none(), "an invalid one is never sent");
    let text: String = r["content"].as_array().unwrap().iter().filter_map(|b| b["text"].as_str()).collect();
    assert!(
        text.contains("structuredContent omitted: thinned to fit the budget, it no longer validated against the tool's outputSchema"),
        "{}",
        &text[text.len().saturating_sub(600)..]
    );
    // Without a schema check it would have been sent thinned: the same
    // call under a budget it fits keeps it (1000+ items fit 200k tokens).
    let (mut d, _l) = connect(Sdk::TypeScript, Via::Stdio, proxied(&[], &schema_server()));
    d.tools();
    let e = d.cmd(json!({ "op": "call", "name": "at_least", "args": { "n": 5000 } })).unwrap_err();
    assert!(e.contains("structured content"), "{e}");
}

/// The body of a GET of `url` (curl).
fn http_get(url: &str) -> String {
    let out = Command::new("curl").args(["-s", "--fail", url]).output().expect("curl runs");
    assert!(out.status.success(), "GET {url} failed");
    String::from_utf8(out.stdout).unwrap()
}

/// The value of the one sample named `series` (name and labels as
/// written) in an exposition, if any.
fn sample(exposition: &str, series: &str) -> Option<f64> {
    exposition.lines().find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// #42: `GET /metrics` on the HTTP listener, scraped after real calls:
/// every line is OpenMetrics text, the per-tool counts are exact (a cut
/// result, a recall, a redaction), and no content of a result is in it.
#[test]
fn metrics_endpoint_counts_by_tool_and_holds_no_content() {
    let files = Files::new("metrics");
    let (mut d, l) = connect(Sdk::TypeScript, Via::Http, proxied(&[], &filesystem(&files.dir)));
    d.tools();
    let r = d.call("read_text_file", json!({ "path": files.path("big.txt") }));
    let m = regex_lite::Regex::new(r"read_truncated_output\(call_id=([A-Za-z0-9_]+)").unwrap();
    let call_id = m.captures(&texts(&r)).expect("cut, with a recall route")[1].to_string();
    d.call("read_truncated_output", json!({ "call_id": call_id, "offset": 0, "limit": 100 }));
    d.call("read_text_file", json!({ "path": files.path("creds.txt") }));
    let x = http_get(&l.as_ref().unwrap().url.replace("/mcp", "/metrics"));

    // The exposition's grammar: comments, samples, one EOF at the end.
    let line = regex_lite::Regex::new(
        r#"^(# (HELP|TYPE|UNIT) [a-z_]+( .*)?|[a-z_]+(\{[a-z_]+="[^"\\\n]*"(,[a-z_]+="[^"\\\n]*")*\})? [0-9.e+-]+|# EOF)$"#,
    )
    .unwrap();
    for l in x.lines() {
        assert!(line.is_match(l), "not OpenMetrics text: {l}");
    }
    assert!(x.ends_with("# EOF\n"));
    let tool = r#"tool="read_text_file""#;
    let v = |s: &str| sample(&x, s).unwrap_or_else(|| panic!("no {s} in\n{x}"));
    assert_eq!(v(&format!(r#"result_sanitizer_tool_calls_total{{{tool},outcome="ok"}}"#)), 2.0);
    assert_eq!(v(&format!("result_sanitizer_tool_truncations_total{{{tool}}}")), 1.0);
    assert_eq!(v(&format!("result_sanitizer_tool_recalls_total{{{tool}}}")), 1.0);
    assert_eq!(v(&format!(r#"result_sanitizer_tool_redactions_total{{{tool},rule="aws-access-key-id"}}"#)), 1.0);
    assert!(v(&format!("result_sanitizer_tool_bytes_in_total{{{tool}}}")) > files.big.len() as f64);
    let (out, shown) = (
        v(&format!("result_sanitizer_tool_bytes_out_total{{{tool}}}")),
        v(&format!("result_sanitizer_tool_tokens_shown_total{{{tool}}}")),
    );
    assert!(out > 0.0 && out < files.big.len() as f64 / 4.0 && shown > 0.0, "{out} {shown}");
    assert_eq!(v(&format!("result_sanitizer_pipeline_seconds_count{{{tool}}}")), 2.0);
    assert_eq!(v(&format!("result_sanitizer_proxy_seconds_count{{{tool}}}")), 2.0);
    for content in [fake_key().as_str(), "eu-west-1", "quick brown fox", files.dir.to_str().unwrap()] {
        assert!(!x.contains(content), "content in the metrics");
    }
}

/// #42: OTLP/HTTP to a collector (a loopback HTTP server here, decoding
/// the protobuf bodies with the OpenTelemetry protocol's own types): one
/// `tools/call` span per call with its facts, the counters, and no
/// content in any body. The proxy flushes both at exit.
#[test]
fn otlp_traces_and_metrics_reach_a_collector_without_content() {
    use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
    use prost::Message;
    use std::sync::{Arc, Mutex};

    let collector = tiny_http::Server::http("127.0.0.1:0").unwrap();
    let port = collector.server_addr().to_ip().unwrap().port();
    // (path, body) of each request the collector got.
    type Received = Arc<Mutex<Vec<(String, Vec<u8>)>>>;
    let got: Received = Arc::default();
    let sink = got.clone();
    std::thread::spawn(move || {
        for mut req in collector.incoming_requests() {
            let mut body = Vec::new();
            std::io::Read::read_to_end(req.as_reader(), &mut body).unwrap();
            sink.lock().unwrap().push((req.url().to_string(), body));
            let _ = req.respond(tiny_http::Response::empty(200));
        }
    });
    let files = Files::new("otlp");
    let call = |id: u64, path: String| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "read_text_file", "arguments": {"path": path}}});
    let endpoint = format!("http://127.0.0.1:{port}");
    raw_exchange(
        &["--otlp-endpoint", &endpoint],
        &filesystem(&files.dir),
        &[call(1, files.path("big.txt")), call(2, files.path("creds.txt"))],
    );
    // The proxy has exited: what it batched was sent before.
    let end = Instant::now() + Duration::from_secs(20);
    let bodies = |path: &str| -> Vec<Vec<u8>> {
        got.lock().unwrap().iter().filter(|(p, _)| p == path).map(|(_, b)| b.clone()).collect()
    };
    while bodies("/v1/traces").is_empty() || bodies("/v1/metrics").is_empty() {
        assert!(Instant::now() < end, "no OTLP traces or metrics received");
        std::thread::sleep(Duration::from_millis(50));
    }
    for (_, b) in got.lock().unwrap().iter() {
        for content in [fake_key().as_bytes(), b"eu-west-1", b"quick brown fox"] {
            assert!(!b.windows(content.len()).any(|w| w == content), "content in an OTLP body");
        }
    }
    let attr = |attrs: &[opentelemetry_proto::tonic::common::v1::KeyValue], k: &str| {
        attrs.iter().find(|a| a.key == k).and_then(|a| a.value.as_ref()?.value.clone())
    };
    let spans: Vec<_> = bodies("/v1/traces")
        .iter()
        .flat_map(|b| ExportTraceServiceRequest::decode(b.as_slice()).expect("OTLP traces").resource_spans)
        .flat_map(|r| r.scope_spans)
        .flat_map(|s| s.spans)
        .filter(|s| s.name == "tools/call")
        .collect();
    assert_eq!(spans.len(), 2, "one span per call");
    for s in &spans {
        assert_eq!(attr(&s.attributes, "mcp.tool.name"), Some(Any::StringValue("read_text_file".into())));
        assert!(s.end_time_unix_nano > s.start_time_unix_nano);
    }
    let truncated: Vec<_> = spans.iter().map(|s| attr(&s.attributes, "result_sanitizer.truncated")).collect();
    assert!(truncated.contains(&Some(Any::BoolValue(true))) && truncated.contains(&Some(Any::BoolValue(false))));
    let redactions: Vec<_> = spans.iter().filter_map(|s| attr(&s.attributes, "result_sanitizer.redactions")).collect();
    assert!(redactions.contains(&Any::IntValue(1)), "{redactions:?}");
    let names: Vec<String> = bodies("/v1/metrics")
        .iter()
        .flat_map(|b| ExportMetricsServiceRequest::decode(b.as_slice()).expect("OTLP metrics").resource_metrics)
        .flat_map(|r| r.scope_metrics)
        .flat_map(|s| s.metrics)
        .map(|m| m.name)
        .collect();
    for n in ["result_sanitizer.tool.calls", "result_sanitizer.tool.redactions", "result_sanitizer.proxy.duration"] {
        assert!(names.iter().any(|m| m == n), "{n} not in {names:?}");
    }
}

//! The server end of a session: a command on stdio, or an MCP server over
//! Streamable HTTP (`--upstream URL`) made to look like one, so that both
//! transports read and write the same newline-delimited lines.
//!
//! For an HTTP upstream, each line written is POSTed (on its own thread:
//! a long call must not hold back the answer to a sampling request made
//! meanwhile); a JSON answer, or each event of an SSE answer, becomes a
//! line to read, and so does each event of the GET stream opened once a
//! session id comes back. A POST that fails answers each request it
//! carried with a JSON-RPC error. Closing the input ends the session
//! (DELETE) and then the output.

use std::io::{BufReader, PipeReader, PipeWriter, Read, Write};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use super::lines::{read_line_capped, Line};
use result_sanitizer_host::{Error, Result};

/// The server of one session.
pub struct Backend {
    /// Lines to the server.
    pub input: Box<dyn Write + Send>,
    /// Lines from the server.
    pub output: Box<dyn Read + Send>,
    /// Waits for the server to end: its exit status (a process).
    pub wait: Box<dyn FnOnce() -> Option<ExitStatus> + Send>,
    /// Signals what is left of it (a process group).
    pub signal: Arc<dyn Fn(i32) + Send + Sync>,
}

/// Where servers come from.
#[derive(Clone, Debug)]
pub enum Upstream {
    /// A command, started once per session.
    Command(Vec<String>),
    /// A Streamable HTTP endpoint.
    Url(String),
}

impl Upstream {
    /// Starts (or connects to) a server.
    pub fn start(&self, max_message_bytes: usize) -> Result<Backend> {
        match self {
            Upstream::Command(cmd) => Ok(process(spawn_server(cmd)?)),
            Upstream::Url(url) => http(url, max_message_bytes),
        }
    }
}

/// Starts the server in a process group of its own, on pipes (stderr
/// inherited: servers log there).
fn spawn_server(command: &[String]) -> Result<std::process::Child> {
    use std::os::unix::process::CommandExt;
    let program = command.first().ok_or_else(|| Error::InvalidOptions("no MCP server command given".into()))?;
    let mut cmd = Command::new(program);
    cmd.args(&command[1..]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit());
    cmd.process_group(0);
    #[cfg(target_os = "linux")]
    // SAFETY: prctl is async-signal-safe; it makes the server get SIGTERM
    // if this process dies without stopping it (a SIGKILL).
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    cmd.spawn()
        .map_err(|e| Error::Io(std::io::Error::new(e.kind(), format!("cannot start the MCP server `{program}`: {e}"))))
}

fn process(mut child: Child) -> Backend {
    let group = child.id() as libc::pid_t;
    let input = Box::new(child.stdin.take().expect("piped"));
    let output = Box::new(child.stdout.take().expect("piped"));
    Backend {
        input,
        output,
        wait: Box::new(move || child.wait().ok()),
        // SAFETY: kill(2) on the process group of our own child.
        signal: Arc::new(move |sig| unsafe {
            libc::kill(-group, sig);
        }),
    }
}

struct Shared {
    url: String,
    agent: ureq::Agent,
    out: Mutex<PipeWriter>,
    session: Mutex<Option<String>>,
    version: Mutex<Option<String>>,
    cap: usize,
}

impl Shared {
    /// Writes one message as one line: JSON holds a raw line end only as
    /// whitespace between tokens, so a pretty-printed body or an event of
    /// several `data:` lines stays one message.
    fn emit(&self, message: &[u8]) {
        // Copied only when it has a line end (most messages have none).
        let one: std::borrow::Cow<[u8]> = if message.iter().any(|&b| b == b'\n' || b == b'\r') {
            message.iter().map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b }).collect::<Vec<u8>>().into()
        } else {
            message.into()
        };
        let mut w = self.out.lock().expect("out lock");
        let _ = super::lines::write_line(&mut *w, &one);
    }

    fn with_headers<B>(&self, mut r: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        r = r.header("Accept", "application/json, text/event-stream");
        if let Some(s) = self.session.lock().expect("session lock").as_deref() {
            r = r.header("Mcp-Session-Id", s);
        }
        if let Some(v) = self.version.lock().expect("version lock").as_deref() {
            r = r.header("MCP-Protocol-Version", v);
        }
        r
    }

    /// Passes a message on, noting the protocol version an
    /// `initialize` result settles.
    fn message(&self, m: &[u8]) {
        if let Ok(v) = serde_json::from_slice::<Value>(m) {
            if let Some(p) = v.pointer("/result/protocolVersion").and_then(Value::as_str) {
                if v.pointer("/result/serverInfo").is_some() {
                    *self.version.lock().expect("version lock") = Some(p.into());
                }
            }
        }
        self.emit(m);
    }

    /// Reads an SSE body: each event's data is one message.
    fn events(&self, body: impl Read) {
        let mut r = BufReader::with_capacity(1 << 16, body);
        let mut data: Vec<u8> = Vec::new();
        loop {
            match read_line_capped(&mut r, self.cap) {
                Ok(Line::Message(l)) => {
                    if let Some(d) = l.strip_prefix(b"data:") {
                        let d = d.strip_prefix(b" ").unwrap_or(d);
                        if !data.is_empty() {
                            data.push(b'\n');
                        }
                        data.extend_from_slice(d);
                        // Blank lines end events; they are not seen here,
                        // so an event ends when its data is one JSON value.
                        if serde_json::from_slice::<serde::de::IgnoredAny>(&data).is_ok() {
                            self.message(&std::mem::take(&mut data));
                        } else if data.len() > self.cap {
                            // Data that never parses does not grow without bound.
                            eprintln!(
                                "result-sanitizer mcp: dropped an upstream event over the cap ({} bytes)",
                                data.len()
                            );
                            data.clear();
                        }
                    }
                }
                Ok(Line::Oversized { size, .. }) => {
                    eprintln!("result-sanitizer mcp: dropped an upstream event of {size} bytes (over the cap)");
                    data.clear();
                }
                Ok(Line::Eof) | Err(_) => return,
            }
        }
    }

    fn post(self: &Arc<Self>, line: Vec<u8>) {
        let ids: Vec<Value> = match serde_json::from_slice::<Value>(&line) {
            Ok(Value::Array(a)) => {
                a.iter().filter(|m| m.get("method").is_some()).filter_map(|m| m.get("id")).cloned().collect()
            }
            Ok(m) if m.get("method").is_some() => m.get("id").cloned().into_iter().collect(),
            _ => Vec::new(),
        };
        let r =
            self.with_headers(self.agent.post(&self.url)).header("Content-Type", "application/json").send(&line[..]);
        let resp = match r {
            Ok(resp) => resp,
            Err(e) => {
                let why = format!("result-sanitizer: the upstream MCP server failed: {e}");
                for id in ids {
                    let err = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32000, "message": why } });
                    self.emit(&serde_json::to_vec(&err).expect("serializes"));
                }
                return;
            }
        };
        if let Some(sid) = resp.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()) {
            let first = self.session.lock().expect("session lock").replace(sid.into()).is_none();
            if first {
                let me = self.clone();
                std::thread::spawn(move || me.get_stream());
            }
        }
        if resp.status().as_u16() == 202 {
            return;
        }
        let sse = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|c| c.starts_with("text/event-stream"));
        let body = resp.into_body().into_reader();
        if sse {
            self.events(body);
        } else {
            let mut b = Vec::new();
            let read = body.take(self.cap as u64 + 1).read_to_end(&mut b);
            if b.len() > self.cap {
                // Not cut and passed on: each request it answers gets an error.
                let why = format!("result-sanitizer: the upstream's answer is over the cap of {} bytes", self.cap);
                for id in ids {
                    let err = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32000, "message": why } });
                    self.emit(&serde_json::to_vec(&err).expect("serializes"));
                }
            } else if read.is_ok() && !b.is_empty() {
                self.message(&b);
            }
        }
    }

    /// The session's GET stream, for messages sent outside any POST.
    fn get_stream(self: Arc<Self>) {
        // The session id comes with the initialize answer; the stream opens
        // once the client said it is initialized (a short wait).
        std::thread::sleep(Duration::from_millis(200));
        if let Ok(resp) = self.with_headers(self.agent.get(&self.url)).call() {
            self.events(resp.into_body().into_reader());
        }
    }

    fn delete(&self) {
        if self.session.lock().expect("session lock").is_some() {
            let _ = self.with_headers(self.agent.delete(&self.url)).call();
        }
    }
}

fn http(url: &str, cap: usize) -> Result<Backend> {
    if !url.starts_with("http://") && !url.starts_with("https://") {
        return Err(Error::InvalidOptions(format!("--upstream must be an http:// or https:// URL, got {url}")));
    }
    let (in_r, in_w): (PipeReader, PipeWriter) = std::io::pipe()?;
    let (out_r, out_w) = std::io::pipe()?;
    let agent: ureq::Agent =
        ureq::Agent::config_builder().timeout_connect(Some(Duration::from_secs(10))).build().into();
    let shared = Arc::new(Shared {
        url: url.into(),
        agent,
        out: Mutex::new(out_w),
        session: Mutex::default(),
        version: Mutex::default(),
        cap,
    });
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let s = shared.clone();
    std::thread::spawn(move || {
        let mut r = BufReader::new(in_r);
        loop {
            match read_line_capped(&mut r, cap) {
                Ok(Line::Message(m)) => {
                    let me = s.clone();
                    std::thread::spawn(move || me.post(m));
                }
                Ok(Line::Oversized { .. }) => continue,
                Ok(Line::Eof) | Err(_) => break,
            }
        }
        s.delete();
        let _ = done_tx.send(());
    });
    Ok(Backend {
        input: Box::new(in_w),
        output: Box::new(out_r),
        wait: Box::new(move || {
            let _ = done_rx.recv();
            None
        }),
        signal: Arc::new(|_| {}),
    })
}

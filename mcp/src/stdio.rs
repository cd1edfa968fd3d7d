//! The stdio transport: the client on this process's stdin and stdout,
//! the server a child process on pipes, messages one per line.
//!
//! Three threads move lines (client to server, server to client, and one
//! that waits for the server to exit); the calling thread decides when
//! it is over:
//!
//! * the client closes stdin: the server's stdin is closed, it gets 2 s
//!   to exit, then SIGTERM, 2 s more, then SIGKILL (its process group, so
//!   that a launcher's children, `npx` then `node`, go too);
//! * the server exits or closes its stdout: what it wrote until then is
//!   passed on (for up to 200 ms), then every pending request gets a
//!   JSON-RPC error, and [`run`] returns 1 so the proxy exits and the
//!   client sees its stream close.

use std::io::{BufReader, Write};
use std::process::ExitStatus;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::lines::{read_line_capped, Line};
use super::session::{FromClient, Session};
use super::upstream::Upstream;
use super::Proxy;
use result_sanitizer_host::Result;

enum Event {
    ClientEof,
    ServerEof,
    ServerExit(Option<ExitStatus>),
}

/// How long a closing server gets before each signal.
const GRACE: Duration = Duration::from_secs(2);
/// How long the server's last output is waited for once it exited.
const LAST_OUTPUT: Duration = Duration::from_millis(200);

/// A line writer shared by the threads: one message per line, flushed.
struct Out<W: Write>(Arc<Mutex<Option<W>>>);

impl<W: Write> Clone for Out<W> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<W: Write> Out<W> {
    fn new(w: W) -> Self {
        Self(Arc::new(Mutex::new(Some(w))))
    }

    /// Writes one message; false when the other end is gone.
    fn send(&self, msg: &[u8]) -> bool {
        let mut g = self.0.lock().expect("writer lock");
        let Some(w) = g.as_mut() else { return false };
        let ok = super::lines::write_line(w, msg).and_then(|()| w.flush()).is_ok();
        if !ok {
            *g = None;
        }
        ok
    }

    /// Closes the stream (the reader sees EOF).
    fn close(&self) {
        self.0.lock().expect("writer lock").take();
    }
}

/// Runs the proxy for `upstream` (the server) until the client or the
/// server is done; returns the process's exit code.
pub fn run(proxy: Arc<Proxy>, upstream: &Upstream) -> Result<i32> {
    let backend = upstream.start(proxy.max_message_bytes)?;
    let server_in = Out::new(backend.input);
    let server_out = backend.output;
    let (wait, signal) = (backend.wait, backend.signal);
    let client_out = Out::new(std::io::stdout());
    // Its own tenant in the store: stdio proxies may share one (Redis).
    let tenant = format!("stdio-{}", result_sanitizer_host::digest::hex(&result_sanitizer_host::report::random_key()?));
    let session = Arc::new(Session::new(proxy, &tenant));
    let cap = session.proxy().max_message_bytes;
    let (tx, rx) = channel();

    let (s, out, t) = (session.clone(), client_out.clone(), tx.clone());
    std::thread::spawn(move || {
        let mut r = BufReader::with_capacity(1 << 16, server_out);
        loop {
            match read_line_capped(&mut r, cap) {
                Ok(Line::Message(m)) => match s.from_server(&m) {
                    Some(l) => {
                        out.send(&l);
                    }
                    None => eprintln!("result-sanitizer mcp: dropped a message from the server that is not JSON (answering no pending request)"),
                },
                Ok(Line::Oversized { head, tail, size }) => match s.oversized_from_server(&head, &tail, size) {
                    Some(l) => {
                        out.send(&l);
                    }
                    None => eprintln!("result-sanitizer mcp: dropped a message of {size} bytes from the server (over the cap of {cap} bytes, answering no pending request)"),
                },
                Ok(Line::Eof) | Err(_) => break,
            }
        }
        let _ = t.send(Event::ServerEof);
    });

    let (s, out, to_server, t) = (session.clone(), client_out.clone(), server_in.clone(), tx.clone());
    std::thread::spawn(move || {
        let mut r = BufReader::with_capacity(1 << 16, std::io::stdin());
        loop {
            match read_line_capped(&mut r, cap) {
                Ok(Line::Message(m)) => match s.from_client(&m) {
                    FromClient::Forward => {
                        to_server.send(&m);
                    }
                    FromClient::Reply(l) => {
                        out.send(&l);
                    }
                },
                Ok(Line::Oversized { head, tail, size }) => {
                    out.send(&s.oversized_from_client(&head, &tail, size));
                }
                Ok(Line::Eof) | Err(_) => break,
            }
        }
        let _ = t.send(Event::ClientEof);
    });

    std::thread::spawn(move || {
        let _ = tx.send(Event::ServerExit(wait()));
    });

    let stop = |sig| signal(sig);
    match rx.recv().expect("the waiter thread reports") {
        Event::ClientEof => {
            server_in.close();
            let mut status = wait_exit(&rx, GRACE);
            if status.is_none() {
                stop(libc::SIGTERM);
                status = wait_exit(&rx, GRACE);
            }
            // The leader gone, a launcher's children may remain.
            stop(libc::SIGKILL);
            if status.is_none() {
                wait_exit(&rx, GRACE);
            }
            Ok(0)
        }
        Event::ServerExit(status) => {
            wait_eof(&rx, LAST_OUTPUT);
            Ok(server_gone(&session, &client_out, status, stop))
        }
        Event::ServerEof => {
            // Its stdout closed: it is done, whether it exits or not.
            let status = wait_exit(&rx, LAST_OUTPUT).or_else(|| {
                stop(libc::SIGKILL);
                wait_exit(&rx, GRACE)
            });
            Ok(server_gone(&session, &client_out, status.flatten(), stop))
        }
    }
}

/// Answers every pending request with an error and stops what is left
/// of the server's process group; the exit code.
fn server_gone(
    session: &Session,
    client: &Out<std::io::Stdout>,
    status: Option<ExitStatus>,
    stop: impl Fn(i32),
) -> i32 {
    stop(libc::SIGKILL);
    let how = status.map_or("without a status".to_string(), |s| s.to_string());
    let why = format!("result-sanitizer: the MCP server exited ({how}) before answering this request");
    let errors = session.fail_pending(&why);
    eprintln!(
        "result-sanitizer mcp: the MCP server exited ({how}); {} pending request(s) answered with an error",
        errors.len()
    );
    for e in &errors {
        client.send(e);
    }
    1
}

/// Waits up to `t` for the server's exit; `Some(status)` if it came.
fn wait_exit(rx: &Receiver<Event>, t: Duration) -> Option<Option<ExitStatus>> {
    let end = Instant::now() + t;
    loop {
        match rx.recv_timeout(end.saturating_duration_since(Instant::now())) {
            Ok(Event::ServerExit(s)) => return Some(s),
            Ok(_) => continue,
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return None,
        }
    }
}

/// Waits up to `t` for the server's stdout to close.
fn wait_eof(rx: &Receiver<Event>, t: Duration) {
    let end = Instant::now() + t;
    while let Ok(e) = rx.recv_timeout(end.saturating_duration_since(Instant::now())) {
        if matches!(e, Event::ServerEof) {
            return;
        }
    }
}

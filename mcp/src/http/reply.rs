//! What goes back to the client: plain answers, JSON-RPC errors, one JSON
//! body, or an SSE stream on the raw connection.

use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tiny_http::{Header, Request, Response};

use super::sessions::HttpSession;

/// A comment on idle streams this often (a closed client is noticed).
const KEEPALIVE: Duration = Duration::from_secs(15);

pub(super) fn header<'r>(req: &'r Request, name: &'static str) -> Option<&'r str> {
    req.headers().iter().find(|h| h.field.equiv(name)).map(|h| h.value.as_str())
}

pub(super) fn plain(req: Request, status: u16, text: &str) {
    let _ = req.respond(Response::from_string(text).with_status_code(status));
}

/// A JSON-RPC error body with no id (the request could not be read).
pub(super) fn rpc_error(req: Request, status: u16, code: i64, message: &str) {
    let body = serde_json::json!({ "jsonrpc": "2.0", "id": null, "error": { "code": code, "message": message } });
    let h = Header::from_bytes("Content-Type", "application/json").expect("header");
    let _ = req.respond(Response::from_string(body.to_string()).with_status_code(status).with_header(h));
}

/// Writes an SSE response on the raw connection: the head, then each
/// message as an event, until `responses` responses went out (a POST) or
/// the client goes (a GET).
pub(super) fn sse(
    req: Request,
    s: &HttpSession,
    new_id: Option<&str>,
    rx: Receiver<Vec<u8>>,
    responses: Option<usize>,
) {
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

pub(super) fn get_stream(req: Request, s: &Arc<HttpSession>) {
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

pub(super) fn json_reply(req: Request, new_id: Option<&str>, rx: &Receiver<Vec<u8>>, n: usize, batch: bool) {
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

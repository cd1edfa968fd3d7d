//! The edge build's HTTP adapter: a `wasi:http/incoming-handler` over the
//! pipeline's exports, composed with the pipeline and a pack into one
//! `wasi:http/proxy` component (`make edge-http`). The API is in
//! docs/edge.md; the Cloudflare Worker (`examples/edge/cloudflare/`) serves
//! the same one over the same pipeline.
//!
//! The model: the adapter holds no pipeline logic. It routes, reads the
//! options from the query string or `x-sanitize-*` headers (the CLI's flag
//! names), asks the pipeline how to read the body (`effective-budget`),
//! reads it that way (raw output as head + tail with the middle sent
//! through `drain` and dropped; documents up to `read-bytes`), and answers
//! with the pipeline's message, byte for byte what `result-sanitizer
//! sanitize` prints. `/v1/redact` streams through `redact`. Errors are
//! RFC 9457 problem documents naming the CLI's error kinds.
//!
//! Memory per request: the byte cap plus one drain chunk, whatever the
//! length of the body.

#[allow(missing_docs)]
mod bindings {
    wit_bindgen::generate!({
        path: ["../../wit", "wit"],
        world: "result-sanitizer:edge/http",
        // Bindings for every interface the world names (the WASI ones and
        // the pipeline), generated here: no crate provides them.
        generate_all,
    });
}

mod options;

use bindings::exports::wasi::http::incoming_handler::Guest;
use bindings::result_sanitizer::core::result_sanitizer as rs;
use bindings::wasi::http::types::{
    Fields, IncomingBody, IncomingRequest, Method, OutgoingBody, OutgoingResponse, ResponseOutparam,
};
use bindings::wasi::io::streams::{InputStream, OutputStream, StreamError};

use options::{Problem, Request};

struct Edge;

impl Guest for Edge {
    fn handle(request: IncomingRequest, out: ResponseOutparam) {
        let target = request.path_with_query().unwrap_or_default();
        let (path, query) = target.split_once('?').unwrap_or((&target, ""));
        let method = request.method();
        let result = match (path, &method) {
            ("/v1/healthz", Method::Get) => {
                return respond(out, 200, "application/json", b"{\"status\":\"ok\"}\n", &[]);
            }
            ("/v1/sanitize", Method::Post) => sanitize(&request, query),
            ("/v1/sanitize-json", Method::Post) => sanitize_json(&request),
            ("/v1/redact", Method::Post) => match redact(&request, query) {
                Ok(stream) => return stream.run(out),
                Err(p) => Err(p),
            },
            ("/v1/healthz" | "/v1/sanitize" | "/v1/sanitize-json" | "/v1/redact", _) => {
                Err(Problem::method(method_name(&method)))
            }
            _ => Err(Problem::not_found(path)),
        };
        match result {
            Ok(r) => {
                let extra = [("x-sanitize-is-error".to_string(), r.is_error.to_string().into_bytes())];
                respond(out, 200, "application/json", &r.body, &extra)
            }
            Err(p) => respond(out, p.status, "application/problem+json", p.to_json().as_bytes(), &[]),
        }
    }
}

// Exported on wasm only: the native build (clippy, tests) has no
// component to export from.
#[cfg(target_arch = "wasm32")]
bindings::export!(Edge with_types_in bindings);

/// A successful answer.
struct Answer {
    body: Vec<u8>,
    is_error: bool,
}

fn method_name(m: &Method) -> String {
    match m {
        Method::Get => "GET".into(),
        Method::Head => "HEAD".into(),
        Method::Post => "POST".into(),
        Method::Put => "PUT".into(),
        Method::Delete => "DELETE".into(),
        Method::Connect => "CONNECT".into(),
        Method::Options => "OPTIONS".into(),
        Method::Trace => "TRACE".into(),
        Method::Patch => "PATCH".into(),
        Method::Other(s) => s.clone(),
    }
}

fn headers(request: &IncomingRequest) -> Vec<(String, Vec<u8>)> {
    request.headers().entries()
}

/// The request body as a stream; the body resource must outlive it.
struct Body {
    stream: Option<InputStream>,
    _body: IncomingBody,
}

impl Body {
    fn open(request: &IncomingRequest) -> Result<Body, Problem> {
        let body = request.consume().map_err(|()| Problem::internal("the request body was already taken"))?;
        let stream = body.stream().map_err(|()| Problem::internal("the request body has no stream"))?;
        Ok(Body { stream: Some(stream), _body: body })
    }

    /// Up to `max` bytes (fewer only at the end); empty at the end.
    fn read(&mut self, max: usize) -> Result<Vec<u8>, Problem> {
        let Some(s) = &self.stream else { return Ok(Vec::new()) };
        loop {
            match s.blocking_read(max as u64) {
                // An empty read is not the end (a slow client): read again.
                Ok(b) if b.is_empty() => continue,
                Ok(b) => return Ok(b),
                Err(StreamError::Closed) => {
                    self.stream = None;
                    return Ok(Vec::new());
                }
                Err(StreamError::LastOperationFailed(_)) => {
                    return Err(Problem::bad_request("the request body could not be read"));
                }
            }
        }
    }

    /// Reads and drops the rest, so the client sees its request taken
    /// before the answer (nothing of it is kept or looked at).
    fn discard(&mut self, mut limit: u64) -> Result<(), Problem> {
        while limit > 0 {
            let n = self.read(READ_CHUNK.min(limit as usize))?.len();
            if n == 0 {
                break;
            }
            limit -= n as u64;
        }
        Ok(())
    }
}

/// Bytes asked of the body per read.
const READ_CHUNK: usize = 64 * 1024;
/// Bytes of the middle sent per `drain` step (as the Rust host's).
const DRAIN_CHUNK: usize = 1 << 20;
/// Bytes sent per `redact` step (as the Rust host's).
const REDACT_CHUNK: usize = 1 << 20;
/// A JSON twin request is read whole, up to this: the MCP input bound
/// (64 MiB) as base64, and room for the options.
const TWIN_LIMIT: usize = 90 << 20;

fn sanitize(request: &IncomingRequest, query: &str) -> Result<Answer, Problem> {
    let Request { mut options, drain_limit } = Request::parse(query, &headers(request))?;
    let budget = rs::effective_budget(&options).map_err(Problem::from)?;
    let mut body = Body::open(request)?;
    let input = if budget.head_bytes > 0 {
        let (bytes, gap) = read_head_tail(&mut body, budget.head_bytes, budget.tail_bytes, drain_limit)?;
        options.gap = gap;
        bytes
    } else {
        // A document read whole, under `read-bytes` (the extra byte tells
        // the pipeline it went on).
        let cap = budget.read_bytes.saturating_sub(1);
        let mut bytes = Vec::new();
        while (bytes.len() as u64) < budget.read_bytes {
            let room = (budget.read_bytes - bytes.len() as u64).min(READ_CHUNK as u64) as usize;
            let chunk = body.read(room)?;
            if chunk.is_empty() {
                break;
            }
            bytes.extend_from_slice(&chunk);
        }
        let over = bytes.len() as u64 > cap;
        if options.input == rs::InputKind::Mcp && over {
            return Err(Problem::too_large(format!("MCP input larger than {cap} bytes")));
        }
        if over {
            body.discard(drain_limit)?;
        }
        bytes
    };
    drop(body);
    let out = rs::sanitize(&input, &options).map_err(Problem::from)?;
    let mut bytes = out.message.into_bytes();
    // The CLI prints the message as one line.
    bytes.push(b'\n');
    Ok(Answer { body: bytes, is_error: out.is_error })
}

/// Reads the body to its end, or to `drain_limit` bytes, keeping the first
/// `head` bytes and the last `tail`; the bytes between go through `drain`
/// once and are dropped (as the Rust host's `io::read_head_tail`).
fn read_head_tail(
    body: &mut Body,
    head: u64,
    tail: u64,
    drain_limit: u64,
) -> Result<(Vec<u8>, Option<rs::Gap>), Problem> {
    let (head, tail) = (head as usize, tail as usize);
    let mut bytes: Vec<u8> = Vec::with_capacity(head.min(1 << 20));
    let mut ring: Vec<u8> = Vec::new();
    let mut pending: Vec<u8> = Vec::new();
    let mut gap: Option<rs::Gap> = None;
    let (mut total, mut stopped) = (0u64, false);
    loop {
        let room = drain_limit.saturating_sub(total).min(READ_CHUNK as u64) as usize;
        if room == 0 {
            // At the limit: stopped only if the body goes on.
            stopped = !body.read(1)?.is_empty();
            break;
        }
        let chunk = body.read(room)?;
        if chunk.is_empty() {
            break;
        }
        total += chunk.len() as u64;
        let mut data = &chunk[..];
        if bytes.len() < head {
            let k = (head - bytes.len()).min(data.len());
            bytes.extend_from_slice(&data[..k]);
            data = &data[k..];
        }
        ring.extend_from_slice(data);
        // The ring keeps the last `tail` bytes; what falls out is drained
        // a chunk at a time.
        if ring.len() > tail + READ_CHUNK {
            let out = ring.len() - tail;
            pending.extend(ring.drain(..out));
            let g = gap.get_or_insert_with(|| empty_gap(bytes.len() as u64));
            if pending.len() >= DRAIN_CHUNK {
                drain(g, &mut pending, false)?;
            }
        }
    }
    if ring.len() > tail {
        let out = ring.len() - tail;
        pending.extend(ring.drain(..out));
        gap.get_or_insert_with(|| empty_gap(bytes.len() as u64));
    }
    if let Some(g) = gap.as_mut() {
        drain(g, &mut pending, true)?;
    }
    if stopped {
        // Even with nothing drained, the pipeline must know it went on.
        gap.get_or_insert_with(|| empty_gap(bytes.len() as u64)).unfinished = true;
        // The rest of the body is not read: the limit is what bounds a
        // request's work.
    }
    bytes.extend_from_slice(&ring);
    Ok((bytes, gap))
}

fn empty_gap(start: u64) -> rs::Gap {
    rs::Gap {
        start_byte: start,
        bytes: 0,
        newlines: 0,
        ends_line: false,
        error_lines: Vec::new(),
        error_lines_seen: 0,
        redactions: Vec::new(),
        unfinished: false,
        json: Vec::new(),
        unscanned: 0,
    }
}

fn drain(gap: &mut rs::Gap, pending: &mut Vec<u8>, last: bool) -> Result<(), Problem> {
    let step = rs::drain(gap, pending, last).map_err(Problem::from)?;
    pending.drain(..step.consumed as usize);
    *gap = step.gap;
    if !last && pending.len() > 2 * DRAIN_CHUNK + (1 << 20) {
        return Err(Problem::internal("drain step made no progress"));
    }
    Ok(())
}

/// `POST /v1/sanitize-json`: the JSON twin request in, its response out.
fn sanitize_json(request: &IncomingRequest) -> Result<Answer, Problem> {
    let mut body = Body::open(request)?;
    let mut bytes = Vec::new();
    loop {
        let chunk = body.read(READ_CHUNK)?;
        if chunk.is_empty() {
            break;
        }
        bytes.extend_from_slice(&chunk);
        if bytes.len() > TWIN_LIMIT {
            return Err(Problem::too_large(format!("JSON twin request larger than {TWIN_LIMIT} bytes")));
        }
    }
    drop(body);
    let text = String::from_utf8(bytes).map_err(|_| Problem::bad_request("the JSON twin request is not UTF-8"))?;
    let response = rs::sanitize_json(&text);
    // The twin's own error shape becomes a problem; its success is passed
    // on as it is, byte for byte.
    let v: serde_json::Value =
        serde_json::from_str(&response).map_err(|_| Problem::internal("the pipeline returned invalid JSON"))?;
    if let Some(err) = v.get("Err") {
        return Err(Problem::from_twin(err));
    }
    let is_error = v.pointer("/Ok/is_error").and_then(|b| b.as_bool()).unwrap_or(false);
    let mut body = response.into_bytes();
    body.push(b'\n');
    Ok(Answer { body, is_error })
}

/// A redaction streamed from the request body to the response body.
struct Redaction {
    body: Body,
    request: rs::RedactRequest,
}

fn redact(request: &IncomingRequest, query: &str) -> Result<Redaction, Problem> {
    let (content_type, untrusted) = options::parse_redact(query, &headers(request))?;
    let body = Body::open(request)?;
    let request = rs::RedactRequest {
        data: Vec::new(),
        last: false,
        content_type,
        sniff: false,
        untrusted,
        report: false,
        pii: false,
        pii_public_ip: false,
    };
    Ok(Redaction { body, request })
}

impl Redaction {
    /// Streams: the status line goes first, then each step's output as it
    /// is made. A failure after the first byte can only cut the stream
    /// (its body is not finished, so the client sees it broken, never as
    /// complete).
    fn run(mut self, out: ResponseOutparam) {
        // The first step before the status: an error in it (bad options
        // show here) is still a problem document.
        let first = match self.step() {
            Ok(o) => o,
            Err(p) => return respond(out, p.status, "application/problem+json", p.to_json().as_bytes(), &[]),
        };
        let Some((response, body)) = start(200, "application/octet-stream", &[]) else { return };
        ResponseOutparam::set(out, Ok(response));
        let Ok(stream) = body.write() else { return };
        let mut chunk = Some(first);
        while let Some(bytes) = chunk.take() {
            if write_all(&stream, &bytes).is_err() {
                return;
            }
            if self.request.last {
                break;
            }
            match self.step() {
                Ok(o) => chunk = Some(o),
                Err(_) => return,
            }
        }
        if stream.blocking_flush().is_err() {
            return;
        }
        drop(stream);
        let _ = OutgoingBody::finish(body, None);
    }

    /// Reads up to a chunk more and redacts: the output of this step.
    fn step(&mut self) -> Result<Vec<u8>, Problem> {
        let mut filled = 0;
        while filled < REDACT_CHUNK {
            let b = self.body.read(REDACT_CHUNK - filled)?;
            if b.is_empty() {
                self.request.last = true;
                break;
            }
            filled += b.len();
            self.request.data.extend_from_slice(&b);
        }
        let resp = rs::redact(&self.request).map_err(Problem::from)?;
        self.request.data.drain(..resp.consumed as usize);
        if !self.request.last && self.request.data.len() > REDACT_CHUNK + (1 << 20) {
            return Err(Problem::internal("redact step made no progress"));
        }
        Ok(resp.output)
    }
}

fn start(status: u16, content_type: &str, extra: &[(String, Vec<u8>)]) -> Option<(OutgoingResponse, OutgoingBody)> {
    let mut list = vec![("content-type".to_string(), content_type.as_bytes().to_vec())];
    list.extend_from_slice(extra);
    let headers = Fields::from_list(&list).ok()?;
    let response = OutgoingResponse::new(headers);
    response.set_status_code(status).ok()?;
    let body = response.body().ok()?;
    Some((response, body))
}

fn respond(out: ResponseOutparam, status: u16, content_type: &str, bytes: &[u8], extra: &[(String, Vec<u8>)]) {
    let Some((response, body)) = start(status, content_type, extra) else { return };
    ResponseOutparam::set(out, Ok(response));
    let Ok(stream) = body.write() else { return };
    if write_all(&stream, bytes).is_err() || stream.blocking_flush().is_err() {
        return;
    }
    drop(stream);
    let _ = OutgoingBody::finish(body, None);
}

/// Writes all of `data`, as much at a time as the stream permits.
fn write_all(stream: &OutputStream, mut data: &[u8]) -> Result<(), StreamError> {
    while !data.is_empty() {
        let n = stream.check_write()? as usize;
        if n == 0 {
            stream.subscribe().block();
            continue;
        }
        let k = n.min(data.len());
        stream.write(&data[..k])?;
        data = &data[k..];
    }
    Ok(())
}

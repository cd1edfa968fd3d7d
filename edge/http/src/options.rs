//! Options from the query string and `x-sanitize-*` headers, and problem
//! documents.
//!
//! Each option is the CLI flag of the same name without its dashes
//! (`max-tokens=400` or `x-sanitize-max-tokens: 400`); enum values are the
//! CLI's (`format=openai`, `encoding=cl100k_base`), so the pipeline's own
//! names pass through. An option given twice, an unknown one or a bad
//! value is an `invalid options` problem, as the pipeline's own refusals.

use crate::bindings::result_sanitizer::core::result_sanitizer as rs;

/// The prefix of an option given as a header.
const HEADER_PREFIX: &str = "x-sanitize-";

/// Default for how much of a body is read (the CLI's `--drain-limit`).
const DEFAULT_DRAIN_LIMIT: u64 = 1 << 30;

/// A parsed `POST /v1/sanitize`.
pub struct Request {
    pub options: rs::Options,
    pub drain_limit: u64,
}

/// `(name, value)` pairs from the query, then from the headers; a name
/// given twice is refused.
fn pairs(query: &str, headers: &[(String, Vec<u8>)]) -> Result<Vec<(String, String)>, Problem> {
    let mut out: Vec<(String, String)> = Vec::new();
    let from_query = query.split('&').filter(|p| !p.is_empty()).map(|p| {
        let (k, v) = p.split_once('=').unwrap_or((p, ""));
        (percent_decode(k), percent_decode(v))
    });
    let from_headers = headers.iter().filter_map(|(k, v)| {
        let k = k.to_ascii_lowercase();
        let name = k.strip_prefix(HEADER_PREFIX)?.to_string();
        Some((Ok::<String, ()>(name), String::from_utf8(v.clone()).map_err(|_| ())))
    });
    for (k, v) in from_query.chain(from_headers) {
        let k = k.map_err(|_| Problem::options("an option name is not UTF-8"))?;
        let v = v.map_err(|_| Problem::options(format!("{k}: the value is not UTF-8")))?;
        if out.iter().any(|(n, _)| *n == k) {
            return Err(Problem::options(format!("option `{k}` given twice")));
        }
        out.push((k, v));
    }
    Ok(out)
}

fn percent_decode(s: &str) -> Result<String, ()> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = std::str::from_utf8(b.get(i + 1..i + 3).ok_or(())?).map_err(|_| ())?;
                out.push(u8::from_str_radix(hex, 16).map_err(|_| ())?);
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).map_err(|_| ())
}

fn number<T: std::str::FromStr>(name: &str, v: &str) -> Result<T, Problem> {
    v.parse().map_err(|_| Problem::options(format!("{name}: expected an unsigned integer")))
}

/// A flag: present without a value, `true` or `1` is on; `false` or `0` off.
fn flag(name: &str, v: &str) -> Result<bool, Problem> {
    match v {
        "" | "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        _ => Err(Problem::options(format!("{name}: expected true or false"))),
    }
}

fn choice<T: Copy>(name: &str, v: &str, cases: &[(&str, T)]) -> Result<T, Problem> {
    cases.iter().find(|(n, _)| *n == v).map(|(_, c)| *c).ok_or_else(|| {
        let names: Vec<&str> = cases.iter().map(|(n, _)| *n).collect();
        Problem::options(format!("{name}: expected one of {}", names.join(", ")))
    })
}

impl Request {
    pub fn parse(query: &str, headers: &[(String, Vec<u8>)]) -> Result<Request, Problem> {
        let mut o = rs::Options {
            tool: String::new(),
            call_id: String::new(),
            format: rs::OutputFormat::Mcp,
            input: rs::InputKind::Raw,
            max_bytes: None,
            max_chars: None,
            head_chars: None,
            tail_chars: None,
            max_tokens: None,
            encoding: rs::Encoding::O200kBase,
            untrusted: false,
            content_type: None,
            tool_error: None,
            lenient: false,
            total_bytes: None,
            markup_bytes: None,
            recall_bytes: None,
            recall_tool: None,
            slice: None,
            report_key: None,
            // A request body is a stream: nothing of it is kept, so an
            // omitted part cannot be read back (as the CLI's stdin).
            source: rs::OutputSource::Pipe,
            gap: None,
            pii: false,
            pii_public_ip: false,
            file_name: None,
            structured_fit: rs::StructuredFit::Marked,
        };
        let mut drain_limit = DEFAULT_DRAIN_LIMIT;
        let (mut exit_status, mut error_code, mut error_message) = (None::<i64>, None, None);
        for (k, v) in pairs(query, headers)? {
            let v = v.as_str();
            match k.as_str() {
                "tool" => o.tool = v.into(),
                "call-id" => o.call_id = v.into(),
                "format" => {
                    o.format = choice(
                        &k,
                        v,
                        &[
                            ("mcp", rs::OutputFormat::Mcp),
                            ("openai", rs::OutputFormat::Openai),
                            ("anthropic", rs::OutputFormat::Anthropic),
                        ],
                    )?
                }
                "input" => o.input = choice(&k, v, &[("raw", rs::InputKind::Raw), ("mcp", rs::InputKind::Mcp)])?,
                "encoding" => {
                    o.encoding = choice(
                        &k,
                        v,
                        &[("o200k_base", rs::Encoding::O200kBase), ("cl100k_base", rs::Encoding::Cl100kBase)],
                    )?
                }
                "max-bytes" => o.max_bytes = Some(number(&k, v)?),
                "max-chars" => o.max_chars = Some(number(&k, v)?),
                "head-chars" => o.head_chars = Some(number(&k, v)?),
                "tail-chars" => o.tail_chars = Some(number(&k, v)?),
                "max-tokens" => o.max_tokens = Some(number(&k, v)?),
                "untrusted" => o.untrusted = flag(&k, v)?,
                "lenient" => o.lenient = flag(&k, v)?,
                "pii" => o.pii = flag(&k, v)?,
                "pii-public-ip" => o.pii_public_ip = flag(&k, v)?,
                "content-type" => o.content_type = Some(v.into()),
                "file-name" => o.file_name = Some(v.into()),
                "structured-fit" => {
                    o.structured_fit = choice(
                        &k,
                        v,
                        &[
                            ("marked", rs::StructuredFit::Marked),
                            ("schema", rs::StructuredFit::Schema),
                            ("omitted", rs::StructuredFit::Omitted),
                        ],
                    )?
                }
                "drain-limit" => drain_limit = number(&k, v)?,
                "exit-status" => {
                    exit_status = Some(v.parse().map_err(|_| Problem::options(format!("{k}: expected an integer")))?)
                }
                "error-code" => error_code = Some(v.to_string()),
                "error-message" => error_message = Some(v.to_string()),
                _ => return Err(Problem::options(format!("unknown option `{k}`"))),
            }
        }
        // A tool error as `run` reports a command's (`exit-status`), or as
        // the caller names it (`error-code`, `error-message`).
        o.tool_error = match (exit_status, error_code) {
            (Some(_), Some(_)) => return Err(Problem::options("exit-status and error-code both given")),
            (Some(0), None) => None,
            (Some(c), None) => Some(rs::ToolError {
                code: format!("exit-status-{c}"),
                message: error_message.unwrap_or_else(|| format!("command exited with status {c}")),
            }),
            (None, Some(code)) => Some(rs::ToolError { code, message: error_message.unwrap_or_default() }),
            (None, None) if error_message.is_some() => {
                return Err(Problem::options("error-message needs error-code or exit-status"))
            }
            (None, None) => None,
        };
        Ok(Request { options: o, drain_limit })
    }
}

/// Options of `POST /v1/redact`: `content-type` and `untrusted`.
pub fn parse_redact(query: &str, headers: &[(String, Vec<u8>)]) -> Result<(Option<String>, bool), Problem> {
    let (mut content_type, mut untrusted) = (None, false);
    for (k, v) in pairs(query, headers)? {
        match k.as_str() {
            "content-type" => content_type = Some(v),
            "untrusted" => untrusted = flag(&k, &v)?,
            _ => return Err(Problem::options(format!("unknown option `{k}`"))),
        }
    }
    Ok((content_type, untrusted))
}

/// An RFC 9457 problem document. `kind` is the twin's error case
/// (`invalid_options`, ...) or the HTTP layer's own; `title` the words the
/// CLI prints before the message; `detail` never quotes the input.
pub struct Problem {
    pub status: u16,
    kind: &'static str,
    title: &'static str,
    detail: String,
}

impl Problem {
    fn new(status: u16, kind: &'static str, title: &'static str, detail: impl Into<String>) -> Problem {
        Problem { status, kind, title, detail: detail.into() }
    }
    pub fn options(detail: impl Into<String>) -> Problem {
        Problem::new(400, "invalid_options", "invalid options", detail)
    }
    pub fn too_large(detail: impl Into<String>) -> Problem {
        Problem::new(413, "invalid_input", "invalid input", detail)
    }
    pub fn bad_request(detail: impl Into<String>) -> Problem {
        Problem::new(400, "bad_request", "bad request", detail)
    }
    pub fn not_found(path: &str) -> Problem {
        let shown: String = path.chars().take(100).collect();
        Problem::new(404, "not_found", "not found", format!("no route {shown}"))
    }
    pub fn method(m: String) -> Problem {
        Problem::new(405, "method_not_allowed", "method not allowed", format!("{m} is not served here"))
    }
    pub fn internal(detail: impl Into<String>) -> Problem {
        Problem::new(500, "internal", "internal error", detail)
    }

    /// The twin's `{"invalid_options": "..."}` (the value of its `Err`).
    pub fn from_twin(err: &serde_json::Value) -> Problem {
        let (kind, msg) = err
            .as_object()
            .and_then(|o| o.iter().next())
            .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or("").to_string()))
            .unwrap_or(("", String::new()));
        match kind {
            "invalid_options" => Problem::options(msg),
            "invalid_input" => Problem::new(422, "invalid_input", "invalid input", msg),
            "invalid_pack" => Problem::new(500, "invalid_pack", "invalid rule pack", msg),
            _ => Problem::internal("the pipeline returned an unknown error"),
        }
    }

    /// The document, members in a fixed order (the Worker writes the same
    /// bytes).
    pub fn to_json(&self) -> String {
        let q = |s: &str| serde_json::Value::from(s).to_string();
        format!(
            "{{\"type\":{},\"title\":{},\"status\":{},\"detail\":{},\"kind\":{}}}\n",
            q(&format!("urn:result-sanitizer:problem:{}", self.kind)),
            q(self.title),
            self.status,
            q(&self.detail),
            q(self.kind)
        )
    }
}

impl From<rs::SanitizeError> for Problem {
    fn from(e: rs::SanitizeError) -> Problem {
        match e {
            rs::SanitizeError::InvalidOptions(m) => Problem::options(m),
            rs::SanitizeError::InvalidInput(m) => Problem::new(422, "invalid_input", "invalid input", m),
            rs::SanitizeError::InvalidPack(m) => Problem::new(500, "invalid_pack", "invalid rule pack", m),
        }
    }
}

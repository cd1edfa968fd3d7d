//! `result-sanitizer mcp`: a proxy between any MCP client and any MCP server.
//!
//! # Model
//!
//! The proxy sits on the JSON-RPC stream between one client and one
//! server and changes only what a model would read:
//!
//! * **Sanitized**: the result of every `tools/call` (every content block,
//!   `structuredContent`, `isError`) goes through the pipeline exactly as
//!   `result-sanitizer sanitize --input mcp --tool NAME` would take it, the
//!   tool name taken from the request with the same id; and every text
//!   item of a `resources/read` result, as raw output (its content type
//!   from its `mimeType` or its URI's file name), and of every message of
//!   a `prompts/get` result ([`prompts`]). Budgets are the pack's
//!   per-tool ones under the config file's ([`config`]), capped by the
//!   client's profile ([`profiles`]). A tool that declares an
//!   `outputSchema` gets a `structuredContent` that still validates
//!   against it, or none, with a note saying why (`schemas.rs`).
//! * **Refused**: a `tools/call` whose arguments hold a redaction
//!   placeholder or a truncation marker ([`guard`]).
//! * **Added**: when recall is on, results are kept in the host's
//!   [`OutputStore`](result_sanitizer_host::recall::OutputStore) (per session, TTL, size
//!   bound) and one tool is appended to the last page of `tools/list`
//!   (`read_truncated_output` unless configured; renamed deterministically
//!   if the server has a tool of that name). The proxy answers it itself,
//!   through [`Sanitizer::recall`], so a slice is redacted and budgeted
//!   like the result it comes from.
//! * **Passed through byte for byte**: everything else: `initialize`,
//!   requests from the server (sampling, elicitation, roots), the
//!   client's answers to them, notifications (progress, `list_changed`,
//!   cancelled), unknown methods, and ids of any JSON type.
//!
//! # Failures
//!
//! Nothing the server returned reaches the client raw. A line that is
//! not JSON is repaired (bad UTF-8, lone surrogate escapes) or withheld;
//! an error response has its strings redacted. A result the
//! pipeline refuses becomes an `isError: true` result that says why (the
//! error names no content). A message over the line cap is never held
//! whole: a result becomes an `isError` result saying it was withheld,
//! another response a JSON-RPC error, when its id can be found in its
//! first or last bytes; else it is dropped and logged. When the server
//! exits, every request still pending gets a JSON-RPC error at once and
//! the proxy exits; when the client closes stdin, the server's stdin is
//! closed and its process group stopped.
//!
//! # Files
//!
//! | file | job |
//! |---|---|
//! | `mod.rs` | the [`Proxy`]: sanitizer, pack, options, store |
//! | `config.rs` | the config file (TOML): per-tool options, recall |
//! | `guard.rs` | calls whose arguments hold a placeholder: refused |
//! | `prompts.rs` | `prompts/get` results: their texts sanitized |
//! | `profiles.rs` | budgets by the client's name (`clientInfo.name`) |
//! | `schemas.rs` | tools' `outputSchema`: structured content that still validates |
//! | `telemetry.rs` | per-tool metrics (Prometheus `/metrics`) and OTLP traces and metrics |
//! | `session.rs` | one client's stream: what each message becomes |
//! | `lines.rs` | newline-delimited messages read under a cap |
//! | `stdio.rs` | the stdio transport: the server as a child process |
//! | `http.rs` | the Streamable HTTP transport: sessions, each with its server |
//! | `upstream.rs` | the server end: a command, or an HTTP server as if it were one |

pub mod config;
pub mod guard;
pub mod http;
mod lines;
mod peek;
pub mod profiles;
pub mod prompts;
mod rpc;
mod schemas;
pub mod session;
pub mod stdio;
pub mod telemetry;
pub mod upstream;

use std::sync::Arc;

use result_sanitizer_host::api::Options;
use result_sanitizer_host::engine::{LoadedPack, Sanitizer};
use result_sanitizer_host::recall::OutputStore;

pub use config::ProxyConfig;
pub use lines::{read_line_capped, Line};
pub use session::Session;
pub use upstream::Upstream;

/// Default cap on one JSON-RPC message, either way: the pipeline's MCP
/// input bound (64 MiB), which it would refuse above anyway.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 64 << 20;

/// What every session of one proxy shares.
pub struct Proxy {
    pub(crate) sanitizer: Arc<Sanitizer>,
    pub(crate) pack: Arc<LoadedPack>,
    pub(crate) base: Options,
    pub(crate) config: ProxyConfig,
    pub(crate) store: OutputStore,
    pub(crate) max_message_bytes: usize,
    /// Call ids of kept results, unique over the proxy's sessions.
    pub(crate) next_call: std::sync::atomic::AtomicU64,
    /// A random part of every call id, so that ids are unique over the
    /// replicas sharing a store too.
    pub(crate) call_prefix: String,
    /// The shared store's key (Redis): session ids are tagged with it.
    pub(crate) shared_key: Option<Arc<result_sanitizer_host::recall::StoreKey>>,
    /// Tool calls refused for a placeholder in their arguments.
    pub(crate) placeholder_refusals: std::sync::atomic::AtomicU64,
    /// What it did to each tool's results, exported ([`telemetry`]).
    pub(crate) telemetry: telemetry::Telemetry,
}

impl Proxy {
    /// A proxy sanitizing with `pack`; `base` holds the flags' options
    /// (format and input are set per message), `config` the file's.
    pub fn new(
        sanitizer: Arc<Sanitizer>,
        pack: Arc<LoadedPack>,
        base: Options,
        config: ProxyConfig,
        max_message_bytes: usize,
    ) -> result_sanitizer_host::Result<Self> {
        let store_config = config.recall.store()?;
        let shared_key = store_config.redis.as_ref().map(|r| r.key.clone());
        let store = OutputStore::new(store_config)?;
        let call_prefix =
            result_sanitizer_host::report::random_key()?[..6].iter().map(|b| format!("{b:02x}")).collect();
        Ok(Self {
            sanitizer,
            pack,
            base,
            config,
            store,
            max_message_bytes,
            next_call: 1.into(),
            call_prefix,
            shared_key,
            placeholder_refusals: 0.into(),
            telemetry: telemetry::Telemetry::new(None).expect("no exporter to set up"),
        })
    }

    /// The proxy with `telemetry` (an OTLP exporter, say) in place of the
    /// Prometheus-only default.
    pub fn with_telemetry(mut self, telemetry: telemetry::Telemetry) -> Self {
        self.telemetry = telemetry;
        self
    }

    /// Its telemetry (for `/metrics`, and to flush OTLP at exit).
    pub fn telemetry(&self) -> &telemetry::Telemetry {
        &self.telemetry
    }

    /// The configuration in force.
    pub fn config(&self) -> &ProxyConfig {
        &self.config
    }

    /// Tool calls refused so far because their arguments held a
    /// placeholder or a marker ([`guard`]).
    pub fn placeholder_refusals(&self) -> u64 {
        self.placeholder_refusals.load(std::sync::atomic::Ordering::Relaxed)
    }
}

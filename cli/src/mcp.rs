//! `mcp`: the MCP proxy in front of a server command or an HTTP upstream,
//! over stdio or Streamable HTTP (`result-sanitizer-mcp`).

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;

use result_sanitizer_host::api::InputKind;
use result_sanitizer_host::{default_options, Error};

use crate::flags::{BudgetOpts, LimitOpts, PackOpts};
use crate::open::{open, read_file};

#[derive(Args)]
pub(crate) struct McpOpts {
    /// Config file (TOML): per-tool options and recall (docs/mcp-proxy.md).
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) budget: BudgetOpts,
    /// Do not keep results nor add the recall tool.
    #[arg(long)]
    pub(crate) no_recall: bool,
    /// Name of the added recall tool (default read_truncated_output).
    #[arg(long)]
    pub(crate) recall_tool: Option<String>,
    /// Where kept results go: memory (the default) or
    /// redis://HOST:PORT[/DB], shared by replicas, sealed with the key of
    /// --recall-key-file or RESULT_SANITIZER_RECALL_KEY.
    #[arg(long, value_name = "memory|URL")]
    pub(crate) recall_store: Option<String>,
    /// The shared recall store's key: a file of at least 32 bytes (e.g.
    /// `openssl rand -hex 32`).
    #[arg(long, value_name = "FILE")]
    pub(crate) recall_key_file: Option<PathBuf>,
    /// A tools/call whose arguments hold a [REDACTED:...] placeholder or a
    /// [truncated: ...] marker: refuse (answer it with an error result; the
    /// default) or pass.
    #[arg(long, value_name = "refuse|pass", value_parser = ["refuse", "pass"])]
    pub(crate) placeholder_arguments: Option<String>,
    /// Serve the Streamable HTTP transport at http://ADDR/mcp (e.g.
    /// 127.0.0.1:8808) instead of stdio; each session runs its own server.
    #[arg(long, value_name = "ADDR")]
    pub(crate) listen: Option<String>,
    /// With --listen: most sessions open at once (each runs a server); a
    /// new one past that gets 503 until one ends.
    #[arg(long, value_name = "N", default_value_t = result_sanitizer_mcp::http::DEFAULT_MAX_SESSIONS,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_sessions: u32,
    /// With --listen: a session no request has used for this many seconds
    /// (none in progress, no stream open) ends as if deleted; 0: never.
    #[arg(long, value_name = "SECS", default_value_t = result_sanitizer_mcp::http::DEFAULT_SESSION_IDLE_SECS)]
    pub(crate) session_idle: u64,
    /// The MCP server is this Streamable HTTP endpoint (http:// or
    /// https://) instead of a command.
    #[arg(long, value_name = "URL")]
    pub(crate) upstream: Option<String>,
    /// Export OpenTelemetry traces and metrics over OTLP/HTTP (protobuf)
    /// to this collector (its base URL: `URL/v1/traces`, `URL/v1/metrics`);
    /// default: `OTEL_EXPORTER_OTLP_ENDPOINT` when set, else none.
    #[arg(long, value_name = "URL")]
    pub(crate) otlp_endpoint: Option<String>,
    /// Largest JSON-RPC message read, either way, in bytes.
    #[arg(long, default_value_t = result_sanitizer_mcp::DEFAULT_MAX_MESSAGE_BYTES)]
    pub(crate) max_message_bytes: usize,
    #[command(flatten)]
    pub(crate) packs: PackOpts,
    #[command(flatten)]
    pub(crate) limits: LimitOpts,
}

pub(crate) fn mcp(mo: &McpOpts, command: &[String]) -> Result<i32, Error> {
    use result_sanitizer_mcp::{stdio, Proxy, ProxyConfig, Upstream};
    let mut config = match &mo.config {
        Some(p) => {
            let text = String::from_utf8(read_file(p)?)
                .map_err(|_| Error::InvalidOptions(format!("{}: not UTF-8", p.display())))?;
            ProxyConfig::parse(&p.display().to_string(), &text)?
        }
        None => ProxyConfig::default(),
    };
    if mo.no_recall {
        config.recall.enabled = false;
    }
    if let Some(name) = &mo.recall_tool {
        result_sanitizer_mcp::config::check_tool_name(name)
            .map_err(|e| Error::InvalidOptions(format!("--recall-tool {e}")))?;
        config.recall.tool = name.clone();
    }
    if let Some(url) = &mo.recall_store {
        config.recall.store = Some(url.clone());
    }
    if let Some(p) = &mo.recall_key_file {
        config.recall.key_file = Some(p.clone());
    }
    if let Some(p) = &mo.placeholder_arguments {
        config.guard.placeholder_arguments = p.parse().map_err(Error::InvalidOptions)?;
    }
    let (s, loaded) = open(mo.limits.limits(), &mo.packs)?;
    let pack = loaded.unwrap_or_else(|| s.default_pack().clone());
    let mut base = default_options();
    mo.budget.apply(&mut base);
    // Options a pack or the file makes invalid fail here, not per result.
    for tool in std::iter::once("").chain(config.tools.keys().map(String::as_str)) {
        let mut o = config.options_for(&base, tool);
        o.input = InputKind::Mcp;
        s.effective_budget(&pack, &o)?;
    }
    for (id, p) in config.clients.table() {
        let mut o = config.options_for(&base, "");
        o.input = InputKind::Mcp;
        o.max_chars = p.max_chars.or(o.max_chars);
        o.max_tokens = p.max_tokens.or(o.max_tokens);
        s.effective_budget(&pack, &o).map_err(|e| match e {
            Error::InvalidOptions(m) => Error::InvalidOptions(format!("clients.profiles.{id}: {m}")),
            e => e,
        })?;
    }
    let otlp = mo.otlp_endpoint.clone().or_else(|| std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT").ok());
    let telemetry = result_sanitizer_mcp::telemetry::Telemetry::new(otlp.as_deref()).map_err(Error::InvalidOptions)?;
    let proxy = Arc::new(Proxy::new(s, pack, base, config, mo.max_message_bytes)?.with_telemetry(telemetry));
    let upstream = match &mo.upstream {
        Some(url) => Upstream::Url(url.clone()),
        None => Upstream::Command(command.to_vec()),
    };
    let code = match &mo.listen {
        Some(addr) => {
            let limits = result_sanitizer_mcp::http::SessionLimits {
                max_sessions: mo.max_sessions as usize,
                idle: (mo.session_idle > 0).then(|| std::time::Duration::from_secs(mo.session_idle)),
            };
            result_sanitizer_mcp::http::run(proxy.clone(), addr, &upstream, limits)
        }
        None => stdio::run(proxy.clone(), &upstream),
    };
    // What OTLP batched goes out before the process ends.
    proxy.telemetry().shutdown();
    code
}

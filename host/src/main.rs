//! `result-sanitizer`: the CLI over the reference host.
//!
//! Every subcommand prints its result on stdout; on failure it prints one
//! line on stderr and exits non-zero. `sanitize` and `run` exit 0 whenever
//! a message was produced, including `isError` results.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use clap::{Args, Parser, Subcommand, ValueEnum};

use result_sanitizer::api::{self, Encoding, InputKind, Options, OutputFormat, OutputSource, ToolError};
use result_sanitizer::io::{
    read_capped, read_file_head_tail, read_head_tail, redact_stream, run_head_tail, StreamOptions, DEFAULT_DRAIN_LIMIT,
    SCAN_BOUND,
};
use result_sanitizer::pack_build::RulesFile;
use result_sanitizer::report::Report;
use std::sync::Arc;

use result_sanitizer::registry::{Registry, RegistryConfig};
use result_sanitizer::signing::{self, PublicKey, SecretKey, TrustPolicy};
use result_sanitizer::{default_options, Error, Limits, LoadedPack, Sanitizer};

/// `println!` that returns the error: when the reader of stdout has gone
/// (`| head`), `main` ends quietly instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {
        writeln!(io::stdout().lock(), $($arg)*)
    };
}

#[derive(Parser)]
#[command(name = "result-sanitizer", version, about = "Bound, redact and wrap tool output before it reaches a model.")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Sanitize one tool result (raw output or an MCP CallToolResult) into a tool message.
    Sanitize {
        /// Input file; `-` or nothing reads stdin.
        file: Option<PathBuf>,
        #[command(flatten)]
        opts: SanitizeOpts,
    },
    /// Sanitize the results of one round of parallel tool calls under a shared token
    /// budget; prints a JSON array of messages, in the order of the files.
    SanitizeRound {
        /// Result files; each file's tool name is its file stem (per-tool budgets, priorities).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Token budget of the whole round.
        #[arg(long)]
        round_tokens: u32,
        /// Tokens guaranteed to each result (lowered to an equal split when the round is smaller).
        #[arg(long, default_value_t = 1000)]
        min_tokens: u32,
        /// Priority (weight) of a tool, TOOL=WEIGHT; repeat for several. Default 1.
        #[arg(long = "priority", value_parser = parse_priority)]
        priorities: Vec<(String, u32)>,
        #[command(flatten)]
        opts: SanitizeOpts,
    },
    /// Redact secrets from a stream, in constant memory: no budget, no wrapping.
    Redact {
        /// Input file; `-` or nothing reads stdin.
        file: Option<PathBuf>,
        /// Content type of the input (e.g. text/x-python: source code, where
        /// generic rules look only inside string literals); for a FILE of
        /// source code it comes from the file name.
        #[arg(long)]
        content_type: Option<String>,
        /// Write one JSON line per replacement to this file: rule id, line,
        /// column, offset, length and a keyed hash of the value (never the
        /// value).
        #[arg(long)]
        report: Option<PathBuf>,
        /// Content from an untrusted source: `result-sanitizer:allow`
        /// markers on a line are ignored.
        #[arg(long)]
        untrusted: bool,
        /// Without a content type (stdin, a file whose name says none):
        /// judge the input from its first 16 KiB, as `sanitize` does
        /// (source code, a test's code, or text), and redact all of it so.
        #[arg(long, conflicts_with = "content_type")]
        sniff: bool,
        #[command(flatten)]
        pii: PiiOpts,
        #[command(flatten)]
        packs: PackOpts,
        #[command(flatten)]
        limits: LimitOpts,
    },
    /// Run a command, capture stdout and stderr under the byte cap, print the sanitized message.
    Run {
        #[command(flatten)]
        opts: SanitizeOpts,
        /// Stop the command (its whole process group) after this long:
        /// seconds (`30`, `0.5`) or a duration (`2m`, `1500ms`). The
        /// message is then a tool error that says so, with the output
        /// printed until then.
        #[arg(long, value_parser = parse_timeout)]
        timeout: Option<std::time::Duration>,
        /// The command and its arguments (after `--`).
        #[arg(required = true, last = true)]
        command: Vec<String>,
    },
    /// Run an MCP server behind the proxy: its tool results (and resources)
    /// sanitized, everything else passed through (docs/mcp-proxy.md).
    Mcp {
        #[command(flatten)]
        opts: McpOpts,
        /// The MCP server command and its arguments (after `--`, or after
        /// the proxy's own options: launchers that drop `--` work too).
        #[arg(
            required_unless_present = "upstream",
            conflicts_with = "upstream",
            trailing_var_arg = true,
            allow_hyphen_values = true
        )]
        command: Vec<String>,
    },
    /// Generate an Ed25519 key pair for signing packs: PREFIX.key and PREFIX.pub.
    Keygen {
        /// Output prefix.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Rule packs.
    Pack {
        #[command(subcommand)]
        cmd: PackCmd,
    },
}

#[derive(Subcommand)]
enum PackCmd {
    /// Build a pack component from a rules file (no Rust toolchain needed).
    Build {
        /// Rules file (TOML), or a directory of them (joined in name order).
        rules: PathBuf,
        /// Pack name (default: [pack].name).
        #[arg(long)]
        name: Option<String>,
        /// Pack version (default: [pack].version).
        #[arg(long)]
        version: Option<String>,
        /// Tenant scope, `*` for any (default: [pack].tenant).
        #[arg(long)]
        tenant: Option<String>,
        /// Build from this file alone, without the default rules underneath.
        #[arg(long)]
        no_defaults: bool,
        /// Output file.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Turn a core module built from the Rust pack template into a pack component.
    Wrap {
        /// Core wasm module (wit-bindgen, world `pack`).
        core: PathBuf,
        /// Output file.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Sign a pack (Ed25519 over the wasm bytes and its manifest), embedding the signature.
    Sign {
        /// Pack component.
        pack: PathBuf,
        /// Secret key file (PREFIX.key).
        #[arg(long)]
        key: PathBuf,
        /// Expiry, RFC 3339 (e.g. 2027-01-01T00:00:00Z).
        #[arg(long)]
        expires: Option<String>,
        /// Platform rule ids the pack may turn off (its rules file's
        /// `relax`); comma-separated or repeated. Only the platform's key
        /// should sign with this.
        #[arg(long = "may-relax", value_delimiter = ',')]
        may_relax: Vec<String>,
        /// Output file (default: sign in place).
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Verify a pack's signature, expiry, WIT version and tenant scope.
    Verify {
        /// Pack component.
        pack: PathBuf,
        /// Trusted public key (PREFIX.pub); repeat for several.
        #[arg(long = "trusted-key", required = true)]
        trusted_keys: Vec<PathBuf>,
        /// Tenant that will use it.
        #[arg(long)]
        tenant: Option<String>,
    },
    /// Check a rules file, or several joined (a directory: its *.toml files
    /// in name order): every regex compiles and every example holds; ids,
    /// regexes and rules that shadow others are reported.
    Check {
        /// Rules files (TOML) or directories of them, joined in this order.
        #[arg(required = true)]
        rules: Vec<PathBuf>,
    },
    /// Print a pack's manifest and sha256.
    Inspect {
        /// Pack component.
        pack: PathBuf,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Mcp,
    Openai,
    Anthropic,
}

#[derive(Clone, Copy, ValueEnum)]
enum Input {
    Raw,
    Mcp,
}

#[derive(Clone, Copy, ValueEnum)]
#[allow(non_camel_case_types)]
enum Enc {
    #[value(name = "o200k_base")]
    o200k_base,
    #[value(name = "cl100k_base")]
    cl100k_base,
}

#[derive(Args)]
struct LimitOpts {
    /// Fuel per call (about one unit per wasm instruction).
    #[arg(long, default_value_t = Limits::default().fuel)]
    fuel: u64,
    /// Wall-clock limit per call, milliseconds.
    #[arg(long, default_value_t = Limits::default().timeout.as_millis() as u64)]
    timeout_ms: u64,
    /// Pipeline memory cap, MiB.
    #[arg(long, default_value_t = (Limits::default().memory >> 20) as u64)]
    memory_mib: u64,
}

impl LimitOpts {
    fn limits(&self) -> Limits {
        Limits {
            fuel: self.fuel,
            timeout: std::time::Duration::from_millis(self.timeout_ms),
            memory: (self.memory_mib as usize) << 20,
            ..Limits::default()
        }
    }
}

#[derive(Args)]
struct SanitizeOpts {
    /// Tool name (per-tool budgets, boundary header).
    #[arg(long, default_value = "")]
    tool: String,
    /// Tool call id (OpenAI / Anthropic messages).
    #[arg(long, default_value = "")]
    call_id: String,
    /// Output message format.
    #[arg(long, value_enum, default_value = "mcp")]
    format: Format,
    /// Input kind.
    #[arg(long, value_enum, default_value = "raw")]
    input: Input,
    #[command(flatten)]
    budget: BudgetOpts,
    /// Content type of raw input (e.g. text/html, text/x-python); for a
    /// FILE of source code it comes from the file name.
    #[arg(long)]
    content_type: Option<String>,
    /// Say in the record where each redaction was made (`sites`: rule,
    /// byte span, line, column, and the value hashed under a key drawn
    /// for this call), never the value.
    #[arg(long)]
    report: bool,
    /// Stop reading an output after this many bytes (a producer that never
    /// ends); `run` then kills the command. Default 1 GiB.
    #[arg(long, default_value_t = DEFAULT_DRAIN_LIMIT)]
    drain_limit: u64,
    #[command(flatten)]
    packs: PackOpts,
    #[command(flatten)]
    limits: LimitOpts,
}

/// Budgets and modes shared by `sanitize`, `run` and `mcp` (for `mcp`,
/// every tool's, under its config file's per-tool entries).
#[derive(Args)]
struct BudgetOpts {
    /// Byte hard cap (default 262144).
    #[arg(long)]
    max_bytes: Option<u64>,
    /// Character budget (default 100000).
    #[arg(long)]
    max_chars: Option<u32>,
    /// Token budget (default 8000).
    #[arg(long)]
    max_tokens: Option<u32>,
    /// Tokenizer.
    #[arg(long, value_enum, default_value = "o200k_base")]
    encoding: Enc,
    /// Wrap the content in the untrusted-source boundary.
    #[arg(long)]
    untrusted: bool,
    /// Lenient (documentation) mode: generic rules off, provider formats on.
    #[arg(long)]
    lenient: bool,
    #[command(flatten)]
    pii: PiiOpts,
}

/// Personal data, for `sanitize`, `run`, `mcp` and `redact`.
#[derive(Args, Clone, Copy)]
struct PiiOpts {
    /// Redact personal data in successful results too: emails, phone
    /// numbers, payment cards, IBANs, US SSNs, private IP addresses, dates
    /// of birth (`[REDACTED:email]`, ...). Error results always have
    /// emails, phone numbers, cards, IBANs and SSNs redacted.
    #[arg(long)]
    pii: bool,
    /// With --pii: public IP addresses too.
    #[arg(long, requires = "pii")]
    pii_public_ip: bool,
}

impl BudgetOpts {
    fn apply(&self, o: &mut Options) {
        o.max_bytes = self.max_bytes;
        o.max_chars = self.max_chars;
        o.max_tokens = self.max_tokens;
        o.encoding = match self.encoding {
            Enc::o200k_base => Encoding::O200kBase,
            Enc::cl100k_base => Encoding::Cl100kBase,
        };
        o.untrusted = self.untrusted;
        o.lenient = self.lenient;
        o.pii = self.pii.pii;
        o.pii_public_ip = self.pii.pii_public_ip;
    }
}

#[derive(Args)]
struct McpOpts {
    /// Config file (TOML): per-tool options and recall (docs/mcp-proxy.md).
    #[arg(long)]
    config: Option<PathBuf>,
    #[command(flatten)]
    budget: BudgetOpts,
    /// Do not keep results nor add the recall tool.
    #[arg(long)]
    no_recall: bool,
    /// Name of the added recall tool (default read_truncated_output).
    #[arg(long)]
    recall_tool: Option<String>,
    /// A tools/call whose arguments hold a [REDACTED:...] placeholder or a
    /// [truncated: ...] marker: refuse (answer it with an error result; the
    /// default) or pass.
    #[arg(long, value_name = "refuse|pass", value_parser = ["refuse", "pass"])]
    placeholder_arguments: Option<String>,
    /// Serve the Streamable HTTP transport at http://ADDR/mcp (e.g.
    /// 127.0.0.1:8808) instead of stdio; each session runs its own server.
    #[arg(long, value_name = "ADDR")]
    listen: Option<String>,
    /// With --listen: most sessions open at once (each runs a server); a
    /// new one past that gets 503 until one ends.
    #[arg(long, value_name = "N", default_value_t = result_sanitizer::mcp::http::DEFAULT_MAX_SESSIONS,
          value_parser = clap::value_parser!(u32).range(1..))]
    max_sessions: u32,
    /// With --listen: a session no request has used for this many seconds
    /// (none in progress, no stream open) ends as if deleted; 0: never.
    #[arg(long, value_name = "SECS", default_value_t = result_sanitizer::mcp::http::DEFAULT_SESSION_IDLE_SECS)]
    session_idle: u64,
    /// The MCP server is this Streamable HTTP endpoint (http:// or
    /// https://) instead of a command.
    #[arg(long, value_name = "URL")]
    upstream: Option<String>,
    /// Largest JSON-RPC message read, either way, in bytes.
    #[arg(long, default_value_t = result_sanitizer::mcp::DEFAULT_MAX_MESSAGE_BYTES)]
    max_message_bytes: usize,
    #[command(flatten)]
    packs: PackOpts,
    #[command(flatten)]
    limits: LimitOpts,
}

#[derive(Args)]
struct PackOpts {
    /// Rule pack component (default: the embedded pack).
    #[arg(long, conflicts_with = "packs")]
    pack: Option<PathBuf>,
    /// Directory of tenant packs; the pack scoped to --tenant serves the call.
    #[arg(long, requires = "tenant")]
    packs: Option<PathBuf>,
    /// Tenant making the call.
    #[arg(long)]
    tenant: Option<String>,
    /// Trusted public key (PREFIX.pub); repeat for several (key rotation).
    #[arg(long = "trusted-key")]
    trusted_keys: Vec<PathBuf>,
    /// Accept an unsigned --pack (development only).
    #[arg(long)]
    allow_unsigned: bool,
    /// The platform's pack, whose rules apply whatever the tenant's pack
    /// says (default: the embedded pack). The operator's own file: no
    /// signature is required of it.
    #[arg(long)]
    platform_pack: Option<PathBuf>,
}

impl SanitizeOpts {
    fn options(&self) -> Options {
        let mut o = default_options();
        o.tool = self.tool.clone();
        o.call_id = self.call_id.clone();
        o.format = match self.format {
            Format::Mcp => OutputFormat::Mcp,
            Format::Openai => OutputFormat::Openai,
            Format::Anthropic => OutputFormat::Anthropic,
        };
        o.input = match self.input {
            Input::Raw => InputKind::Raw,
            Input::Mcp => InputKind::Mcp,
        };
        self.budget.apply(&mut o);
        o.content_type = self.content_type.clone();
        o.report_key = self.report.then(random_key);
        o
    }
}

/// Reads one input as the pipeline's budget says: raw output as head +
/// tail with the middle drained (`opts.gap`), MCP and HTML documents whole
/// under `read-bytes`. `len` is a file's size; a regular `file` is read by
/// offset ([`read_file_head_tail`]).
fn read_input(
    s: &Sanitizer,
    pack: &LoadedPack,
    opts: &mut Options,
    (reader, len, file): Opened,
    drain_limit: u64,
) -> Result<Vec<u8>, Error> {
    let b = s.effective_budget(pack, opts)?;
    opts.total_bytes = len;
    if let (Some(file), Some(len), true) = (&file, len, b.head_bytes > 0) {
        // A regular file: head and tail read by offset, the middle scanned
        // up to the bound.
        let ht = read_file_head_tail(s, pack, file, len, (b.head_bytes, b.tail_bytes), SCAN_BOUND)?;
        opts.gap = ht.gap;
        return Ok(ht.bytes);
    }
    if b.head_bytes > 0 {
        let ht = read_head_tail(s, pack, reader, b.head_bytes, b.tail_bytes, drain_limit)?;
        opts.gap = ht.gap;
        return Ok(ht.bytes);
    }
    let cap = b.read_bytes.saturating_sub(1);
    let input = read_capped(reader, cap)?;
    if opts.input == InputKind::Mcp && input.over {
        return Err(Error::InvalidInput(format!("MCP input larger than {cap} bytes")));
    }
    Ok(input.bytes)
}

/// The input: a reader, a regular file's size, and the file itself (read
/// by offset when long).
type Opened = (Box<dyn Read>, Option<u64>, Option<File>);

fn open_input(file: &Option<PathBuf>) -> io::Result<Opened> {
    match file {
        None => Ok((Box::new(io::stdin().lock()), None, None)),
        Some(p) if p.as_os_str() == "-" => Ok((Box::new(io::stdin().lock()), None, None)),
        Some(p) => {
            let f = File::open(p).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", p.display())))?;
            let len = f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
            let seekable = len.map(|_| f.try_clone()).transpose()?;
            Ok((Box::new(f), len, seekable))
        }
    }
}

/// A key for a report's hashes, fresh for each call, in hex.
fn random_key() -> String {
    let k = result_sanitizer::report::random_key().expect("the OS has randomness");
    k.iter().map(|b| format!("{b:02x}")).collect()
}

/// The content type a source file's name stands for (`.py`, `.rs`, ...).
fn content_type_of(file: &Option<PathBuf>) -> Option<String> {
    let name = file.as_ref()?.to_str()?;
    result_sanitizer_pipeline::content_type_for_path(name).map(str::to_string)
}

fn read_key(path: &Path) -> Result<PublicKey, Error> {
    let p = if path.exists() { path.to_path_buf() } else { PathBuf::from(format!("{}.pub", path.display())) };
    Ok(PublicKey::read(&p)?)
}

fn policy(po: &PackOpts) -> Result<TrustPolicy, Error> {
    let keys = po.trusted_keys.iter().map(|p| read_key(p)).collect::<Result<Vec<_>, _>>()?;
    Ok(TrustPolicy { keys, allow_unsigned: po.allow_unsigned })
}

fn cache_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|d| d.join("result-sanitizer"))
}

/// A sanitizer serving the flags' platform pack, and the tenant pack they
/// choose (`None`: the embedded default pack).
fn open(limits: Limits, po: &PackOpts) -> Result<(Arc<Sanitizer>, Option<Arc<LoadedPack>>), Error> {
    let mut s = Sanitizer::new(limits)?;
    if let Some(p) = &po.platform_pack {
        let platform = s.load_pack_unverified(&read_file(p)?)?;
        s.set_platform_pack(Arc::new(platform));
    }
    let s = Arc::new(s);
    let loaded = select_pack(&s, po)?;
    Ok((s, loaded))
}

/// The pack chosen by the flags; `None` is the embedded default pack.
fn select_pack(s: &Arc<Sanitizer>, po: &PackOpts) -> Result<Option<Arc<LoadedPack>>, Error> {
    if let Some(dir) = &po.packs {
        let tenant = po.tenant.as_deref().expect("clap requires --tenant");
        let cfg = RegistryConfig { dir: dir.clone(), policy: policy(po)?, cache_dir: cache_dir(), capacity: 16 };
        return Ok(Some(Registry::open(s.clone(), cfg)?.pack_for(tenant)?));
    }
    match &po.pack {
        None => Ok(None),
        Some(p) => {
            let bytes = read_file(p)?;
            Ok(Some(Arc::new(s.load_pack(&bytes, &policy(po)?, po.tenant.as_deref(), cache_dir().as_deref())?)))
        }
    }
}

fn sanitize(file: &Option<PathBuf>, so: &SanitizeOpts) -> Result<(), Error> {
    let (s, loaded) = open(so.limits.limits(), &so.packs)?;
    let pack = loaded.as_ref().unwrap_or(s.default_pack());
    let mut opts = so.options();
    opts.content_type = opts.content_type.or_else(|| content_type_of(file));
    let opened = open_input(file)?;
    // A regular file can be re-read by offset; stdin cannot.
    opts.source = if opened.1.is_some() { OutputSource::File } else { OutputSource::Pipe };
    let input = read_input(&s, pack, &mut opts, opened, so.drain_limit)?;
    let out = s.sanitize_with(pack, &input, &opts)?;
    outln!("{}", out.message)?;
    Ok(())
}

fn parse_priority(s: &str) -> Result<(String, u32), String> {
    let (tool, w) = s.split_once('=').ok_or("expected TOOL=WEIGHT")?;
    Ok((tool.to_string(), w.parse().map_err(|e| format!("weight: {e}"))?))
}

fn sanitize_round(
    files: &[PathBuf],
    round: api::RoundOptions,
    priorities: &[(String, u32)],
    so: &SanitizeOpts,
) -> Result<(), Error> {
    let (s, loaded) = open(so.limits.limits(), &so.packs)?;
    let pack = loaded.as_ref().unwrap_or(s.default_pack());
    let mut inputs = Vec::with_capacity(files.len());
    for f in files {
        let mut opts = so.options();
        opts.tool = f.file_stem().map(|x| x.to_string_lossy().into_owned()).unwrap_or_default();
        opts.call_id = opts.tool.clone();
        let opened = open_input(&Some(f.clone()))?;
        opts.source = if opened.1.is_some() { OutputSource::File } else { OutputSource::Pipe };
        let input = read_input(&s, pack, &mut opts, opened, so.drain_limit)?;
        let priority = priorities.iter().find(|(t, _)| *t == opts.tool).map_or(1, |(_, w)| *w);
        inputs.push(api::RoundInput { input, options: opts, priority });
    }
    let results = s.sanitize_round(pack, &inputs, &round)?;
    let out: Vec<serde_json::Value> = results
        .into_iter()
        .map(|r| match r {
            Ok(m) => serde_json::from_str(&m.message).expect("validated JSON"),
            Err(e) => serde_json::json!({ "error": e.to_string() }),
        })
        .collect();
    outln!("{}", serde_json::to_string(&out).expect("serializes"))?;
    Ok(())
}

/// Seconds, or a humantime duration.
fn parse_timeout(s: &str) -> Result<std::time::Duration, String> {
    match s.parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs > 0.0 => Ok(std::time::Duration::from_secs_f64(secs)),
        Ok(_) => Err("the timeout must be above 0".into()),
        Err(_) => humantime::parse_duration(s).map_err(|e| e.to_string()),
    }
}

fn run(so: &SanitizeOpts, timeout: Option<std::time::Duration>, command: &[String]) -> Result<(), Error> {
    let (s, loaded) = open(so.limits.limits(), &so.packs)?;
    let pack = loaded.as_ref().unwrap_or(s.default_pack());
    let mut opts = so.options();
    opts.input = InputKind::Raw;
    // A command's output is not kept: nothing of it can be read back.
    opts.source = OutputSource::Pipe;
    let b = s.effective_budget(pack, &opts)?;
    let mut cmd = Command::new(&command[0]);
    cmd.args(&command[1..]);
    let (head, tail) = if b.head_bytes > 0 { (b.head_bytes, b.tail_bytes) } else { (b.read_bytes, 0) };
    let out = run_head_tail(&s, pack, &mut cmd, (head, tail), so.drain_limit, timeout)?;
    if b.head_bytes > 0 {
        opts.gap = out.output.gap;
    } else {
        // A document read whole (HTML): its head, cut by the cap as before.
        opts.total_bytes = (!out.output.stopped).then_some(out.output.total);
    }
    if out.timed_out {
        let t = humantime::format_duration(timeout.unwrap_or_default());
        let message = format!("command did not finish within {t}; its process group was killed; the output it printed until then is below");
        opts.tool_error = Some(ToolError { code: "timeout".into(), message });
    } else if out.output.stopped {
        let message = format!(
            "command was stopped after printing {} bytes (the drain limit); its process group was killed; \
             the start and the last part of its output are below",
            out.output.total
        );
        opts.tool_error = Some(ToolError { code: "drain-limit".into(), message });
    }
    if let Some(status) = out.status {
        if !status.success() {
            use std::os::unix::process::ExitStatusExt;
            let (code, message) = match (status.code(), status.signal()) {
                (Some(c), _) => (format!("exit-status-{c}"), format!("command exited with status {c}")),
                (None, Some(sig)) => {
                    let name = signal_name(sig);
                    (format!("signal-{name}"), format!("command was killed by signal {sig} ({name})"))
                }
                _ => ("failed".into(), "command failed".into()),
            };
            opts.tool_error = Some(ToolError { code, message });
        }
    }
    let msg = s.sanitize_with(pack, &out.output.bytes, &opts)?;
    outln!("{}", msg.message)?;
    Ok(())
}

/// A signal's name, as `kill -l` prints it, for the tool-error code.
fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        _ => return sig.to_string(),
    };
    name.into()
}

fn mcp(mo: &McpOpts, command: &[String]) -> Result<i32, Error> {
    use result_sanitizer::mcp::{stdio, Proxy, ProxyConfig, Upstream};
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
        result_sanitizer::mcp::config::check_tool_name(name)
            .map_err(|e| Error::InvalidOptions(format!("--recall-tool {e}")))?;
        config.recall.tool = name.clone();
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
    let proxy = Arc::new(Proxy::new(s, pack, base, config, mo.max_message_bytes)?);
    let upstream = match &mo.upstream {
        Some(url) => Upstream::Url(url.clone()),
        None => Upstream::Command(command.to_vec()),
    };
    match &mo.listen {
        Some(addr) => {
            let limits = result_sanitizer::mcp::http::SessionLimits {
                max_sessions: mo.max_sessions as usize,
                idle: (mo.session_idle > 0).then(|| std::time::Duration::from_secs(mo.session_idle)),
            };
            result_sanitizer::mcp::http::run(proxy, addr, &upstream, limits)
        }
        None => stdio::run(proxy, &upstream),
    }
}

/// The `redact` subcommand's own flags.
struct RedactFlags<'a> {
    content_type: &'a Option<String>,
    report: &'a Option<PathBuf>,
    untrusted: bool,
    sniff: bool,
    pii: PiiOpts,
}

fn redact(file: &Option<PathBuf>, flags: RedactFlags<'_>, po: &PackOpts, limits: &LimitOpts) -> Result<(), Error> {
    let (s, loaded) = open(limits.limits(), po)?;
    let pack = loaded.as_ref().unwrap_or(s.default_pack());
    let (reader, _, _) = open_input(file)?;
    let stdout = io::stdout().lock();
    let mut report_file = match flags.report {
        Some(p) => Some(io::BufWriter::new(
            File::create(p).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", p.display())))?,
        )),
        None => None,
    };
    let mut opts = StreamOptions {
        content_type: flags.content_type.clone().or_else(|| content_type_of(file)),
        untrusted: flags.untrusted,
        sniff: flags.sniff,
        pii: flags.pii.pii,
        pii_public_ip: flags.pii.pii_public_ip,
        ..StreamOptions::default()
    };
    if let Some(w) = report_file.as_mut() {
        opts.report = Some(Report::new(w, None)?);
    }
    redact_stream(&s, pack, reader, io::BufWriter::new(stdout), &mut opts)?;
    drop(opts);
    if let Some(mut w) = report_file {
        w.flush()?;
    }
    Ok(())
}

fn pack_cmd(cmd: &PackCmd) -> Result<(), Error> {
    match cmd {
        PackCmd::Build { rules, name, version, tenant, no_defaults, output } => {
            let mut rf = parse_rules(std::slice::from_ref(rules))?;
            if !no_defaults {
                rf = rf.over_defaults().map_err(|e| Error::InvalidPack(e.to_string()))?;
            }
            let id = rf
                .identity(name.as_deref(), version.as_deref(), tenant.as_deref())
                .map_err(|e| Error::InvalidPack(e.to_string()))?;
            let wasm =
                result_sanitizer::pack_build::build(&rf, &id).map_err(|e| Error::InvalidPack(format!("{e:#}")))?;
            std::fs::write(output, &wasm)?;
            eprintln!("built {} ({} bytes, {} rules)", output.display(), wasm.len(), rf.rules.len());
            Ok(())
        }
        PackCmd::Wrap { core, output } => {
            let s = Sanitizer::new(Limits::default())?;
            let wasm = s.wrap_pack_core(&read_file(core)?)?;
            std::fs::write(output, &wasm)?;
            eprintln!("wrote {} ({} bytes)", output.display(), wasm.len());
            Ok(())
        }
        PackCmd::Sign { pack, key, expires, may_relax, output } => {
            let kp = if key.exists() { key.clone() } else { PathBuf::from(format!("{}.key", key.display())) };
            let sk = SecretKey::read(&kp)?;
            if let Some(i) = may_relax.iter().position(|id| !result_sanitizer_pipeline::valid_rule_id(id)) {
                return Err(Error::InvalidPack(format!(
                    "--may-relax {}: {}",
                    i + 1,
                    result_sanitizer_pipeline::RULE_ID_FORM
                )));
            }
            let signed =
                signing::sign(&read_file(pack)?, &sk, expires.as_deref(), may_relax).map_err(Error::InvalidPack)?;
            std::fs::write(output.as_ref().unwrap_or(pack), signed)?;
            eprintln!("signed with key {}", sk.public().key_id());
            Ok(())
        }
        PackCmd::Verify { pack, trusted_keys, tenant } => {
            let keys = trusted_keys.iter().map(|p| read_key(p)).collect::<Result<Vec<_>, _>>()?;
            let v = signing::verify(
                &read_file(pack)?,
                &TrustPolicy { keys, allow_unsigned: false },
                tenant.as_deref(),
                std::time::SystemTime::now(),
            )?;
            let signed = v.signed.expect("verified packs are signed");
            let relax = if signed.may_relax.is_empty() {
                String::new()
            } else {
                format!(", may relax {}", signed.may_relax.join(","))
            };
            outln!(
                "ok: pack `{}` {} for tenant `{}`, WIT {}, signed by {}, expires {}{relax}",
                v.manifest.name,
                v.manifest.version,
                v.manifest.tenant,
                v.manifest.wit_version,
                signed.key_id,
                signed.expires.as_deref().unwrap_or("never")
            )?;
            Ok(())
        }
        PackCmd::Check { rules } => {
            let rf = parse_rules(rules)?;
            let overlaps = rf.overlaps();
            let names = rules.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" ");
            if !overlaps.is_empty() {
                return Err(Error::InvalidPack(overlaps.join("\n")));
            }
            outln!("{names}: {} rules, all examples hold, no duplicate or shadowed rule", rf.rules.len())?;
            Ok(())
        }
        PackCmd::Inspect { pack } => {
            let bytes = read_file(pack)?;
            let m = result_sanitizer::manifest::Manifest::read(&bytes)
                .map_err(|e| Error::InvalidPack(format!("{e:#}")))?
                .ok_or_else(|| Error::InvalidPack("no manifest section".into()))?;
            let sha = result_sanitizer::digest::sha256_hex(&bytes);
            let mut v = serde_json::to_value(&m).expect("manifest serializes");
            v["sha256"] = sha.into();
            let sig = signing::read_signature(&bytes)?;
            v["signer_key_id"] = sig.as_ref().map(|s| s.key_id.clone()).into();
            v["expires"] = sig.as_ref().and_then(|s| s.expires.clone()).into();
            v["may_relax"] = sig.as_ref().map(|s| s.may_relax.clone()).unwrap_or_default().into();
            v["signed"] = sig.is_some().into();
            outln!("{}", serde_json::to_string_pretty(&v).expect("json"))?;
            Ok(())
        }
    }
}

fn read_file(p: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(p).map_err(|e| Error::Io(io::Error::new(e.kind(), format!("{}: {e}", p.display()))))
}

fn keygen(prefix: &Path) -> Result<(), Error> {
    let sk = SecretKey::generate();
    let key = PathBuf::from(format!("{}.key", prefix.display()));
    let public = PathBuf::from(format!("{}.pub", prefix.display()));
    {
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&key)?;
        f.write_all(sk.to_text().as_bytes())?;
    }
    std::fs::write(&public, sk.public().to_text())?;
    outln!("key id {}: wrote {} and {}", sk.public().key_id(), key.display(), public.display())?;
    Ok(())
}

/// Reads rules files and directories (a directory's `*.toml` files in name
/// order, as `rules/default/`) and parses them as one rules file.
fn parse_rules(paths: &[PathBuf]) -> Result<RulesFile, Error> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut names = std::fs::read_dir(path)
                .map_err(|e| Error::Io(io::Error::new(e.kind(), format!("{}: {e}", path.display()))))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect::<Vec<_>>();
            names.sort();
            if names.is_empty() {
                return Err(Error::InvalidPack(format!("{}: no .toml files", path.display())));
            }
            files.extend(names);
        } else {
            files.push(path.clone());
        }
    }
    let mut texts = Vec::new();
    for f in &files {
        let text =
            String::from_utf8(read_file(f)?).map_err(|_| Error::InvalidPack(format!("{}: not UTF-8", f.display())))?;
        texts.push((f.display().to_string(), text));
    }
    let pairs: Vec<(&str, &str)> = texts.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
    RulesFile::parse_files(&pairs).map_err(|e| Error::InvalidPack(e.to_string()))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match &cli.cmd {
        Cmd::Sanitize { file, opts } => sanitize(file, opts),
        Cmd::Redact { file, content_type, report, untrusted, sniff, pii, packs, limits } => redact(
            file,
            RedactFlags { content_type, report, untrusted: *untrusted, sniff: *sniff, pii: *pii },
            packs,
            limits,
        ),
        Cmd::SanitizeRound { files, round_tokens, min_tokens, priorities, opts } => sanitize_round(
            files,
            api::RoundOptions { round_tokens: *round_tokens, min_tokens: *min_tokens },
            priorities,
            opts,
        ),
        Cmd::Keygen { output } => keygen(output),
        Cmd::Run { opts, timeout, command } => run(opts, *timeout, command),
        Cmd::Pack { cmd } => pack_cmd(cmd),
        Cmd::Mcp { opts, command } => match mcp(opts, command) {
            Ok(0) => Ok(()),
            Ok(code) => return ExitCode::from(code as u8),
            Err(e) => Err(e),
        },
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of a pipe we write went away (`| head`, a `--report`
        // FIFO): the status a shell gives a command SIGPIPE ended, as for
        // `cat`, whose default SIGPIPE action Rust turns into this error.
        Err(Error::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::from(128 + 13),
        Err(e) => {
            let _ = io::stdout().flush();
            eprintln!("result-sanitizer: error: {e}");
            ExitCode::from(1)
        }
    }
}

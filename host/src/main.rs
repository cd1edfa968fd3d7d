//! `result-sanitizer`: the CLI over the reference host.
//!
//! Every subcommand prints its result on stdout; on failure it prints one
//! line on stderr and exits non-zero. `sanitize` and `run` exit 0 whenever
//! a message was produced, including `isError` results.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::process::{Command, ExitCode};

use clap::{Args, Parser, Subcommand, ValueEnum};

use result_sanitizer::api::{Encoding, InputKind, Options, OutputFormat, ToolError};
use result_sanitizer::io::{read_capped, redact_stream, run_capped};
use result_sanitizer::pack_build::RulesFile;
use result_sanitizer::{default_options, Error, Limits, LoadedPack, Sanitizer};

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
    /// Redact secrets from a stream, in constant memory: no budget, no wrapping.
    Redact {
        /// Input file; `-` or nothing reads stdin.
        file: Option<PathBuf>,
        /// Rule pack component (default: the embedded pack).
        #[arg(long)]
        pack: Option<PathBuf>,
        #[command(flatten)]
        limits: LimitOpts,
    },
    /// Run a command, capture stdout and stderr under the byte cap, print the sanitized message.
    Run {
        #[command(flatten)]
        opts: SanitizeOpts,
        /// The command and its arguments (after `--`).
        #[arg(required = true, last = true)]
        command: Vec<String>,
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
        /// Rules file (TOML).
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
        /// Output file.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Check a rules file: every regex compiles and every example holds.
    Check {
        /// Rules file (TOML).
        rules: PathBuf,
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
    /// Content type of raw input (e.g. text/html).
    #[arg(long)]
    content_type: Option<String>,
    /// Rule pack component (default: the embedded pack).
    #[arg(long)]
    pack: Option<PathBuf>,
    #[command(flatten)]
    limits: LimitOpts,
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
        o.max_bytes = self.max_bytes;
        o.max_chars = self.max_chars;
        o.max_tokens = self.max_tokens;
        o.encoding = match self.encoding {
            Enc::o200k_base => Encoding::O200kBase,
            Enc::cl100k_base => Encoding::Cl100kBase,
        };
        o.untrusted = self.untrusted;
        o.content_type = self.content_type.clone();
        o
    }
}

/// Largest MCP JSON document read (the byte cap then applies to its text).
const MAX_MCP_INPUT: u64 = 64 << 20;

fn open_input(file: &Option<PathBuf>) -> io::Result<(Box<dyn Read>, Option<u64>)> {
    match file {
        None => Ok((Box::new(io::stdin().lock()), None)),
        Some(p) if p.as_os_str() == "-" => Ok((Box::new(io::stdin().lock()), None)),
        Some(p) => {
            let f = File::open(p)?;
            let len = f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
            Ok((Box::new(f), len))
        }
    }
}

fn load_pack(s: &Sanitizer, path: &Option<PathBuf>) -> Result<Option<LoadedPack>, Error> {
    match path {
        None => Ok(None),
        Some(p) => {
            let bytes = std::fs::read(p)?;
            Ok(Some(s.load_pack_unverified(&bytes)?))
        }
    }
}

fn sanitize(file: &Option<PathBuf>, so: &SanitizeOpts) -> Result<(), Error> {
    let s = Sanitizer::new(so.limits.limits())?;
    let loaded = load_pack(&s, &so.pack)?;
    let pack = loaded.as_ref().unwrap_or(s.default_pack());
    let mut opts = so.options();
    let cap = match opts.input {
        InputKind::Raw => s.effective_budget(pack, &opts)?.max_bytes,
        InputKind::Mcp => MAX_MCP_INPUT,
    };
    let (reader, len) = open_input(file)?;
    let input = read_capped(reader, cap)?;
    if opts.input == InputKind::Mcp && input.over {
        return Err(Error::InvalidInput(format!("MCP input larger than {MAX_MCP_INPUT} bytes")));
    }
    opts.total_bytes = len;
    let out = s.sanitize_with(pack, &input.bytes, &opts)?;
    println!("{}", out.message);
    Ok(())
}

fn run(so: &SanitizeOpts, command: &[String]) -> Result<(), Error> {
    let s = Sanitizer::new(so.limits.limits())?;
    let loaded = load_pack(&s, &so.pack)?;
    let pack = loaded.as_ref().unwrap_or(s.default_pack());
    let mut opts = so.options();
    opts.input = InputKind::Raw;
    let cap = s.effective_budget(pack, &opts)?.max_bytes;
    let mut cmd = Command::new(&command[0]);
    cmd.args(&command[1..]);
    let out = run_capped(&mut cmd, cap)?;
    if let Some(status) = out.status {
        if !status.success() {
            use std::os::unix::process::ExitStatusExt;
            let (code, message) = match (status.code(), status.signal()) {
                (Some(c), _) => (format!("exit-status-{c}"), format!("command exited with status {c}")),
                (None, Some(sig)) => (format!("signal-{sig}"), format!("command was killed by signal {sig}")),
                _ => ("failed".into(), "command failed".into()),
            };
            opts.tool_error = Some(ToolError { code, message });
        }
    }
    let msg = s.sanitize_with(pack, &out.output.bytes, &opts)?;
    println!("{}", msg.message);
    Ok(())
}

fn redact(file: &Option<PathBuf>, pack: &Option<PathBuf>, limits: &LimitOpts) -> Result<(), Error> {
    let s = Sanitizer::new(limits.limits())?;
    let loaded = load_pack(&s, pack)?;
    let pack = loaded.as_ref().unwrap_or(s.default_pack());
    let (reader, _) = open_input(file)?;
    let stdout = io::stdout().lock();
    let n = redact_stream(&s, pack, reader, io::BufWriter::new(stdout), 1 << 20)?;
    let _ = n;
    Ok(())
}

fn pack_cmd(cmd: &PackCmd) -> Result<(), Error> {
    match cmd {
        PackCmd::Build { rules, name, version, tenant, output } => {
            let rf = parse_rules(rules)?;
            let id = rf
                .identity(name.as_deref(), version.as_deref(), tenant.as_deref())
                .map_err(|e| Error::InvalidPack(e.to_string()))?;
            let wasm = result_sanitizer::pack_build::build(&rf, &id)
                .map_err(|e| Error::InvalidPack(format!("{e:#}")))?;
            std::fs::write(output, &wasm)?;
            eprintln!("built {} ({} bytes, {} rules)", output.display(), wasm.len(), rf.rules.len());
            Ok(())
        }
        PackCmd::Check { rules } => {
            let rf = parse_rules(rules)?;
            println!("{}: {} rules, all examples hold", rules.display(), rf.rules.len());
            Ok(())
        }
        PackCmd::Inspect { pack } => {
            let bytes = std::fs::read(pack)?;
            let m = result_sanitizer::manifest::Manifest::read(&bytes)
                .map_err(|e| Error::InvalidPack(format!("{e:#}")))?
                .ok_or_else(|| Error::InvalidPack("no manifest section".into()))?;
            use sha2::Digest;
            let sha: String = sha2::Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
            let mut v = serde_json::to_value(&m).expect("manifest serializes");
            v["sha256"] = sha.into();
            println!("{}", serde_json::to_string_pretty(&v).expect("json"));
            Ok(())
        }
    }
}

fn parse_rules(path: &PathBuf) -> Result<RulesFile, Error> {
    let text = std::fs::read_to_string(path)?;
    RulesFile::parse(&path.display().to_string(), &text).map_err(|e| Error::InvalidPack(e.to_string()))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match &cli.cmd {
        Cmd::Sanitize { file, opts } => sanitize(file, opts),
        Cmd::Redact { file, pack, limits } => redact(file, pack, limits),
        Cmd::Run { opts, command } => run(opts, command),
        Cmd::Pack { cmd } => pack_cmd(cmd),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = io::stdout().flush();
            eprintln!("result-sanitizer: error: {e}");
            ExitCode::from(1)
        }
    }
}

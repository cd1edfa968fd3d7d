//! `result-sanitizer`: the CLI over the reference host.
//!
//! Every subcommand prints its result on stdout; on failure it prints one
//! line on stderr and exits non-zero. `sanitize` and `run` exit 0 whenever
//! a message was produced, including `isError` results.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use result_sanitizer_host::api;
use result_sanitizer_host::Error;

/// `println!` that returns the error: when the reader of stdout has gone
/// (`| head`), `main` ends quietly instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {
        writeln!(io::stdout().lock(), $($arg)*)
    };
}

mod flags;
mod mcp;
mod open;
mod pack;
mod redact;
mod run;
mod sanitize;

use flags::{LimitOpts, PackOpts, PiiOpts, SanitizeOpts};
use mcp::McpOpts;
use pack::PackCmd;

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
        #[arg(long = "priority", value_parser = sanitize::parse_priority)]
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
        /// Threads that redact 1 MiB steps at once: 0, one per core (at
        /// most 8); 1, one step after another. The output is the same.
        #[arg(long, default_value_t = 0)]
        threads: usize,
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
        #[arg(long, value_parser = run::parse_timeout)]
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match &cli.cmd {
        Cmd::Sanitize { file, opts } => sanitize::sanitize(file, opts),
        Cmd::Redact { file, content_type, report, untrusted, sniff, threads, pii, packs, limits } => redact::redact(
            file,
            redact::RedactFlags {
                content_type,
                report,
                untrusted: *untrusted,
                sniff: *sniff,
                threads: *threads,
                pii: *pii,
            },
            packs,
            limits,
        ),
        Cmd::SanitizeRound { files, round_tokens, min_tokens, priorities, opts } => sanitize::sanitize_round(
            files,
            api::RoundOptions { round_tokens: *round_tokens, min_tokens: *min_tokens },
            priorities,
            opts,
        ),
        Cmd::Keygen { output } => pack::keygen(output),
        Cmd::Run { opts, timeout, command } => run::run(opts, *timeout, command),
        Cmd::Pack { cmd } => pack::pack_cmd(cmd),
        Cmd::Mcp { opts, command } => match mcp::mcp(opts, command) {
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

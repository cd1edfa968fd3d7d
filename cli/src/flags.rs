//! The flags several subcommands share (clap argument groups) and the
//! pipeline options they make.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

use result_sanitizer_host::api::{Encoding, InputKind, Options, OutputFormat, StructuredFit};
use result_sanitizer_host::io::DEFAULT_DRAIN_LIMIT;
use result_sanitizer_host::{default_options, Limits};

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Format {
    Mcp,
    Openai,
    Anthropic,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Input {
    Raw,
    Mcp,
}

/// How MCP `structuredContent` over its share of the budget is fitted.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Structured {
    /// Thinned, notes inside it.
    Marked,
    /// Thinned keeping the shape an `outputSchema` checks.
    Schema,
    /// Left out, the text saying it no longer validated.
    Omitted,
}

#[derive(Clone, Copy, ValueEnum)]
#[allow(non_camel_case_types)]
pub(crate) enum Enc {
    #[value(name = "o200k_base")]
    o200k_base,
    #[value(name = "cl100k_base")]
    cl100k_base,
}

#[derive(Args)]
pub(crate) struct LimitOpts {
    /// Fuel per call (about one unit per wasm instruction).
    #[arg(long, default_value_t = Limits::default().fuel)]
    pub(crate) fuel: u64,
    /// Wall-clock limit per call, milliseconds.
    #[arg(long, default_value_t = Limits::default().timeout.as_millis() as u64)]
    pub(crate) timeout_ms: u64,
    /// Pipeline memory cap, MiB.
    #[arg(long, default_value_t = (Limits::default().memory >> 20) as u64)]
    pub(crate) memory_mib: u64,
}

impl LimitOpts {
    pub(crate) fn limits(&self) -> Limits {
        Limits {
            fuel: self.fuel,
            timeout: std::time::Duration::from_millis(self.timeout_ms),
            memory: (self.memory_mib as usize) << 20,
            ..Limits::default()
        }
    }
}

#[derive(Args)]
pub(crate) struct SanitizeOpts {
    /// Tool name (per-tool budgets, boundary header).
    #[arg(long, default_value = "")]
    pub(crate) tool: String,
    /// Tool call id (OpenAI / Anthropic messages).
    #[arg(long, default_value = "")]
    pub(crate) call_id: String,
    /// Output message format.
    #[arg(long, value_enum, default_value = "mcp")]
    pub(crate) format: Format,
    /// Input kind.
    #[arg(long, value_enum, default_value = "raw")]
    pub(crate) input: Input,
    #[command(flatten)]
    pub(crate) budget: BudgetOpts,
    /// Content type of raw input (e.g. text/html, text/x-python); for a
    /// FILE of source code it comes from the file name.
    #[arg(long)]
    pub(crate) content_type: Option<String>,
    /// Name of the file the input comes from (stdin: `cat app.py |`); a
    /// source file's extension gives the content type. For a FILE, its
    /// own name.
    #[arg(long)]
    pub(crate) file_name: Option<String>,
    /// MCP input: how `structuredContent` over its share (half the token
    /// budget) is fitted (`schema`: for a tool that declares an
    /// `outputSchema`; the `mcp` proxy picks it from `tools/list`).
    #[arg(long, value_enum, default_value = "marked")]
    pub(crate) structured_fit: Structured,
    /// Say in the record where each redaction was made (`sites`: rule,
    /// byte span, line, column, and the value hashed under a key drawn
    /// for this call), never the value.
    #[arg(long)]
    pub(crate) report: bool,
    /// Stop reading an output after this many bytes (a producer that never
    /// ends); `run` then kills the command. Default 1 GiB.
    #[arg(long, default_value_t = DEFAULT_DRAIN_LIMIT)]
    pub(crate) drain_limit: u64,
    #[command(flatten)]
    pub(crate) packs: PackOpts,
    #[command(flatten)]
    pub(crate) limits: LimitOpts,
}

/// Budgets and modes shared by `sanitize`, `run` and `mcp` (for `mcp`,
/// every tool's, under its config file's per-tool entries).
#[derive(Args)]
pub(crate) struct BudgetOpts {
    /// Byte hard cap (default 262144).
    #[arg(long)]
    pub(crate) max_bytes: Option<u64>,
    /// Character budget (default 100000).
    #[arg(long)]
    pub(crate) max_chars: Option<u32>,
    /// Token budget (default 8000).
    #[arg(long)]
    pub(crate) max_tokens: Option<u32>,
    /// Tokenizer.
    #[arg(long, value_enum, default_value = "o200k_base")]
    pub(crate) encoding: Enc,
    /// Wrap the content in the untrusted-source boundary.
    #[arg(long)]
    pub(crate) untrusted: bool,
    /// Lenient (documentation) mode: generic rules off, provider formats on.
    #[arg(long)]
    pub(crate) lenient: bool,
    #[command(flatten)]
    pub(crate) pii: PiiOpts,
}

/// Personal data, for `sanitize`, `run`, `mcp` and `redact`.
#[derive(Args, Clone, Copy)]
pub(crate) struct PiiOpts {
    /// Redact personal data in successful results too: emails, phone
    /// numbers, payment cards, IBANs, US SSNs, private IP addresses, dates
    /// of birth (`[REDACTED:email]`, ...). Error results always have
    /// emails, phone numbers, cards, IBANs and SSNs redacted.
    #[arg(long)]
    pub(crate) pii: bool,
    /// With --pii: public IP addresses too.
    #[arg(long, requires = "pii")]
    pub(crate) pii_public_ip: bool,
}

impl BudgetOpts {
    pub(crate) fn apply(&self, o: &mut Options) {
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
pub(crate) struct PackOpts {
    /// Rule pack component (default: the embedded pack).
    #[arg(long, conflicts_with = "packs")]
    pub(crate) pack: Option<PathBuf>,
    /// Directory of tenant packs; the pack scoped to --tenant serves the call.
    #[arg(long, requires = "tenant")]
    pub(crate) packs: Option<PathBuf>,
    /// Tenant making the call.
    #[arg(long)]
    pub(crate) tenant: Option<String>,
    /// Trusted public key (PREFIX.pub); repeat for several (key rotation).
    #[arg(long = "trusted-key")]
    pub(crate) trusted_keys: Vec<PathBuf>,
    /// Accept an unsigned --pack (development only).
    #[arg(long)]
    pub(crate) allow_unsigned: bool,
    /// The platform's pack, whose rules apply whatever the tenant's pack
    /// says (default: the embedded pack). The operator's own file: no
    /// signature is required of it.
    #[arg(long)]
    pub(crate) platform_pack: Option<PathBuf>,
}

impl SanitizeOpts {
    pub(crate) fn options(&self) -> Options {
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
        o.file_name = self.file_name.clone();
        o.structured_fit = match self.structured_fit {
            Structured::Marked => StructuredFit::Marked,
            Structured::Schema => StructuredFit::Schema,
            Structured::Omitted => StructuredFit::Omitted,
        };
        o.report_key = self.report.then(random_key);
        o
    }
}

/// A key for a report's hashes, fresh for each call, in hex.
pub(crate) fn random_key() -> String {
    let k = result_sanitizer_host::report::random_key().expect("the OS has randomness");
    k.iter().map(|b| format!("{b:02x}")).collect()
}

//! The proxy's config file (TOML), `--config FILE`:
//!
//! ```toml
//! [defaults]              # every tool, under the command line's flags
//! max_tokens = 6000
//!
//! [tools.read_text_file]  # one tool by name: wins over flags and defaults
//! max_tokens = 2000
//! untrusted = true
//!
//! [tools.crm_lookup]
//! pii = true              # personal data redacted (emails, phones, cards, ...)
//!
//! [recall]
//! enabled = true                  # --no-recall turns it off too
//! tool = "read_truncated_output"  # --recall-tool
//! ttl_seconds = 900
//! max_total_bytes = 268435456   # all sessions together
//! max_item_bytes = 16777216
//! store = "redis://127.0.0.1:6379/0"   # --recall-store; default: memory
//! key_file = "/etc/rs/recall.key"      # --recall-key-file; else $RESULT_SANITIZER_RECALL_KEY
//!
//! [guard]
//! placeholder_arguments = "refuse"  # or "pass"; --placeholder-arguments
//!
//! [clients]                 # budgets by initialize's clientInfo.name
//! enabled = true
//! [clients.profiles.codex]  # over the built-in table
//! max_tokens = 5000
//! ```
//!
//! Budgets left unset here and on the command line come from the pack's
//! per-tool budgets, then the defaults, as for `sanitize`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use result_sanitizer_host::api::Options;
use result_sanitizer_host::recall::{RedisConfig, StoreConfig, StoreKey};

/// The environment variable that holds the shared store's key when no key
/// file is given.
pub const RECALL_KEY_ENV: &str = "RESULT_SANITIZER_RECALL_KEY";

/// Options of one tool (or of all, `[defaults]`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolOptions {
    /// Byte hard cap.
    pub max_bytes: Option<u64>,
    /// Character budget.
    pub max_chars: Option<u32>,
    /// Token budget.
    pub max_tokens: Option<u32>,
    /// Wrap in the untrusted-source boundary (and ignore allow markers).
    pub untrusted: Option<bool>,
    /// Lenient (documentation) mode.
    pub lenient: Option<bool>,
    /// Redact personal data (emails, phone numbers, cards, IBANs, SSNs,
    /// private IP addresses, dates of birth) in successful results too.
    pub pii: Option<bool>,
    /// With `pii`: public IP addresses too.
    pub pii_public_ip: Option<bool>,
}

/// Recall through the proxy.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RecallConfig {
    /// Keep results and add the recall tool.
    pub enabled: bool,
    /// The added tool's name (renamed if the server has one so named).
    pub tool: String,
    /// How long a result is kept.
    pub ttl_seconds: u64,
    /// Most bytes kept over all results (of every session: one store).
    pub max_total_bytes: usize,
    /// Most bytes kept of one result.
    pub max_item_bytes: usize,
    /// Where results are kept: `memory` (the default) or
    /// `redis://HOST:PORT[/DB]`, shared by replicas.
    pub store: Option<String>,
    /// The file holding the shared store's key (at least 32 bytes); else
    /// the variable [`RECALL_KEY_ENV`].
    pub key_file: Option<PathBuf>,
}

impl Default for RecallConfig {
    fn default() -> Self {
        let s = StoreConfig::default();
        Self {
            enabled: true,
            tool: "read_truncated_output".into(),
            ttl_seconds: s.ttl.as_secs(),
            max_total_bytes: s.max_total_bytes,
            max_item_bytes: s.max_item_bytes,
            store: None,
            key_file: None,
        }
    }
}

impl RecallConfig {
    /// The output store's configuration: in memory, or in Redis with the
    /// key from `key_file` or [`RECALL_KEY_ENV`] (refused without one: the
    /// results would leave the process unsealed).
    pub fn store(&self) -> Result<StoreConfig, result_sanitizer_host::Error> {
        let bad = |m: String| result_sanitizer_host::Error::InvalidOptions(m);
        let redis = match self.store.as_deref() {
            None | Some("memory") => None,
            Some(url) if url.starts_with("redis://") => {
                let secret = match &self.key_file {
                    Some(p) => {
                        std::fs::read(p).map_err(|e| bad(format!("the recall key file {}: {e}", p.display())))?
                    }
                    None => std::env::var(RECALL_KEY_ENV).map(String::into_bytes).map_err(|_| {
                        bad(format!(
                            "a Redis recall store needs a key: --recall-key-file FILE (recall.key_file) or \
                             {RECALL_KEY_ENV}; results are sealed with it before they leave the process"
                        ))
                    })?,
                };
                Some(RedisConfig { url: url.into(), key: Arc::new(StoreKey::from_secret(&secret).map_err(bad)?) })
            }
            Some(other) => {
                let shown = other.split('@').next_back().unwrap_or_default();
                return Err(bad(format!("recall store `{shown}`: `memory` or redis://HOST:PORT[/DB]")));
            }
        };
        Ok(StoreConfig {
            ttl: Duration::from_secs(self.ttl_seconds),
            max_total_bytes: self.max_total_bytes,
            max_item_bytes: self.max_item_bytes,
            dir: None,
            redis,
        })
    }
}

/// The whole file.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProxyConfig {
    /// Under the flags, for every tool.
    pub defaults: ToolOptions,
    /// By tool name, over the flags.
    pub tools: BTreeMap<String, ToolOptions>,
    /// Recall.
    pub recall: RecallConfig,
    /// Calls whose arguments hold the pipeline's placeholders ([`super::guard`]).
    pub guard: super::guard::GuardConfig,
    /// Budget profiles by the client's name ([`super::profiles`]).
    pub clients: super::profiles::ClientsConfig,
}

impl ProxyConfig {
    /// Parses the file's text; `name` is for the error.
    pub fn parse(name: &str, text: &str) -> Result<Self, result_sanitizer_host::Error> {
        let c: Self =
            toml::from_str(text).map_err(|e| result_sanitizer_host::Error::InvalidOptions(format!("{name}: {e}")))?;
        check_tool_name(&c.recall.tool)
            .map_err(|e| result_sanitizer_host::Error::InvalidOptions(format!("{name}: recall.tool {e}")))?;
        Ok(c)
    }

    /// The options for a call of `tool`: `base` (the flags), the file's
    /// defaults where the flags left a budget unset, then the tool's own
    /// entry over both.
    pub fn options_for(&self, base: &Options, tool: &str) -> Options {
        let mut o = base.clone();
        o.tool = tool.into();
        let d = &self.defaults;
        o.max_bytes = o.max_bytes.or(d.max_bytes);
        o.max_chars = o.max_chars.or(d.max_chars);
        o.max_tokens = o.max_tokens.or(d.max_tokens);
        o.untrusted |= d.untrusted.unwrap_or(false);
        o.lenient |= d.lenient.unwrap_or(false);
        o.pii |= d.pii.unwrap_or(false);
        o.pii_public_ip |= d.pii_public_ip.unwrap_or(false);
        if let Some(t) = self.tools.get(tool) {
            o.max_bytes = t.max_bytes.or(o.max_bytes);
            o.max_chars = t.max_chars.or(o.max_chars);
            o.max_tokens = t.max_tokens.or(o.max_tokens);
            o.untrusted = t.untrusted.unwrap_or(o.untrusted);
            o.lenient = t.lenient.unwrap_or(o.lenient);
            o.pii = t.pii.unwrap_or(o.pii);
            o.pii_public_ip = t.pii_public_ip.unwrap_or(o.pii_public_ip);
        }
        o
    }
}

/// The recall tool's name: what markers can name (the pipeline's
/// `recall-tool` alphabet), with room for a suffix if a server's tool has
/// it already.
pub fn check_tool_name(name: &str) -> Result<(), String> {
    let ok = (1..=64).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b));
    if ok {
        Ok(())
    } else {
        Err("must be 1 to 64 letters, digits, `_`, `-` or `.`".into())
    }
}

//! Per-client budget profiles: the client's `initialize` names it
//! (`clientInfo.name`), and a table picks budgets that keep every result
//! under what that client cuts or refuses itself, with room for the
//! markers, so that a result arrives whole or cut by the proxy (with a
//! recall route), never cut bluntly by the client.
//!
//! A profile's budgets are ceilings: over whatever the flags, the config
//! file, the pack and the defaults give a tool, the smaller wins. The
//! built-in table ([`builtin`]; limits and sources in docs/mcp-proxy.md)
//! is overridden by the config file's `[clients.profiles.ID]` (fields
//! given win; a new id adds a profile), or turned off by
//! `[clients] enabled = false`.
//!
//! A name matches a pattern when, both lower-cased with spaces and `_` as
//! `-`, the name starts with the pattern and goes on with `-` or ends
//! there: `gemini-cli` matches `gemini-cli-mcp-client` and
//! `Gemini CLI`, not `gemini-client`.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::Proxy;
use result_sanitizer_host::api::Options;

/// One client's profile.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// `clientInfo.name` patterns (see the module doc).
    pub names: Option<Vec<String>>,
    /// Most characters shown of one result.
    pub max_chars: Option<u32>,
    /// Most tokens shown of one result.
    pub max_tokens: Option<u32>,
}

/// The config file's `[clients]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClientsConfig {
    /// Pick a profile by the client's name.
    pub enabled: bool,
    /// Over the built-in table, by profile id.
    pub profiles: BTreeMap<String, Profile>,
}

impl Default for ClientsConfig {
    fn default() -> Self {
        Self { enabled: true, profiles: BTreeMap::new() }
    }
}

impl ClientsConfig {
    /// The table in force: the built-in one with the file's entries over it.
    pub fn table(&self) -> BTreeMap<String, Profile> {
        let mut t = builtin();
        for (id, p) in &self.profiles {
            let e = t.entry(id.clone()).or_default();
            if p.names.is_some() {
                e.names = p.names.clone();
            }
            e.max_chars = p.max_chars.or(e.max_chars);
            e.max_tokens = p.max_tokens.or(e.max_tokens);
        }
        t
    }

    /// The profile for a client of this name, with its id.
    pub fn pick(&self, client: &str) -> Option<(String, Profile)> {
        if !self.enabled {
            return None;
        }
        let name = normalize(client);
        self.table().into_iter().find(|(id, p)| {
            let pats = p.names.clone().unwrap_or_else(|| vec![id.clone()]);
            pats.iter().any(|pat| matches(&name, &normalize(pat)))
        })
    }
}

/// The built-in table (docs/mcp-proxy.md says where each limit comes from).
pub fn builtin() -> BTreeMap<String, Profile> {
    let p = |names: &[&str], max_chars: u32, max_tokens: u32| Profile {
        names: Some(names.iter().map(|s| s.to_string()).collect()),
        max_chars: Some(max_chars),
        max_tokens: Some(max_tokens),
    };
    BTreeMap::from([
        // Warns past 10 000 tokens, refuses past 25 000 (MAX_MCP_OUTPUT_TOKENS).
        ("claude-code".to_string(), p(&["claude-code"], 24_000, 6_000)),
        // Keeps 10 000 tokens of a tool output, counted as bytes / 4.
        ("codex".to_string(), p(&["codex"], 30_000, 7_000)),
        // Cuts a tool output over 40 000 characters.
        ("gemini-cli".to_string(), p(&["gemini-cli"], 32_000, 8_000)),
        // No documented limit found: as Claude Code.
        ("cursor".to_string(), p(&["cursor"], 24_000, 6_000)),
    ])
}

fn normalize(s: &str) -> String {
    s.trim().to_ascii_lowercase().replace([' ', '_'], "-")
}

fn matches(name: &str, pat: &str) -> bool {
    !pat.is_empty() && name.strip_prefix(pat).is_some_and(|rest| rest.is_empty() || rest.starts_with('-'))
}

/// The profile for the client whose `initialize` request is `line`;
/// logged by id (the client's name is not repeated: it is the client's).
pub fn from_initialize(proxy: &Proxy, line: &[u8]) -> Option<Profile> {
    let m: serde_json::Value = serde_json::from_slice(line).ok()?;
    let name = m.pointer("/params/clientInfo/name")?.as_str()?;
    let (id, p) = proxy.config.clients.pick(name)?;
    tracing::info!(target: "result_sanitizer::mcp", profile = %id, max_chars = ?p.max_chars, max_tokens = ?p.max_tokens, "client budget profile");
    Some(p)
}

/// `o` with the profile's budgets as ceilings over what it would get.
pub fn apply(proxy: &Proxy, p: &Profile, o: &mut Options) {
    let effective = proxy.sanitizer.effective_budget(&proxy.pack, o).ok();
    if let Some(c) = p.max_chars {
        o.max_chars = Some(effective.as_ref().map_or(c, |b| b.max_chars.min(c)));
    }
    if let Some(t) = p.max_tokens {
        o.max_tokens = Some(effective.as_ref().map_or(t, |b| b.max_tokens.min(t)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_robustly() {
        let c = ClientsConfig::default();
        let id = |n: &str| c.pick(n).map(|(id, _)| id);
        assert_eq!(id("claude-code").as_deref(), Some("claude-code"));
        assert_eq!(id("Claude Code").as_deref(), Some("claude-code"));
        assert_eq!(id("codex-mcp-client").as_deref(), Some("codex"));
        assert_eq!(id("gemini-cli-mcp-client").as_deref(), Some("gemini-cli"));
        assert_eq!(id("gemini-cli-mcp-client-myserver").as_deref(), Some("gemini-cli"));
        assert_eq!(id("cursor-vscode").as_deref(), Some("cursor"));
        assert_eq!(id("claude-ai"), None);
        assert_eq!(id("codexify"), None);
        assert_eq!(id("result-sanitizer-test"), None);
    }

    #[test]
    fn the_file_overrides_and_adds() {
        let mut c = ClientsConfig::default();
        c.profiles.insert("codex".into(), Profile { max_tokens: Some(3000), ..Default::default() });
        c.profiles.insert("zed".into(), Profile { max_chars: Some(9000), ..Default::default() });
        let (_, codex) = c.pick("codex-mcp-client").unwrap();
        assert_eq!((codex.max_chars, codex.max_tokens), (Some(30_000), Some(3000)));
        assert_eq!(c.pick("Zed").unwrap().1.max_chars, Some(9000));
        c.enabled = false;
        assert_eq!(c.pick("claude-code"), None);
    }
}

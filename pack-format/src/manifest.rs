//! The pack manifest: identity readable without compiling anything.
//!
//! A custom section named [`SECTION`] at the top level of a pack component
//! holds JSON: name, version, tenant scope, WIT version, rule ids, whether
//! the pack has code. The host reads it (and checks the WIT version) before
//! it compiles a byte of the pack.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use wasmparser::{Parser, Payload};

/// Custom section name.
pub const SECTION: &str = "result-sanitizer:manifest";

/// Deepest nesting of arrays and objects a manifest may have. serde_json
/// skips an unknown field's value at any depth and Go's encoding/json
/// stops at 10 000: one bound, checked first, makes every host refuse the
/// same manifests (the JS and Go hosts check it too).
pub const MAX_DEPTH: usize = 128;

/// Whether JSON text nests arrays and objects more than `max` deep
/// (brackets inside strings do not count). One pass over the bytes.
pub fn nests_deeper_than(json: &[u8], max: usize) -> bool {
    let (mut depth, mut in_str, mut esc) = (0usize, false, false);
    for &b in json {
        if in_str {
            match b {
                _ if esc => esc = false,
                b'\\' => esc = true,
                b'"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_str = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// What a pack says about itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Name.
    pub name: String,
    /// Version.
    pub version: String,
    /// Tenant scope; `*` is any tenant.
    pub tenant: String,
    /// WIT package version the pack was built for.
    pub wit_version: String,
    /// Ids of its declarative rules.
    pub rule_ids: Vec<String>,
    /// Whether it runs custom `detect` code.
    pub has_detect: bool,
}

impl Manifest {
    /// Appends the manifest section to a component.
    pub fn append_to(&self, mut component: Vec<u8>) -> Vec<u8> {
        let data = serde_json::to_vec(self).expect("manifest serializes");
        let section = wasm_encoder::CustomSection { name: Cow::Borrowed(SECTION), data: Cow::Owned(data) };
        use wasm_encoder::{Encode, Section};
        component.push(section.id());
        section.encode(&mut component);
        component
    }

    /// Reads the manifest of a component, if it has one.
    pub fn read(wasm: &[u8]) -> Result<Option<Self>> {
        let mut depth = 0usize;
        let mut found = None;
        for payload in Parser::new(0).parse_all(wasm) {
            match payload.context("not a valid wasm binary")? {
                Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
                Payload::End(_) => depth = depth.saturating_sub(1),
                Payload::CustomSection(c) if depth == 0 && c.name() == SECTION => {
                    if found.is_some() {
                        bail!("more than one {SECTION} section");
                    }
                    if nests_deeper_than(c.data(), MAX_DEPTH) {
                        bail!("manifest is not valid JSON: nested more than {MAX_DEPTH} deep");
                    }
                    found = Some(serde_json::from_slice(c.data()).context("manifest is not valid JSON")?);
                }
                _ => {}
            }
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_brackets_outside_strings_only() {
        let nest = |d: usize| format!("{}{}", "[".repeat(d), "]".repeat(d));
        assert!(!nests_deeper_than(nest(128).as_bytes(), 128));
        assert!(nests_deeper_than(nest(129).as_bytes(), 128));
        let quoted = format!(r#"{{"x":"{}\"{}"}}"#, "[".repeat(500), "{".repeat(500));
        assert!(!nests_deeper_than(quoted.as_bytes(), 128));
    }
}

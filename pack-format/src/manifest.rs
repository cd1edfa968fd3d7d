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
                    found = Some(serde_json::from_slice(c.data()).context("manifest is not valid JSON")?);
                }
                _ => {}
            }
        }
        Ok(found)
    }
}

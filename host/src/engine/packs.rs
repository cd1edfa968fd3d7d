//! Loading rule packs.
//!
//! Everything that can refuse a pack file runs before anything is
//! compiled, cheapest first: its size ([`Limits::pack_bytes`]), then either
//! its signature under the trust policy (`signing::verify`: key, expiry,
//! WIT version, tenant scope) or, on the unverified path for development,
//! its manifest and WIT version alone. Only then is it compiled (through
//! the on-disk cache (`cache.rs`) when one is given), checked to import nothing,
//! and pre-linked into a [`LoadedPack`] with an empty pool of live
//! instances. The embedded default pack, built with this binary, skips the
//! checks on the file and starts at the manifest.

use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

use wasmtime::component::{Component, Linker};
use wasmtime::{Engine, Store};

use super::classify::{classify, load_err};
use super::forward::rule_set_bytes;
use super::store::{new_host, ticks, Answers, Host, Live};
use crate::bindings::pack::Pack;
use crate::digest::sha256_hex;
use crate::error::{Error, Guest, Result};
use crate::limits::Limits;
use crate::manifest::Manifest;
use crate::signing::{self, TrustPolicy};
use crate::wit::WIT_VERSION;

/// A compiled, linked component ready to instantiate.
pub(super) struct Prepared {
    pub(super) pre: wasmtime::component::InstancePre<Host>,
}

/// A rule pack loaded into a [`Sanitizer`](super::Sanitizer), with its pool of live instances.
pub struct LoadedPack {
    pub(super) pre: Prepared,
    pub(super) manifest: Manifest,
    pub(super) sha256: String,
    /// Platform rule ids its platform-signed manifest lets it relax.
    pub(super) grant: std::sync::Arc<[String]>,
    pub(super) pool: Mutex<Vec<Live>>,
    /// Its answers as the platform's pack (see [`Answers`]).
    pub(super) answers: Arc<Answers>,
}

impl std::fmt::Debug for LoadedPack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedPack").field("name", &self.manifest.name).field("sha256", &self.sha256).finish()
    }
}

impl LoadedPack {
    /// The pack's manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }
    /// Platform rule ids this pack may turn off (`may-relax` in its
    /// signed manifest; empty for an unsigned pack).
    pub fn may_relax(&self) -> &[String] {
        &self.grant
    }
}

/// Verifies a pack for `tenant` under `policy` (before compiling
/// anything), then compiles it, through the on-disk cache when given.
pub(super) fn load_verified(
    engine: &Engine,
    limits: &Limits,
    wasm: &[u8],
    policy: &TrustPolicy,
    tenant: Option<&str>,
    cache: Option<&std::path::Path>,
) -> Result<LoadedPack> {
    check_pack_size(wasm, limits)?;
    let verified = signing::verify(wasm, policy, tenant, std::time::SystemTime::now())?;
    let sha = sha256_hex(wasm);
    let component = super::cache::compile_cached(engine, wasm, &sha, cache)?;
    let mut pack = prepare_pack(engine, verified.manifest, sha, component)?;
    pack.grant = verified.signed.map(|m| m.may_relax).unwrap_or_default().into();
    Ok(pack)
}

/// A pack component with a manifest from a core module built with
/// wit-bindgen for the `pack` world; the manifest comes from the pack
/// itself, instantiated once under the pack limits.
pub(super) fn wrap_core(engine: &Engine, limits: &Limits, peak: &Arc<AtomicUsize>, core: &[u8]) -> Result<Vec<u8>> {
    let component = crate::componentize::componentize(core)
        .map_err(|e| Error::Load { what: "pack core module".into(), reason: format!("{e:#}") })?;
    let compiled = Component::new(engine, &component).map_err(load_err("pack component"))?;
    if let Some((name, _)) = compiled.component_type().imports(engine).next() {
        return Err(Error::Load {
            what: "pack core module".into(),
            reason: format!("packs may import nothing, but it imports `{name}`"),
        });
    }
    let mut store = Store::new(engine, new_host(*limits, peak, "new pack"));
    store.limiter(|h| h);
    store.set_fuel(limits.pack_fuel).map_err(load_err("store"))?;
    store.set_epoch_deadline(ticks(limits.timeout));
    store.data_mut().in_pack = true;
    let who = || Guest::Pack("new pack".into());
    let inst = Linker::new(engine).instantiate(&mut store, &compiled).map_err(|e| classify(e, &store, who()))?;
    let pack = Pack::new(&mut store, &inst).map_err(load_err("pack exports"))?;
    let iface = pack.result_sanitizer_core_rule_pack();
    let info = iface.call_info(&mut store).map_err(|e| classify(e, &store, who()))?;
    let rules = iface.call_rules(&mut store).map_err(|e| classify(e, &store, who()))?;
    let size = rule_set_bytes(&rules);
    if size > limits.rule_set_bytes {
        return Err(Error::TooLarge {
            guest: who(),
            what: "a rule set",
            size: size as u64,
            limit: limits.rule_set_bytes as u64,
        });
    }
    let has_detect = iface.call_has_detect(&mut store).map_err(|e| classify(e, &store, who()))?;
    let ids: Vec<String> = rules.rules.iter().map(|r| r.id.clone()).collect();
    check_rule_ids(&ids)?;
    let manifest = Manifest {
        name: info.name,
        version: info.version,
        tenant: info.tenant,
        wit_version: info.wit_version,
        rule_ids: ids,
        has_detect,
    };
    Ok(manifest.append_to(component))
}

/// Loads a pack without signature checks; manifest and WIT version are
/// checked before compiling.
pub(super) fn load_unverified(engine: &Engine, wasm: &[u8], limits: &Limits) -> Result<LoadedPack> {
    check_pack_size(wasm, limits)?;
    let manifest = read_manifest(wasm)?;
    if manifest.wit_version != WIT_VERSION {
        return Err(Error::Load {
            what: format!("rule pack `{}`", manifest.name),
            reason: format!("built for WIT {} but this host speaks {WIT_VERSION}", manifest.wit_version),
        });
    }
    let component = Component::new(engine, wasm).map_err(load_err("rule pack"))?;
    prepare_pack(engine, manifest, sha256_hex(wasm), component)
}

/// Refuses a pack file larger than [`Limits::pack_bytes`] before reading it.
fn check_pack_size(wasm: &[u8], limits: &Limits) -> Result<()> {
    if wasm.len() > limits.pack_bytes {
        return Err(Error::TooLarge {
            // The manifest is a custom section: reading it parses headers only.
            guest: Guest::Pack(Manifest::read(wasm).ok().flatten().map_or_else(|| "(unnamed)".into(), |m| m.name)),
            what: "a pack file",
            size: wasm.len() as u64,
            limit: limits.pack_bytes as u64,
        });
    }
    Ok(())
}

pub(super) fn read_manifest(wasm: &[u8]) -> Result<Manifest> {
    let m = Manifest::read(wasm)
        .map_err(|e| Error::Load { what: "rule pack".into(), reason: format!("{e:#}") })?
        .ok_or_else(|| Error::Load { what: "rule pack".into(), reason: "no manifest section".into() })?;
    check_rule_ids(&m.rule_ids)?;
    Ok(m)
}

/// Refuses ids outside the documented form before anything is compiled
/// (the pipeline refuses them too, for hosts that skip this).
pub(super) fn check_rule_ids(ids: &[String]) -> Result<()> {
    match ids.iter().position(|id| !result_sanitizer_rule_engine::valid_rule_id(id)) {
        Some(i) => Err(Error::InvalidPack(format!("rule {}: {}", i + 1, result_sanitizer_rule_engine::RULE_ID_FORM))),
        None => Ok(()),
    }
}

/// Checks that a compiled pack imports nothing and pre-links it.
pub(super) fn prepare_pack(
    engine: &Engine,
    manifest: Manifest,
    sha256: String,
    component: Component,
) -> Result<LoadedPack> {
    // A pack imports nothing: an import would be a way out of the sandbox.
    let ty = component.component_type();
    if let Some((name, _)) = ty.imports(engine).next() {
        return Err(Error::Load {
            what: format!("rule pack `{}`", manifest.name),
            reason: format!("packs may import nothing, but it imports `{name}`"),
        });
    }
    let pack_linker: Linker<Host> = Linker::new(engine);
    let pre = pack_linker.instantiate_pre(&component).map_err(load_err("rule pack"))?;
    Ok(LoadedPack {
        pre: Prepared { pre },
        manifest,
        sha256,
        grant: Vec::new().into(),
        pool: Mutex::new(Vec::new()),
        answers: Arc::default(),
    })
}

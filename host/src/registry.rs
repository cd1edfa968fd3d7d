//! Serving many tenants from one host.
//!
//! # Model
//!
//! A directory holds one signed pack per tenant (`*.wasm`). Opening the
//! registry reads only each file's manifest to map tenant → file; nothing
//! is verified or compiled until a tenant's first call. Then the pack is
//! verified (signature, key, expiry, WIT version, tenant scope — before any
//! compilation), compiled once, and kept in an LRU of at most `capacity`
//! loaded packs; each loaded pack owns its pool of live instances, so
//! eviction frees their stores and memory stays bounded.
//!
//! Compiled packs are cached on disk in a host-owned directory, keyed by
//! the wasm's sha256 and the engine's version and configuration. Only files
//! this host wrote there are deserialized; the signature is always checked
//! on the `.wasm` first.
//!
//! A tenant without a pack of its own is served by the default pack. An
//! update that fails verification leaves the previous pack active.

use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use lru::LruCache;

use crate::api;
use crate::engine::{LoadedPack, Sanitizer};
use crate::error::Result;
use crate::manifest::Manifest;
use crate::signing::TrustPolicy;

/// Registry settings.
#[derive(Debug, Clone)]
pub struct RegistryConfig {
    /// Directory of `*.wasm` packs.
    pub dir: PathBuf,
    /// Which signatures are accepted.
    pub policy: TrustPolicy,
    /// Where compiled packs are cached (created 0700); `None`: no cache.
    pub cache_dir: Option<PathBuf>,
    /// Most packs kept loaded at once.
    pub capacity: usize,
}

/// Packs by tenant.
pub struct Registry {
    sanitizer: Arc<Sanitizer>,
    config: RegistryConfig,
    files: Mutex<HashMap<String, PathBuf>>,
    loaded: Mutex<LruCache<String, Arc<LoadedPack>>>,
}

impl Registry {
    /// Indexes `config.dir` (manifests only).
    pub fn open(sanitizer: Arc<Sanitizer>, config: RegistryConfig) -> Result<Self> {
        let mut files = HashMap::new();
        for entry in std::fs::read_dir(&config.dir)? {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "wasm") {
                let bytes = std::fs::read(&path)?;
                if let Ok(Some(m)) = Manifest::read(&bytes) {
                    if m.tenant != "*" {
                        files.insert(m.tenant, path);
                    }
                }
            }
        }
        let cap = NonZeroUsize::new(config.capacity.max(1)).expect("non-zero");
        Ok(Self { sanitizer, config, files: Mutex::new(files), loaded: Mutex::new(LruCache::new(cap)) })
    }

    /// Number of tenants with a pack of their own.
    pub fn tenants(&self) -> usize {
        self.files.lock().expect("lock").len()
    }

    /// The pack serving `tenant`, loading it on first use.
    pub fn pack_for(&self, tenant: &str) -> Result<Arc<LoadedPack>> {
        if let Some(p) = self.loaded.lock().expect("lock").get(tenant) {
            return Ok(p.clone());
        }
        let path = self.files.lock().expect("lock").get(tenant).cloned();
        let Some(path) = path else { return Ok(self.sanitizer.default_pack().clone()) };
        let wasm = std::fs::read(&path)?;
        let pack = Arc::new(self.sanitizer.load_pack(&wasm, &self.config.policy, Some(tenant), self.cache())?);
        self.loaded.lock().expect("lock").put(tenant.to_string(), pack.clone());
        Ok(pack)
    }

    /// Replaces `tenant`'s pack with `wasm`, written to the directory only
    /// once it verifies and loads; a refused update changes nothing.
    pub fn update(&self, tenant: &str, wasm: &[u8]) -> Result<Arc<LoadedPack>> {
        let pack = Arc::new(self.sanitizer.load_pack(wasm, &self.config.policy, Some(tenant), self.cache())?);
        let path = self.config.dir.join(format!("{tenant}.wasm"));
        let tmp = self.config.dir.join(format!(".{tenant}.wasm.tmp"));
        std::fs::write(&tmp, wasm)?;
        std::fs::rename(&tmp, &path)?;
        self.files.lock().expect("lock").insert(tenant.to_string(), path);
        self.loaded.lock().expect("lock").put(tenant.to_string(), pack.clone());
        Ok(pack)
    }

    /// Sanitizes for `tenant` with its pack.
    pub fn sanitize(&self, tenant: &str, input: &[u8], opts: &api::Options) -> Result<api::Sanitized> {
        let pack = self.pack_for(tenant)?;
        self.sanitizer.sanitize_with(&pack, input, opts)
    }

    fn cache(&self) -> Option<&Path> {
        self.config.cache_dir.as_deref()
    }
}

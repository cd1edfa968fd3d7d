//! The full-output store behind `recall`.
//!
//! When a result is cut, the model is told how to read the rest. If the
//! host keeps the full output, the marker says the rest is "not shown but
//! recallable" and names the call id; `Sanitizer::recall` then serves a
//! slice of it through the same pipeline (redacted, budgeted), with
//! positions of the whole output. If not, the marker says "not kept" and
//! points to calling the tool again.
//!
//! The store is per host, keyed by call id, and every entry belongs to one
//! tenant. Entries live for a TTL and the store holds at most
//! `max_total_bytes` (the oldest go first); an output larger than
//! `max_item_bytes` is kept up to that size and the markers say where
//! keeping stopped. Entries are in memory, or in files in a 0700 directory
//! named by the sha256 of the call id. A recall of an id that was never
//! kept, has expired, was evicted, or belongs to another tenant is an
//! explicit [`RecallError`].
//!
//! With the `redis` feature, a store can instead keep its entries in Redis,
//! shared by several hosts, sealed with a key of the host's
//! configuration ([`shared`]); the callers do not change.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::api;
use crate::engine::{LoadedPack, Sanitizer};
use crate::error::{Error, Result};
use crate::io::read_head_tail;

#[cfg(feature = "redis")]
pub mod shared;
#[cfg(feature = "redis")]
pub use shared::{RedisConfig, StoreKey};

/// How a store keeps outputs.
#[derive(Clone, Debug)]
pub struct StoreConfig {
    /// How long an output is kept.
    pub ttl: Duration,
    /// Most bytes kept over all entries.
    pub max_total_bytes: usize,
    /// Most bytes kept of one output.
    pub max_item_bytes: usize,
    /// Keep outputs in files here (created 0700) instead of memory.
    pub dir: Option<PathBuf>,
    /// Keep outputs in Redis, sealed, instead (the total is then bounded
    /// by Redis's `maxmemory`, not `max_total_bytes`).
    #[cfg(feature = "redis")]
    pub redis: Option<RedisConfig>,
}

impl Default for StoreConfig {
    fn default() -> Self {
        Self {
            ttl: Duration::from_secs(15 * 60),
            max_total_bytes: 256 << 20,
            max_item_bytes: 16 << 20,
            dir: None,
            #[cfg(feature = "redis")]
            redis: None,
        }
    }
}

pub use crate::error::RecallError;

enum Data {
    Memory(Arc<Vec<u8>>),
    Disk(PathBuf),
}

struct Entry {
    tenant: String,
    meta: String,
    size: usize,
    expires: Instant,
    data: Data,
    /// The first result of this call was cut (for metrics).
    truncated: bool,
}

#[derive(Default)]
struct Inner {
    entries: HashMap<String, Entry>,
    order: VecDeque<String>,
    total: usize,
    /// Ids that are gone, and why (bounded).
    gone: HashMap<String, RecallError>,
    gone_order: VecDeque<String>,
}

/// A per-host store of full outputs, by tenant and call id.
pub struct OutputStore {
    cfg: StoreConfig,
    inner: Mutex<Inner>,
    #[cfg(feature = "redis")]
    redis: Option<shared::Redis>,
}

/// A kept output handed back for a recall.
pub struct Kept {
    /// The bytes kept (a prefix of the output when it was larger than
    /// `max_item_bytes`).
    pub bytes: Arc<Vec<u8>>,
    /// Whether its first result was cut.
    pub truncated: bool,
    /// What the caller kept with it ([`OutputStore::put_with`]).
    pub meta: String,
}

const GONE_MAX: usize = 100_000;

impl Kept {
    /// The tool, content type and input kind an output was kept with
    /// ([`kept_meta`]), if its meta says.
    pub fn origin(&self) -> Option<(String, Option<String>, api::InputKind)> {
        let v: serde_json::Value = serde_json::from_str(&self.meta).ok()?;
        let input = match v.get("input")?.as_str()? {
            "raw" => api::InputKind::Raw,
            _ => api::InputKind::Mcp,
        };
        let ct = v.get("content_type").and_then(serde_json::Value::as_str).map(str::to_string);
        Some((v.get("tool")?.as_str()?.to_string(), ct, input))
    }
}

/// The meta a kept output carries so that any host can recall it: the
/// options' tool, content type and input kind (read by [`Kept::origin`]).
pub fn kept_meta(o: &api::Options) -> String {
    let input = match o.input {
        api::InputKind::Raw => "raw",
        api::InputKind::Mcp => "mcp",
    };
    serde_json::json!({ "tool": o.tool, "content_type": o.content_type, "input": input }).to_string()
}

impl OutputStore {
    /// A store with `cfg`; creates the directory for a disk store.
    pub fn new(cfg: StoreConfig) -> std::io::Result<Self> {
        if let Some(d) = &cfg.dir {
            std::fs::create_dir_all(d)?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700))?;
            }
        }
        #[cfg(feature = "redis")]
        let redis = cfg.redis.as_ref().map(|r| shared::Redis::new(r, cfg.ttl)).transpose()?;
        Ok(Self {
            cfg,
            inner: Mutex::new(Inner::default()),
            #[cfg(feature = "redis")]
            redis,
        })
    }

    /// Whether entries are kept outside this process (Redis).
    pub fn is_shared(&self) -> bool {
        #[cfg(feature = "redis")]
        if self.redis.is_some() {
            return true;
        }
        false
    }

    /// Keeps `bytes` (up to `max_item_bytes`) for `tenant` under
    /// `call_id`; returns how many bytes are kept.
    pub fn put(&self, tenant: &str, call_id: &str, bytes: &[u8]) -> Result<u64, crate::Error> {
        self.put_with(tenant, call_id, bytes, "")
    }

    /// [`Self::put`], with `meta` kept beside the bytes (what a recall
    /// needs to know of the output, for a host that did not keep it). A
    /// shared store that cannot be reached keeps nothing (0 bytes kept: the
    /// markers then say the rest is not kept).
    pub fn put_with(&self, tenant: &str, call_id: &str, bytes: &[u8], meta: &str) -> Result<u64, crate::Error> {
        let keep = &bytes[..bytes.len().min(self.cfg.max_item_bytes)];
        #[cfg(feature = "redis")]
        if let Some(r) = &self.redis {
            if keep.len() > self.cfg.max_total_bytes {
                return Ok(0);
            }
            return match r.put(tenant, call_id, meta, keep)? {
                shared::Put::Kept => Ok(keep.len() as u64),
                shared::Put::Duplicate => Err(RecallError::Duplicate.into()),
                shared::Put::Unavailable => Ok(0),
            };
        }
        let mut g = self.inner.lock().expect("store lock");
        self.expire(&mut g);
        if let Some(e) = g.entries.get(call_id) {
            return Err(if e.tenant == tenant { RecallError::Duplicate } else { RecallError::OtherTenant }.into());
        }
        while g.total + keep.len() > self.cfg.max_total_bytes {
            let Some(old) = g.order.pop_front() else { break };
            self.drop_entry(&mut g, &old, RecallError::Evicted);
        }
        if keep.len() > self.cfg.max_total_bytes {
            return Ok(0);
        }
        let data = match &self.cfg.dir {
            Some(d) => {
                let path = d.join(file_name(call_id));
                std::fs::write(&path, keep)?;
                Data::Disk(path)
            }
            None => Data::Memory(Arc::new(keep.to_vec())),
        };
        let entry = Entry {
            tenant: tenant.into(),
            meta: meta.into(),
            size: keep.len(),
            expires: Instant::now() + self.cfg.ttl,
            data,
            truncated: false,
        };
        g.total += keep.len();
        g.order.push_back(call_id.into());
        g.gone.remove(call_id);
        g.entries.insert(call_id.into(), entry);
        Ok(keep.len() as u64)
    }

    /// Notes whether the first result of `tenant`'s `call_id` was cut.
    pub fn set_truncated(&self, tenant: &str, call_id: &str, truncated: bool) {
        #[cfg(feature = "redis")]
        if let Some(r) = &self.redis {
            if truncated {
                r.set_truncated(tenant, call_id);
            }
            return;
        }
        let _ = tenant;
        if let Some(e) = self.inner.lock().expect("store lock").entries.get_mut(call_id) {
            e.truncated = truncated;
        }
    }

    /// The output kept for `tenant` under `call_id`.
    pub fn get(&self, tenant: &str, call_id: &str) -> Result<Kept, crate::Error> {
        #[cfg(feature = "redis")]
        if let Some(r) = &self.redis {
            let (meta, bytes, truncated) = r.get(tenant, call_id)?;
            return Ok(Kept { bytes: Arc::new(bytes), truncated, meta });
        }
        let mut g = self.inner.lock().expect("store lock");
        self.expire(&mut g);
        let Some(e) = g.entries.get(call_id) else {
            return Err(g.gone.get(call_id).cloned().unwrap_or(RecallError::Unknown).into());
        };
        if e.tenant != tenant {
            return Err(RecallError::OtherTenant.into());
        }
        let bytes = match &e.data {
            Data::Memory(b) => b.clone(),
            Data::Disk(p) => Arc::new(std::fs::read(p)?),
        };
        Ok(Kept { bytes, truncated: e.truncated, meta: e.meta.clone() })
    }

    /// The most bytes kept of one output.
    pub fn max_item_bytes(&self) -> usize {
        self.cfg.max_item_bytes
    }

    /// Bytes kept over all entries (in this process: 0 for a shared store).
    pub fn total_bytes(&self) -> usize {
        self.inner.lock().expect("store lock").total
    }

    fn expire(&self, g: &mut Inner) {
        let now = Instant::now();
        let dead: Vec<String> = g.entries.iter().filter(|(_, e)| e.expires <= now).map(|(k, _)| k.clone()).collect();
        for k in dead {
            self.drop_entry(g, &k, RecallError::Expired);
        }
    }

    fn drop_entry(&self, g: &mut Inner, call_id: &str, why: RecallError) {
        if let Some(e) = g.entries.remove(call_id) {
            g.total -= e.size;
            if let Data::Disk(p) = e.data {
                let _ = std::fs::remove_file(p);
            }
            g.order.retain(|k| k != call_id);
            g.gone.insert(call_id.into(), why);
            g.gone_order.push_back(call_id.into());
            while g.gone_order.len() > GONE_MAX {
                if let Some(k) = g.gone_order.pop_front() {
                    g.gone.remove(&k);
                }
            }
        }
    }
}

fn file_name(call_id: &str) -> String {
    crate::digest::sha256_hex(call_id.as_bytes())
}

/// Keeping outputs and reading them back: the `Sanitizer`'s calls that
/// use a store (here, above the engine, so the engine knows no store).
impl Sanitizer {
    /// Sanitizes a result and keeps the full output in `store` for
    /// `tenant` under `opts.call_id`, so that its markers offer `recall`.
    pub fn sanitize_kept(
        &self,
        pack: &LoadedPack,
        store: &OutputStore,
        tenant: &str,
        input: &[u8],
        opts: &api::Options,
    ) -> Result<api::Sanitized> {
        if opts.call_id.is_empty() {
            return Err(Error::InvalidOptions("keeping an output for recall needs a call id".into()));
        }
        let kept = store.put_with(tenant, &opts.call_id, input, &kept_meta(opts))?;
        let mut o = opts.clone();
        o.recall_bytes = (kept > 0).then_some(kept);
        // A long output is read as any other (head + tail, the middle
        // drained), so its end shows; what it omits is recallable.
        let b = self.effective_budget(pack, &o)?;
        let read;
        let input = if b.head_bytes > 0 && o.gap.is_none() && input.len() as u64 > b.head_bytes + b.tail_bytes {
            read = read_head_tail(self, pack, input, b.head_bytes, b.tail_bytes, u64::MAX)?;
            o.gap = read.gap.clone();
            &read.bytes[..]
        } else {
            input
        };
        let out = self.sanitize_with(pack, input, &o)?;
        store.set_truncated(tenant, &opts.call_id, out.record.truncated);
        Ok(out)
    }

    /// Reads part of a kept output back, through the same pipeline
    /// (redacted, budgeted), with positions of the whole output. Unknown,
    /// expired, evicted and other tenants' ids are refused explicitly.
    pub fn recall(
        &self,
        pack: &LoadedPack,
        store: &OutputStore,
        tenant: &str,
        call_id: &str,
        slice: api::Slice,
        opts: &api::Options,
    ) -> Result<api::Sanitized> {
        let kept = store.get(tenant, call_id)?;
        self.recall_kept(pack, &kept, call_id, slice, opts)
    }

    /// [`Self::recall`] of an output already read from its store.
    pub fn recall_kept(
        &self,
        pack: &LoadedPack,
        kept: &Kept,
        call_id: &str,
        slice: api::Slice,
        opts: &api::Options,
    ) -> Result<api::Sanitized> {
        let mut o = opts.clone();
        o.call_id = call_id.into();
        o.slice = Some(slice);
        o.recall_bytes = Some(kept.bytes.len() as u64);
        self.count_recall(kept.truncated);
        self.sanitize_with(pack, &kept.bytes, &o)
    }
}

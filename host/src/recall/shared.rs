//! The recall store's shared backend: Redis (feature `redis`).
//!
//! Several proxies (replicas) keep results in one Redis, so that a marker
//! written by one is recalled through another. Redis never holds anything
//! in clear that came from a result or names a tenant:
//!
//! * an entry's **value** is `RS1 || nonce || XChaCha20-Poly1305(meta,
//!   bytes)`, with a fresh random 192-bit nonce per entry and the tenant and
//!   call id as associated data, so a value copied under another key (or
//!   another tenant's) does not open;
//! * its **key** is `rs:recall:` and the hex of an HMAC-SHA256 of the tenant
//!   and call id (a separate subkey): neither shows;
//! * the AEAD key comes from the proxy's configuration ([`StoreKey`]), never
//!   from or into Redis.
//!
//! Entries expire by Redis's own TTL (`SET .. NX PX`). The per-item bound is
//! the store's; the total is Redis's `maxmemory` (with `volatile-ttl` or
//! `allkeys-lru`, an evicted entry then reads as unknown).
//!
//! When Redis cannot be reached, nothing is kept (the markers then say the
//! rest is not kept) and recalls are refused with
//! [`RecallError::Unavailable`]; connecting again is tried at most once a
//! second, so a dead Redis costs a result one short connect attempt at most.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::error::RecallError;

/// Time to connect to Redis before the attempt counts as a failure.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(300);
/// Time for one command (a value is at most `max_item_bytes`).
const IO_TIMEOUT: Duration = Duration::from_secs(5);
/// After a failure, no new connection is tried for this long.
const RETRY_AFTER: Duration = Duration::from_secs(1);
/// Idle connections kept for reuse.
const IDLE_MAX: usize = 8;
/// The prefix of every key this store writes.
pub(crate) const KEY_PREFIX: &str = "rs:recall:";
const MAGIC: &[u8; 3] = b"RS1";
const NONCE: usize = 24;

/// The secret the shared store is sealed with, from the proxy's
/// configuration (a key file or an environment variable), never stored in
/// Redis. Three subkeys are derived from it: the AEAD key, the key that
/// names entries, and one for other tags (session ids).
#[derive(Clone)]
pub struct StoreKey {
    seal: [u8; 32],
    names: [u8; 32],
    tags: [u8; 32],
}

impl std::fmt::Debug for StoreKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StoreKey(..)")
    }
}

fn hmac(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut m = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC takes any key length");
    for p in parts {
        m.update(&(p.len() as u64).to_be_bytes());
        m.update(p);
    }
    m.finalize().into_bytes().into()
}

impl StoreKey {
    /// The key from a secret's text (a key file's or a variable's
    /// contents, surrounding whitespace ignored): at least 32 bytes, e.g.
    /// `openssl rand -hex 32`.
    pub fn from_secret(secret: &[u8]) -> Result<Self, String> {
        let s = secret.trim_ascii();
        if s.len() < 32 {
            return Err(format!(
                "the recall store key is {} bytes; it must be at least 32 (e.g. `openssl rand -hex 32`)",
                s.len()
            ));
        }
        Ok(Self {
            seal: hmac(s, &[b"result-sanitizer recall seal v1"]),
            names: hmac(s, &[b"result-sanitizer recall names v1"]),
            tags: hmac(s, &[b"result-sanitizer tags v1"]),
        })
    }

    /// An HMAC-SHA256 tag of `parts` under `label`, for anything else that
    /// every holder of the key must be able to check (session ids).
    pub fn tag(&self, label: &str, parts: &[&[u8]]) -> [u8; 32] {
        let mut all: Vec<&[u8]> = vec![label.as_bytes()];
        all.extend_from_slice(parts);
        hmac(&self.tags, &all)
    }

    /// The Redis key of `tenant`'s `call_id`.
    fn name(&self, tenant: &str, call_id: &str) -> String {
        format!("{KEY_PREFIX}{}", crate::digest::hex(&hmac(&self.names, &[tenant.as_bytes(), call_id.as_bytes()])))
    }

    fn aad(tenant: &str, call_id: &str) -> Vec<u8> {
        let mut a = b"result-sanitizer recall v1\0".to_vec();
        a.extend_from_slice(&(tenant.len() as u64).to_be_bytes());
        a.extend_from_slice(tenant.as_bytes());
        a.extend_from_slice(call_id.as_bytes());
        a
    }

    /// `meta` and `bytes` sealed for `tenant`'s `call_id`.
    fn seal(&self, tenant: &str, call_id: &str, meta: &str, bytes: &[u8]) -> Result<Vec<u8>, std::io::Error> {
        let mut nonce = [0u8; NONCE];
        getrandom::fill(&mut nonce).map_err(|e| std::io::Error::other(e.to_string()))?;
        let mut plain = Vec::with_capacity(8 + meta.len() + bytes.len());
        plain.extend_from_slice(&(meta.len() as u64).to_be_bytes());
        plain.extend_from_slice(meta.as_bytes());
        plain.extend_from_slice(bytes);
        let aad = Self::aad(tenant, call_id);
        let c = XChaCha20Poly1305::new((&self.seal).into())
            .encrypt(XNonce::from_slice(&nonce), Payload { msg: &plain, aad: &aad })
            .map_err(|_| std::io::Error::other("sealing a kept result failed"))?;
        let mut out = Vec::with_capacity(MAGIC.len() + NONCE + c.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&c);
        Ok(out)
    }

    /// The meta and bytes of a value sealed for `tenant`'s `call_id`, or
    /// `None` when it does not open (another key, tenant or call id, or
    /// changed).
    fn open(&self, tenant: &str, call_id: &str, value: &[u8]) -> Option<(String, Vec<u8>)> {
        let rest = value.strip_prefix(MAGIC)?;
        if rest.len() < NONCE {
            return None;
        }
        let (nonce, c) = rest.split_at(NONCE);
        let aad = Self::aad(tenant, call_id);
        let plain = XChaCha20Poly1305::new((&self.seal).into())
            .decrypt(XNonce::from_slice(nonce), Payload { msg: c, aad: &aad })
            .ok()?;
        let n = u64::from_be_bytes(plain.get(..8)?.try_into().ok()?) as usize;
        let meta = String::from_utf8(plain.get(8..8usize.checked_add(n)?)?.to_vec()).ok()?;
        Some((meta, plain[8 + n..].to_vec()))
    }
}

/// Where the shared store is: a `redis://HOST:PORT[/DB]` URL and the key.
#[derive(Clone, Debug)]
pub struct RedisConfig {
    /// `redis://HOST:PORT[/DB]` (`redis://:PASSWORD@HOST:PORT` for AUTH).
    pub url: String,
    /// The secret entries are sealed with.
    pub key: Arc<StoreKey>,
}

/// A connection to Redis shared by the store's callers.
pub(super) struct Redis {
    client: redis::Client,
    key: Arc<StoreKey>,
    ttl: Duration,
    idle: Mutex<Vec<redis::Connection>>,
    /// No new connection is tried before this instant (after a failure).
    retry_at: Mutex<Option<Instant>>,
}

/// Whether the value kept under a call id was taken already.
pub(super) enum Put {
    Kept,
    Duplicate,
    Unavailable,
}

impl Redis {
    pub(super) fn new(cfg: &RedisConfig, ttl: Duration) -> std::io::Result<Self> {
        if !cfg.url.starts_with("redis://") {
            return Err(std::io::Error::other(format!(
                "the recall store must be a redis://HOST:PORT[/DB] URL (got `{}`)",
                cfg.url.split('@').next_back().unwrap_or_default()
            )));
        }
        let client = redis::Client::open(cfg.url.as_str())
            .map_err(|e| std::io::Error::other(format!("the recall store URL: {}", e.category())))?;
        Ok(Self { client, key: cfg.key.clone(), ttl, idle: Mutex::default(), retry_at: Mutex::default() })
    }

    fn connect(&self) -> redis::RedisResult<redis::Connection> {
        let c = self.client.get_connection_with_timeout(CONNECT_TIMEOUT)?;
        c.set_read_timeout(Some(IO_TIMEOUT))?;
        c.set_write_timeout(Some(IO_TIMEOUT))?;
        Ok(c)
    }

    /// Runs `f` on a connection: an idle one, else a new one (once Redis
    /// went away, the idle ones are dropped and a new one is tried once).
    /// `None` when Redis cannot be reached.
    fn with<T>(&self, what: &str, f: impl Fn(&mut redis::Connection) -> redis::RedisResult<T>) -> Option<T> {
        let pooled = self.idle.lock().expect("idle lock").pop();
        let mut err = None;
        if let Some(mut c) = pooled {
            match f(&mut c) {
                Ok(t) => return Some(self.give_back(c, t)),
                Err(e) if e.is_io_error() || e.is_connection_dropped() || e.is_timeout() => {
                    self.idle.lock().expect("idle lock").clear();
                    err = Some(e);
                }
                Err(e) => {
                    self.failed(what, &e);
                    return None;
                }
            }
        }
        let due = self.retry_at.lock().expect("retry lock").is_some_and(|t| Instant::now() < t);
        if due {
            if let Some(e) = err {
                self.failed(what, &e);
            }
            return None;
        }
        match self.connect().and_then(|mut c| f(&mut c).map(|t| (c, t))) {
            Ok((c, t)) => {
                *self.retry_at.lock().expect("retry lock") = None;
                Some(self.give_back(c, t))
            }
            Err(e) => {
                *self.retry_at.lock().expect("retry lock") = Some(Instant::now() + RETRY_AFTER);
                self.failed(what, &e);
                None
            }
        }
    }

    fn give_back<T>(&self, c: redis::Connection, t: T) -> T {
        let mut idle = self.idle.lock().expect("idle lock");
        if idle.len() < IDLE_MAX {
            idle.push(c);
        }
        t
    }

    fn failed(&self, what: &str, e: &redis::RedisError) {
        // The error's kind only: its text could quote a reply.
        tracing::warn!(target: "result_sanitizer::recall", "the shared recall store failed to {what}: {}", e.category());
    }

    /// Keeps `meta` and `bytes` sealed, unless the id is taken.
    pub(super) fn put(&self, tenant: &str, call_id: &str, meta: &str, bytes: &[u8]) -> std::io::Result<Put> {
        let value = self.key.seal(tenant, call_id, meta, bytes)?;
        let name = self.key.name(tenant, call_id);
        let ms = self.ttl.as_millis().max(1) as u64;
        let set = |c: &mut redis::Connection| {
            redis::cmd("SET").arg(&name).arg(&value).arg("NX").arg("PX").arg(ms).query::<Option<String>>(c)
        };
        Ok(match self.with("keep a result", set) {
            Some(Some(_)) => Put::Kept,
            Some(None) => Put::Duplicate,
            None => Put::Unavailable,
        })
    }

    /// Notes that the first result of the id was cut (for metrics).
    pub(super) fn set_truncated(&self, tenant: &str, call_id: &str) {
        let name = format!("{}:t", self.key.name(tenant, call_id));
        let ms = self.ttl.as_millis().max(1) as u64;
        let _ = self.with("note a cut", |c| redis::cmd("SET").arg(&name).arg(1).arg("PX").arg(ms).query::<()>(c));
    }

    /// The meta, bytes and cut flag kept for `tenant`'s `call_id`.
    pub(super) fn get(&self, tenant: &str, call_id: &str) -> Result<(String, Vec<u8>, bool), RecallError> {
        let name = self.key.name(tenant, call_id);
        let t = format!("{name}:t");
        let got = self.with("read a result", |c| {
            redis::cmd("MGET").arg(&name).arg(&t).query::<(Option<Vec<u8>>, Option<Vec<u8>>)>(c)
        });
        let (value, cut) = got.ok_or(RecallError::Unavailable)?;
        let value = value.ok_or(RecallError::Unknown)?;
        let (meta, bytes) = self.key.open(tenant, call_id, &value).ok_or_else(|| {
            tracing::warn!(target: "result_sanitizer::recall", "a kept result did not open (another key, or changed)");
            RecallError::Unknown
        })?;
        Ok((meta, bytes, cut.is_some()))
    }
}

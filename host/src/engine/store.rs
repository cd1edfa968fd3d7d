//! Store data and the limits every store runs under.
//!
//! Each live instance has one `Store<Host>`. [`Host`] is the store's data:
//! the limits, the pack the pipeline's imports forward to, and what the
//! host saw when a guest stopped (which guest ran, which cap it hit), so
//! that `classify` can name the guest and the limit.
//!
//! Three limits act on a store: the [`ResourceLimiter`](wasmtime::ResourceLimiter)
//! below caps memory per guest (the pipeline's and the pack's memories
//! share the store, so `in_pack` says whose growth it is); fuel is set
//! per call (and swapped for the pack's own budget around a pack call, see
//! `forward::in_pack`); the epoch deadline is the wall-clock backstop, fed
//! by one ticker thread per engine.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use wasmtime::Engine;

use crate::bindings::pack::exports::result_sanitizer::core::rule_pack as pk;
use crate::bindings::pack::Pack;
use crate::bindings::pipeline::Pipeline;
use crate::error::Guest;
use crate::limits::{Limits, TICK};

/// One pack the pipeline's imports forward to: its instance in the store,
/// if it has one, and (the platform's) its [`Answers`].
pub(super) struct Linked {
    pub(super) pack: Option<Arc<Pack>>,
    pub(super) name: String,
    pub(super) answers: Option<Arc<Answers>>,
}

/// What the platform's pack answered the pipeline's `info`, `rules` (as
/// forwarded: bounded, `relax` emptied) and `has-detect`, kept from the
/// first live instance that asked. The pipeline asks once per instance,
/// and a pack's answers are its constants; so once all three are known
/// and the pack has no `detect`, a new live instance is made without an
/// instance of the platform's pack, and these answer for it. With many
/// tenants each live instance otherwise held one, its rule data resident:
/// 256 KiB of the default pack per tenant (docs/benchmarks.md).
#[derive(Default)]
pub(super) struct Answers {
    pub(super) info: OnceLock<pk::PackInfo>,
    pub(super) rules: OnceLock<pk::RuleSet>,
    pub(super) has_detect: OnceLock<bool>,
}

impl Answers {
    /// Whether these answer every call the pipeline can make of the pack.
    pub(super) fn stand_in(&self) -> bool {
        self.info.get().is_some() && self.rules.get().is_some() && self.has_detect.get() == Some(&false)
    }
}

/// Which of the pipeline's two pack imports a call is for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Which {
    /// `platform`: the platform pack.
    Platform,
    /// `rule-pack`: the tenant's pack.
    Tenant,
}

/// Store data: limits state and the packs the pipeline's imports forward to.
pub struct Host {
    pub(super) limits: Limits,
    pub(super) platform: Option<Linked>,
    pub(super) tenant: Option<Linked>,
    /// The tenant import serves the platform's own pack (no tenant pack,
    /// or the same bytes): it answers as an empty tenant layer under the
    /// platform's identity, which is what the pipeline makes of one pack
    /// linked to both imports, without lifting the rule set a second time
    /// and comparing it rule by rule (most of a one-shot CLI's start-up).
    pub(super) tenant_is_platform: bool,
    /// Platform rule ids the tenant's signed manifest grants in `may-relax`:
    /// the only ids kept in the tenant rule set's `relax`.
    pub(super) grant: Arc<[String]>,
    /// The pack being called, or last called (what a limit is blamed on).
    pub(super) pack_name: String,
    pub(super) in_pack: bool,
    /// Which guest hit a memory cap, if any.
    pub(super) memory_hit: Option<Guest>,
    /// Guest running when the last trap happened.
    pub(super) last_guest: Option<Guest>,
    /// A size limit a guest's return value broke: (what, size, limit).
    pub(super) too_large: Option<(&'static str, u64, u64)>,
    /// Largest pipeline memory seen by this sanitizer, bytes.
    pub(super) peak: Arc<AtomicUsize>,
}

impl wasmtime::ResourceLimiter for Host {
    fn memory_growing(&mut self, _current: usize, desired: usize, _max: Option<usize>) -> wasmtime::Result<bool> {
        let (cap, who) = if self.in_pack {
            (self.limits.pack_memory, Guest::Pack(self.pack_name.clone()))
        } else {
            (self.limits.memory, Guest::Pipeline)
        };
        if desired > cap {
            self.memory_hit = Some(who);
            return Ok(false);
        }
        if !self.in_pack {
            self.peak.fetch_max(desired, Ordering::Relaxed);
        }
        Ok(true)
    }

    fn table_growing(&mut self, _current: usize, desired: usize, _max: Option<usize>) -> wasmtime::Result<bool> {
        Ok(desired <= 100_000)
    }
}

/// Fresh store data for a store serving `pack_name`, under `limits`;
/// `peak` is the sanitizer's largest pipeline memory seen.
pub(super) fn new_host(limits: Limits, peak: &Arc<AtomicUsize>, pack_name: &str) -> Host {
    Host {
        limits,
        platform: None,
        tenant: None,
        tenant_is_platform: false,
        grant: Arc::from(Vec::new()),
        pack_name: pack_name.into(),
        in_pack: false,
        memory_hit: None,
        last_guest: None,
        too_large: None,
        peak: peak.clone(),
    }
}

/// A live instance: a store with pack instances and the pipeline instance
/// linked to them (made and pooled by `pool`, kept by each `LoadedPack`).
pub(super) struct Live {
    pub(super) store: wasmtime::Store<Host>,
    pub(super) pipeline: Pipeline,
    /// sha256 of the platform pack it was made with.
    pub(super) platform: String,
}

/// A wall-clock limit in epoch ticks (at least one).
pub(super) fn ticks(d: std::time::Duration) -> u64 {
    (d.as_millis() / TICK.as_millis()).max(1) as u64
}

/// Advances `engine`'s epoch every [`TICK`] until `stop` is set or the
/// engine is gone (the thread holds only a weak reference, so it never
/// keeps an engine alive).
pub(super) fn start_ticker(engine: &Engine, stop: Arc<AtomicBool>) {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("result-sanitizer-epoch".into())
        .spawn(move || loop {
            std::thread::sleep(TICK);
            if stop.load(Ordering::Relaxed) {
                return;
            }
            match weak.upgrade() {
                Some(e) => e.increment_epoch(),
                None => return,
            }
        })
        .expect("spawn epoch ticker");
}

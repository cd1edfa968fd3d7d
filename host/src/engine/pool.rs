//! Live instances, pooled per pack.
//!
//! A *live instance* is one `Store` holding the platform pack's instance,
//! the tenant pack's (the same instance when the tenant pack is the
//! platform's), and a pipeline instance whose `platform` and `rule-pack`
//! imports forward to them. Once the platform's pack has answered one
//! instance, and if it has no `detect`, later ones are made without an
//! instance of it ([`super::store::Answers`]). It is
//! worth keeping, because the pipeline builds its tokenizer tables once per
//! instance; so each [`LoadedPack`] keeps a few idle ones. A call takes one
//! (or makes one), and gives it back only if the call succeeded: after any
//! error out of wasm the instance is dropped and the next call gets a fresh
//! store.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use wasmtime::component::InstancePre;
use wasmtime::{Engine, Store};

use super::classify::{classify, load_err};
use super::packs::LoadedPack;
use super::store::{new_host, ticks, Host, Linked, Live};
use crate::bindings::pack::Pack;
use crate::bindings::pipeline::Pipeline;
use crate::error::{Guest, Result};
use crate::limits::Limits;
use crate::metrics::Metrics;

/// Most idle live instances kept per pack.
const POOL_MAX: usize = 8;

/// What making and running live instances needs from the sanitizer.
pub(super) struct Instances<'a> {
    pub(super) engine: &'a Engine,
    pub(super) pipeline_pre: &'a InstancePre<Host>,
    pub(super) limits: Limits,
    /// The platform's floor, linked into every instance.
    pub(super) platform: &'a LoadedPack,
    pub(super) peak: &'a Arc<AtomicUsize>,
    /// Where the fuel each call burns is counted.
    pub(super) metrics: &'a Metrics,
}

impl Instances<'_> {
    fn new_live(&self, pack: &LoadedPack) -> Result<Live> {
        let mut store = Store::new(self.engine, new_host(self.limits, self.peak, &pack.manifest.name));
        store.limiter(|h| h);
        store.set_epoch_deadline(ticks(self.limits.timeout));
        store.epoch_deadline_trap();
        let platform = self.platform;
        let tenant = self.instantiate_pack(&mut store, pack)?;
        let same = platform.sha256 == pack.sha256;
        let platform_inst = match same {
            true => Some(tenant.clone()),
            false if platform.answers.stand_in() => None,
            false => Some(self.instantiate_pack(&mut store, platform)?),
        };
        let data = store.data_mut();
        data.tenant_is_platform = same;
        data.tenant = Some(Linked { pack: Some(tenant), name: pack.manifest.name.clone(), answers: None });
        let answers = Some(platform.answers.clone());
        data.platform = Some(Linked { pack: platform_inst, name: platform.manifest.name.clone(), answers });
        data.grant = pack.grant.clone();
        store.set_fuel(self.limits.fuel).map_err(load_err("store"))?;
        let inst = self.pipeline_pre.instantiate(&mut store).map_err(|e| classify(e, &store, Guest::Pipeline))?;
        let pipeline = Pipeline::new(&mut store, &inst).map_err(load_err("pipeline exports"))?;
        Ok(Live { store, pipeline, platform: platform.sha256.clone() })
    }

    /// An instance of `pack` in `store`, made under the pack's fuel and
    /// memory budget.
    fn instantiate_pack(&self, store: &mut Store<Host>, pack: &LoadedPack) -> Result<Arc<Pack>> {
        store.set_fuel(self.limits.pack_fuel).map_err(load_err("store"))?;
        store.data_mut().pack_name = pack.manifest.name.clone();
        store.data_mut().in_pack = true;
        let inst = pack.pre.pre.instantiate(&mut *store);
        store.data_mut().in_pack = false;
        let inst = inst.map_err(|e| classify(e, store, Guest::Pack(pack.manifest.name.clone())))?;
        Ok(Arc::new(Pack::new(&mut *store, &inst).map_err(load_err("rule pack exports"))?))
    }

    /// Runs `f` on a live instance of `pack`; drops the instance on error.
    pub(super) fn with_live<R>(
        &self,
        pack: &LoadedPack,
        f: impl FnOnce(&mut Store<Host>, &Pipeline) -> wasmtime::Result<R>,
    ) -> Result<R> {
        // An instance made with another platform pack is not reused.
        let live = pack.pool.lock().expect("pool lock").pop().filter(|l| l.platform == self.platform.sha256);
        let mut live = match live {
            Some(l) => l,
            None => self.new_live(pack)?,
        };
        let store = &mut live.store;
        store.set_fuel(self.limits.fuel).map_err(load_err("store"))?;
        store.set_epoch_deadline(ticks(self.limits.timeout));
        store.data_mut().memory_hit = None;
        store.data_mut().last_guest = None;
        store.data_mut().too_large = None;
        let result = f(store, &live.pipeline);
        self.metrics.fuel(self.limits.fuel.saturating_sub(store.get_fuel().unwrap_or(0)));
        match result {
            Ok(r) => {
                let mut pool = pack.pool.lock().expect("pool lock");
                // A burst of concurrent calls does not pin its instances
                // forever: at most POOL_MAX idle ones are kept per pack.
                if pool.len() < POOL_MAX {
                    pool.push(live);
                }
                Ok(r)
            }
            // The instance is dropped here: after a trap it must not be
            // entered again, and any other failure is as suspect.
            Err(e) => Err(classify(e, &live.store, Guest::Pipeline)),
        }
    }
}

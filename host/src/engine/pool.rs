//! Live instances, pooled per pack.
//!
//! A *live instance* is one `Store` holding a pack instance and a pipeline
//! instance whose `rule-pack` imports forward to that pack instance. It is
//! worth keeping, because the pipeline builds its tokenizer tables once per
//! instance; so each [`LoadedPack`] keeps a few idle ones. A call takes one
//! (or makes one), and gives it back only if the call succeeded: after any
//! error out of wasm the instance is dropped and the next call gets a fresh
//! store.

use std::sync::Arc;

use wasmtime::Store;

use super::classify::{classify, load_err};
use super::packs::LoadedPack;
use super::store::{ticks, Host};
use super::Sanitizer;
use crate::bindings::pack::Pack;
use crate::bindings::pipeline::Pipeline;
use crate::error::{Guest, Result};

/// Most idle live instances kept per pack.
const POOL_MAX: usize = 8;

/// A store with a pack instance and the pipeline instance linked to it.
pub(super) struct Live {
    store: Store<Host>,
    pipeline: Pipeline,
}

impl Sanitizer {
    fn new_live(&self, pack: &LoadedPack) -> Result<Live> {
        let mut store = Store::new(&self.engine, self.new_host(&pack.manifest.name));
        store.limiter(|h| h);
        store.set_fuel(self.limits.pack_fuel).map_err(load_err("store"))?;
        store.set_epoch_deadline(ticks(self.limits.timeout));
        store.epoch_deadline_trap();
        store.data_mut().in_pack = true;
        let inst = pack.pre.pre.instantiate(&mut store);
        store.data_mut().in_pack = false;
        let inst = inst.map_err(|e| classify(e, &store, Guest::Pack(pack.manifest.name.clone())))?;
        let bindings = Pack::new(&mut store, &inst).map_err(load_err("rule pack exports"))?;
        store.data_mut().pack = Some(Arc::new(bindings));
        store.set_fuel(self.limits.fuel).map_err(load_err("store"))?;
        let inst = self.pipeline_pre.instantiate(&mut store).map_err(|e| classify(e, &store, Guest::Pipeline))?;
        let pipeline = Pipeline::new(&mut store, &inst).map_err(load_err("pipeline exports"))?;
        Ok(Live { store, pipeline })
    }

    /// Runs `f` on a live instance of `pack`; drops the instance on error.
    pub(super) fn with_live<R>(
        &self,
        pack: &LoadedPack,
        f: impl FnOnce(&mut Store<Host>, &Pipeline) -> wasmtime::Result<R>,
    ) -> Result<R> {
        let live = pack.pool.lock().expect("pool lock").pop();
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
        match f(store, &live.pipeline) {
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

//! The `Sanitizer`: loads the pipeline and packs, applies limits, calls.
//!
//! # Model
//!
//! One wasmtime [`Engine`] per `Sanitizer`, configured for fuel and epoch
//! interruption; a background thread advances the epoch every
//! [`TICK`](crate::limits::TICK). The pipeline component is compiled once
//! (or deserialized from the artifact embedded at build time) and
//! pre-linked into an `InstancePre`; each pack likewise.
//!
//! A *live instance* is one `Store` holding a pack instance and a pipeline
//! instance whose `rule-pack` imports are host functions forwarding to that
//! pack instance. Live instances are pooled per pack and reused, because
//! the pipeline builds its tokenizer tables once per instance. Any error
//! that comes out of wasm drops the instance: the next call gets a fresh
//! store. Calls into a pack run under the pack's own fuel and memory
//! budget, and the host knows which guest hit which limit.
//!
//! Everything the pipeline returns is validated before it is passed on
//! (JSON shape, budget, record), see [`validate()`].
//!
//! # Files
//!
//! | file | job |
//! |---|---|
//! | `mod.rs` | the `Sanitizer` and its calls |
//! | `config.rs` | engine configuration, precompiled artifacts |
//! | `store.rs` | store data, memory limiter, epoch ticker |
//! | `pool.rs` | live instances, pooled per pack |
//! | `packs.rs` | loading packs: size, manifest, signature, prepare |
//! | `cache.rs` | disk copy of the embedded pipeline, pruning; compiled packs on disk |
//! | `forward.rs` | `rule-pack` imports forwarded to the pack, size checks on what it returns |
//! | `classify.rs` | wasm errors as typed errors |
//! | `validate.rs` | checks on everything the pipeline returns |

mod cache;
mod classify;
mod config;
mod forward;
mod packs;
mod pool;
mod store;
mod validate;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use wasmtime::component::{Component, Linker};
use wasmtime::Engine;

pub use config::new_engine;
pub use packs::LoadedPack;
pub(crate) use store::Host;
use validate::validate_with;
pub use validate::{validate, Packs};

use crate::bindings::pipeline::exports::result_sanitizer::core::result_sanitizer as api;
use crate::bindings::pipeline::Pipeline;
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::metrics::{Metrics, MetricsSnapshot};
use crate::signing::TrustPolicy;
use classify::{guest_error, load_err};
use pool::Instances;

/// Where the pipeline component comes from.
pub enum PipelineSource<'a> {
    /// Component bytes to compile.
    Wasm(&'a [u8]),
    /// Embedded at build time: precompiled artifact made by this project's
    /// build with this engine configuration, with the wasm as fallback.
    Embedded,
}

/// The host engine.
pub struct Sanitizer {
    engine: Engine,
    pipeline_pre: wasmtime::component::InstancePre<Host>,
    limits: Limits,
    default_pack: Arc<LoadedPack>,
    /// The platform's floor, served with every tenant pack.
    platform: Arc<LoadedPack>,
    stop_ticker: Arc<AtomicBool>,
    peak: Arc<AtomicUsize>,
    metrics: Metrics,
    /// Recount output tokens in the host (pipelines loaded from bytes).
    recount: bool,
}

impl Drop for Sanitizer {
    fn drop(&mut self) {
        self.stop_ticker.store(true, Ordering::Relaxed);
    }
}

impl Sanitizer {
    /// A sanitizer with the embedded pipeline and default pack.
    pub fn new(limits: Limits) -> Result<Self> {
        Self::with_pipeline(PipelineSource::Embedded, None, limits)
    }

    /// A sanitizer with an explicit pipeline and (optionally) default pack
    /// component; `None` uses the embedded default pack.
    pub fn with_pipeline(source: PipelineSource<'_>, default_pack: Option<&[u8]>, limits: Limits) -> Result<Self> {
        let engine = new_engine().map_err(load_err("engine"))?;
        let recount = matches!(source, PipelineSource::Wasm(_));
        let pipeline = match source {
            PipelineSource::Wasm(bytes) => Component::new(&engine, bytes).map_err(load_err("pipeline component"))?,
            PipelineSource::Embedded => {
                let art = crate::embedded::artifacts().ok_or_else(|| Error::Load {
                    what: "embedded pipeline".into(),
                    reason: "this build has no embedded components; build with `make build`".into(),
                })?;
                cache::load_embedded_pipeline(&engine, art).map_err(load_err("embedded pipeline"))?
            }
        };
        let mut linker: Linker<Host> = Linker::new(&engine);
        forward::define_pack_forwarders(&mut linker).map_err(load_err("linker"))?;
        let stop_ticker = Arc::new(AtomicBool::new(false));
        store::start_ticker(&engine, stop_ticker.clone());
        let pack = match default_pack {
            Some(bytes) => packs::load_unverified(&engine, bytes, &limits)?,
            None => {
                let art = crate::embedded::artifacts().ok_or_else(|| Error::Load {
                    what: "embedded default pack".into(),
                    reason: "this build has no embedded components; build with `make build`".into(),
                })?;
                let component = config::load_precompiled(&engine, art.pack_cwasm, art.pack_wasm)
                    .map_err(load_err("embedded default pack"))?;
                packs::prepare_pack(
                    &engine,
                    packs::read_manifest(art.pack_wasm)?,
                    art.pack_wasm_sha.to_string(),
                    component,
                )?
            }
        };
        let pipeline_pre = linker.instantiate_pre(&pipeline).map_err(load_err("pipeline"))?;
        let pack = Arc::new(pack);
        Ok(Self {
            engine,
            pipeline_pre,
            limits,
            platform: pack.clone(),
            default_pack: pack,
            stop_ticker,
            peak: Default::default(),
            metrics: Metrics::default(),
            recount,
        })
    }

    /// The limits in force.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The default pack.
    pub fn default_pack(&self) -> &Arc<LoadedPack> {
        &self.default_pack
    }

    /// Serves `pack` as the platform's floor from now on: its rules apply
    /// to every call, whatever the tenant's pack (see the WIT's `platform`
    /// interface). Without this the default pack is the platform's. The
    /// platform pack is the operator's own choice, so its signature is not
    /// required here (load it with [`Self::load_pack`] to check one).
    pub fn set_platform_pack(&mut self, pack: Arc<LoadedPack>) {
        self.platform = pack;
    }

    /// The platform pack.
    pub fn platform_pack(&self) -> &Arc<LoadedPack> {
        &self.platform
    }

    fn packs<'a>(&'a self, tenant: &'a LoadedPack) -> Packs<'a> {
        Packs { platform: &self.platform, tenant }
    }

    /// Largest linear memory any pipeline instance of this sanitizer has
    /// grown to, in bytes.
    pub fn peak_guest_memory(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }

    /// The counters of this sanitizer (results, cuts, redactions by rule,
    /// recalls), for export.
    pub fn metrics(&self) -> MetricsSnapshot {
        self.metrics.snapshot()
    }

    /// The budget the pipeline would apply to a call with `opts`.
    pub fn effective_budget(&self, pack: &LoadedPack, opts: &api::Options) -> Result<api::Budget> {
        let r =
            self.with_live(pack, |s, p| p.result_sanitizer_core_result_sanitizer().call_effective_budget(s, opts))?;
        r.map_err(guest_error)
    }

    /// Sanitizes one tool result with `pack`.
    pub fn sanitize_with(&self, pack: &LoadedPack, input: &[u8], opts: &api::Options) -> Result<api::Sanitized> {
        let r = self
            .with_live(pack, |s, p| p.result_sanitizer_core_result_sanitizer().call_sanitize(s, input, opts))
            .and_then(|r| r.map_err(guest_error))
            .and_then(|out| validate_with(opts, &out, self.packs(pack), self.recount).map(|()| out));
        self.count(&pack.manifest.name, r)
    }

    fn count(&self, pack: &str, r: Result<api::Sanitized>) -> Result<api::Sanitized> {
        match &r {
            Ok(out) => self.metrics.result(pack, out),
            Err(e) => self.metrics.error(e),
        }
        r
    }

    /// Sanitizes the results of one round of parallel tool calls under a
    /// shared token budget (see the WIT's `sanitize-round`). Each result is
    /// validated against its own options, and the shares against the
    /// round.
    pub fn sanitize_round(
        &self,
        pack: &LoadedPack,
        inputs: &[api::RoundInput],
        round: &api::RoundOptions,
    ) -> Result<Vec<Result<api::Sanitized>>> {
        let r = self.with_live(pack, |s, p| {
            p.result_sanitizer_core_result_sanitizer().call_sanitize_round(s, inputs, *round)
        })?;
        let results = r.map_err(guest_error)?;
        validate::round_len(results.len(), inputs.len())?;
        let mut granted = 0u64;
        let mut out = Vec::with_capacity(results.len());
        for (r, input) in results.into_iter().zip(inputs) {
            let r = validate::round_result(r, &input.options, self.packs(pack), self.recount).map(|(s, tokens)| {
                granted += tokens;
                s
            });
            out.push(self.count(&pack.manifest.name, r));
        }
        validate::round_total(granted, round)?;
        Ok(out)
    }

    /// Loads a pack component without any signature check (development and
    /// the embedded pack). Its manifest and WIT version are still checked
    /// before anything is compiled.
    pub fn load_pack_unverified(&self, wasm: &[u8]) -> Result<LoadedPack> {
        packs::load_unverified(&self.engine, wasm, &self.limits)
    }

    /// Verifies a pack for `tenant` under `policy` (before compiling
    /// anything), then compiles it, through the on-disk cache when given.
    pub fn load_pack(
        &self,
        wasm: &[u8],
        policy: &TrustPolicy,
        tenant: Option<&str>,
        cache: Option<&std::path::Path>,
    ) -> Result<LoadedPack> {
        packs::load_verified(&self.engine, &self.limits, wasm, policy, tenant, cache)
    }

    /// Turns a core module built with wit-bindgen for the `pack` world (the
    /// Rust pack template) into a pack component with a manifest. The
    /// manifest comes from the pack itself: it is instantiated once, under
    /// the pack limits, and asked for its info and rules.
    pub fn wrap_pack_core(&self, core: &[u8]) -> Result<Vec<u8>> {
        packs::wrap_core(&self.engine, &self.limits, &self.peak, core)
    }

    /// Runs `f` on a live instance of `pack` (see `pool`).
    fn with_live<R>(
        &self,
        pack: &LoadedPack,
        f: impl FnOnce(&mut wasmtime::Store<Host>, &Pipeline) -> wasmtime::Result<R>,
    ) -> Result<R> {
        let instances = Instances {
            engine: &self.engine,
            pipeline_pre: &self.pipeline_pre,
            limits: self.limits,
            platform: &self.platform,
            peak: &self.peak,
            metrics: &self.metrics,
        };
        instances.with_live(pack, f)
    }

    /// Counts a recall (`recall.rs` serves it).
    pub(crate) fn count_recall(&self, after_truncation: bool) {
        self.metrics.recall(after_truncation);
    }

    /// Sanitizes one tool result with the default pack.
    pub fn sanitize(&self, input: &[u8], opts: &api::Options) -> Result<api::Sanitized> {
        self.sanitize_with(&self.default_pack, input, opts)
    }

    /// The JSON twin, as JS and Go hosts call it.
    pub fn sanitize_json(&self, pack: &LoadedPack, request: &str) -> Result<String> {
        self.with_live(pack, |s, p| p.result_sanitizer_core_result_sanitizer().call_sanitize_json(s, request))
    }

    /// One step of draining the middle of a long output read as head +
    /// tail (see [`crate::io::read_head_tail`]): `data` is counted and
    /// scanned into `gap`; the caller keeps the bytes not consumed and
    /// sends them again with the next ones.
    pub(crate) fn drain_step(
        &self,
        pack: &LoadedPack,
        gap: &api::Gap,
        data: &[u8],
        last: bool,
    ) -> Result<api::DrainStep> {
        let r =
            self.with_live(pack, |s, p| p.result_sanitizer_core_result_sanitizer().call_drain(s, gap, data, last))?;
        let step = r.map_err(guest_error)?;
        validate::drain_step(gap, data.len(), last, &step)?;
        Ok(step)
    }

    /// One streaming redaction step (see [`crate::stream`]).
    pub fn redact_step(&self, pack: &LoadedPack, data: &[u8], last: bool) -> Result<api::RedactResponse> {
        self.redact_request(
            pack,
            &api::RedactRequest {
                data: data.to_vec(),
                last,
                content_type: None,
                sniff: false,
                untrusted: false,
                report: false,
                pii: false,
                pii_public_ip: false,
            },
        )
    }

    /// [`Self::redact_step`] with a request the caller owns (and can reuse:
    /// a stream keeps its carry in the request instead of copying it).
    pub fn redact_request(&self, pack: &LoadedPack, req: &api::RedactRequest) -> Result<api::RedactResponse> {
        let r = self.with_live(pack, |s, p| p.result_sanitizer_core_result_sanitizer().call_redact(s, req))?;
        let resp = r.map_err(guest_error)?;
        validate::redact_response(req, &resp)?;
        Ok(resp)
    }
}

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
//! (JSON shape, budget, record), see [`validate`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use wasmtime::component::{Component, Linker};
use wasmtime::error::Context as _;
use wasmtime::{Config, Engine, Store, StoreContextMut, Trap};

use crate::bindings::pack::exports::result_sanitizer::core::rule_pack as pk;
use crate::bindings::pack::Pack;
use crate::bindings::pipeline::exports::result_sanitizer::core::result_sanitizer as api;
use crate::bindings::pipeline::Pipeline;
use crate::error::{Error, Guest, Result};
use crate::limits::{Limits, MAX_WASM_STACK, TICK};
use crate::manifest::Manifest;
use crate::metrics::{Metrics, MetricsSnapshot};
use crate::recall::OutputStore;
use crate::signing::{self, TrustPolicy};
use crate::wit::{RULE_PACK_INTERFACE, WIT_VERSION};

/// Engine configuration shared by the runtime and the build-time
/// precompiler (precompiled artifacts must match it exactly).
pub fn engine_config() -> Config {
    let mut c = Config::new();
    c.wasm_component_model(true);
    c.consume_fuel(true);
    c.epoch_interruption(true);
    c.max_wasm_stack(MAX_WASM_STACK);
    c.parallel_compilation(true);
    // `perf` can then name wasm functions (BENCHMARKS.md, "Profiling").
    if std::env::var_os("RESULT_SANITIZER_PERFMAP").is_some() {
        c.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    c
}

/// A new engine with [`engine_config`].
pub fn new_engine() -> wasmtime::Result<Engine> {
    Engine::new(&engine_config())
}

/// Store data: limits state and the pack the pipeline's imports forward to.
pub struct Host {
    limits: Limits,
    pack: Option<Arc<Pack>>,
    pack_name: String,
    in_pack: bool,
    /// Which guest hit a memory cap, if any.
    memory_hit: Option<Guest>,
    /// Guest running when the last trap happened.
    last_guest: Option<Guest>,
    /// A size limit a guest's return value broke: (what, size, limit).
    too_large: Option<(&'static str, u64, u64)>,
    /// Largest pipeline memory seen by this sanitizer, bytes.
    peak: Arc<std::sync::atomic::AtomicUsize>,
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

/// A compiled, linked component ready to instantiate.
struct Prepared {
    pre: wasmtime::component::InstancePre<Host>,
}

/// A rule pack loaded into a [`Sanitizer`], with its pool of live instances.
pub struct LoadedPack {
    pre: Prepared,
    manifest: Manifest,
    sha256: String,
    pool: Mutex<Vec<Live>>,
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
    /// sha256 of the pack's wasm bytes, hex.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }
}

struct Live {
    store: Store<Host>,
    pipeline: Pipeline,
}

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
    stop_ticker: Arc<AtomicBool>,
    peak: Arc<std::sync::atomic::AtomicUsize>,
    metrics: Metrics,
    /// Recount output tokens in the host (pipelines loaded from bytes).
    recount: bool,
}

impl Drop for Sanitizer {
    fn drop(&mut self) {
        self.stop_ticker.store(true, Ordering::Relaxed);
    }
}

fn load_err(what: &str) -> impl Fn(wasmtime::Error) -> Error + '_ {
    move |e| Error::Load { what: what.into(), reason: format!("{e:#}") }
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
                load_embedded_pipeline(&engine, art).map_err(load_err("embedded pipeline"))?
            }
        };
        let mut linker: Linker<Host> = Linker::new(&engine);
        define_pack_forwarders(&mut linker).map_err(load_err("linker"))?;
        let stop_ticker = Arc::new(AtomicBool::new(false));
        start_ticker(&engine, stop_ticker.clone());
        let pack = match default_pack {
            Some(bytes) => load_unverified(&engine, bytes, &limits)?,
            None => {
                let art = crate::embedded::artifacts().ok_or_else(|| Error::Load {
                    what: "embedded default pack".into(),
                    reason: "this build has no embedded components; build with `make build`".into(),
                })?;
                let component = load_precompiled(&engine, art.pack_cwasm, art.pack_wasm)
                    .map_err(load_err("embedded default pack"))?;
                prepare_pack(&engine, read_manifest(art.pack_wasm)?, sha256_hex(art.pack_wasm), component)?
            }
        };
        let pipeline_pre = linker.instantiate_pre(&pipeline).map_err(load_err("pipeline"))?;
        Ok(Self {
            engine,
            pipeline_pre,
            limits,
            default_pack: Arc::new(pack),
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

    /// The engine (for precompiling and tests).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The default pack.
    pub fn default_pack(&self) -> &Arc<LoadedPack> {
        &self.default_pack
    }

    /// Loads a pack component without any signature check (development and
    /// the embedded pack). Its manifest and WIT version are still checked
    /// before anything is compiled.
    pub fn load_pack_unverified(&self, wasm: &[u8]) -> Result<LoadedPack> {
        load_unverified(&self.engine, wasm, &self.limits)
    }

    /// Turns a core module built with wit-bindgen for the `pack` world (the
    /// Rust pack template) into a pack component with a manifest. The
    /// manifest comes from the pack itself: it is instantiated once, under
    /// the pack limits, and asked for its info and rules.
    pub fn wrap_pack_core(&self, core: &[u8]) -> Result<Vec<u8>> {
        let component = crate::componentize::componentize(core)
            .map_err(|e| Error::Load { what: "pack core module".into(), reason: format!("{e:#}") })?;
        let compiled = Component::new(&self.engine, &component).map_err(load_err("pack component"))?;
        if let Some((name, _)) = compiled.component_type().imports(&self.engine).next() {
            return Err(Error::Load {
                what: "pack core module".into(),
                reason: format!("packs may import nothing, but it imports `{name}`"),
            });
        }
        let mut store = Store::new(&self.engine, self.new_host("new pack"));
        store.limiter(|h| h);
        store.set_fuel(self.limits.pack_fuel).map_err(load_err("store"))?;
        store.set_epoch_deadline(ticks(self.limits.timeout));
        store.data_mut().in_pack = true;
        let who = || Guest::Pack("new pack".into());
        let inst =
            Linker::new(&self.engine).instantiate(&mut store, &compiled).map_err(|e| classify(e, &store, who()))?;
        let pack = Pack::new(&mut store, &inst).map_err(load_err("pack exports"))?;
        let iface = pack.result_sanitizer_core_rule_pack();
        let info = iface.call_info(&mut store).map_err(|e| classify(e, &store, who()))?;
        let rules = iface.call_rules(&mut store).map_err(|e| classify(e, &store, who()))?;
        let size = rule_set_bytes(&rules);
        if size > self.limits.rule_set_bytes {
            return Err(Error::TooLarge {
                guest: who(),
                what: "a rule set",
                size: size as u64,
                limit: self.limits.rule_set_bytes as u64,
            });
        }
        let has_detect = iface.call_has_detect(&mut store).map_err(|e| classify(e, &store, who()))?;
        let manifest = Manifest {
            name: info.name,
            version: info.version,
            tenant: info.tenant,
            wit_version: info.wit_version,
            rule_ids: rules.rules.into_iter().map(|r| r.id).collect(),
            has_detect,
        };
        Ok(manifest.append_to(component))
    }

    fn new_host(&self, pack_name: &str) -> Host {
        Host {
            limits: self.limits,
            pack: None,
            pack_name: pack_name.into(),
            in_pack: false,
            memory_hit: None,
            last_guest: None,
            too_large: None,
            peak: self.peak.clone(),
        }
    }

    /// Largest linear memory any pipeline instance of this sanitizer has
    /// grown to, in bytes.
    pub fn peak_guest_memory(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
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
        check_pack_size(wasm, &self.limits)?;
        let verified = signing::verify(wasm, policy, tenant, std::time::SystemTime::now())?;
        let sha = sha256_hex(wasm);
        let component = crate::registry::compile_cached(&self.engine, wasm, &sha, cache)?;
        prepare_pack(&self.engine, verified.manifest, sha, component)
    }

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
    fn with_live<R>(
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
            .and_then(|out| validate_with(opts, &out, pack, self.recount).map(|()| out));
        self.count(&pack.manifest.name, r)
    }

    fn count(&self, pack: &str, r: Result<api::Sanitized>) -> Result<api::Sanitized> {
        match &r {
            Ok(out) => self.metrics.result(pack, out),
            Err(e) => self.metrics.error(e),
        }
        r
    }

    /// The counters of this sanitizer (results, cuts, redactions by rule,
    /// recalls), for export.
    pub fn metrics(&self) -> MetricsSnapshot {
        self.metrics.snapshot()
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
        if results.len() != inputs.len() {
            return Err(Error::InvalidOutput("a round returned a different number of results".into()));
        }
        let mut granted = 0u64;
        let mut out = Vec::with_capacity(results.len());
        for (r, input) in results.into_iter().zip(inputs) {
            let r = r.map_err(guest_error).and_then(|s| {
                validate_with(&input.options, &s, pack, self.recount)?;
                let Some(share) = &s.record.round else {
                    return Err(Error::InvalidOutput("a round result without its share".into()));
                };
                if s.record.output_tokens.is_some_and(|t| t > u64::from(share.tokens)) {
                    return Err(Error::InvalidOutput("a round result over its share".into()));
                }
                granted += u64::from(share.tokens);
                Ok(s)
            });
            out.push(self.count(&pack.manifest.name, r));
        }
        if granted > u64::from(round.round_tokens) {
            return Err(Error::InvalidOutput("the shares exceed the round budget".into()));
        }
        Ok(out)
    }

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
        let kept = store.put(tenant, &opts.call_id, input)?;
        let mut o = opts.clone();
        o.recall_bytes = (kept > 0).then_some(kept);
        let out = self.sanitize_with(pack, input, &o)?;
        store.set_truncated(&opts.call_id, out.record.truncated);
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
        let mut o = opts.clone();
        o.call_id = call_id.into();
        o.slice = Some(slice);
        o.recall_bytes = Some(kept.bytes.len() as u64);
        self.metrics.recall(kept.truncated);
        self.sanitize_with(pack, &kept.bytes, &o)
    }

    /// Sanitizes one tool result with the default pack.
    pub fn sanitize(&self, input: &[u8], opts: &api::Options) -> Result<api::Sanitized> {
        self.sanitize_with(&self.default_pack, input, opts)
    }

    /// The JSON twin, as JS and Go hosts call it.
    pub fn sanitize_json(&self, pack: &LoadedPack, request: &str) -> Result<String> {
        self.with_live(pack, |s, p| p.result_sanitizer_core_result_sanitizer().call_sanitize_json(s, request))
    }

    /// One streaming redaction step (see [`crate::stream`]).
    pub fn redact_step(&self, pack: &LoadedPack, data: &[u8], last: bool) -> Result<api::RedactResponse> {
        self.redact_request(pack, &api::RedactRequest { data: data.to_vec(), last })
    }

    /// [`Self::redact_step`] with a request the caller owns (and can reuse:
    /// a stream keeps its carry in the request instead of copying it).
    pub fn redact_request(&self, pack: &LoadedPack, req: &api::RedactRequest) -> Result<api::RedactResponse> {
        let r = self.with_live(pack, |s, p| p.result_sanitizer_core_result_sanitizer().call_redact(s, req))?;
        let resp = r.map_err(guest_error)?;
        let (len, last) = (req.data.len(), req.last);
        if resp.consumed as usize > len || (last && resp.consumed as usize != len) {
            return Err(Error::InvalidOutput("redact consumed a bad number of bytes".into()));
        }
        Ok(resp)
    }
}

/// Loads a pack without signature checks; manifest and WIT version are
/// checked before compiling.
fn load_unverified(engine: &Engine, wasm: &[u8], limits: &Limits) -> Result<LoadedPack> {
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

fn read_manifest(wasm: &[u8]) -> Result<Manifest> {
    Manifest::read(wasm)
        .map_err(|e| Error::Load { what: "rule pack".into(), reason: format!("{e:#}") })?
        .ok_or_else(|| Error::Load { what: "rule pack".into(), reason: "no manifest section".into() })
}

fn sha256_hex(b: &[u8]) -> String {
    use sha2::Digest;
    hex(&sha2::Sha256::digest(b))
}

fn prepare_pack(engine: &Engine, manifest: Manifest, sha256: String, component: Component) -> Result<LoadedPack> {
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
    Ok(LoadedPack { pre: Prepared { pre }, manifest, sha256, pool: Mutex::new(Vec::new()) })
}

fn ticks(d: std::time::Duration) -> u64 {
    (d.as_millis() / TICK.as_millis()).max(1) as u64
}

fn start_ticker(engine: &Engine, stop: Arc<AtomicBool>) {
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

/// The embedded pipeline, deserialized from a copy in the user's cache
/// directory when one can be kept there: from a file, wasmtime maps the
/// memory image (the tokenizer tables built at build time, ~24 MB) straight
/// from the file instead of copying it at every start, which is most of a
/// one-shot CLI call. Falls back to the embedded bytes.
fn load_embedded_pipeline(engine: &Engine, art: &crate::embedded::Artifacts) -> wasmtime::Result<Component> {
    if let Some(file) = cached_copy(art.pipeline_cwasm, art.pipeline_cwasm_sha) {
        // SAFETY: the file is this binary's own embedded artifact, written
        // below into a 0700 directory under a name carrying its sha256, and
        // checked for its length; only the user who runs the host can
        // write there.
        if let Ok(c) = unsafe { Component::deserialize_file(engine, &file) } {
            return Ok(c);
        }
    }
    load_precompiled(engine, art.pipeline_cwasm, art.pipeline_wasm)
}

/// `$RESULT_SANITIZER_CACHE`, else `$XDG_CACHE_HOME/result-sanitizer`, else
/// `~/.cache/result-sanitizer`; a copy of `bytes` there, written once.
fn cached_copy(bytes: &[u8], sha: &str) -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    let base = std::env::var_os("RESULT_SANITIZER_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("result-sanitizer")))
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("result-sanitizer")))?;
    let file = base.join(format!("pipeline-{}.cwasm", &sha[..sha.len().min(32)]));
    if std::fs::metadata(&file).is_ok_and(|m| m.len() == bytes.len() as u64) {
        return Some(file);
    }
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&base).ok()?;
    let tmp = base.join(format!(".pipeline.{}.tmp", std::process::id()));
    std::fs::write(&tmp, bytes).ok()?;
    std::fs::rename(&tmp, &file).ok()?;
    prune_cache(&base, &file);
    Some(file)
}

/// Copies left by other builds are ~47 MB each: when a new copy is
/// written, the others not written for a day go (a build still in use
/// writes its copy again on its next start; a process that has one mapped
/// keeps it until it exits).
fn prune_cache(base: &std::path::Path, keep: &std::path::Path) {
    const STALE: std::time::Duration = std::time::Duration::from_secs(24 * 3600);
    let Ok(dir) = std::fs::read_dir(base) else { return };
    for entry in dir.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let ours = (name.starts_with("pipeline-") && name.ends_with(".cwasm"))
            || (name.starts_with(".pipeline.") && name.ends_with(".tmp"));
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE);
        if ours && old && path != keep {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Loads the embedded precompiled artifact, or compiles the wasm when the
/// artifact does not match this engine.
fn load_precompiled(engine: &Engine, cwasm: &[u8], wasm: &[u8]) -> wasmtime::Result<Component> {
    // SAFETY: the artifact was produced by this project's build
    // (`xtask`) with `engine_config()` and embedded in this binary; it is
    // never read from a place a user controls.
    match unsafe { Component::deserialize(engine, cwasm) } {
        Ok(c) => Ok(c),
        Err(_) => Component::new(engine, wasm),
    }
}

/// Host functions that forward the pipeline's `rule-pack` imports to the
/// pack instance in the same store, under the pack's fuel budget.
fn define_pack_forwarders(linker: &mut Linker<Host>) -> wasmtime::Result<()> {
    let mut inst = linker.instance(RULE_PACK_INTERFACE)?;
    inst.func_wrap("info", |mut s: StoreContextMut<'_, Host>, (): ()| {
        let r = in_pack(&mut s, |s, p| p.result_sanitizer_core_rule_pack().call_info(s))?;
        Ok((r,))
    })?;
    inst.func_wrap("rules", |mut s: StoreContextMut<'_, Host>, (): ()| {
        let r = in_pack(&mut s, |s, p| p.result_sanitizer_core_rule_pack().call_rules(s))?;
        let limit = s.data().limits.rule_set_bytes;
        let size = rule_set_bytes(&r);
        if size > limit {
            return Err(too_large(&mut s, "a rule set", size, limit));
        }
        Ok((r,))
    })?;
    inst.func_wrap("has-detect", |mut s: StoreContextMut<'_, Host>, (): ()| {
        let r = in_pack(&mut s, |s, p| p.result_sanitizer_core_rule_pack().call_has_detect(s))?;
        Ok((r,))
    })?;
    inst.func_wrap("detect", |mut s: StoreContextMut<'_, Host>, (text,): (String,)| {
        let r: Vec<pk::Finding> = in_pack(&mut s, |s, p| p.result_sanitizer_core_rule_pack().call_detect(s, &text))?;
        // Bound what a pack can make the pipeline process.
        if r.len() > MAX_FINDINGS {
            return Err(too_large(&mut s, "findings", r.len(), MAX_FINDINGS));
        }
        Ok((r,))
    })?;
    Ok(())
}

/// Most idle live instances kept per pack.
const POOL_MAX: usize = 8;

/// Most findings one `detect` call may return.
const MAX_FINDINGS: usize = 1_000_000;

/// Size of a rule set as [`Limits::rule_set_bytes`] counts it.
pub fn rule_set_bytes(r: &pk::RuleSet) -> usize {
    let strs = |v: &[String]| v.iter().map(|x| x.len() + 16).sum::<usize>();
    let rules: usize = r
        .rules
        .iter()
        .map(|x| {
            64 + x.id.len()
                + x.description.len()
                + x.regex.len()
                + strs(&x.keywords)
                + strs(&x.allow_regexes)
                + strs(&x.stopwords)
        })
        .sum();
    let budgets: usize = r.budgets.iter().map(|b| 64 + b.tool.len()).sum();
    rules + budgets + strs(&r.allow_regexes) + strs(&r.stopwords) + strs(&r.path_roots) + strs(&r.lenient_tools)
}

/// Records that the pack broke a size limit and returns the trap that
/// unwinds the pipeline; [`classify`] turns it into [`Error::TooLarge`].
fn too_large(s: &mut StoreContextMut<'_, Host>, what: &'static str, size: usize, limit: usize) -> wasmtime::Error {
    let name = s.data().pack_name.clone();
    s.data_mut().last_guest = Some(Guest::Pack(name));
    s.data_mut().too_large = Some((what, size as u64, limit as u64));
    wasmtime::format_err!("rule pack returned {what} of {size} (limit {limit})")
}

/// Runs `f` against the pack with the pack's fuel, restoring the
/// pipeline's remaining fuel afterwards.
fn in_pack<R>(
    s: &mut StoreContextMut<'_, Host>,
    f: impl FnOnce(&mut StoreContextMut<'_, Host>, &Pack) -> wasmtime::Result<R>,
) -> wasmtime::Result<R> {
    let pack = s.data().pack.clone().context("no pack linked")?;
    let outer = s.get_fuel()?;
    let pack_fuel = s.data().limits.pack_fuel;
    s.set_fuel(pack_fuel)?;
    s.data_mut().in_pack = true;
    let r = f(s, &pack);
    s.data_mut().in_pack = false;
    if r.is_err() {
        let name = s.data().pack_name.clone();
        s.data_mut().last_guest = Some(Guest::Pack(name));
        return r;
    }
    s.set_fuel(outer)?;
    r
}

/// Turns a wasmtime error into a typed error naming the guest and limit.
fn classify(e: wasmtime::Error, store: &Store<Host>, default: Guest) -> Error {
    let host = store.data();
    let guest = host.last_guest.clone().unwrap_or(default);
    if let Some((what, size, limit)) = host.too_large {
        return Error::TooLarge { guest, what, size, limit };
    }
    if let Some(g) = host.memory_hit.clone() {
        let bytes = if matches!(g, Guest::Pack(_)) { host.limits.pack_memory } else { host.limits.memory };
        return Error::Memory { guest: g, bytes };
    }
    match e.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => {
            let limit = if matches!(guest, Guest::Pack(_)) { host.limits.pack_fuel } else { host.limits.fuel };
            Error::Fuel { guest, limit }
        }
        Some(Trap::Interrupt) => Error::Timeout { guest, ms: host.limits.timeout.as_millis() },
        Some(t) => Error::Trap { guest, reason: t.to_string() },
        // Host-side refusals are wrapped in wasm backtrace context: report
        // the root cause.
        None => Error::Trap { guest, reason: first_line(&e.root_cause().to_string()) },
    }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").chars().take(200).collect()
}

fn guest_error(e: api::SanitizeError) -> Error {
    match e {
        api::SanitizeError::InvalidOptions(m) => Error::InvalidOptions(m),
        api::SanitizeError::InvalidInput(m) => Error::InvalidInput(m),
        api::SanitizeError::InvalidPack(m) => Error::InvalidPack(m),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Token count by the host's own native copy of the pipeline's tokenizer
/// (chunked tiktoken, so a long piece stays linear; tables built once per
/// process, on first need). A pipeline build cannot change this code.
fn count_tokens(enc: api::Encoding, text: &str) -> usize {
    result_sanitizer_pipeline::count_tokens(native_encoding(enc), text)
}

/// The host's own upper bound on a text's tokens (the pipeline crate's
/// `token_bound`, compiled into the host): no tokenizing, no tables to build.
fn token_bound(enc: api::Encoding, text: &str) -> usize {
    result_sanitizer_pipeline::token_upper_bound(native_encoding(enc), text)
}

fn native_encoding(enc: api::Encoding) -> result_sanitizer_pipeline::api::Encoding {
    use result_sanitizer_pipeline::api::Encoding as E;
    match enc {
        api::Encoding::O200kBase => E::O200kBase,
        api::Encoding::Cl100kBase => E::Cl100kBase,
    }
}

/// Checks a pipeline result before the host passes it on: the message is
/// JSON of the requested shape, the record inside it is the record
/// returned, the model-visible text is within the budget the host asked
/// for (recounted by the host when the byte length does not prove it), and
/// the record names only the pack, its rules and known stages.
pub fn validate(opts: &api::Options, out: &api::Sanitized, pack: &LoadedPack) -> Result<()> {
    validate_with(opts, out, pack, true)
}

/// [`validate`]; `recount` makes the host count the output's tokens itself
/// when the byte length does not prove the budget. A `Sanitizer` recounts
/// for a pipeline loaded from bytes; the embedded pipeline was built with
/// the host binary and is trusted as much as it (the recount would cost
/// the CLI the ~100 ms of building tokenizer tables natively).
pub fn validate_with(opts: &api::Options, out: &api::Sanitized, pack: &LoadedPack, recount: bool) -> Result<()> {
    let bad = |m: &str| Err(Error::InvalidOutput(m.into()));
    let v: serde_json::Value = match serde_json::from_str(&out.message) {
        Ok(v) => v,
        Err(_) => return bad("message is not JSON"),
    };
    let (texts, record) = match opts.format {
        api::OutputFormat::Mcp => {
            let Some(content) = v.get("content").and_then(|c| c.as_array()) else { return bad("no content array") };
            if v.get("isError").and_then(|b| b.as_bool()) != Some(out.is_error) {
                return bad("isError disagrees with the result");
            }
            let texts: Vec<&str> = content.iter().filter_map(|b| b.get("text").and_then(|t| t.as_str())).collect();
            (texts, v.pointer("/_meta/result-sanitizer~1record"))
        }
        api::OutputFormat::Openai => {
            let Some(t) = v.pointer("/message/content").and_then(|t| t.as_str()) else {
                return bad("no message.content string");
            };
            (vec![t], v.get("record"))
        }
        api::OutputFormat::Anthropic => {
            let Some(content) = v.pointer("/message/content").and_then(|c| c.as_array()) else {
                return bad("no message.content array");
            };
            let texts: Vec<&str> = content.iter().filter_map(|b| b.get("text").and_then(|t| t.as_str())).collect();
            (texts, v.get("record"))
        }
    };
    let Some(record) = record else { return bad("no record in the message") };
    let mut typed = serde_json::to_value(&out.record).map_err(|e| Error::InvalidOutput(e.to_string()))?;
    snake_case_enums(&mut typed);
    if *record != typed {
        return bad("the record in the message differs from the record returned");
    }
    // The record carries no free text: its names must be the pack's own
    // and the pipeline's known stages, so nothing from the input rides in it.
    if out.record.pack_name != pack.manifest.name || out.record.pack_version != pack.manifest.version {
        return bad("the record names another pack");
    }
    let b = &out.record.budget;
    if opts.max_tokens.is_some_and(|t| b.max_tokens > t)
        || opts.max_chars.is_some_and(|c| b.max_chars > c)
        || opts.max_bytes.is_some_and(|m| b.max_bytes > m)
    {
        return bad("the budget applied is larger than the budget asked for");
    }
    let visible: usize = texts.iter().map(|t| t.len()).sum();
    // What the bytes alone prove, without tokenizing: the byte length or
    // the pipeline crate's upper bound (the same function the guest uses).
    let bound = || -> usize { texts.iter().map(|t| token_bound(out.record.encoding, t)).sum() };
    let proved = visible <= b.max_tokens as usize || bound() <= b.max_tokens as usize;
    match out.record.output_tokens {
        Some(n) if n > u64::from(b.max_tokens) => return bad("output tokens exceed the budget"),
        // Not counted: only valid when the bytes prove it fits.
        None if !proved => return bad("output was not counted and may exceed the budget"),
        _ => {}
    }
    // Every token is at most a few dozen bytes; anything beyond is a lie.
    if visible > (b.max_tokens as usize).saturating_mul(64) {
        return bad("output is far larger than its token budget allows");
    }
    // An output the bytes prove fits; any other is recounted here rather
    // than taken on the pipeline's word.
    if recount && !proved {
        let n: usize = texts.iter().map(|t| count_tokens(out.record.encoding, t)).sum();
        if n > b.max_tokens as usize {
            return bad("output tokens exceed the budget (host recount)");
        }
    }
    let known: std::collections::BTreeSet<&str> = pack.manifest.rule_ids.iter().map(String::as_str).collect();
    for r in &out.record.redactions {
        let ok_chars = r.rule_id.len() <= 64
            && r.rule_id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        let known_id =
            known.contains(r.rule_id.as_str()) || r.rule_id == "tenant-path-root" || pack.manifest.has_detect;
        if !ok_chars || !known_id {
            return bad("the record names a rule the pack does not have");
        }
    }
    Ok(())
}

/// The host's bindings serialize enum cases by their Rust names
/// (`HeadTailLines`); the record's JSON names them in snake_case, like its
/// fields (`head_tail_lines`, docs/record.schema.json). Rewrites the enum
/// values of a serialized record to that convention.
fn snake_case_enums(v: &mut serde_json::Value) {
    fn snake(s: &str) -> String {
        let mut out = String::with_capacity(s.len() + 4);
        for (i, c) in s.chars().enumerate() {
            if c.is_ascii_uppercase() && i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        }
        out
    }
    let fix = |v: Option<&mut serde_json::Value>| {
        if let Some(serde_json::Value::String(s)) = v {
            *s = snake(s);
        }
    };
    fix(v.get_mut("class"));
    fix(v.get_mut("strategy"));
    fix(v.get_mut("encoding"));
    if let Some(serde_json::Value::Array(stages)) = v.get_mut("stages") {
        for st in stages {
            fix(st.get_mut("stage"));
        }
    }
}

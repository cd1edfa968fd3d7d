//! Build steps behind `make build`:
//!
//! 1. turn the pipeline's core module (built by cargo for
//!    `wasm32-unknown-unknown`) into a component (`pipeline.wasm`, used by
//!    the JavaScript and Go hosts and the edge build), and a pre-initialised
//!    one (`pipeline-warm.wasm`, embedded by the Rust host): wizer runs its
//!    `wizer-initialize` export, which builds the o200k tokenizer tables,
//!    and snapshots the memory into the module;
//! 2. turn the verifier's core module (`verifier/`) into `verifier.wasm`,
//!    the pack checks the JavaScript, Go and Python hosts run;
//! 3. build the default pack from `rules/default/*.toml` (as the host
//!    embeds them: `pack_build::DEFAULT_RULE_FILES`);
//! 4. write the default rules as JSON (`default-rules.json`, the WIT
//!    `rule-set` in serde form) for the native fuzz targets in `fuzz/`;
//! 5. write hostile test packs to `test-packs/` for the JavaScript and Go
//!    hosts' tests: `slow.wasm` loops forever in `detect` when the text
//!    starts with `L`, `greedy.wasm` grows its memory until refused when it
//!    starts with `M`; otherwise both find nothing;
//! 6. write `rule-pack.layout.json`: every type of the `rule-pack`
//!    interface with its canonical-ABI size, alignment and field offsets
//!    (wit-parser's), which the Go host's hand-written descriptors are
//!    tested against;
//! 7. precompile both with the host's engine configuration, so the CLI
//!    starts without running Cranelift.
//!
//! `xtask edge [PACK]` composes the pipeline and a pack (default: the
//! default pack) into one component that imports nothing, for runtimes
//! that take a single module (edge workers, browsers): `make edge`.
//!
//! `xtask edge-http ADAPTER` turns the HTTP adapter's core module
//! (`edge/http`, built for `wasm32-unknown-unknown`) into a component and
//! composes it with the edge component into a `wasi:http/proxy` component,
//! `target/edge/result-sanitizer-http.wasm`, whose only imports are WASI
//! HTTP types and streams: `make edge-http` (docs/edge.md).
//!
//! Outputs go to `target/components/`; a file is rewritten only when its
//! bytes change, so cargo does not rebuild the host for nothing.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use result_sanitizer_host::engine;
use result_sanitizer_pack_build as pack_build;

fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<()> {
    if std::fs::read(path).ok().as_deref() != Some(bytes) {
        std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))?;
        println!("wrote {} ({} bytes)", path.display(), bytes.len());
    }
    Ok(())
}

fn main() -> Result<()> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("edge") {
        return edge(&root, args.get(1).map(PathBuf::from));
    }
    if args.first().map(String::as_str) == Some("edge-http") {
        let core = args
            .get(1)
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("target/wasm32-unknown-unknown/release/result_sanitizer_edge_http.wasm"));
        return edge_http(&root, &core);
    }
    let core_path = args
        .first()
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/wasm32-unknown-unknown/release/result_sanitizer_pipeline.wasm"));
    let out = root.join("target/components");
    std::fs::create_dir_all(&out)?;

    let core = std::fs::read(&core_path).with_context(|| format!("reading {}", core_path.display()))?;
    let pipeline = result_sanitizer_host::componentize(&core).context("componentizing the pipeline")?;
    write_if_changed(&out.join("pipeline.wasm"), &pipeline)?;
    // The Rust host embeds a pre-initialised pipeline: tokenizer tables
    // built at build time and snapshotted (see `wizen`).
    let t = std::time::Instant::now();
    let warm = result_sanitizer_host::componentize(&wizen(&core)?).context("componentizing the warm pipeline")?;
    write_if_changed(&out.join("pipeline-warm.wasm"), &warm)?;
    println!("pre-initialised the pipeline in {:.1?}", t.elapsed());

    // The pack checks for the hosts that are not Rust (verifier/).
    let verifier_path = core_path.with_file_name("result_sanitizer_verifier.wasm");
    let verifier = std::fs::read(&verifier_path).with_context(|| format!("reading {}", verifier_path.display()))?;
    write_if_changed(
        &out.join("verifier.wasm"),
        &result_sanitizer_host::componentize(&verifier).context("componentizing the verifier")?,
    )?;

    // The family files of rules/default/, joined as the host embeds them.
    let rules = pack_build::RulesFile::defaults().map_err(|e| anyhow::anyhow!("{e}"))?;
    let id = rules.identity(None, None, None)?;
    let pack = pack_build::build(&rules, &id)?;
    write_if_changed(&out.join("default-pack.wasm"), &pack)?;
    write_if_changed(&out.join("default-rules.json"), &serde_json::to_vec(&rules.to_rule_set())?)?;

    let packs = out.join("test-packs");
    std::fs::create_dir_all(&packs)?;
    for (name, trigger, action) in [("slow", b'L', loop_forever()), ("greedy", b'M', grow_forever())] {
        let empty = pack_build::RulesFile::parse("test.toml", "").map_err(|e| anyhow::anyhow!("{e}"))?;
        let id = empty.identity(Some(name), Some("0.0.1"), Some("*"))?;
        let wasm = pack_build::build_with_code(&empty, &id, Some(conditional(trigger, action)))?;
        write_if_changed(&packs.join(format!("{name}.wasm")), &wasm)?;
    }

    write_if_changed(&out.join("rule-pack.layout.json"), &serde_json::to_vec_pretty(&layout()?)?)?;

    let engine = engine::new_engine()?;
    let t = std::time::Instant::now();
    write_if_changed(&out.join("pipeline-warm.cwasm"), &engine.precompile_component(&warm)?)?;
    write_if_changed(&out.join("default-pack.cwasm"), &engine.precompile_component(&pack)?)?;
    println!("precompiled in {:.1?}", t.elapsed());
    Ok(())
}

use wasm_encoder::{BlockType, Instruction as I, MemArg};

/// `detect(ptr, len)`: runs `action` when the text's first byte is
/// `trigger`, then returns an empty list (return area at 3040).
fn conditional(trigger: u8, action: Vec<I<'static>>) -> pack_build::DetectCode {
    let mem = |offset| MemArg { offset, align: 2, memory_index: 0 };
    let mut body = vec![
        I::LocalGet(1),
        I::If(BlockType::Empty),
        I::LocalGet(0),
        I::I32Load8U(MemArg { offset: 0, align: 0, memory_index: 0 }),
        I::I32Const(i32::from(trigger)),
        I::I32Eq,
        I::If(BlockType::Empty),
    ];
    body.extend(action);
    body.extend([I::End, I::End]);
    body.extend([I::I32Const(3040), I::I32Const(0), I::I32Store(mem(0))]);
    body.extend([I::I32Const(3040), I::I32Const(0), I::I32Store(mem(4))]);
    body.extend([I::I32Const(3040), I::End]);
    pack_build::DetectCode { locals: vec![], body }
}

fn loop_forever() -> Vec<I<'static>> {
    vec![I::Loop(BlockType::Empty), I::Br(0), I::End]
}

fn grow_forever() -> Vec<I<'static>> {
    vec![
        I::Loop(BlockType::Empty),
        I::I32Const(16),
        I::MemoryGrow(0),
        I::I32Const(-1),
        I::I32Ne,
        I::BrIf(0),
        I::End,
        I::Unreachable,
    ]
}

/// The canonical-ABI layout of the `rule-pack` interface's types.
fn layout() -> Result<serde_json::Value> {
    use wit_parser::{SizeAlign, Type, TypeDefKind};
    let (resolve, pkg) = result_sanitizer_host::wit::resolve()?;
    let mut sizes = SizeAlign::default();
    sizes.fill(&resolve);
    let iface = resolve.packages[pkg].interfaces["rule-pack"];
    fn name(resolve: &wit_parser::Resolve, t: &Type) -> String {
        match t {
            Type::Bool => "bool".into(),
            Type::U8 => "u8".into(),
            Type::U32 => "u32".into(),
            Type::U64 => "u64".into(),
            Type::F32 => "f32".into(),
            Type::String => "string".into(),
            Type::Id(id) => {
                let d = &resolve.types[*id];
                match (&d.name, &d.kind) {
                    (Some(n), _) => n.clone(),
                    (None, TypeDefKind::List(e)) => format!("list<{}>", name(resolve, e)),
                    (None, TypeDefKind::Option(e)) => format!("option<{}>", name(resolve, e)),
                    (None, k) => format!("{k:?}"),
                }
            }
            other => format!("{other:?}"),
        }
    }
    let mut out = serde_json::Map::new();
    for (n, id) in &resolve.interfaces[iface].types {
        let ty = Type::Id(*id);
        let mut entry = serde_json::json!({
            "size": sizes.size(&ty).size_wasm32(),
            "align": sizes.align(&ty).align_wasm32(),
        });
        match &resolve.types[*id].kind {
            TypeDefKind::Record(r) => {
                let offs = sizes.field_offsets(r.fields.iter().map(|f| &f.ty));
                entry["fields"] = r
                    .fields
                    .iter()
                    .zip(offs)
                    .map(|(f, (o, _))| serde_json::json!({"name": f.name, "type": name(&resolve, &f.ty), "offset": o.size_wasm32()}))
                    .collect();
            }
            TypeDefKind::Enum(e) => entry["cases"] = e.cases.iter().map(|c| c.name.clone()).collect(),
            other => anyhow::bail!("rule-pack type {n}: layout of {other:?} not described"),
        }
        out.insert(n.clone(), entry);
    }
    Ok(serde_json::Value::Object(out))
}

/// Composes the pipeline with `pack` into `target/edge/result-sanitizer.wasm`.
fn edge(root: &Path, pack: Option<PathBuf>) -> Result<()> {
    let components = root.join("target/components");
    // A composed build has no host between the pipeline and the packs: a
    // tenant's pack would be the whole policy, its `relax` unchecked
    // against any grant. Until a composed floor holds, only the default
    // pack is composed.
    if let Some(p) = pack {
        anyhow::bail!(
            "PACK={}: a composed edge build takes the default pack only (with no host between them, a tenant's \
             pack could relax the platform's rules unchecked); serve tenant packs from a host",
            p.display()
        );
    }
    let pack = components.join("default-pack.wasm");
    let out_dir = root.join("target/edge");
    std::fs::create_dir_all(&out_dir)?;
    let pipeline = components.join("pipeline.wasm");
    let bytes = compose_with_pack(&components, &pipeline, &pack)?;
    // It must stand alone: no imports left.
    let engine = engine::new_engine()?;
    let c = wasmtime::component::Component::new(&engine, &bytes)?;
    if let Some((name, _)) = c.component_type().imports(&engine).next() {
        anyhow::bail!("the composed component still imports `{name}`");
    }
    // Rewritten only when it changes: the Worker bundle and the wasi:http
    // build are made from it by its time.
    write_if_changed(&out_dir.join("result-sanitizer.wasm"), &bytes)
}

/// Composes the HTTP adapter with the pre-initialised pipeline and the
/// default pack into `target/edge/result-sanitizer-http.wasm`. The warm
/// pipeline, not the edge component's: a proxy host makes an instance per
/// request, and a fresh cold one would spend ~100 ms building the
/// tokenizer tables the warm one carries in its memory image.
/// `pipeline` composed with `pack`: one pack instance serves both of the
/// pipeline's pack imports (the platform's floor and the tenant's pack are
/// the same; the pipeline counts its rules once). Nothing may stay
/// imported.
fn compose_with_pack(dir: &Path, pipeline: &Path, pack: &Path) -> Result<Vec<u8>> {
    use result_sanitizer_host::wit::{PLATFORM_INTERFACE, RULE_PACK_INTERFACE};
    use wasm_compose::config::{Config, Dependency, Instantiation, InstantiationArg};
    let arg = || InstantiationArg { instance: "pack".into(), export: Some(RULE_PACK_INTERFACE.into()) };
    let root = Instantiation {
        dependency: None,
        arguments: [(PLATFORM_INTERFACE.to_string(), arg()), (RULE_PACK_INTERFACE.to_string(), arg())]
            .into_iter()
            .collect(),
    };
    let config = Config {
        dir: dir.to_path_buf(),
        dependencies: [("pack".to_string(), Dependency { path: pack.to_path_buf() })].into_iter().collect(),
        instantiations: [("root".to_string(), root)].into_iter().collect(),
        disallow_imports: true,
        ..Default::default()
    };
    wasm_compose::composer::ComponentComposer::new(pipeline, &config)
        .compose()
        .with_context(|| format!("composing {} with {}", pipeline.display(), pack.display()))
}

fn edge_http(root: &Path, core: &Path) -> Result<()> {
    let out_dir = root.join("target/edge");
    let components = root.join("target/components");
    std::fs::create_dir_all(&out_dir)?;
    let warm = components.join("pipeline-warm.wasm");
    let pack = components.join("default-pack.wasm");
    let pipeline = compose_with_pack(&components, &warm, &pack)?;
    let edge = out_dir.join("pipeline-warm-composed.wasm");
    write_if_changed(&edge, &pipeline)?;
    let adapter_core = std::fs::read(core).with_context(|| format!("reading {}", core.display()))?;
    let adapter = result_sanitizer_host::componentize(&adapter_core).context("componentizing the HTTP adapter")?;
    let adapter_path = out_dir.join("http-adapter.wasm");
    write_if_changed(&adapter_path, &adapter)?;
    let config =
        wasm_compose::config::Config { dir: out_dir.clone(), definitions: vec![edge.clone()], ..Default::default() };
    let bytes = wasm_compose::composer::ComponentComposer::new(&adapter_path, &config)
        .compose()
        .with_context(|| format!("composing the HTTP adapter with {}", edge.display()))?;
    // What a proxy host must give it: WASI HTTP types and streams, nothing
    // of the pipeline's (that is inside).
    let engine = engine::new_engine()?;
    let c = wasmtime::component::Component::new(&engine, &bytes)?;
    let ty = c.component_type();
    for (name, _) in ty.imports(&engine) {
        anyhow::ensure!(
            name.starts_with("wasi:http/types@0.2.") || name.starts_with("wasi:io/"),
            "the HTTP component imports `{name}`, outside the proxy world's HTTP types and streams"
        );
    }
    anyhow::ensure!(
        ty.exports(&engine).any(|(name, _)| name.starts_with("wasi:http/incoming-handler@0.2.")),
        "the HTTP component does not export wasi:http/incoming-handler"
    );
    // Rewritten only when it changes, so it is precompiled again only then.
    write_if_changed(&out_dir.join("result-sanitizer-http.wasm"), &bytes)
}

/// Pre-initialises the pipeline's core module with wizer: instantiates it
/// (its `rule-pack` imports trap; initialisation does not call them), runs
/// `wizer-initialize`, and snapshots memory and globals into a new module.
fn wizen(core: &[u8]) -> Result<Vec<u8>> {
    let wizer = wasmtime_wizer::Wizer::new();
    let (cx, instrumented) = wizer.instrument(core)?;
    let engine = wasmtime::Engine::default();
    let module = wasmtime::Module::new(&engine, &instrumented)?;
    let mut store = wasmtime::Store::new(&engine, ());
    let mut linker = wasmtime::Linker::new(&engine);
    linker.define_unknown_imports_as_traps(&module)?;
    let instance = linker.instantiate(&mut store, &module)?;
    instance.get_typed_func::<(), ()>(&mut store, wizer.get_init_func())?.call(&mut store, ())?;
    let mut state = Snapshot { store: &mut store, instance };
    Ok(block_on(wizer.snapshot(&cx, &mut state))?)
}

struct Snapshot<'a> {
    store: &'a mut wasmtime::Store<()>,
    instance: wasmtime::Instance,
}

impl wasmtime_wizer::InstanceState for Snapshot<'_> {
    async fn global_get(&mut self, name: &str, _: wasmtime_wizer::ValType) -> wasmtime_wizer::SnapshotVal {
        use wasmtime_wizer::SnapshotVal as S;
        let g = self.instance.get_global(&mut *self.store, name).expect("instrumented global");
        match g.get(&mut *self.store) {
            wasmtime::Val::I32(x) => S::I32(x),
            wasmtime::Val::I64(x) => S::I64(x),
            wasmtime::Val::F32(x) => S::F32(x),
            wasmtime::Val::F64(x) => S::F64(x),
            wasmtime::Val::V128(x) => S::V128(x.as_u128()),
            other => panic!("unsupported global {other:?}"),
        }
    }

    async fn memory_contents(&mut self, name: &str, contents: impl FnOnce(&[u8]) + Send) {
        let m = self.instance.get_memory(&mut *self.store, name).expect("instrumented memory");
        contents(m.data(&*self.store))
    }
}

/// Runs a future that never waits (wizer's snapshot over a sync store).
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

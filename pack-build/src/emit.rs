//! The pack itself: the rule set laid out in canonical ABI form, a core
//! module that returns it, the `pack` world embedded and a manifest
//! appended (steps 2-5 of the crate's design).

use anyhow::{anyhow, Context, Result};
use serde_json::json;
use wasm_encoder::{
    BlockType, CodeSection, ConstExpr, DataSection, ExportKind, ExportSection, Function, FunctionSection,
    GlobalSection, GlobalType, Instruction as I, MemorySection, MemoryType, Module, TypeSection, ValType,
};
use wit_component::{ComponentEncoder, StringEncoding};
use wit_parser::{Type, TypeDefKind, WorldItem, WorldKey};

use result_sanitizer_rule_engine::pack_api as g;

use result_sanitizer_host::manifest::Manifest;
use result_sanitizer_host::wit::{self, RULE_PACK_INTERFACE, WIT_VERSION};

use crate::rules_file::{PackIdentity, RulesFile};

/// Builds a pack component from a validated rules file.
pub fn build(rules: &RulesFile, id: &PackIdentity) -> Result<Vec<u8>> {
    build_with_code(rules, id, None)
}

/// Code for `detect` in a generated pack: the body of a core function
/// `(param $ptr i32) (param $len i32) (result i32)` that receives the text
/// and returns a pointer to a `list<finding>` return area. The generated
/// `has-detect` then answers true. Used for packs whose logic fits in a few
/// instructions, and by the test suite to build hostile packs.
pub struct DetectCode {
    /// Extra locals (count, type) of the body.
    pub locals: Vec<(u32, ValType)>,
    /// Instructions, ending with `End`.
    pub body: Vec<I<'static>>,
}

/// [`build`], with optional `detect` code.
pub fn build_with_code(rules: &RulesFile, id: &PackIdentity, detect: Option<DetectCode>) -> Result<Vec<u8>> {
    let set = rules.to_rule_set();
    let (resolve, pkg) = wit::resolve()?;
    let world = wit::world(&resolve, pkg, "pack")?;
    // Find the exported interface's functions and their result types.
    let iface = resolve.worlds[world]
        .exports
        .iter()
        .find_map(|(k, item)| match (k, item) {
            (WorldKey::Interface(i), WorldItem::Interface { .. }) => Some(*i),
            _ => None,
        })
        .context("pack world exports no interface")?;
    let funcs = &resolve.interfaces[iface].functions;
    let result_ty = |name: &str| -> Result<Type> {
        funcs.get(name).and_then(|f| f.result).ok_or_else(|| anyhow!("WIT function `{name}` missing"))
    };
    let info_ty = result_ty("info")?;
    let rules_ty = result_ty("rules")?;
    let detect_ty = result_ty("detect")?;
    debug_assert!(matches!(detect_ty, Type::Id(t) if matches!(resolve.types[t].kind, TypeDefKind::List(_))));

    const BASE: u32 = 16;
    let mut low = crate::abi::Lowerer::new(&resolve, BASE);
    let info = g::PackInfo {
        name: id.name.clone(),
        version: id.version.clone(),
        tenant: id.tenant.clone(),
        wit_version: WIT_VERSION.into(),
        description: id.description.clone(),
    };
    // The values in their serde form, which `Lowerer` reads (see `abi`).
    let info_ptr = low.lower(&info_ty, &serde_json::to_value(&info)?)?;
    let rules_ptr = low.lower(&rules_ty, &serde_json::to_value(&set)?)?;
    let empty_list_ptr = low.lower(&detect_ty, &json!([]))?;
    let data = std::mem::take(&mut low.mem);
    let heap_base = (BASE as usize + data.len()).div_ceil(16) * 16;
    let pages = (heap_base + 65536).div_ceil(65536) as u64;

    let mut module = Module::new();
    let mut types = TypeSection::new();
    types.ty().function([], [ValType::I32]); // 0: () -> i32
    types.ty().function([ValType::I32, ValType::I32], [ValType::I32]); // 1: detect
    types.ty().function([ValType::I32; 4], [ValType::I32]); // 2: cabi_realloc
    types.ty().function([ValType::I32], []); // 3: post-return
    module.section(&types);
    let mut fns = FunctionSection::new();
    for t in [0, 0, 0, 1, 2, 3] {
        fns.function(t);
    }
    module.section(&fns);
    let mut mems = MemorySection::new();
    mems.memory(MemoryType { minimum: pages, maximum: None, memory64: false, shared: false, page_size_log2: None });
    module.section(&mems);
    let mut globals = GlobalSection::new();
    globals.global(
        GlobalType { val_type: ValType::I32, mutable: true, shared: false },
        &ConstExpr::i32_const(heap_base as i32),
    );
    module.section(&globals);
    let mut exports = ExportSection::new();
    let name = |f: &str| format!("{RULE_PACK_INTERFACE}#{f}");
    exports.export("memory", ExportKind::Memory, 0);
    exports.export(&name("info"), ExportKind::Func, 0);
    exports.export(&name("rules"), ExportKind::Func, 1);
    exports.export(&name("has-detect"), ExportKind::Func, 2);
    exports.export(&name("detect"), ExportKind::Func, 3);
    exports.export("cabi_realloc", ExportKind::Func, 4);
    exports.export(&format!("cabi_post_{}", name("detect")), ExportKind::Func, 5);
    module.section(&exports);

    let mut code = CodeSection::new();
    let konst = |v: i32| {
        let mut f = Function::new([]);
        f.instruction(&I::I32Const(v)).instruction(&I::End);
        f
    };
    code.function(&konst(info_ptr as i32));
    code.function(&konst(rules_ptr as i32));
    let has_detect = detect.is_some();
    code.function(&konst(i32::from(has_detect)));
    match detect {
        None => code.function(&konst(empty_list_ptr as i32)), // detect: []
        Some(d) => {
            let mut f = Function::new(d.locals);
            for i in &d.body {
                f.instruction(i);
            }
            code.function(&f)
        }
    };
    code.function(&realloc_body());
    let mut post = Function::new([]);
    post.instruction(&I::I32Const(heap_base as i32)).instruction(&I::GlobalSet(0)).instruction(&I::End);
    code.function(&post);
    module.section(&code);
    let mut datas = DataSection::new();
    datas.active(0, &ConstExpr::i32_const(BASE as i32), data);
    module.section(&datas);

    let mut core = module.finish();
    wit_component::embed_component_metadata(&mut core, &resolve, world, StringEncoding::UTF8)?;
    let component = ComponentEncoder::default().module(&core)?.validate(true).encode()?;
    let manifest = Manifest {
        name: id.name.clone(),
        version: id.version.clone(),
        tenant: id.tenant.clone(),
        wit_version: WIT_VERSION.into(),
        rule_ids: set.rules.iter().map(|r| r.id.clone()).collect(),
        has_detect,
    };
    Ok(manifest.append_to(component))
}

/// `cabi_realloc(old, old_size, align, new_size)`: a bump allocator that
/// grows memory on demand and copies the old bytes.
fn realloc_body() -> Function {
    let mut f = Function::new([(1, ValType::I32)]); // local 4: ptr
    f.instruction(&I::GlobalGet(0))
        .instruction(&I::LocalGet(2))
        .instruction(&I::I32Add)
        .instruction(&I::I32Const(1))
        .instruction(&I::I32Sub)
        .instruction(&I::I32Const(0))
        .instruction(&I::LocalGet(2))
        .instruction(&I::I32Sub)
        .instruction(&I::I32And)
        .instruction(&I::LocalSet(4))
        .instruction(&I::LocalGet(4))
        .instruction(&I::LocalGet(3))
        .instruction(&I::I32Add)
        .instruction(&I::GlobalSet(0))
        // grow when the new end is past the memory
        .instruction(&I::GlobalGet(0))
        .instruction(&I::MemorySize(0))
        .instruction(&I::I32Const(16))
        .instruction(&I::I32Shl)
        .instruction(&I::I32GtU)
        .instruction(&I::If(BlockType::Empty))
        .instruction(&I::GlobalGet(0))
        .instruction(&I::MemorySize(0))
        .instruction(&I::I32Const(16))
        .instruction(&I::I32Shl)
        .instruction(&I::I32Sub)
        .instruction(&I::I32Const(65535))
        .instruction(&I::I32Add)
        .instruction(&I::I32Const(16))
        .instruction(&I::I32ShrU)
        .instruction(&I::MemoryGrow(0))
        .instruction(&I::I32Const(-1))
        .instruction(&I::I32Eq)
        .instruction(&I::If(BlockType::Empty))
        .instruction(&I::Unreachable)
        .instruction(&I::End)
        .instruction(&I::End)
        // copy min(old_size, new_size) bytes from the old block
        .instruction(&I::LocalGet(0))
        .instruction(&I::If(BlockType::Empty))
        .instruction(&I::LocalGet(4))
        .instruction(&I::LocalGet(0))
        .instruction(&I::LocalGet(1))
        .instruction(&I::LocalGet(3))
        .instruction(&I::LocalGet(1))
        .instruction(&I::LocalGet(3))
        .instruction(&I::I32LtU)
        .instruction(&I::Select)
        .instruction(&I::MemoryCopy { src_mem: 0, dst_mem: 0 })
        .instruction(&I::End)
        .instruction(&I::LocalGet(4))
        .instruction(&I::End);
    f
}

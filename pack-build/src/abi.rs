//! Canonical ABI lowering of constant values, driven by the WIT.
//!
//! A data-only pack returns the same `pack-info` and `rule-set` on every
//! call, so the pack builder lays them out once, at build time, in the
//! canonical ABI memory format, and the generated functions just return a
//! pointer. Layout (sizes, alignments, field and payload offsets) comes
//! from `wit-parser`'s `SizeAlign` over the embedded WIT, so it cannot drift
//! from the types.
//!
//! Values arrive as JSON in the serde form of the WIT types (what
//! `serde_json::to_value` makes of the `wit-bindgen` types, and the one
//! convention of every JSON the pipeline reads or writes): field names and
//! enum cases in snake_case, so the WIT's `secret-group` is looked up as
//! `secret_group` and a case `head-tail-lines` as `head_tail_lines`; an
//! `option` is `null` or its value. (The rule engine's WIT types give
//! every enum `rename_all = "snake_case"`; an enum without it fails here,
//! at build time, as an unknown case.)

use anyhow::{anyhow, bail, Context, Result};
use serde_json::Value;
use wit_parser::{Int, Resolve, SizeAlign, Type, TypeDefKind};

/// Lays values out in a memory image that starts at address `base`.
pub struct Lowerer<'a> {
    resolve: &'a Resolve,
    sizes: SizeAlign,
    base: u32,
    /// The memory image (address `base` is index 0).
    pub mem: Vec<u8>,
}

fn align_to(n: usize, a: usize) -> usize {
    n.div_ceil(a) * a
}

impl<'a> Lowerer<'a> {
    /// A lowerer over `resolve`'s types for memory starting at `base`.
    pub fn new(resolve: &'a Resolve, base: u32) -> Self {
        let mut sizes = SizeAlign::default();
        sizes.fill(resolve);
        Self { resolve, sizes, base, mem: Vec::new() }
    }

    /// Reserves `size` bytes aligned to `align`; returns the absolute address.
    pub fn alloc(&mut self, size: usize, align: usize) -> u32 {
        let start = align_to(self.mem.len() + self.base as usize, align.max(1)) - self.base as usize;
        self.mem.resize(start + size, 0);
        (start + self.base as usize) as u32
    }

    fn write(&mut self, addr: u32, bytes: &[u8]) {
        let i = (addr - self.base) as usize;
        self.mem[i..i + bytes.len()].copy_from_slice(bytes);
    }

    /// Allocates and stores `val` of type `ty`; returns its address.
    pub fn lower(&mut self, ty: &Type, val: &Value) -> Result<u32> {
        let size = self.sizes.size(ty).size_wasm32();
        let align = self.sizes.align(ty).align_wasm32();
        let addr = self.alloc(size, align);
        self.store(ty, val, addr)?;
        Ok(addr)
    }

    fn store(&mut self, ty: &Type, val: &Value, addr: u32) -> Result<()> {
        match ty {
            Type::Bool => self.write(addr, &[u8::from(val.as_bool().context("expected bool")?)]),
            Type::U8 => self.write(addr, &[num(val)? as u8]),
            Type::U32 => self.write(addr, &(num(val)? as u32).to_le_bytes()),
            Type::U64 => self.write(addr, &num(val)?.to_le_bytes()),
            Type::F32 => self.write(addr, &(val.as_f64().context("expected number")? as f32).to_le_bytes()),
            Type::String => {
                let s = val.as_str().context("expected string")?;
                let p = self.alloc(s.len(), 1);
                self.write(p, s.as_bytes());
                self.write(addr, &p.to_le_bytes());
                self.write(addr + 4, &(s.len() as u32).to_le_bytes());
            }
            Type::Id(id) => {
                let def = &self.resolve.types[*id];
                match &def.kind {
                    TypeDefKind::Type(t) => self.store(t, val, addr)?,
                    TypeDefKind::Record(r) => {
                        let obj = val.as_object().context("expected object")?;
                        let offsets: Vec<usize> = self
                            .sizes
                            .field_offsets(r.fields.iter().map(|f| &f.ty))
                            .into_iter()
                            .map(|(o, _)| o.size_wasm32())
                            .collect();
                        for (f, off) in r.fields.iter().zip(offsets) {
                            let key = serde_name(&f.name);
                            let v = obj.get(&key).ok_or_else(|| anyhow!("missing field `{key}`"))?;
                            self.store(&f.ty, v, addr + off as u32).with_context(|| format!("field `{key}`"))?;
                        }
                    }
                    TypeDefKind::List(elem) => {
                        let items = val.as_array().context("expected array")?;
                        let es = self.sizes.size(elem).size_wasm32();
                        let ea = self.sizes.align(elem).align_wasm32();
                        let p = self.alloc(es * items.len(), ea);
                        for (i, item) in items.iter().enumerate() {
                            self.store(elem, item, p + (i * es) as u32)?;
                        }
                        self.write(addr, &p.to_le_bytes());
                        self.write(addr + 4, &(items.len() as u32).to_le_bytes());
                    }
                    TypeDefKind::Option(inner) => {
                        if val.is_null() {
                            self.write(addr, &[0]);
                        } else {
                            self.write(addr, &[1]);
                            let off = self.sizes.payload_offset(Int::U8, [None, Some(inner)]).size_wasm32();
                            self.store(inner, val, addr + off as u32)?;
                        }
                    }
                    TypeDefKind::Enum(e) => {
                        let name = val.as_str().context("expected enum case name")?;
                        let i = e
                            .cases
                            .iter()
                            .position(|c| serde_name(&c.name) == name)
                            .ok_or_else(|| anyhow!("unknown case `{name}`"))?;
                        if e.cases.len() > 256 {
                            bail!("enums over 256 cases are not supported");
                        }
                        self.write(addr, &[i as u8]);
                    }
                    other => bail!("type {other:?} is not supported in constant pack data"),
                }
            }
            other => bail!("type {other:?} is not supported in constant pack data"),
        }
        Ok(())
    }
}

/// The serde (snake_case) form of a WIT name: `secret-group` → `secret_group`.
fn serde_name(wit: &str) -> String {
    wit.replace('-', "_")
}

fn num(v: &Value) -> Result<u64> {
    v.as_u64().context("expected unsigned integer")
}

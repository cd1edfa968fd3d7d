//! The pipeline's `platform` and `rule-pack` imports, forwarded to the pack
//! instances.
//!
//! The pipeline imports `platform` (the platform pack) and `rule-pack` (the
//! tenant's pack); the host satisfies both with host functions that call
//! the pack instances living in the same store (one instance for both when
//! no tenant pack is given; the tenant import then answers as an empty
//! layer under the platform's identity, see `Host::tenant_is_platform`).
//! Going through the host, rather than linking the two components
//! directly, is what lets each pack call run under the pack's own fuel
//! (and, through `Host::in_pack`, its own memory cap), lets the host record
//! which guest was running when something failed, and lets it bound what a
//! pack returns before the pipeline ever sees it: a rule set over
//! [`Limits::rule_set_bytes`](crate::Limits::rule_set_bytes), or more than
//! [`MAX_FINDINGS`] findings, unwinds the call as [`Error::TooLarge`](crate::Error::TooLarge).
//!
//! It is also where policy that only the host can know is applied: a
//! tenant rule set's `relax` keeps only the ids its platform-signed
//! manifest grants (`may-relax`), and the platform's own `relax` is
//! emptied (it has no one to relax for).

use std::sync::{Arc, OnceLock};

use wasmtime::component::Linker;
use wasmtime::error::Context as _;
use wasmtime::StoreContextMut;

use super::store::{Answers, Host, Which};
use crate::bindings::pack::exports::result_sanitizer::core::rule_pack as pk;
use crate::bindings::pack::Pack;
use crate::error::Guest;
use crate::wit::{PLATFORM_INTERFACE, RULE_PACK_INTERFACE};

/// Most findings one `detect` call may return.
const MAX_FINDINGS: usize = 1_000_000;

/// Host functions that forward the pipeline's `platform` and `rule-pack`
/// imports to the pack instances in the same store, under the pack's fuel
/// budget.
pub(super) fn define_pack_forwarders(linker: &mut Linker<Host>) -> wasmtime::Result<()> {
    define(linker, PLATFORM_INTERFACE, Which::Platform)?;
    define(linker, RULE_PACK_INTERFACE, Which::Tenant)
}

fn define(linker: &mut Linker<Host>, interface: &str, which: Which) -> wasmtime::Result<()> {
    let mut inst = linker.instance(interface)?;
    inst.func_wrap("info", move |mut s: StoreContextMut<'_, Host>, (): ()| {
        let answers = answers(&s, which);
        let r = kept(answers.as_ref().map(|a| &a.info), || {
            in_pack(&mut s, which, |s, p| p.result_sanitizer_core_rule_pack().call_info(s))
        })?;
        Ok((r,))
    })?;
    inst.func_wrap("rules", move |mut s: StoreContextMut<'_, Host>, (): ()| {
        if stands_in_for_platform(&s, which) {
            return Ok((empty_layer(),));
        }
        let answers = answers(&s, which);
        let r = kept(answers.as_ref().map(|a| &a.rules), || forwarded_rules(&mut s, which))?;
        Ok((r,))
    })?;
    inst.func_wrap("has-detect", move |mut s: StoreContextMut<'_, Host>, (): ()| {
        if stands_in_for_platform(&s, which) {
            return Ok((false,));
        }
        let answers = answers(&s, which);
        let r = kept(answers.as_ref().map(|a| &a.has_detect), || {
            in_pack(&mut s, which, |s, p| p.result_sanitizer_core_rule_pack().call_has_detect(s))
        })?;
        Ok((r,))
    })?;
    inst.func_wrap("detect", move |mut s: StoreContextMut<'_, Host>, (text,): (String,)| {
        // A pack that said it has no `detect` is not asked (an instance
        // made without one has no instance of it to ask).
        let none = answers(&s, which).is_some_and(|a| a.has_detect.get() == Some(&false));
        if stands_in_for_platform(&s, which) || none {
            return Ok((Vec::<pk::Finding>::new(),));
        }
        let r: Vec<pk::Finding> =
            in_pack(&mut s, which, |s, p| p.result_sanitizer_core_rule_pack().call_detect(s, &text))?;
        // Bound what a pack can make the pipeline process.
        if r.len() > MAX_FINDINGS {
            return Err(too_large(&mut s, "findings", r.len(), MAX_FINDINGS));
        }
        Ok((r,))
    })?;
    Ok(())
}

/// The pack's rule set as the pipeline gets it: bounded by
/// [`Limits::rule_set_bytes`](crate::Limits::rule_set_bytes), its `relax`
/// emptied (the platform's) or cut to the grant (a tenant's).
fn forwarded_rules(s: &mut StoreContextMut<'_, Host>, which: Which) -> wasmtime::Result<pk::RuleSet> {
    let mut r = in_pack(s, which, |s, p| p.result_sanitizer_core_rule_pack().call_rules(s))?;
    let limit = s.data().limits.rule_set_bytes;
    let size = rule_set_bytes(&r);
    if size > limit {
        return Err(too_large(s, "a rule set", size, limit));
    }
    // The pipeline never reads a rule's description (a line for a
    // reviewer): lifted, it cost each instance ~70 KB for the default rules.
    r.rules.iter_mut().for_each(|rule| rule.description = String::new());
    match which {
        Which::Platform => r.relax.clear(),
        Which::Tenant => {
            let grant = s.data().grant.clone();
            r.relax.retain(|id| grant.contains(id));
        }
    }
    Ok(r)
}

/// The answer kept in `cell` if there is one, else `ask`'s, kept there
/// (`cell` is `None` for an import whose pack is asked each time).
fn kept<T: Clone>(cell: Option<&OnceLock<T>>, ask: impl FnOnce() -> wasmtime::Result<T>) -> wasmtime::Result<T> {
    if let Some(r) = cell.and_then(OnceLock::get) {
        return Ok(r.clone());
    }
    let r = ask()?;
    if let Some(c) = cell {
        let _ = c.set(r.clone());
    }
    Ok(r)
}

/// The platform pack's kept answers, for the platform's import; `None`
/// for the tenant's, whose pack is asked each time.
fn answers(s: &StoreContextMut<'_, Host>, which: Which) -> Option<Arc<Answers>> {
    match which {
        Which::Platform => s.data().platform.as_ref().and_then(|l| l.answers.clone()),
        Which::Tenant => None,
    }
}

/// Whether this import is the tenant's of an instance whose one pack
/// serves both imports: it then answers as [`empty_layer`], with no
/// detector, instead of asking the platform's pack a second time.
fn stands_in_for_platform(s: &StoreContextMut<'_, Host>, which: Which) -> bool {
    which == Which::Tenant && s.data().tenant_is_platform
}

/// The tenant layer of an instance whose tenant import serves the
/// platform's pack: the pipeline's own `empty_rule_set` (no rules and no
/// settings), so the platform's rules are the whole policy, as when the
/// pipeline finds one pack on both imports. Taken through serde, since the
/// pipeline's crate and this one bind the same WIT record separately.
fn empty_layer() -> pk::RuleSet {
    let v = serde_json::to_value(result_sanitizer_rule_engine::pack::empty_rule_set());
    v.and_then(serde_json::from_value).expect("one WIT record in both bindings")
}

/// Size of a rule set as [`Limits::rule_set_bytes`](crate::Limits::rule_set_bytes) counts it.
pub(crate) fn rule_set_bytes(r: &pk::RuleSet) -> usize {
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
                + x.replacement.as_ref().map_or(0, |w| w.len() + 16)
        })
        .sum();
    let budgets: usize = r.budgets.iter().map(|b| 64 + b.tool.len()).sum();
    rules
        + budgets
        + strs(&r.allow_regexes)
        + strs(&r.stopwords)
        + strs(&r.path_roots)
        + strs(&r.lenient_tools)
        + strs(&r.generic.allow_regexes)
        + strs(&r.relax)
        + strs(&r.scrub_tools)
        + strs(&r.readable_roots)
        + strs(&r.pii_tools)
}

/// Records that the pack broke a size limit and returns the trap that
/// unwinds the pipeline; `classify` turns it into
/// [`Error::TooLarge`](crate::Error::TooLarge).
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
    which: Which,
    f: impl FnOnce(&mut StoreContextMut<'_, Host>, &Pack) -> wasmtime::Result<R>,
) -> wasmtime::Result<R> {
    let linked = match which {
        Which::Platform => s.data().platform.as_ref(),
        Which::Tenant => s.data().tenant.as_ref(),
    };
    let (pack, name) = linked.and_then(|l| Some((l.pack.clone()?, l.name.clone()))).context("no pack linked")?;
    s.data_mut().pack_name = name;
    let outer = s.get_fuel()?;
    let pack_fuel = s.data().limits.pack_fuel;
    s.set_fuel(pack_fuel)?;
    s.data_mut().in_pack = true;
    let r = f(s, &pack);
    s.data_mut().in_pack = false;
    // The pipeline's fuel back, on failure too (the call is over and the
    // instance dropped, but the metrics count what the pipeline burned,
    // not what the pack left); a failure blames the pack.
    s.set_fuel(outer)?;
    if r.is_err() {
        let name = s.data().pack_name.clone();
        s.data_mut().last_guest = Some(Guest::Pack(name));
    }
    r
}

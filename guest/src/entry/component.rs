//! The component glue: exports backed by the pipeline, rules backed by the
//! imported `platform` and `rule-pack` interfaces. Nothing else lives here.

use std::sync::OnceLock;

use crate::api::{
    Budget, DrainStep, Gap, Guest, Options, RedactRequest, RedactResponse, RoundInput, RoundOptions, SanitizeError,
    Sanitized,
};
use crate::pack::{CompiledPack, RuleSource};
use crate::pack_api::{self, Finding, PackInfo, RuleSet};
use crate::platform_api;

/// The imported tenant pack, as a [`RuleSource`].
struct ImportedPack;

/// The imported platform pack, as a [`RuleSource`].
struct ImportedPlatform;

impl RuleSource for ImportedPlatform {
    fn info(&self) -> PackInfo {
        platform_api::info()
    }
    fn rules(&self) -> RuleSet {
        platform_api::rules()
    }
    fn has_detect(&self) -> bool {
        platform_api::has_detect()
    }
    fn detect(&self, text: &str) -> Vec<Finding> {
        platform_api::detect(text)
    }
}

impl RuleSource for ImportedPack {
    fn info(&self) -> PackInfo {
        pack_api::info()
    }
    fn rules(&self) -> RuleSet {
        pack_api::rules()
    }
    fn has_detect(&self) -> bool {
        pack_api::has_detect()
    }
    fn detect(&self, text: &str) -> Vec<Finding> {
        pack_api::detect(text)
    }
}

/// Compiled once per instance; an instance serves one platform pack and
/// one tenant pack.
fn pack() -> Result<&'static CompiledPack, SanitizeError> {
    static PACK: OnceLock<Result<CompiledPack, SanitizeError>> = OnceLock::new();
    PACK.get_or_init(|| CompiledPack::layered(Box::new(ImportedPlatform), Box::new(ImportedPack)))
        .as_ref()
        .map_err(Clone::clone)
}

struct Component;

impl Guest for Component {
    fn sanitize(input: Vec<u8>, options: Options) -> Result<Sanitized, SanitizeError> {
        crate::pipeline::sanitize(&input, &options, pack()?)
    }

    fn sanitize_round(
        inputs: Vec<RoundInput>,
        round: RoundOptions,
    ) -> Result<Vec<Result<Sanitized, SanitizeError>>, SanitizeError> {
        crate::entry::round::sanitize_round(&inputs, &round, pack()?)
    }

    fn sanitize_json(request: String) -> String {
        match pack() {
            Ok(p) => crate::entry::json_twin::sanitize_json(&request, p),
            Err(e) => serde_json::to_string(&Err::<(), _>(e)).expect("serializes"),
        }
    }

    fn effective_budget_json(options: String) -> String {
        match pack() {
            Ok(p) => crate::entry::json_twin::effective_budget_json(&options, p),
            Err(e) => serde_json::to_string(&Err::<(), _>(e)).expect("serializes"),
        }
    }

    fn effective_budget(options: Options) -> Result<Budget, SanitizeError> {
        crate::options::resolve(&options, &pack()?.rules)
    }

    fn drain(gap: Gap, data: Vec<u8>, last: bool) -> Result<DrainStep, SanitizeError> {
        crate::stages::byte_cap::drain::step(&gap, &data, last, pack()?)
    }

    fn drain_json(request: String) -> String {
        match pack() {
            Ok(p) => crate::entry::json_twin::drain_json(&request, p),
            Err(e) => serde_json::to_string(&Err::<(), _>(e)).expect("serializes"),
        }
    }

    fn redact(request: RedactRequest) -> Result<RedactResponse, SanitizeError> {
        crate::entry::stream::step(&request, pack()?)
    }
}

result_sanitizer_rule_engine::export!(Component with_types_in result_sanitizer_rule_engine);

/// Build-time pre-initialisation (wizer, run by `xtask`): builds the
/// o200k tokenizer tables (and the small static automata) and the keyword
/// automaton of the default rules, which the build then snapshots into the
/// component's memory image, so that a fresh instance starts with them
/// instead of spending ~100 ms building the tables on its first count, and
/// shares the automaton's pages with every other instance instead of
/// building its own. The export is removed from the snapshot.
#[export_name = "wizer-initialize"]
pub extern "C" fn wizer_initialize() {
    INIT.store(true, Ordering::Relaxed);
    crate::support::tokenizer::Tokenizer::get(crate::api::Encoding::O200kBase).warm();
    result_sanitizer_rule_engine::stages::redact::keywords::warm();
    INIT.store(false, Ordering::Relaxed);
}

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Allocation during pre-initialisation is bumped from pages of its own and
/// never freed (but for the last block, which the next one reuses): the
/// snapshot then holds the tables with no free holes in between, so an
/// instance's later allocations (by the system allocator, in fresh pages
/// above) never write into the shared memory image. Every instance would
/// otherwise copy the image pages it allocates into. The temporaries left
/// behind cost file size only, never resident memory.
struct InitBump;

static INIT: AtomicBool = AtomicBool::new(false);
static BUMP_START: AtomicUsize = AtomicUsize::new(0);
static BUMP_NEXT: AtomicUsize = AtomicUsize::new(0);
static BUMP_END: AtomicUsize = AtomicUsize::new(0);
/// Memory grown by someone else between two of the bump's runs: one page,
/// by a direct call of the system allocator during initialisation (not
/// through this allocator; docs/benchmarks.md, session 36). Not bumped: a
/// block of it freed through this allocator goes back to the system's.
static GAP_START: AtomicUsize = AtomicUsize::new(0);
static GAP_END: AtomicUsize = AtomicUsize::new(0);

const PAGE: usize = 65536;

fn in_bump(p: *mut u8) -> bool {
    let p = p as usize;
    p >= BUMP_START.load(Ordering::Relaxed)
        && p < BUMP_END.load(Ordering::Relaxed)
        && !(p >= GAP_START.load(Ordering::Relaxed) && p < GAP_END.load(Ordering::Relaxed))
}

unsafe fn bump(l: Layout) -> *mut u8 {
    let mut next = BUMP_NEXT.load(Ordering::Relaxed);
    let mut end = BUMP_END.load(Ordering::Relaxed);
    let mut at = (next + l.align() - 1) & !(l.align() - 1);
    if next == 0 || at + l.size() > end {
        // A fresh run of pages, contiguous with the last one unless
        // something else grew memory in between (see `GAP_START`).
        let pages = (l.size() + l.align()).div_ceil(PAGE).max(256);
        let old = core::arch::wasm32::memory_grow(0, pages);
        if old == usize::MAX {
            return core::ptr::null_mut();
        }
        let base = old * PAGE;
        if next == 0 {
            BUMP_START.store(base, Ordering::Relaxed);
            next = base;
        } else if base != end {
            if GAP_END.load(Ordering::Relaxed) != 0 {
                // A second gap: `in_bump` keeps one. The build fails here.
                core::arch::wasm32::unreachable();
            }
            GAP_START.store(end, Ordering::Relaxed);
            GAP_END.store(base, Ordering::Relaxed);
            next = base;
        }
        end = base + pages * PAGE;
        BUMP_END.store(end, Ordering::Relaxed);
        at = (next + l.align() - 1) & !(l.align() - 1);
    }
    BUMP_NEXT.store(at + l.size(), Ordering::Relaxed);
    at as *mut u8
}

unsafe impl GlobalAlloc for InitBump {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if INIT.load(Ordering::Relaxed) {
            bump(l)
        } else {
            System.alloc(l)
        }
    }

    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        if !in_bump(p) {
            System.dealloc(p, l)
        } else if INIT.load(Ordering::Relaxed) && p as usize + l.size() == BUMP_NEXT.load(Ordering::Relaxed) {
            // The last block, freed during initialisation (a temporary,
            // such as one token's bytes): the next one takes its place,
            // so the snapshot does not keep it.
            BUMP_NEXT.store(p as usize, Ordering::Relaxed);
        }
        // Other bumped memory is never reused.
    }

    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        if !in_bump(p) && !INIT.load(Ordering::Relaxed) {
            return System.realloc(p, l, new);
        }
        // The last block grows in place while its pages have room.
        if INIT.load(Ordering::Relaxed)
            && in_bump(p)
            && p as usize + l.size() == BUMP_NEXT.load(Ordering::Relaxed)
            && p as usize + new <= BUMP_END.load(Ordering::Relaxed)
        {
            BUMP_NEXT.store(p as usize + new, Ordering::Relaxed);
            return p;
        }
        let n = self.alloc(Layout::from_size_align_unchecked(new, l.align()));
        if !n.is_null() {
            core::ptr::copy_nonoverlapping(p, n, l.size().min(new));
            self.dealloc(p, l);
        }
        n
    }
}

#[global_allocator]
static ALLOC: InitBump = InitBump;

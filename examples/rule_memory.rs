//! What each default rule's regex costs an instance in memory once it has
//! run: its regex-lite program (compiled on the rule's first keyword hit;
//! the engine may compile its `\A`-anchored form instead, of the same size)
//! and the search cache the program needs, natively, counted by a global
//! allocator. Every instance that meets a rule's keyword holds both, so a
//! rule whose keyword is common (`://`, `token`) and whose regex is large
//! costs every tenant. Counted repetitions are the usual cause: regex-lite
//! compiles `x{1,256}` to 256 copies of `x`.
//!
//! Usage: `rule_memory [N]`: the total and the N costliest rules (20).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use result_sanitizer_pack_build::RulesFile;

/// The system allocator, counting the bytes live.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size() as isize, Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size() as isize, Ordering::Relaxed);
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        LIVE.fetch_add(new as isize - l.size() as isize, Ordering::Relaxed);
        System.realloc(p, l, new)
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(20);
    let rules = RulesFile::defaults().expect("default rules").to_rule_set();
    // (program, cache, id, keywords)
    let mut costs: Vec<(isize, isize, String, Vec<String>)> = Vec::new();
    let mut kept = Vec::new();
    for r in &rules.rules {
        let before = live();
        let re = regex_lite::Regex::new(&r.regex).expect("a regex-lite regex");
        let compiled = live();
        // One search makes the cache the program needs (kept in its pool).
        std::hint::black_box(re.captures("x"));
        costs.push((compiled - before, live() - compiled, r.id.clone(), r.keywords.clone()));
        kept.push(re);
    }
    let (program, cache) = costs.iter().fold((0, 0), |(p, c), x| (p + x.0, c + x.1));
    println!(
        "{} rules: regex-lite programs {} KiB, search caches {} KiB (natively; all rules compiled)",
        costs.len(),
        program >> 10,
        cache >> 10
    );
    costs.sort_by_key(|c| std::cmp::Reverse(c.0 + c.1));
    println!("program KiB  cache KiB  rule (keywords)");
    for (p, c, id, kw) in costs.iter().take(n) {
        println!("{:>11}  {:>9}  {id} ({})", p >> 10, c >> 10, kw.join(", "));
    }
}

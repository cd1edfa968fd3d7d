//! Benchmark: many tenants on one host (`make bench` runs it).
//!
//! Builds and signs N tenant packs (default 1000), each one in-house rule
//! as `pack build` builds a pack scoped to one tenant: its own rules, with
//! the platform's floor (the default rules, from the default pack) under
//! it; `--with-defaults` copies the default rules into each pack, as
//! `pack build --with-defaults` does (and as every pack did before session
//! 41). It writes them to a directory and opens a
//! [`Registry`] over it. Then, per tenant, measures the latency from its
//! verified file to its first result (verify, compile or load from the
//! cache, instantiate pack and pipeline, first call), first with an empty
//! compile cache and then with a warm one, and reports the host's RSS
//! with every tenant loaded, and its anonymous and proportional memory
//! (`BENCH_SMAPS=PATH` also copies `/proc/self/smaps` there).
//!
//! Usage: `bench_tenants [N] [--with-defaults]`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use result_sanitizer_host::registry::{Registry, RegistryConfig};
use result_sanitizer_host::signing::{self, SecretKey, TrustPolicy};
use result_sanitizer_host::{default_options, Limits, Sanitizer};
use result_sanitizer_pack_build::{self as pack_build, RulesFile};

#[path = "bench_inputs.rs"]
#[allow(dead_code)]
mod inputs;

fn proc_mib(file: &str, key: &str) -> f64 {
    let status = std::fs::read_to_string(file).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// Resident set: counts a page shared by several mappings once per mapping.
fn rss_mib() -> f64 {
    proc_mib("/proc/self/status", "VmRSS:")
}

/// Anonymous memory: what the process owns alone (instances' heaps, the
/// host's own); the pre-initialised pipeline's memory image is file-backed
/// and shared by every instance until written.
fn anon_mib() -> f64 {
    proc_mib("/proc/self/smaps_rollup", "Anonymous:")
}

/// Proportional set: a page shared by k mappings counts 1/k in each, so the
/// pipeline's memory image, mapped by every instance, counts once in all.
fn pss_mib() -> f64 {
    proc_mib("/proc/self/smaps_rollup", "Pss:")
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn run(reg: &Registry, n: usize, label: &str) -> Vec<Duration> {
    let mut opts = default_options();
    opts.tool = "shell".into();
    let mut lat = Vec::with_capacity(n);
    for i in 0..n {
        let t = Instant::now();
        let out = reg
            .sanitize(&format!("tenant-{i}"), format!("t{i}_0123456789abcdef0123456789abcdef ok").as_bytes(), &opts)
            .expect("first result");
        lat.push(t.elapsed());
        assert!(out.message.contains(&format!("[REDACTED:t{i}-token]")));
    }
    lat.sort();
    println!(
        "{label:<28} median {:>8.2?}  p99 {:>8.2?}  max {:>8.2?}  (goal: ≤ 20 ms per new tenant)",
        pct(&lat, 0.5),
        pct(&lat, 0.99),
        lat[lat.len() - 1]
    );
    lat
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.iter().find_map(|a| a.parse().ok()).unwrap_or(1000);
    let with_defaults = args.iter().any(|a| a == "--with-defaults");
    let dir = std::env::temp_dir().join(format!("rs-bench-tenants-{}", std::process::id()));
    let cache = dir.join("cache");
    let packs = dir.join("packs");
    std::fs::create_dir_all(&packs).unwrap();
    let key = SecretKey::generate();

    let t = Instant::now();
    for i in 0..n {
        let rules = inputs::tenant_rules(i);
        let rf = RulesFile::parse("bench.toml", &rules).unwrap();
        let rf = if with_defaults { rf.over_defaults() } else { rf.on_floor() }.unwrap();
        let id = rf.identity(None, None, None).unwrap();
        let wasm = signing::sign(&pack_build::build(&rf, &id).unwrap(), &key, None, &[]).unwrap();
        std::fs::write(packs.join(format!("tenant-{i}.wasm")), wasm).unwrap();
    }
    let what = if with_defaults { "each with a copy of the default rules" } else { "on the platform's floor" };
    println!("built and signed {n} packs ({what}) in {:.2?} ({:.2?} per pack)", t.elapsed(), t.elapsed() / n as u32);

    let rss0 = rss_mib();
    let s = Arc::new(Sanitizer::new(Limits::default()).unwrap());
    let config = RegistryConfig {
        dir: packs.clone(),
        policy: TrustPolicy { keys: vec![key.public()], allow_unsigned: false },
        cache_dir: Some(cache),
        capacity: n,
    };
    let t = Instant::now();
    let reg = Registry::open(s.clone(), config.clone()).unwrap();
    println!("indexed {} tenants in {:.2?}", reg.tenants(), t.elapsed());
    let (rss_base, anon_base, pss_base) = (rss_mib(), anon_mib(), pss_mib());
    run(&reg, n, "new tenant, cold cache:");
    let (rss_all, anon_all, pss_all) = (rss_mib(), anon_mib(), pss_mib());
    // The mappings behind the figures (`BENCH_SMAPS=PATH`): where a tenant's memory goes.
    if let Some(path) = std::env::var_os("BENCH_SMAPS") {
        std::fs::copy("/proc/self/smaps", path).expect("copy /proc/self/smaps");
    }
    println!(
        "RSS: {rss0:.0} MiB before the host, {rss_base:.0} MiB with the pipeline, {rss_all:.0} MiB with {n} tenants loaded \
         ({:.2} MiB per tenant; goal: ≤ 1024 MiB for 1000)",
        (rss_all - rss_base) / n as f64
    );
    println!(
        "anonymous (unshared) memory: {anon_base:.0} MiB with the pipeline, {anon_all:.0} MiB with {n} tenants loaded \
         ({:.2} MiB per tenant)",
        (anon_all - anon_base) / n as f64
    );
    println!(
        "proportional (PSS) memory: {pss_base:.0} MiB with the pipeline, {pss_all:.0} MiB with {n} tenants loaded \
         ({:.2} MiB per tenant)",
        (pss_all - pss_base) / n as f64
    );
    drop(reg);
    let reg = Registry::open(s, config).unwrap();
    run(&reg, n, "new tenant, warm cache:");
    let _ = std::fs::remove_dir_all(&dir);
}

//! One workload in a loop, for `perf`: the profile evidence behind
//! docs/benchmarks.md. Wasm frames get names when the host runs with
//! `RESULT_SANITIZER_PERFMAP=1` (wasmtime writes a perf map):
//!
//! ```sh
//! RESULT_SANITIZER_PERFMAP=1 perf record target/release/examples/profile warm 8 5000
//! perf report --no-children
//! ```
//!
//! Usage: `profile MODE [KIB] [N]`
//!
//! - `warm KIB N`: `sanitize` of a KIB service log through the wasm host, N times,
//!   with the fuel each call burned (the same on any machine: compare builds
//!   by it where timings are noisy);
//! - `fresh - N`: a fresh pipeline instance (a newly loaded default pack) to
//!   its first tokenized result (16 KiB), N times;
//! - `tenant - N`: a tenant's pack (the default rules and one of its own,
//!   as `bench_tenants` builds it) compiled N times, then each compiled
//!   copy to its first result: what a new tenant pays, in two parts;
//! - `native KIB N`: the same pipeline compiled natively, N times;
//! - `native-mcp KIB N` / `warm-mcp KIB N`: server-filesystem's
//!   `read_text_file` result (the text as a block and as structured
//!   content) with the MCP proxy's options, native or through the wasm host;
//! - `redact-clean KIB` / `redact-dense KIB`: native redaction, throughput;
//! - `redact-file - N PATH`: native redaction of a file, N times (a log of
//!   `tools/foreign-logs.sh`, say);
//! - `redact-stream - N PATH`: the wasm host's `redact_stream` of a file
//!   (the CLI's `redact --threads 1`, in process), N times;
//! - `rule-costs - N PATH`: each default rule alone, natively, on a file, N
//!   times: the 20 costliest rules (which rule a slow input pays for);
//! - `compile - N`: compiling every regex of the default rule set natively, N times;
//! - `write-clean KIB PATH` / `write-dense KIB PATH` / `write-varied KIB PATH` /
//!   `write-ci KIB PATH` / `write-ci-ascii KIB PATH`: write one of bench's
//!   inputs (for `perf record result-sanitizer redact < PATH`).

use std::time::Instant;

use result_sanitizer_host::{default_options, Limits, Sanitizer};
use result_sanitizer_pack_build::RulesFile;
use result_sanitizer_rule_engine::pack_api::PackInfo;
use result_sanitizer_rule_engine::{CompiledPack, StaticRules};

#[path = "bench_inputs.rs"]
mod inputs;
use inputs::{ci_log, dense, service_log, varied_log};

fn native_pack() -> CompiledPack {
    pack_of(RulesFile::defaults().expect("default rules").to_rule_set())
}

/// A native pack of `rules`.
fn pack_of(rules: result_sanitizer_rule_engine::pack_api::RuleSet) -> CompiledPack {
    let info = PackInfo {
        name: "default".into(),
        version: "0".into(),
        tenant: "*".into(),
        wit_version: "0.1.0".into(),
        description: String::new(),
    };
    CompiledPack::new(Box::new(StaticRules { info, rules })).expect("a pack of the default rules")
}

/// What the CLI's `redact` does with `data` (one last step of its stream),
/// natively: the number of redactions.
fn redact_once(pack: &CompiledPack, data: &str) -> usize {
    let req = result_sanitizer_rule_engine::redact_request(data.as_bytes().to_vec(), true);
    let r = result_sanitizer_pipeline::redact_step(&req, pack).expect("redact");
    r.redactions.iter().map(|c| c.count as usize).sum()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map(String::as_str).unwrap_or("");
    let kib: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(16);
    let n: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(100).max(1);
    let per = |t: Instant| t.elapsed() / n as u32;
    match mode {
        "warm" => {
            let s = Sanitizer::new(Limits::default()).expect("sanitizer");
            let input = service_log(kib << 10);
            let mut o = default_options();
            o.tool = "logs".into();
            o.max_bytes = Some(2 << 20);
            s.sanitize(&input, &o).expect("sanitize");
            let fuel = s.metrics().fuel;
            let t = Instant::now();
            for _ in 0..n {
                s.sanitize(&input, &o).expect("sanitize");
            }
            let d = per(t);
            let fuel = (s.metrics().fuel - fuel) / n.max(1) as u64;
            println!("warm sanitize {kib} KiB: {d:?} per call, {fuel} fuel per call");
        }
        "fresh" => {
            let s = Sanitizer::new(Limits::default()).expect("sanitizer");
            let bytes = result_sanitizer_host::artifacts().expect("make build").pack_wasm;
            let packs: Vec<_> = (0..n).map(|_| s.load_pack_unverified(bytes).expect("pack")).collect();
            let input = service_log(16 << 10);
            let mut o = default_options();
            o.tool = "logs".into();
            let t = Instant::now();
            for p in &packs {
                s.sanitize_with(p, &input, &o).expect("sanitize");
            }
            println!("fresh instance to first tokenized result: {:?}", per(t));
        }
        "tenant" => {
            let s = Sanitizer::new(Limits::default()).expect("sanitizer");
            let rules = inputs::tenant_rules(0);
            let rf = RulesFile::parse("tenant.toml", &rules).expect("rules").on_floor().expect("a tenant pack");
            let id = rf.identity(None, None, None).expect("identity");
            let wasm = result_sanitizer_pack_build::build(&rf, &id).expect("pack");
            let t = Instant::now();
            let packs: Vec<_> = (0..n).map(|_| s.load_pack_unverified(&wasm).expect("pack")).collect();
            println!("tenant pack ({} bytes) compiled: {:?} per pack", wasm.len(), per(t));
            let mut o = default_options();
            o.tool = "shell".into();
            let t = Instant::now();
            for p in &packs {
                s.sanitize_with(p, b"t0_0123456789abcdef0123456789abcdef ok", &o).expect("sanitize");
            }
            println!("compiled tenant pack to its first result: {:?}", per(t));
        }
        "native" => {
            let pack = native_pack();
            let input = service_log(kib << 10);
            let mut o = result_sanitizer_rule_engine::default_options();
            o.tool = "logs".into();
            o.max_bytes = Some(2 << 20);
            let t = Instant::now();
            for _ in 0..n {
                result_sanitizer_pipeline::sanitize(&input, &o, &pack).expect("sanitize");
            }
            println!("native sanitize {kib} KiB: {:?} per call", per(t));
        }
        "native-mcp" | "warm-mcp" | "warm-mcp-summary" => {
            // What server-filesystem's read_text_file answers: the text
            // twice, as a block and as structured content.
            // Lines that all differ, as a real log's do.
            let text = String::from_utf8(service_log(kib << 10)).expect("ASCII");
            let mut result = serde_json::json!({
                "content": [{ "type": "text", "text": text }],
                "structuredContent": { "content": text },
            });
            if mode == "warm-mcp-summary" {
                // Beside the twin, a string of its own over 1 KiB, which
                // the pass scans before the text.
                let summary = String::from_utf8(service_log(2 << 10)).expect("ASCII");
                result["structuredContent"]["summary"] = summary.into();
            }
            let input = serde_json::to_vec(&result).expect("JSON");
            let mut o = result_sanitizer_rule_engine::default_options();
            o.tool = "read_text_file".into();
            o.call_id = "call_1".into();
            o.input = result_sanitizer_rule_engine::api::InputKind::Mcp;
            o.recall_bytes = Some(input.len() as u64);
            let mut fuel = None;
            let t = if mode == "native-mcp" {
                let pack = native_pack();
                let t = Instant::now();
                for _ in 0..n {
                    result_sanitizer_pipeline::sanitize(&input, &o, &pack).expect("sanitize");
                }
                t
            } else {
                let s = Sanitizer::new(Limits::default()).expect("sanitizer");
                let o = result_sanitizer_host::options_from_json(&serde_json::to_value(&o).expect("options serialize"))
                    .expect("options convert");
                s.sanitize(&input, &o).expect("sanitize");
                let before = s.metrics().fuel;
                let t = Instant::now();
                for _ in 0..n {
                    s.sanitize(&input, &o).expect("sanitize");
                }
                fuel = Some((s.metrics().fuel - before) / n.max(1) as u64);
                t
            };
            let fuel = fuel.map_or(String::new(), |f| format!(", {f} fuel per call"));
            println!("{mode} {kib} KiB read_text_file result: {:?} per call{fuel}", per(t));
        }
        "redact-clean" | "redact-dense" => {
            let pack = native_pack();
            let data = if mode == "redact-clean" { service_log(kib << 10) } else { dense(kib << 10) };
            let text = std::str::from_utf8(&data).expect("generated text is UTF-8");
            let t = Instant::now();
            let spans = pack.findings(text).len();
            let d = t.elapsed();
            println!("native {mode} {kib} KiB: {spans} spans, {:.0} MB/s", data.len() as f64 / d.as_secs_f64() / 1e6);
        }
        "redact-file" => {
            let pack = native_pack();
            let path = args.get(4).expect("redact-file - N PATH");
            let data = std::fs::read_to_string(path).expect("a UTF-8 file");
            let t = Instant::now();
            let mut spans = 0;
            for _ in 0..n {
                spans = redact_once(&pack, &data);
            }
            let d = t.elapsed() / n as u32;
            println!(
                "native redact of {path}: {spans} redactions, {:.0} MB/s",
                data.len() as f64 / d.as_secs_f64() / 1e6
            );
        }
        "redact-stream" => {
            let s = Sanitizer::new(Limits::default()).expect("sanitizer");
            let path = args.get(4).expect("redact-stream - N PATH");
            let data = std::fs::read(path).expect("a file");
            let mut sink = Vec::with_capacity(data.len() + 1024);
            let run = |sink: &mut Vec<u8>| {
                sink.clear();
                let mut o = result_sanitizer_host::io::StreamOptions::default();
                result_sanitizer_host::io::redact_stream(&s, s.default_pack(), &data[..], sink, &mut o).expect("redact")
            };
            run(&mut sink);
            let t = Instant::now();
            for _ in 0..n {
                run(&mut sink);
            }
            let d = per(t);
            println!("wasm redact of {path}: {:?} per call, {:.0} MB/s", d, data.len() as f64 / d.as_secs_f64() / 1e6);
        }
        "rule-costs" => {
            let path = args.get(4).expect("rule-costs - N PATH");
            let data = std::fs::read_to_string(path).expect("a UTF-8 file");
            let all = RulesFile::defaults().expect("default rules").to_rule_set();
            let mut costs: Vec<(std::time::Duration, String, usize)> = Vec::new();
            for rule in &all.rules {
                let mut rules = all.clone();
                rules.rules = vec![rule.clone()];
                let pack = pack_of(rules);
                let spans = redact_once(&pack, &data);
                let t = Instant::now();
                for _ in 0..n {
                    std::hint::black_box(redact_once(&pack, &data));
                }
                costs.push((per(t), rule.id.clone(), spans));
            }
            costs.sort_by_key(|c| std::cmp::Reverse(c.0));
            let total: std::time::Duration = costs.iter().map(|c| c.0).sum();
            println!("{} rules alone on {path} ({} bytes): {total:?} in all", costs.len(), data.len());
            for (d, id, spans) in costs.iter().take(20) {
                println!("  {d:>10.2?}  {id} ({spans} spans)");
            }
        }
        "compile" => {
            let rules = RulesFile::defaults().expect("default rules").to_rule_set();
            let t = Instant::now();
            for _ in 0..n {
                result_sanitizer_rule_engine::check_rule_set(std::hint::black_box(&rules)).expect("compile");
            }
            println!("compile the default rule set: {:?}", per(t));
        }
        "write-clean" | "write-dense" | "write-varied" | "write-ci" | "write-ci-ascii" => {
            let path = args.get(3).expect("PATH");
            let data = match mode {
                "write-clean" => service_log(kib << 10),
                "write-dense" => dense(kib << 10),
                "write-varied" => varied_log(kib << 10),
                "write-ci" => ci_log(kib << 10, true),
                _ => ci_log(kib << 10, false),
            };
            std::fs::write(path, data).expect("write");
        }
        _ => {
            eprintln!("usage: profile warm|fresh|native|native-mcp|warm-mcp|redact-clean|redact-dense|redact-file|rule-costs|compile|write-clean|write-dense|write-varied|write-ci|write-ci-ascii [KIB] [N|PATH]");
            std::process::exit(2);
        }
    }
}

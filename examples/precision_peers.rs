//! `make precision`, breadth (issue #38): recall on peer scanners' labelled
//! samples, and flags on their negatives, side by side with gitleaks.
//!
//! gitleaks and Betterleaks test every rule on true-positive and
//! false-positive samples written by their authors (some generated from
//! the rule's regex). `tools/peer-samples.py` extracts them from the
//! scanners' modules on the Go module proxy into `target/bench/peers/`
//! (nothing of theirs is in this repository). Here each sample is redacted
//! on its own, as `result-sanitizer redact` does a stream (the default pack,
//! strict mode, no content type), and counted as found when anything in it
//! is redacted. gitleaks 8.30.1 scans the same samples, one file each.
//!
//! The two peers' samples are not equally fair to gitleaks: its own were
//! checked against its rules when they were written (it finds them by
//! construction); Betterleaks' were not.
//!
//! Usage: `precision_peers [--peers DIR] [--gitleaks PATH] [--pack FILE]
//! [--show N] [--json FILE]`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use result_sanitizer_host::io::{redact_stream, StreamOptions};
use result_sanitizer_host::{Limits, LoadedPack, Sanitizer};
use result_sanitizer_pack_build::RulesFile;
use serde_json::json;

/// Issue #38's goal for recall on the peers' positives.
const GOAL_RECALL: f64 = 0.95;

struct PeerRule {
    peer: String,
    rule: String,
    tps: Vec<String>,
    fps: Vec<String>,
}

#[derive(Default)]
struct Tally {
    tps: u64,
    tps_ours: u64,
    tps_theirs: u64,
    fps: u64,
    fps_ours: u64,
    fps_theirs: u64,
}

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

fn load(dir: &Path) -> Vec<PeerRule> {
    let mut out = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e} (run tools/peer-samples.py)", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    for f in files {
        for line in std::fs::read_to_string(&f).expect("read samples").lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            let strings = |k: &str| -> Vec<String> {
                v[k].as_array().into_iter().flatten().filter_map(|s| s.as_str().map(String::from)).collect()
            };
            out.push(PeerRule {
                peer: v["peer"].as_str().unwrap_or("?").into(),
                rule: v["rule"].as_str().unwrap_or("?").into(),
                tps: strings("tps"),
                fps: strings("fps"),
            });
        }
    }
    out
}

/// The rule ids of the replacements `redact` makes in `sample`, read off
/// its `[REDACTED:<rule>]` markers.
fn ours(s: &Sanitizer, pack: &LoadedPack, sample: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut opts = StreamOptions::default();
    let n = redact_stream(s, pack, sample.as_bytes(), &mut out, &mut opts).expect("redact a sample").replacements;
    let text = String::from_utf8_lossy(&out);
    let ids: Vec<String> = text
        .split("[REDACTED:")
        .skip(1)
        .filter_map(|rest| rest.split_once(']').map(|(id, _)| id.to_string()))
        .collect();
    // A sample's own `[REDACTED:` text is not a replacement; a count with
    // no marker read is one all the same.
    if ids.is_empty() && n > 0 {
        return vec!["?".into()];
    }
    ids.into_iter().take(n as usize).collect()
}

/// gitleaks over one file per sample; returns the indexes of the files with
/// a finding.
fn theirs(gl: &Path, dir: &Path, samples: &[&str]) -> BTreeSet<usize> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("temp dir");
    for (i, s) in samples.iter().enumerate() {
        std::fs::write(dir.join(format!("{i:06}.txt")), s).expect("write sample");
    }
    let report = dir.with_extension("json");
    let out = Command::new(gl)
        .args(["dir", "--no-banner", "--no-color", "--exit-code", "0", "--log-level", "error", "-f", "json", "-r"])
        .arg(&report)
        .arg(dir)
        .output()
        .expect("run gitleaks");
    assert!(out.status.success(), "gitleaks failed: {}", out.status);
    let findings: Vec<serde_json::Value> =
        serde_json::from_slice(&std::fs::read(&report).expect("gitleaks report")).expect("gitleaks JSON");
    findings
        .iter()
        .filter_map(|f| {
            let file = f["File"].as_str()?;
            Path::new(file).file_stem()?.to_str()?.parse().ok()
        })
        .collect()
}

fn pct(n: u64, d: u64) -> String {
    if d == 0 {
        "-".into()
    } else {
        format!("{:.3}", n as f64 / d as f64)
    }
}

fn main() {
    let dir = PathBuf::from(arg("--peers").unwrap_or_else(|| "target/bench/peers".into()));
    let gitleaks = arg("--gitleaks").map(PathBuf::from);
    let show: usize = arg("--show").and_then(|s| s.parse().ok()).unwrap_or(30);
    let rules = load(&dir);
    let s = Sanitizer::new(Limits::default()).expect("sanitizer");
    // `--pack FILE`: a pack built from edited rules (`result-sanitizer pack
    // build rules/default --no-defaults -o FILE`), without rebuilding.
    let loaded =
        arg("--pack").map(|p| s.load_pack_unverified(&std::fs::read(&p).expect("read --pack")).expect("load --pack"));
    let pack = loaded.as_ref().unwrap_or(s.default_pack());

    // Every sample once, in order: (rule index, positive?, text).
    let mut samples: Vec<(usize, bool, &str)> = Vec::new();
    for (i, r) in rules.iter().enumerate() {
        samples.extend(r.tps.iter().map(|t| (i, true, t.as_str())));
        samples.extend(r.fps.iter().map(|t| (i, false, t.as_str())));
    }
    let ids: Vec<Vec<String>> = samples.iter().map(|(_, _, t)| ours(&s, pack, t)).collect();
    let found: Vec<bool> = ids.iter().map(|v| !v.is_empty()).collect();
    // Generic rules (`strict_only`: a secret-named variable, whatever its
    // value looks like) against the others (a provider's token format).
    let generic: BTreeSet<String> = RulesFile::defaults()
        .expect("default rules")
        .to_rule_set()
        .rules
        .into_iter()
        .filter(|r| r.strict_only)
        .map(|r| r.id)
        .collect();
    let gl_found = gitleaks.as_ref().map(|gl| {
        let texts: Vec<&str> = samples.iter().map(|(_, _, t)| *t).collect();
        theirs(gl, &std::env::temp_dir().join("rs-precision-peers"), &texts)
    });

    let mut by_peer: BTreeMap<String, Tally> = BTreeMap::new();
    // Per peer rule: (positives, found by us).
    let mut per_rule: BTreeMap<(String, String), (u64, u64)> = BTreeMap::new();
    // Flagged negatives: peer, peer rule, our rules, whether gitleaks flags it too.
    let mut flagged: Vec<(String, String, Vec<String>, bool)> = Vec::new();
    // Flagged negatives by what flagged them: (by a generic rule only, by a provider rule).
    let mut flagged_by = (0u64, 0u64);
    for (k, (i, pos, _)) in samples.iter().enumerate() {
        let r = &rules[*i];
        let t = by_peer.entry(r.peer.clone()).or_default();
        let g = gl_found.as_ref().is_some_and(|f| f.contains(&k));
        if *pos {
            t.tps += 1;
            t.tps_ours += found[k] as u64;
            t.tps_theirs += g as u64;
            let e = per_rule.entry((r.peer.clone(), r.rule.clone())).or_default();
            e.0 += 1;
            e.1 += found[k] as u64;
        } else {
            t.fps += 1;
            t.fps_ours += found[k] as u64;
            t.fps_theirs += g as u64;
            if found[k] {
                flagged.push((r.peer.clone(), r.rule.clone(), ids[k].clone(), g));
                if ids[k].iter().all(|id| generic.contains(id)) {
                    flagged_by.0 += 1;
                } else {
                    flagged_by.1 += 1;
                }
            }
        }
    }

    println!("\n== Peers' labelled samples (issue #38): recall on positives, flags on negatives ==");
    println!(
        "samples: {} (tools/peer-samples.py); ours: redact, default pack; theirs: {}",
        dir.display(),
        if gitleaks.is_some() { "gitleaks dir, one file per sample" } else { "no gitleaks (--gitleaks PATH)" }
    );
    println!(
        "\n{:<12} {:>9} {:>8} {:>9} {:>9} {:>8} {:>9}   goal: recall ≥ {GOAL_RECALL}, flags ≤ gitleaks'",
        "peer", "positives", "recall", "gitleaks", "negatives", "flagged", "gitleaks"
    );
    let mut ok = true;
    for (peer, t) in &by_peer {
        let has = gitleaks.is_some();
        println!(
            "{:<12} {:>9} {:>8} {:>9} {:>9} {:>8} {:>9}",
            peer,
            t.tps,
            pct(t.tps_ours, t.tps),
            if has { pct(t.tps_theirs, t.tps) } else { "-".into() },
            t.fps,
            pct(t.fps_ours, t.fps),
            if has { pct(t.fps_theirs, t.fps) } else { "-".into() },
        );
        ok &= (t.tps_ours as f64) >= GOAL_RECALL * t.tps as f64 && (!has || t.fps_ours <= t.fps_theirs);
    }
    let missed: Vec<_> = per_rule.iter().filter(|(_, (n, f))| f < n).collect();
    println!("\npeer rules with a positive we miss: {} of {}", missed.len(), per_rule.len());
    for ((peer, rule), (n, f)) in missed.iter().take(show) {
        println!("  {peer:<12} {rule:<45} found {f}/{n}");
    }
    if missed.len() > show {
        println!("  ... ({} more; --show N)", missed.len() - show);
    }
    println!(
        "\nnegatives we flag: {} ({} by generic rules alone: a secret-named variable's value, whatever \
         the peer's rule makes of its format; {} by a provider's format rule)",
        flagged.len(),
        flagged_by.0,
        flagged_by.1
    );
    for (peer, rule, by, g) in flagged.iter().take(show) {
        // The sample's text is not printed: a negative may still hold a
        // real-looking value. The peer and rule say where to look.
        let g = if *g { "  (gitleaks too)" } else { "" };
        println!("  {peer:<12} {rule:<40} {}{g}", by.join(","));
    }
    println!("\nbreadth goal met: {}", if ok { "yes" } else { "no" });

    if let Some(path) = arg("--json") {
        let v = json!({
            "peers": by_peer.iter().map(|(p, t)| (p.clone(), json!({
                "positives": t.tps, "found": t.tps_ours, "gitleaks_found": gitleaks.is_some().then_some(t.tps_theirs),
                "negatives": t.fps, "flagged": t.fps_ours, "gitleaks_flagged": gitleaks.is_some().then_some(t.fps_theirs),
            }))).collect::<serde_json::Map<_, _>>(),
            "missed_rules": missed.iter().map(|((p, r), (n, f))| json!({"peer": p, "rule": r, "positives": n, "found": f})).collect::<Vec<_>>(),
            "flagged_negatives": flagged.iter().map(|(p, r, by, g)| json!({"peer": p, "rule": r, "ours": by, "gitleaks": g})).collect::<Vec<_>>(),
        });
        std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).expect("write --json");
    }
}

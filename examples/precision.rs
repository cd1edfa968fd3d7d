//! `make precision`: false alarms on real source code that nobody in the
//! project wrote (issue #15). It samples files present on any machine with
//! the project's toolchains (the cargo registry sources, Python's standard
//! library, the JS host's `node_modules`), runs `result-sanitizer redact
//! FILE` on each, as that file (so the CLI sees the file name), and gitleaks
//! on the same bytes, and prints redactions per MB by language and by rule,
//! with a sample of changed lines. Every source file here is assumed to hold
//! no live secret, so every redaction counts as a false alarm.
//!
//! Then the same files, and the log bench inputs, with personal-data
//! redaction on (`redact --pii`, issue #40; `precision_pii.rs`).
//!
//! Usage: `precision [--cli PATH] [--gitleaks PATH] [--mb N] [--show N]
//! [--seed N] [--json FILE] [--no-pii]`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::json;

#[path = "precision_markers.rs"]
mod precision_markers;
use precision_markers::new_markers;

/// The PII-on figure (issue #40).
#[path = "precision_pii.rs"]
mod pii;

/// Larger files are left out: generated tables and bundles, not code.
const MAX_FILE: u64 = 256 * 1024;
/// Issue #15's acceptance: at most this many redactions per MB.
const GOAL_PER_MB: f64 = 0.5;
/// A file with a line this long is counted as minified (kept, not skipped).
const MINIFIED_LINE: usize = 1000;

struct Lang {
    name: &'static str,
    /// How the roots are named in the output (the paths differ by machine).
    label: String,
    roots: Vec<PathBuf>,
    exts: &'static [&'static str],
}

struct Sampled {
    path: PathBuf,
    /// The path below its root, for display.
    shown: String,
    data: Vec<u8>,
}

#[derive(Default)]
struct LangResult {
    candidates: usize,
    too_large: usize,
    binary: usize,
    minified: usize,
    files: usize,
    bytes: u64,
    failures: Vec<String>,
    ours: BTreeMap<String, u64>,
    theirs: BTreeMap<String, u64>,
    theirs_scanned: Option<u64>,
    per_file: Vec<(String, u64)>,
    gitleaks_hits: Vec<(String, String, u64)>,
    redact_secs: f64,
    gitleaks_secs: f64,
}

struct Sample {
    lang: &'static str,
    file: String,
    line: usize,
    rules: Vec<String>,
    text: String,
}

fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cargo"))
}

fn python_stdlib() -> Option<PathBuf> {
    let out = Command::new("python3")
        .args(["-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"])
        .output()
        .ok()?;
    let s = String::from_utf8(out.stdout).ok()?;
    let p = PathBuf::from(s.trim());
    p.is_dir().then_some(p)
}

fn langs() -> Vec<Lang> {
    let registry = cargo_home().join("registry/src");
    let mut crates: Vec<PathBuf> =
        std::fs::read_dir(&registry).into_iter().flatten().flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    crates.sort();
    let stdlib = python_stdlib();
    vec![
        Lang { name: "rust", label: format!("{}/*/", registry.display()), roots: crates, exts: &["rs"] },
        Lang {
            name: "python",
            label: stdlib.as_ref().map_or("python3 stdlib (not found)".into(), |p| format!("{}/", p.display())),
            roots: stdlib.into_iter().collect(),
            exts: &["py"],
        },
        Lang {
            name: "javascript",
            label: "hosts/js/node_modules/".into(),
            roots: vec![PathBuf::from("hosts/js/node_modules")].into_iter().filter(|p| p.is_dir()).collect(),
            exts: &["js", "mjs", "cjs", "ts"],
        },
    ]
}

/// Every regular file under `dir` with one of `exts`, with its size.
/// Symlinks are not followed (node_modules/.bin is all symlinks); Python's
/// installed packages are not the standard library.
fn walk(dir: &Path, exts: &[&str], out: &mut Vec<(PathBuf, u64)>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let Ok(ft) = e.file_type() else { continue };
        let p = e.path();
        if ft.is_dir() {
            let n = e.file_name();
            if n != "site-packages" && n != "dist-packages" {
                walk(&p, exts, out);
            }
        } else if ft.is_file() && p.extension().is_some_and(|x| exts.iter().any(|e| x == *e)) {
            if let Ok(m) = e.metadata() {
                out.push((p, m.len()));
            }
        }
    }
}

/// A seeded rank from a path below its root: FNV-1a, then splitmix64's
/// finaliser. It depends on that path alone, so a crate another build adds
/// to the registry slots in without reshuffling the rest of the sample, and
/// the same trees pick the same files on any machine.
fn rank(seed: u64, rel: &str) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325 ^ seed;
    for b in rel.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// The candidates in order of their seeded rank (ties by path), taken
/// until `budget` bytes.
fn sample(lang: &Lang, budget: u64, seed: u64, res: &mut LangResult) -> Vec<Sampled> {
    let mut all = Vec::new();
    for root in &lang.roots {
        let mut v = Vec::new();
        walk(root, lang.exts, &mut v);
        all.extend(v.into_iter().map(|(p, n)| {
            let rel = p.strip_prefix(root).unwrap_or(&p).display().to_string();
            (rank(seed, &rel), p, rel, n)
        }));
    }
    res.too_large = all.iter().filter(|f| f.3 > MAX_FILE).count();
    all.retain(|f| f.3 > 0 && f.3 <= MAX_FILE);
    res.candidates = all.len();
    all.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    let mut picked = Vec::new();
    let mut total = 0u64;
    for (_, path, shown, _) in all {
        if total >= budget {
            break;
        }
        let Ok(data) = std::fs::read(&path) else { continue };
        if data.contains(&0) || std::str::from_utf8(&data).is_err() {
            res.binary += 1;
            continue;
        }
        if data.split(|&b| b == b'\n').any(|l| l.len() >= MINIFIED_LINE) {
            res.minified += 1;
        }
        total += data.len() as u64;
        picked.push(Sampled { path, shown, data });
    }
    picked.sort_by(|a, b| a.path.cmp(&b.path));
    picked
}

/// The output lines that gained a marker, with the input line number.
/// Redaction keeps lines apart, so lines pair up one to one, except where a
/// secret spanned lines (a PEM block): then the next unchanged line resyncs.
fn changed_lines(input: &[u8], output: &[u8]) -> Vec<(usize, Vec<String>, String)> {
    let a: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    let b: Vec<&[u8]> = output.split(|&b| b == b'\n').collect();
    let mut found = Vec::new();
    let mut push = |n: usize, inp: &[u8], out: &[u8]| {
        let rules: Vec<String> = new_markers(inp, out).into_keys().collect();
        if !rules.is_empty() {
            found.push((n, rules, String::from_utf8_lossy(out).into_owned()));
        }
    };
    if a.len() == b.len() {
        for (k, (x, y)) in a.iter().zip(&b).enumerate() {
            if x != y {
                push(k + 1, x, y);
            }
        }
        return found;
    }
    let mut j = 0;
    for k in 0..b.len() {
        if a.get(j) == Some(&b[k]) {
            j += 1;
            continue;
        }
        push(j + 1, a.get(j).copied().unwrap_or_default(), b[k]);
        j = match b.get(k + 1) {
            Some(next) => (j + 1..a.len().min(j + 1000)).find(|&i| a[i] == *next).unwrap_or(j + 1),
            None => j + 1,
        };
    }
    found
}

/// At most ~160 characters of a line, around its first marker.
fn excerpt(line: &str) -> String {
    let line = line.trim();
    let chars: Vec<char> = line.chars().collect();
    if chars.len() <= 160 {
        return line.to_string();
    }
    let at = line.find("[REDACTED:").map_or(0, |b| line[..b].chars().count());
    let start = at.saturating_sub(60).min(chars.len() - 160);
    let mut s = String::new();
    if start > 0 {
        s.push('…');
    }
    s.extend(&chars[start..start + 160]);
    if start + 160 < chars.len() {
        s.push('…');
    }
    s
}

fn run_redact(cli: &Path, files: &[Sampled], lang: &'static str, res: &mut LangResult, samples: &mut Vec<Sample>) {
    let t = Instant::now();
    for f in files {
        let out = match Command::new(cli).arg("redact").arg(&f.path).output() {
            Ok(o) if o.status.success() => o.stdout,
            Ok(o) => {
                res.failures.push(format!("{}: {}", f.shown, o.status));
                continue;
            }
            Err(e) => panic!("cannot run {}: {e}", cli.display()),
        };
        let new = new_markers(&f.data, &out);
        let n: u64 = new.values().sum();
        for (k, v) in new {
            *res.ours.entry(k).or_insert(0) += v;
        }
        if n > 0 {
            res.per_file.push((f.shown.clone(), n));
            for (line, rules, text) in changed_lines(&f.data, &out) {
                samples.push(Sample { lang, file: f.shown.clone(), line, rules, text: excerpt(&text) });
            }
        }
    }
    res.redact_secs = t.elapsed().as_secs_f64();
}

/// gitleaks on a flat copy of the sample: its default config skips any path
/// under `node_modules/` or `lib/python3.x/` without reading it, which
/// would compare our findings with a scan that never happened. File names
/// are kept (some of its rules look at them).
fn run_gitleaks(gl: &Path, dir: &Path, files: &[Sampled], res: &mut LangResult) {
    std::fs::create_dir_all(dir).expect("temp dir");
    for (i, f) in files.iter().enumerate() {
        let name = f.path.file_name().expect("a file").to_string_lossy();
        std::fs::write(dir.join(format!("{i:05}-{name}")), &f.data).expect("copy sample");
    }
    let report = dir.with_extension("json");
    let t = Instant::now();
    let out = Command::new(gl)
        .args(["dir", "--no-banner", "--no-color", "--exit-code", "0", "--log-level", "info", "-f", "json", "-r"])
        .arg(&report)
        .arg(dir)
        .output()
        .expect("run gitleaks");
    res.gitleaks_secs = t.elapsed().as_secs_f64();
    assert!(out.status.success(), "gitleaks failed: {}", out.status);
    let log = String::from_utf8_lossy(&out.stderr);
    res.theirs_scanned = log.split("scanned ~").nth(1).and_then(|s| s.split(' ').next()).and_then(|n| n.parse().ok());
    let findings: Vec<serde_json::Value> =
        serde_json::from_slice(&std::fs::read(&report).expect("gitleaks report")).expect("gitleaks JSON");
    for f in findings {
        let rule = f["RuleID"].as_str().unwrap_or("?").to_string();
        *res.theirs.entry(rule.clone()).or_insert(0) += 1;
        // Only where: the report's Secret and Match fields are never read.
        let file = f["File"].as_str().unwrap_or("");
        let idx = Path::new(file).file_name().and_then(|n| n.to_str()?.split('-').next()?.parse::<usize>().ok());
        let shown = idx.and_then(|i| files.get(i)).map_or_else(|| file.to_string(), |s| s.shown.clone());
        res.gitleaks_hits.push((rule, shown, f["StartLine"].as_u64().unwrap_or(0)));
    }
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

fn per_mb(n: u64, bytes: u64) -> f64 {
    if bytes == 0 {
        0.0
    } else {
        n as f64 / mb(bytes)
    }
}

/// Issue #15's goal: at most 0.5 per MB, and fewer than gitleaks (none at
/// all counts as fewer, or a language where gitleaks finds nothing could
/// never pass).
fn goal(ours: u64, theirs: Option<u64>, bytes: u64) -> bool {
    per_mb(ours, bytes) <= GOAL_PER_MB && theirs.is_none_or(|t| ours == 0 || ours < t)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: &str| args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).cloned();
    let num = |k: &str, d: f64| arg(k).map_or(d, |v| v.parse().unwrap_or_else(|_| panic!("{k}: not a number: {v}")));
    let cli = arg("--cli").map_or_else(|| PathBuf::from("target/release/result-sanitizer"), PathBuf::from);
    let gitleaks = arg("--gitleaks").map(PathBuf::from);
    let budget = (num("--mb", 8.0) * 1e6) as u64;
    let show = num("--show", 20.0) as usize;
    let seed: u64 = arg("--seed").map_or(15, |v| v.parse().unwrap_or_else(|_| panic!("--seed: not a number: {v}")));
    let json_out = arg("--json");
    let started = Instant::now();

    let gl_version = gitleaks.as_ref().map(|g| {
        let o = Command::new(g).arg("version").output().expect("run gitleaks version");
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    });
    println!(
        "false alarms on real source code: `{} redact FILE` vs {} (issue #15)",
        cli.display(),
        gl_version.as_ref().map_or("no gitleaks (--gitleaks PATH to compare)".into(), |v| format!("gitleaks {v} dir"))
    );
    println!(
        "sample: up to {:.1} MB per language, files of at most {} KiB, ranked by a hash of the path with seed {seed}; \
         binary files (a NUL byte or invalid UTF-8) skipped, minified files kept\n",
        mb(budget),
        MAX_FILE >> 10
    );

    let tmp = std::env::temp_dir().join(format!("rs-precision-{}", std::process::id()));
    let langs = langs();
    let mut results: Vec<LangResult> = Vec::new();
    let mut samples = Vec::new();
    for lang in &langs {
        let mut res = LangResult::default();
        let files = sample(lang, budget, seed, &mut res);
        res.files = files.len();
        res.bytes = files.iter().map(|f| f.data.len() as u64).sum();
        println!(
            "  {:<10} {} ({}): {} files, {:.2} MB, of {} eligible ({} over {} KiB left out; {} binary skipped; {} minified kept)",
            lang.name,
            lang.label,
            lang.exts.iter().map(|e| format!(".{e}")).collect::<Vec<_>>().join(" "),
            res.files,
            mb(res.bytes),
            res.candidates,
            res.too_large,
            MAX_FILE >> 10,
            res.binary,
            res.minified
        );
        run_redact(&cli, &files, lang.name, &mut res, &mut samples);
        if let Some(gl) = &gitleaks {
            run_gitleaks(gl, &tmp.join(lang.name), &files, &mut res);
        }
        results.push(res);
    }
    let _ = std::fs::remove_dir_all(&tmp);

    let has_gl = gitleaks.is_some();
    println!(
        "\n{:<12} {:>6} {:>7} {:>11} {:>8} {:>9} {:>8}   goal: ≤ {GOAL_PER_MB}/MB and fewer than gitleaks",
        "language", "files", "MB", "redactions", "/MB", "gitleaks", "/MB"
    );
    let total = |f: &dyn Fn(&LangResult) -> u64| results.iter().map(f).sum::<u64>();
    let sum = |m: &BTreeMap<String, u64>| m.values().sum::<u64>();
    let mut rows: Vec<(&str, u64, u64, u64, u64)> = langs
        .iter()
        .zip(&results)
        .map(|(l, r)| (l.name, r.files as u64, r.bytes, sum(&r.ours), sum(&r.theirs)))
        .collect();
    rows.push((
        "overall",
        total(&|r| r.files as u64),
        total(&|r| r.bytes),
        total(&|r| sum(&r.ours)),
        total(&|r| sum(&r.theirs)),
    ));
    let mut verdicts = BTreeMap::new();
    for &(name, files, bytes, ours, theirs) in &rows {
        let ok = goal(ours, has_gl.then_some(theirs), bytes);
        verdicts.insert(name, ok);
        let (gl_n, gl_mb) = if has_gl {
            (theirs.to_string(), format!("{:.2}", per_mb(theirs, bytes)))
        } else {
            ("-".into(), "-".into())
        };
        println!(
            "{name:<12} {files:>6} {:>7.2} {ours:>11} {:>8.2} {gl_n:>9} {gl_mb:>8}   {}",
            mb(bytes),
            per_mb(ours, bytes),
            if bytes == 0 {
                "no files"
            } else if ok {
                "met"
            } else {
                "NOT MET"
            }
        );
    }

    let by_rule = |pick: &dyn Fn(&LangResult) -> &BTreeMap<String, u64>| {
        let mut m: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for (i, r) in results.iter().enumerate() {
            for (k, v) in pick(r) {
                m.entry(k.clone()).or_insert_with(|| vec![0; results.len()])[i] += v;
            }
        }
        let mut v: Vec<(String, Vec<u64>)> = m.into_iter().collect();
        v.sort_by(|a, b| b.1.iter().sum::<u64>().cmp(&a.1.iter().sum()).then(a.0.cmp(&b.0)));
        v
    };
    let names: Vec<&str> = langs.iter().map(|l| l.name).collect();
    let print_rules = |title: &str, v: &[(String, Vec<u64>)]| {
        println!("\n{title} (all languages: {})", names.join(" / "));
        if v.is_empty() {
            println!("  none");
        }
        for (k, n) in v {
            let parts: Vec<String> = n.iter().map(u64::to_string).collect();
            println!("  {k:<40} {:>6}   ({})", n.iter().sum::<u64>(), parts.join(" / "));
        }
    };
    let ours_rules = by_rule(&|r| &r.ours);
    let theirs_rules = by_rule(&|r| &r.theirs);
    print_rules("result-sanitizer redactions by rule", &ours_rules);
    if has_gl {
        print_rules("gitleaks findings by rule", &theirs_rules);
    }

    let mut top_files: Vec<(&str, &String, u64)> =
        langs.iter().zip(&results).flat_map(|(l, r)| r.per_file.iter().map(move |(f, n)| (l.name, f, *n))).collect();
    top_files.sort_by(|a, b| b.2.cmp(&a.2).then(a.1.cmp(b.1)));
    if !top_files.is_empty() {
        println!("\nfiles with the most redactions");
        for (lang, f, n) in top_files.iter().take(8) {
            println!("  {n:>5}  {lang:<10} {f}");
        }
    }

    // Round robin over rules (most frequent first), each rule's lines
    // taking one per file first: a sample that shows every rule at work
    // rather than one file's many lines.
    let mut queues: Vec<Vec<&Sample>> = ours_rules
        .iter()
        .map(|(rule, _)| {
            let mine: Vec<&Sample> = samples.iter().filter(|s| s.rules[0] == *rule).collect();
            let mut seen = BTreeSet::new();
            let (first, rest): (Vec<&Sample>, Vec<&Sample>) =
                mine.into_iter().partition(|s| seen.insert((s.lang, s.file.as_str())));
            first.into_iter().chain(rest).rev().collect()
        })
        .collect();
    let mut shown: Vec<&Sample> = Vec::new();
    while shown.len() < show && queues.iter().any(|q| !q.is_empty()) {
        for q in &mut queues {
            if shown.len() < show {
                shown.extend(q.pop());
            }
        }
    }
    if !shown.is_empty() {
        println!(
            "\nsample of changed lines ({} of {}; the redacted output line, at most 160 characters)",
            shown.len(),
            samples.len()
        );
        for s in &shown {
            println!("  {}  {} {}:{}\n      {}", s.rules.join(","), s.lang, s.file, s.line, s.text);
        }
    }
    let failures: Vec<&String> = results.iter().flat_map(|r| &r.failures).collect();
    if !failures.is_empty() {
        println!("\nredact failed on {} files (not counted):", failures.len());
        for f in failures.iter().take(10) {
            println!("  {f}");
        }
    }
    // gitleaks' own count of what it read: a check that it scanned the sample.
    let scanned: Vec<String> = results
        .iter()
        .zip(&langs)
        .filter_map(|(r, l)| r.theirs_scanned.map(|n| format!("{} {:.2} MB", l.name, mb(n))))
        .collect();
    println!(
        "\ntime: redact {:.1} s ({} CLI processes), gitleaks {:.1} s (it read: {}), total {:.1} s",
        results.iter().map(|r| r.redact_secs).sum::<f64>(),
        total(&|r| r.files as u64),
        results.iter().map(|r| r.gitleaks_secs).sum::<f64>(),
        if scanned.is_empty() { "-".into() } else { scanned.join(", ") },
        started.elapsed().as_secs_f64()
    );

    if !args.iter().any(|a| a == "--no-pii") {
        pii::run(&cli, budget, seed, show);
    }

    if let Some(path) = json_out {
        let lang_json: Vec<serde_json::Value> = langs
            .iter()
            .zip(&results)
            .map(|(l, r)| {
                json!({
                    "language": l.name,
                    "roots": l.label,
                    "extensions": l.exts,
                    "eligible_files": r.candidates,
                    "files_over_max_size": r.too_large,
                    "binary_skipped": r.binary,
                    "minified_kept": r.minified,
                    "files": r.files,
                    "bytes": r.bytes,
                    "redactions": sum(&r.ours),
                    "redactions_per_mb": per_mb(sum(&r.ours), r.bytes),
                    "redactions_by_rule": r.ours,
                    "gitleaks": has_gl.then(|| sum(&r.theirs)),
                    "gitleaks_per_mb": has_gl.then(|| per_mb(sum(&r.theirs), r.bytes)),
                    "gitleaks_by_rule": has_gl.then_some(&r.theirs),
                    "gitleaks_scanned_bytes": r.theirs_scanned,
                    "gitleaks_findings": r.gitleaks_hits.iter()
                        .map(|(rule, f, line)| json!({"rule": rule, "file": f, "line": line}))
                        .collect::<Vec<_>>(),
                    "goal_met": verdicts.get(l.name),
                    "redact_failures": r.failures,
                    "redact_seconds": r.redact_secs,
                    "gitleaks_seconds": r.gitleaks_secs,
                })
            })
            .collect();
        let o = rows.last().expect("the overall row");
        let doc = json!({
            "cli": cli.display().to_string(),
            "gitleaks_version": gl_version,
            "seed": seed,
            "budget_bytes_per_language": budget,
            "max_file_bytes": MAX_FILE,
            "goal_per_mb": GOAL_PER_MB,
            "languages": lang_json,
            "overall": {
                "files": o.1, "bytes": o.2, "redactions": o.3, "redactions_per_mb": per_mb(o.3, o.2),
                "gitleaks": has_gl.then_some(o.4), "gitleaks_per_mb": has_gl.then(|| per_mb(o.4, o.2)),
                "goal_met": verdicts.get("overall"),
            },
            "changed_lines": samples.iter()
                .map(|s| json!({"language": s.lang, "file": s.file, "line": s.line, "rules": s.rules, "redacted_line": s.text}))
                .collect::<Vec<_>>(),
            "seconds": started.elapsed().as_secs_f64(),
        });
        std::fs::write(&path, serde_json::to_string_pretty(&doc).expect("JSON") + "\n").expect("write --json");
        println!("results: {path}");
    }
}

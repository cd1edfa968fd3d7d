//! `make precision`, second table (issue #37): false alarms on the outputs
//! agents really produce. The shell commands an agent runs to read code
//! (`grep -rn`, `git grep -n`, `rg`, `git log -p`, `git show`, `git diff`,
//! `cat -n`, `sed -n`, compiler diagnostics, tracebacks) are run over public
//! repositories nobody in the project wrote; a repository holding the AWS
//! CLI's examples (aws/aws-cli) adds what its calls print (`aws cli`: the
//! JSON a cloud API returns). Each output is sent the
//! way `result-sanitizer run` sends it: the CLI's `run` itself, replaying
//! the captured bytes and exit status, budgets wide open so nothing is cut.
//! gitleaks reads the same bytes. Every redaction counts as a false alarm.
//!
//! The repositories are git directories (bare or not) in `--repos DIR`
//! (or `$PRECISION_REPOS`), one per subdirectory; none is shipped, and the
//! table says so when they are absent. docs/benchmarks.md lists the ones
//! measured and their commits.
//!
//! Usage: `precision_shell [--cli PATH] [--gitleaks PATH] [--repos DIR]
//! [--show N] [--json FILE]`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::json;

#[path = "precision_markers.rs"]
mod precision_markers;
use precision_markers::new_markers;

#[path = "precision_shell/outputs.rs"]
mod outputs;
use outputs::{git, git_dir, have, outputs_of, Output};

/// The issue's goal: overall at most half of gitleaks' rate.
const GOAL_RATIO: f64 = 0.5;

#[derive(Default)]
struct KindResult {
    outputs: usize,
    bytes: u64,
    ours: BTreeMap<String, u64>,
    theirs: BTreeMap<String, u64>,
    failures: Vec<String>,
}

struct Sample {
    kind: &'static str,
    label: String,
    rules: Vec<String>,
    text: String,
}

/// Random text over `alphabet` (xorshift from `seed`).
fn draw(seed: &mut u64, alphabet: &str, n: usize) -> String {
    let a = alphabet.as_bytes();
    (0..n)
        .map(|_| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            a[(*seed % a.len() as u64) as usize] as char
        })
        .collect()
}

/// Real outputs with a secret planted in each shape: a key added to a
/// `.env` in `git log -p`, a token in a grep hit of a YAML file, a
/// `.netrc` password at the end of a `cat -n` (`cat -n FILE .netrc`), a
/// private key block added in `git show`, three credentials an AWS call
/// returns. Values drawn at run time.
fn planted(outputs: &[Output]) -> Vec<(Output, Vec<String>)> {
    const AN: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut out = Vec::new();
    let mut repos: Vec<&str> = outputs.iter().map(|o| o.repo.as_str()).collect();
    repos.dedup();
    for repo in repos {
        let first = |kind: &str| outputs.iter().find(|o| o.repo == repo && o.kind == kind && !o.redact);
        let mut plant = |o: &Output, bytes: Vec<u8>, secrets: Vec<String>| {
            out.push((Output { bytes, label: format!("{} (planted)", o.label), repo: o.repo.clone(), ..*o }, secrets));
        };
        if let Some(o) = first("git log -p") {
            let key = draw(&mut seed, B64, 40);
            let mut b = format!(
                "commit {}\nAuthor: Dev <dev@example.com>\nDate:   Tue Nov 4 10:00:00 2026 +0000\n\n    deploy settings\n\n\
                 diff --git a/.env.production b/.env.production\nnew file mode 100644\nindex 0000000..1f2e3d4\n--- /dev/null\n\
                 +++ b/.env.production\n@@ -0,0 +1,3 @@\n+REGION=eu-west-1\n+AWS_SECRET_ACCESS_KEY={key}\n+PORT=8080\n\n",
                draw(&mut seed, "0123456789abcdef", 40)
            )
            .into_bytes();
            b.extend_from_slice(&o.bytes);
            plant(o, b, vec![key]);
        }
        if let Some(o) = first("grep -rn") {
            let token = draw(&mut seed, AN, 32);
            let cut = o.bytes.iter().position(|&c| c == b'\n').map_or(0, |p| p + 1);
            let mut b = o.bytes[..cut].to_vec();
            b.extend_from_slice(format!("./config/secrets.yml:3:  api_token: {token}\n").as_bytes());
            b.extend_from_slice(&o.bytes[cut..]);
            plant(o, b, vec![token]);
        }
        // `cat -n NOTES .netrc`: after a file that is not code (a listing
        // is judged as one file, sniffed from its first lines).
        let listing = outputs.iter().find(|o| {
            o.repo == repo
                && o.kind == "cat -n"
                && [".md", ".txt", ".rst", ".yml", ".yaml", ".toml", ".cfg"].iter().any(|e| o.label.ends_with(e))
        });
        if let Some(o) = listing {
            let password = draw(&mut seed, AN, 20);
            let n = o.bytes.iter().filter(|&&c| c == b'\n').count();
            let mut b = o.bytes.clone();
            if !b.ends_with(b"\n") {
                b.push(b'\n');
            }
            for (i, l) in
                ["machine api.example.com", "  login deploy", &format!("  password {password}")].iter().enumerate()
            {
                b.extend_from_slice(format!("{:>6}\t{l}\n", n + 2 + i).as_bytes());
            }
            plant(o, b, vec![password]);
        }
        if let Some(o) = first("git show") {
            let body: Vec<String> = (0..6).map(|_| draw(&mut seed, B64, 64)).collect();
            let mut b = o.bytes.clone();
            b.extend_from_slice(
                format!(
                    "diff --git a/deploy/id_rsa b/deploy/id_rsa\nnew file mode 100600\nindex 0000000..5e6f7a8\n--- /dev/null\n\
                     +++ b/deploy/id_rsa\n@@ -0,0 +1,8 @@\n+-----BEGIN RSA PRIVATE KEY-----\n{}\n+-----END RSA PRIVATE KEY-----\n",
                    body.iter().map(|l| format!("+{l}")).collect::<Vec<_>>().join("\n")
                )
                .as_bytes(),
            );
            plant(o, b, body);
        }
        // AWS calls that return a credential, after a real output: a
        // SecureString read `--with-decryption`, a task definition's
        // environment, a secret's value (a JSON document in a string).
        if let Some(o) = first("aws cli") {
            let (param, env, pass) = (draw(&mut seed, AN, 24), draw(&mut seed, AN, 32), draw(&mut seed, AN, 20));
            let mut b = o.bytes.clone();
            b.extend_from_slice(
                format!(
                    "{{\n    \"Parameter\": {{\n        \"Name\": \"/prod/app/db\",\n        \"Type\": \"SecureString\",\n        \
                     \"Value\": \"{param}\",\n        \"Version\": 2\n    }}\n}}\n{{\n    \"environment\": [\n        {{\n            \
                     \"name\": \"STRIPE_SECRET\",\n            \"value\": \"{env}\"\n        }}\n    ]\n}}\n{{\n    \
                     \"Name\": \"prod/db\",\n    \"SecretString\": \"{{\\\"username\\\":\\\"app\\\",\\\"password\\\":\\\"{pass}\\\"}}\"\n}}\n"
                )
                .as_bytes(),
            );
            plant(o, b, vec![param, env, pass]);
        }
    }
    out
}

/// The output lines that gained a marker (lines pair up one to one but
/// where a secret spanned lines; those are shown as they come).
fn changed_lines(input: &[u8], output: &[u8]) -> Vec<(Vec<String>, String)> {
    let a: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    let b: Vec<&[u8]> = output.split(|&b| b == b'\n').collect();
    let mut found = Vec::new();
    for (k, y) in b.iter().enumerate() {
        let x = a.get(k).copied().unwrap_or_default();
        if x != *y {
            let rules: Vec<String> = new_markers(x, y).into_keys().collect();
            if !rules.is_empty() {
                found.push((rules, excerpt(&String::from_utf8_lossy(y))));
            }
        }
    }
    found
}

fn excerpt(line: &str) -> String {
    let chars: Vec<char> = line.trim().chars().collect();
    if chars.len() <= 160 {
        return chars.into_iter().collect();
    }
    let s: String = chars[..160].iter().collect();
    s + "…"
}

/// The content `run` prints for `o` (its replayed bytes and status), or
/// `redact`'s output on stdin; with the content class `run`'s record gives
/// it (`None` for `redact`).
fn ours(cli: &Path, o: &Output, file: &Path) -> Result<(Vec<u8>, Option<String>), String> {
    std::fs::write(file, &o.bytes).expect("write output");
    let out = if o.redact {
        Command::new(cli).args(["redact", "--sniff", "-"]).stdin(std::fs::File::open(file).expect("reopen")).output()
    } else {
        Command::new(cli)
            .args(["run", "--format", "openai", "--max-bytes", "67108864", "--max-chars", "1000000000"])
            .args(["--max-tokens", "1000000000", "--timeout-ms", "120000", "--memory-mib", "1024", "--"])
            .args(["sh", "-c", "cat \"$1\"; exit \"$2\"", "sh"])
            .arg(file)
            .arg(o.status.to_string())
            .output()
    }
    .map_err(|e| format!("cannot run {}: {e}", cli.display()))?;
    if !out.status.success() {
        return Err(format!("{}: {}", o.label, out.status));
    }
    if o.redact {
        return Ok((out.stdout, None));
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| format!("{}: {e}", o.label))?;
    let content = &v["message"]["content"];
    let text = content.as_str().map(str::to_string).unwrap_or_else(|| content.to_string());
    if v["record"]["truncated"].as_bool() == Some(true) {
        return Err(format!("{}: cut although the budgets are wide open", o.label));
    }
    Ok((text.into_bytes(), v["record"]["class"].as_str().map(str::to_string)))
}

/// How `run` judged the files `sed -n` printed without their names, by
/// their names' extensions (the language `content_type_for_path` gives,
/// or "other .ext"): files, and of them judged code.
#[derive(Default)]
struct Sniffed(BTreeMap<String, (u64, u64)>);

impl Sniffed {
    fn add(&mut self, label: &str, class: Option<&str>) {
        let name = label.rsplit([' ', '/']).next().unwrap_or(label);
        let lang = match result_sanitizer_pipeline::content_type_for_path(name) {
            Some(t) => t.rsplit(['/', '-']).next().unwrap_or(t).to_string(),
            None => format!("other .{}", name.rsplit_once('.').map_or("", |(_, e)| e).to_ascii_lowercase()),
        };
        let e = self.0.entry(lang).or_default();
        e.0 += 1;
        e.1 += u64::from(class == Some("code"));
    }
}

fn run_gitleaks(gl: &Path, dir: &Path, outs: &[&Output]) -> BTreeMap<String, u64> {
    std::fs::create_dir_all(dir).expect("temp dir");
    for (i, o) in outs.iter().enumerate() {
        std::fs::write(dir.join(format!("{i:05}.txt")), &o.bytes).expect("copy output");
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
    let mut m = BTreeMap::new();
    for f in findings {
        *m.entry(f["RuleID"].as_str().unwrap_or("?").to_string()).or_insert(0) += 1;
    }
    m
}

fn per_mb(n: u64, bytes: u64) -> f64 {
    if bytes == 0 {
        0.0
    } else {
        n as f64 / (bytes as f64 / 1e6)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: &str| args.iter().position(|a| a == k).and_then(|i| args.get(i + 1)).cloned();
    let cli = arg("--cli").map_or_else(|| PathBuf::from("target/release/result-sanitizer"), PathBuf::from);
    let gitleaks = arg("--gitleaks").map(PathBuf::from);
    let show: usize = arg("--show").map_or(20, |v| v.parse().expect("--show: a number"));
    let repos = arg("--repos")
        .or_else(|| std::env::var("PRECISION_REPOS").ok())
        .map_or_else(|| PathBuf::from("target/bench/repos"), PathBuf::from);
    let started = Instant::now();
    println!(
        "false alarms on agent shell outputs (issue #37): each output replayed through `{} run`, budgets wide open",
        cli.display()
    );
    let mut dirs: Vec<(String, PathBuf)> = std::fs::read_dir(&repos)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_string_lossy().into_owned(), git_dir(&e.path())?)))
        .collect();
    dirs.sort();
    if dirs.is_empty() {
        println!(
            "  SKIPPED: no git repositories in {} (--repos DIR or PRECISION_REPOS; docs/benchmarks.md lists the ones measured)",
            repos.display()
        );
        return;
    }
    let rg = have("rg");
    let tmp = std::env::temp_dir().join(format!("rs-precision-shell-{}", std::process::id()));
    let mut outputs = Vec::new();
    for (name, dir) in &dirs {
        let head = git(dir, &["rev-parse", "HEAD"])
            .map(|(o, _)| String::from_utf8_lossy(&o).trim().to_string())
            .unwrap_or_default();
        let before = outputs.len();
        outputs.extend(outputs_of(name, dir, &tmp, rg));
        let bytes: usize = outputs[before..].iter().map(|o| o.bytes.len()).sum();
        println!("  {name:<28} {head}  {} outputs, {:.2} MB", outputs.len() - before, bytes as f64 / 1e6);
    }
    if !rg {
        println!("  (rg not installed: its rows are left out)");
    }

    let kinds: Vec<&'static str> = {
        let mut k: Vec<&'static str> = Vec::new();
        for o in &outputs {
            if !k.contains(&o.kind) {
                k.push(o.kind);
            }
        }
        k
    };
    let mut results: BTreeMap<&str, KindResult> = BTreeMap::new();
    let mut samples = Vec::new();
    let mut sniffed = Sniffed::default();
    let file = tmp.join("output.txt");
    let t = Instant::now();
    for o in &outputs {
        let r = results.entry(o.kind).or_default();
        match ours(&cli, o, &file) {
            Ok((text, class)) => {
                if o.kind == "sed -n" {
                    sniffed.add(&o.label, class.as_deref());
                }
                r.outputs += 1;
                r.bytes += o.bytes.len() as u64;
                for (k, v) in new_markers(&o.bytes, &text) {
                    *r.ours.entry(k).or_insert(0) += v;
                }
                for (rules, text) in changed_lines(&o.bytes, &text) {
                    samples.push(Sample { kind: o.kind, label: format!("{}: {}", o.repo, o.label), rules, text });
                }
            }
            Err(e) => r.failures.push(e),
        }
    }
    let ours_secs = t.elapsed().as_secs_f64();
    // The other side: secrets planted into real outputs must all go.
    let plants = planted(&outputs);
    let mut missed = Vec::new();
    for (o, secrets) in &plants {
        match ours(&cli, o, &file) {
            Ok((text, _)) => {
                let text = String::from_utf8_lossy(&text);
                if secrets.iter().any(|s| text.contains(&s[..16])) {
                    missed.push(format!("{}: {}", o.repo, o.label));
                }
            }
            Err(e) => missed.push(e),
        }
    }
    let t = Instant::now();
    if let Some(gl) = &gitleaks {
        for kind in &kinds {
            let outs: Vec<&Output> = outputs.iter().filter(|o| o.kind == *kind).collect();
            let slug: String = kind.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
            results.get_mut(kind).expect("kind").theirs = run_gitleaks(gl, &tmp.join(slug), &outs);
        }
    }
    let gl_secs = t.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&tmp);

    let sum = |m: &BTreeMap<String, u64>| m.values().sum::<u64>();
    println!(
        "\n{:<18} {:>7} {:>7} {:>11} {:>8} {:>9} {:>8}   goal: ≤ gitleaks per MB; overall ≤ {GOAL_RATIO} × gitleaks",
        "output kind", "outputs", "MB", "redactions", "/MB", "gitleaks", "/MB"
    );
    let mut total = KindResult::default();
    let mut rows = Vec::new();
    for kind in &kinds {
        let r = &results[kind];
        total.outputs += r.outputs;
        total.bytes += r.bytes;
        for (k, v) in &r.ours {
            *total.ours.entry(k.clone()).or_insert(0) += v;
        }
        for (k, v) in &r.theirs {
            *total.theirs.entry(k.clone()).or_insert(0) += v;
        }
        rows.push((*kind, r));
    }
    let has_gl = gitleaks.is_some();
    let mut json_rows = Vec::new();
    for (kind, r, overall) in rows.iter().map(|(k, r)| (*k, *r, false)).chain([("overall", &total, true)]) {
        let (o, t) = (per_mb(sum(&r.ours), r.bytes), per_mb(sum(&r.theirs), r.bytes));
        let ok = if overall { o <= GOAL_RATIO * t } else { o <= t };
        println!(
            "{kind:<18} {:>7} {:>7.2} {:>11} {:>8.2} {:>9} {:>8}   {}",
            r.outputs,
            r.bytes as f64 / 1e6,
            sum(&r.ours),
            o,
            if has_gl { sum(&r.theirs).to_string() } else { "-".into() },
            if has_gl { format!("{t:.2}") } else { "-".into() },
            if !has_gl {
                ""
            } else if ok {
                "met"
            } else {
                "NOT MET"
            }
        );
        json_rows.push(json!({
            "kind": kind, "outputs": r.outputs, "bytes": r.bytes,
            "redactions": sum(&r.ours), "redactions_per_mb": o, "redactions_by_rule": r.ours,
            "gitleaks": has_gl.then(|| sum(&r.theirs)), "gitleaks_per_mb": has_gl.then_some(t),
            "gitleaks_by_rule": has_gl.then_some(&r.theirs), "goal_met": has_gl.then_some(ok),
        }));
    }
    let print_rules = |title: &str, pick: &dyn Fn(&KindResult) -> &BTreeMap<String, u64>| {
        println!("\n{title} (by output kind: {})", kinds.join(" / "));
        let mut by: BTreeMap<&String, Vec<u64>> = BTreeMap::new();
        for (i, kind) in kinds.iter().enumerate() {
            for (k, v) in pick(&results[kind]) {
                by.entry(k).or_insert_with(|| vec![0; kinds.len()])[i] += v;
            }
        }
        let mut v: Vec<_> = by.into_iter().collect();
        v.sort_by(|a, b| b.1.iter().sum::<u64>().cmp(&a.1.iter().sum()).then(a.0.cmp(b.0)));
        if v.is_empty() {
            println!("  none");
        }
        for (k, n) in v {
            let parts: Vec<String> = n.iter().map(u64::to_string).collect();
            println!("  {k:<40} {:>6}   ({})", n.iter().sum::<u64>(), parts.join(" / "));
        }
    };
    print_rules("result-sanitizer redactions by rule", &|r| &r.ours);
    if has_gl {
        print_rules("gitleaks findings by rule", &|r| &r.theirs);
    }
    if !samples.is_empty() && show > 0 {
        // One line per kind in turn, so every kind shows.
        let mut shown = Vec::new();
        let mut next: BTreeMap<&str, usize> = BTreeMap::new();
        while shown.len() < show.min(samples.len()) {
            let before = shown.len();
            for kind in &kinds {
                let i = next.entry(kind).or_insert(0);
                if let Some((j, s)) = samples.iter().enumerate().skip(*i).find(|(_, s)| s.kind == *kind) {
                    *i = j + 1;
                    if shown.len() < show {
                        shown.push(s);
                    }
                }
            }
            if shown.len() == before {
                break;
            }
        }
        println!(
            "\nsample of changed lines ({} of {}; the redacted line, at most 160 characters)",
            shown.len(),
            samples.len()
        );
        for s in shown {
            println!("  {}  [{}] {}\n      {}", s.rules.join(","), s.kind, s.label, s.text);
        }
    }
    println!(
        "\nplanted secrets (a .env key in git log -p, a YAML token in grep -rn, a .netrc password in cat -n, a key block in git show, three credentials an AWS call returns): \
         {} of {} outputs with every planted secret redacted",
        plants.len() - missed.len(),
        plants.len()
    );
    for m in &missed {
        println!("  NOT REDACTED: {m}");
    }
    // Where code is not recognised as code, generic rules see all of it.
    println!("\nfiles printed without their names (sed -n), judged code by `run`, by the language their names give");
    for (lang, (files, code)) in &sniffed.0 {
        println!("  {lang:<14} {files:>5} files, {code:>5} judged code ({:.2})", *code as f64 / (*files).max(1) as f64);
    }
    let failures: Vec<&String> = results.values().flat_map(|r| &r.failures).collect();
    if !failures.is_empty() {
        println!("\n{} outputs failed (not counted):", failures.len());
        for f in failures.iter().take(10) {
            println!("  {f}");
        }
    }
    println!(
        "\ntime: ours {ours_secs:.1} s ({} CLI processes), gitleaks {gl_secs:.1} s, total {:.1} s",
        outputs.len(),
        started.elapsed().as_secs_f64()
    );
    if let Some(path) = arg("--json") {
        let doc = json!({
            "repositories": dirs.iter().map(|(n, d)| json!({"name": n, "head": git(d, &["rev-parse", "HEAD"]).map(|(o, _)| String::from_utf8_lossy(&o).trim().to_string())})).collect::<Vec<_>>(),
            "kinds": json_rows,
            "planted": {"outputs": plants.len(), "missed": missed},
            "sniffed": sniffed.0.iter().map(|(l, (f, c))| json!({"language": l, "files": f, "judged_code": c})).collect::<Vec<_>>(),
            "changed_lines": samples.iter().map(|s| json!({"kind": s.kind, "output": s.label, "rules": s.rules, "redacted_line": s.text})).collect::<Vec<_>>(),
            "seconds": started.elapsed().as_secs_f64(),
        });
        std::fs::write(&path, serde_json::to_string_pretty(&doc).expect("JSON") + "\n").expect("write --json");
        println!("results: {path}");
    }
}

//! The outputs `precision_shell.rs` measures: the repositories found in
//! `--repos DIR`, and for each the shell commands an agent runs to read
//! code (grep, git, cat, sed, diagnostics, tracebacks), run on its git
//! directory or on a work tree made from HEAD, with their bytes and exit
//! status. Apart from the table, which only sends and counts them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What the table greps for: the words a secret's name holds.
const PATTERN: &str = "password|passwd|secret|token|api[_-]?key|apikey|auth|credential|private[_-]?key";
/// Files of a repository that `cat -n` and `sed -n` read, per repository.
const LISTED_BYTES: usize = 400_000;
const LISTED_MAX_FILE: usize = 64 * 1024;
/// `git log -p`: 12 commits per output, at most this many outputs.
const LOG_CHUNKS: usize = 10;
/// An output larger than this is left out (a built bundle in one diff).
const MAX_OUTPUT: usize = 1024 * 1024;
/// `git log -p` outputs of one repository stop past this many bytes.
const LOG_BYTES: usize = 2_000_000;

pub struct Output {
    pub kind: &'static str,
    pub repo: String,
    /// The command, as an agent would type it.
    pub label: String,
    pub bytes: Vec<u8>,
    /// The exit status the command gave (`run` scrubs a failure's output).
    pub status: i32,
    /// Sent through `redact --sniff` on stdin instead of `run` (a stream
    /// without a name is judged from its first bytes only when asked).
    pub redact: bool,
}

pub fn git(dir: &Path, args: &[&str]) -> Option<(Vec<u8>, i32)> {
    let out = Command::new("git").arg(format!("--git-dir={}", dir.display())).args(args).output().ok()?;
    Some((out.stdout, out.status.code().unwrap_or(-1)))
}

/// stdout and stderr of `cmd` in `cwd`, interleaved as a pipe would see
/// them (one pipe for both, as `run` reads a command).
fn sh(cwd: &Path, cmd: &str) -> (Vec<u8>, i32) {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("exec 2>&1; {cmd}"))
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .expect("run sh");
    (out.stdout, out.status.code().unwrap_or(-1))
}

pub fn have(tool: &str) -> bool {
    Command::new(tool).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok()
}

/// The git directory of a repository directory (bare, or with a `.git`).
pub fn git_dir(p: &Path) -> Option<PathBuf> {
    [p.join(".git"), p.join("repo"), p.to_path_buf()]
        .into_iter()
        .find(|d| d.join("HEAD").is_file() && d.join("objects").is_dir())
}

/// FNV-1a then splitmix64's finaliser: a seeded rank of a name.
fn rank(seed: u64, s: &str) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325 ^ seed;
    for b in s.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// Text files of the tree below `root`, ranked by a seeded hash of their
/// path, taken until `budget` bytes.
fn listed(root: &Path, files: &[String], seed: u64, budget: usize) -> Vec<(String, Vec<u8>)> {
    let mut ranked: Vec<(u64, &String)> = files.iter().map(|f| (rank(seed, f), f)).collect();
    ranked.sort();
    let mut out = Vec::new();
    let mut total = 0;
    for (_, f) in ranked {
        if total >= budget {
            break;
        }
        let Ok(data) = std::fs::read(root.join(f)) else { continue };
        if data.is_empty() || data.len() > LISTED_MAX_FILE || data.contains(&0) || std::str::from_utf8(&data).is_err() {
            continue;
        }
        total += data.len();
        out.push((f.clone(), data));
    }
    out
}

/// Every output of the table for one repository.
pub fn outputs_of(name: &str, dir: &Path, tmp: &Path, rg: bool) -> Vec<Output> {
    let mut v = Vec::new();
    let mut push = |kind, label: String, (bytes, status): (Vec<u8>, i32), redact| {
        if !bytes.is_empty() && bytes.len() <= MAX_OUTPUT {
            v.push(Output { kind, repo: name.to_string(), label, bytes, status, redact });
        }
    };
    // A work tree from HEAD, for the commands that read files.
    let root = tmp.join("tree").join(name);
    std::fs::create_dir_all(&root).expect("temp dir");
    let archive = Command::new("sh")
        .arg("-c")
        .arg(format!("git --git-dir='{}' archive HEAD | tar -x -C '{}'", dir.display(), root.display()))
        .status()
        .expect("git archive");
    assert!(archive.success(), "git archive failed for {name}");
    let files: Vec<String> =
        String::from_utf8_lossy(&git(dir, &["ls-tree", "-r", "--name-only", "HEAD"]).expect("ls-tree").0)
            .lines()
            .map(str::to_string)
            .collect();

    let pat = PATTERN;
    push("grep -rn", format!("grep -rn -i -E '{pat}' ."), sh(&root, &format!("grep -rn -I -i -E '{pat}' .")), false);
    push(
        "git grep -n",
        format!("git grep -n -i -E '{pat}' HEAD"),
        git(dir, &["grep", "-n", "-I", "-i", "-E", pat, "HEAD"]).expect("git grep"),
        false,
    );
    if rg {
        push("rg -n -C2", format!("rg -n -i -C 2 '{pat}'"), sh(&root, &format!("rg -n -i -C 2 -e '{pat}'")), false);
    }
    let commits: Vec<String> =
        String::from_utf8_lossy(&git(dir, &["rev-list", "--first-parent", "-n", "200", "HEAD"]).expect("rev-list").0)
            .lines()
            .map(str::to_string)
            .collect();
    let mut log_bytes = 0;
    for k in 0..LOG_CHUNKS {
        let skip = (k * 12).to_string();
        let out = git(dir, &["log", "-p", "-n", "12", "--skip", &skip]).expect("git log");
        if out.0.len() <= MAX_OUTPUT {
            log_bytes += out.0.len();
        }
        push("git log -p", format!("git log -p -n 12 --skip {skip}"), out, false);
        if log_bytes >= LOG_BYTES {
            break;
        }
    }
    for c in commits.iter().step_by(9).take(12) {
        push("git show", format!("git show {}", &c[..12]), git(dir, &["show", c]).expect("git show"), false);
    }
    for k in 0..4 {
        if let (Some(new), Some(old)) = (commits.get(k * 25), commits.get(k * 25 + 25)) {
            push(
                "git diff",
                format!("git diff {} {}", &old[..12], &new[..12]),
                git(dir, &["diff", old, new]).expect("git diff"),
                false,
            );
        }
    }
    for (f, _) in listed(&root, &files, 37, LISTED_BYTES) {
        push("cat -n", format!("cat -n {f}"), sh(&root, &format!("cat -n '{f}'")), false);
    }
    for (f, _) in listed(&root, &files, 38, LISTED_BYTES) {
        let (bytes, status) = sh(&root, &format!("sed -n 1,400p '{f}'"));
        push("sed -n", format!("sed -n 1,400p {f}"), (bytes.clone(), status), false);
        push(
            "sed -n | redact --sniff",
            format!("sed -n 1,400p {f} | result-sanitizer redact --sniff"),
            (bytes, status),
            true,
        );
    }
    // Diagnostics and tracebacks quoting the repository's own lines.
    if files.iter().any(|f| f == "src/lib.rs") {
        let cmd = "rustc --edition 2021 --crate-type lib --emit=metadata -o /dev/null src/lib.rs";
        push("diagnostics", cmd.to_string(), sh(&root, &format!("timeout 120 {cmd}")), false);
    }
    if files.iter().any(|f| f == "go.mod") {
        let cmd = "go vet ./...";
        push(
            "diagnostics",
            cmd.to_string(),
            sh(&root, &format!("GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local timeout 120 {cmd}")),
            false,
        );
    }
    for f in files.iter().filter(|f| f.ends_with(".py") && f.starts_with("tests/") && !f.contains("/static/")).take(8) {
        // Each test module run on its own: imports fail without the
        // package installed, pytest's assertion rewriting is not there.
        let cmd = format!("python3 {f}");
        push("tracebacks", cmd.clone(), sh(&root, &format!("timeout 20 {cmd}")), false);
    }
    for f in files.iter().filter(|f| (f.ends_with(".js") || f.ends_with(".mjs")) && f.starts_with("test/unit/")).take(8)
    {
        let cmd = format!("node {f}");
        push("tracebacks", cmd.clone(), sh(&root, &format!("timeout 20 {cmd}")), false);
    }
    for f in files.iter().filter(|f| f.ends_with(".rb") && f.starts_with("test/")).take(8) {
        let cmd = format!("ruby {f}");
        push("tracebacks", cmd.clone(), sh(&root, &format!("timeout 20 {cmd}")), false);
    }
    // What an agent reads back from a cloud's API: the AWS CLI's own
    // examples of what `aws <service> <command>` prints (the block after
    // `Output::` in `awscli/examples/<service>/<command>.rst`), written by
    // AWS: pagination and lock tokens, ARNs, ids, and now and then a
    // credential the call returns.
    for f in files.iter().filter(|f| f.starts_with("awscli/examples/") && f.ends_with(".rst")) {
        let Ok(text) = std::fs::read_to_string(root.join(f)) else { continue };
        let cmd = f["awscli/examples/".len()..f.len() - ".rst".len()].replace('/', " ");
        for (k, block) in rst_outputs(&text).into_iter().enumerate() {
            push("aws cli", format!("aws {cmd} (example {})", k + 1), (block.into_bytes(), 0), false);
        }
    }
    v
}

/// The literal blocks that follow a line ending in `Output::` in an rST
/// file, dedented: the output an example shows.
fn rst_outputs(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].trim_end().ends_with("Output::") {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < lines.len() && (lines[j].trim().is_empty() || lines[j].starts_with([' ', '\t'])) {
            j += 1;
        }
        let block = &lines[i + 1..j];
        let indent = block.iter().filter(|l| !l.trim().is_empty()).map(|l| l.len() - l.trim_start().len()).min();
        if let Some(indent) = indent {
            let body: Vec<&str> = block.iter().map(|l| l.get(indent..).unwrap_or("")).collect();
            let body = body.join("\n");
            let body = body.trim_matches('\n');
            if body.len() > 20 {
                out.push(format!("{body}\n"));
            }
        }
        i = j;
    }
    out
}

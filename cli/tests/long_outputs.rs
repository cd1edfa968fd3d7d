//! Long outputs keep their end: head and tail within the cap, the middle
//! drained (counted, its error lines kept), the command run to its end,
//! every position true. Real child processes, real files, the real CLI.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use result_sanitizer_host::io::{read_head_tail, DEFAULT_DRAIN_LIMIT};

/// The CLI, with a pipeline cache of this test process's own, filled
/// once before any run is measured: a run that writes the cache copies the
/// pipeline into memory, one that finds it maps it.
fn cli() -> Command {
    static CACHE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let dir = CACHE.get_or_init(|| {
        let dir = tmp("cache");
        let o = Command::new(env!("CARGO_BIN_EXE_result-sanitizer"))
            .args(["run", "--", "true"])
            .env("RESULT_SANITIZER_CACHE", &dir)
            .output()
            .unwrap();
        assert!(o.status.success());
        dir
    });
    let mut c = Command::new(env!("CARGO_BIN_EXE_result-sanitizer"));
    c.env("RESULT_SANITIZER_CACHE", dir);
    c
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rs-long-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Runs the CLI with `args`, waits for it with wait4(2), and returns its
/// message and its peak resident memory (ru_maxrss, bytes).
fn run_measured(args: &[&str]) -> (serde_json::Value, u64) {
    let mut child =
        cli().args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn().unwrap();
    let pid = child.id() as libc::pid_t;
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut v).unwrap();
        v
    });
    let mut status = 0;
    // SAFETY: a zeroed rusage is valid; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid);
    // Reaped by wait4 above.
    std::mem::forget(child);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "the CLI failed: {status}");
    let out = reader.join().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out).expect("one JSON message");
    common::assert_record_valid(common::message_record(&v));
    (v, usage.ru_maxrss as u64 * 1024)
}

fn text(v: &serde_json::Value) -> &str {
    v["content"][0]["text"].as_str().unwrap()
}

fn record(v: &serde_json::Value) -> &serde_json::Value {
    &v["_meta"]["result-sanitizer/record"]
}

/// The CLI's peak memory on an output that fills the 256 KiB cap and is
/// sanitized whole: what a long one may exceed only by one drain step.
fn baseline_rss() -> u64 {
    let (v, rss) = run_measured(&["run", "--", "sh", "-c", "seq -f 'compiling unit %.0f ok' 1 9000"]);
    assert!(record(&v)["original_bytes"].as_u64().unwrap() > 200_000, "the baseline fills the cap");
    rss
}

/// Allowance over the baseline: one 1 MiB drain step and its copies in
/// the pipeline's memory, and allocator slack. Reading 50 MB whole would be
/// far past it.
const SLACK: u64 = 8 << 20;

#[test]
fn a_failing_command_after_50_mb_keeps_its_status_its_error_and_its_end() {
    let done = tmp("done");
    let _ = std::fs::remove_file(&done);
    let script = format!(
        "seq -f 'compiling unit %.0f ok' 1 2200000; echo 'error: linking failed' >&2; echo finished > {}; exit 1",
        done.display()
    );
    let (v, rss) = run_measured(&["run", "--tool", "build", "--", "sh", "-c", &script]);
    let t = text(&v);
    assert_eq!(v["isError"], true);
    assert!(t.starts_with("[exit-status-1] command exited with status 1\n"), "{}", &t[..200]);
    assert!(
        t.ends_with("compiling unit 2199999 ok\ncompiling unit 2200000 ok\nerror: linking failed\n"),
        "the real end"
    );
    assert!(done.exists(), "the command ran to its end (not killed at the cap)");
    let expected: u64 = (1..=2_200_000u64).map(|i| format!("compiling unit {i} ok\n").len() as u64).sum::<u64>()
        + "error: linking failed\n".len() as u64;
    assert!(expected > 50_000_000);
    let r = record(&v);
    assert_eq!(r["original_bytes"].as_u64(), Some(expected));
    assert_eq!(r["original_lines"].as_u64(), Some(2_200_001));
    assert!(t.contains("The omitted part was not kept and cannot be read back."), "no re-run route for a command");
    assert!(!t.contains("call the tool again"));
    let base = baseline_rss();
    assert!(rss < base + SLACK, "peak RSS {rss} vs {base} for a tiny output");
}

/// `[truncated: omitted bytes A-B (n bytes, lines x-y) ...]` markers.
fn middle_markers(t: &str) -> Vec<(u64, u64, u64, u64)> {
    t.lines()
        .filter_map(|l| l.strip_prefix("[truncated: omitted bytes "))
        .map(|rest| {
            let nums: Vec<u64> = rest
                .split(|c: char| !c.is_ascii_digit())
                .filter(|s| !s.is_empty())
                .take(5)
                .map(|s| s.parse().unwrap())
                .collect();
            (nums[0], nums[1], nums[3], nums[4])
        })
        .collect()
}

fn dd(path: &Path, skip: u64, count: u64) -> Vec<u8> {
    let o = Command::new("dd")
        .args([
            format!("if={}", path.display()),
            "iflag=skip_bytes,count_bytes".into(),
            "bs=65536".into(),
            format!("skip={skip}"),
            format!("count={count}"),
        ])
        .stderr(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success());
    o.stdout
}

fn sed(path: &Path, from: u64, to: u64) -> Vec<u8> {
    let o = Command::new("sed").args(["-n", &format!("{from},{to}p")]).arg(path).output().unwrap();
    assert!(o.status.success());
    o.stdout
}

#[test]
fn a_600_kb_log_shows_its_error_line_and_its_end_at_true_offsets() {
    let path = tmp("build.log");
    let mut log = String::new();
    let mut error_line = 0;
    for i in 1.. {
        if log.len() >= 360_000 && error_line == 0 {
            error_line = i;
            log.push_str("error[E0308]: mismatched types in crate-db at src/db.rs:212\n");
        } else {
            log.push_str(&format!("   Compiling crate-{i} v0.1.{} (build step {i})\n", i % 9));
        }
        if log.len() >= 600_000 {
            break;
        }
    }
    log.push_str("test result: FAILED. 1 failed\n");
    std::fs::write(&path, &log).unwrap();
    let (v, _) = run_measured(&["sanitize", path.to_str().unwrap(), "--tool", "cargo"]);
    let t = text(&v);
    let file = std::fs::read(&path).unwrap();
    let lines = log.lines().count() as u64;
    // The error line, with its line number, as `sed -n` prints that line.
    let shown = format!("{error_line:>6}| error[E0308]: mismatched types in crate-db at src/db.rs:212\n");
    assert!(t.contains(&shown), "{t}");
    assert_eq!(sed(&path, error_line, error_line), b"error[E0308]: mismatched types in crate-db at src/db.rs:212\n");
    assert!(t.ends_with("test result: FAILED. 1 failed\n"), "the file's real last line");
    assert_eq!(record(&v)["strategy"], "head_tail_errors");
    // Every marker's offsets slice the file exactly: the bytes and the
    // lines it omits, and what is shown around it.
    let markers = middle_markers(t);
    assert_eq!(markers.len(), 1, "{t}");
    let (a, b, x, y) = markers[0];
    assert_eq!(dd(&path, a, b - a), sed(&path, x, y), "bytes {a}-{b} are lines {x}-{y}");
    assert_eq!(dd(&path, 0, a), sed(&path, 1, x - 1));
    assert_eq!(dd(&path, b, file.len() as u64 - b), sed(&path, y + 1, lines));
    let head = t.split_once("shown (").unwrap().1.split_once("]\n").unwrap().1;
    let head = &head[..head.find("[truncated: omitted bytes").unwrap()];
    assert_eq!(head.as_bytes(), &file[..a as usize], "the head shown is bytes 0-{a}");
    assert!(t.ends_with(std::str::from_utf8(&file[b as usize..]).unwrap()), "the tail shown is bytes {b}-");
    assert!(t.contains(&format!("re-read it from the file, offset={a} limit={} (bytes) or lines {x}-{y}", b - a)));
    // The record says the same.
    let r = record(&v);
    assert_eq!(r["omitted"][0]["start_byte"].as_u64(), Some(a));
    assert_eq!(r["omitted"][0]["end_byte"].as_u64(), Some(b));
    assert_eq!((r["omitted"][0]["start_line"].as_u64(), r["omitted"][0]["end_line"].as_u64()), (Some(x), Some(y)));
    assert_eq!(r["original_bytes"].as_u64(), Some(file.len() as u64));
    assert_eq!(r["original_lines"].as_u64(), Some(lines));
}

#[test]
fn a_long_mcp_text_shows_its_end_and_its_middle_is_drained_at_true_offsets() {
    // A build log of 600 KB as a tool's text block, and as its structured
    // twin; a key and an error line in the middle.
    let key = "ghp_4kLm9Pq2Rt7Vx3Yz6Ab1Cd5Ef0Gh2Ij4Kl6M";
    let mut log = String::new();
    for i in 1.. {
        match i {
            _ if log.len() >= 600_000 => break,
            6000 => log.push_str(&format!("token {key} in step {i}\n")),
            7300 => log.push_str("error[E0308]: mismatched types at src/db.rs:212\n"),
            _ => log.push_str(&format!("   Compiling crate-{i} v0.1.{} (build step {i})\n", i % 9)),
        }
    }
    log.push_str("test result: FAILED. 1 failed\n");
    assert_eq!(log.matches(key).count(), 1);
    let result = serde_json::json!({
        "content": [{"type": "text", "text": log}],
        "structuredContent": {"content": log},
    });
    let path = tmp("result.json");
    std::fs::write(&path, result.to_string()).unwrap();
    let (v, _) = run_measured(&["sanitize", path.to_str().unwrap(), "--input", "mcp", "--tool", "run_build"]);
    let t = text(&v);
    assert!(t.ends_with("test result: FAILED. 1 failed\n"), "the text's real last line");
    assert!(t.contains("  7300| error[E0308]: mismatched types at src/db.rs:212\n"), "the middle's error line");
    assert!(!v.to_string().contains(key));
    let r = record(&v);
    let github = r["redactions"].as_array().unwrap().iter().find(|x| x["rule_id"] == "github-token");
    assert_eq!(github.map(|x| x["count"].as_u64()), Some(Some(1)), "the middle's key, counted once");
    assert_eq!(r["original_bytes"].as_u64(), Some(log.len() as u64));
    // The marker's offsets are the text's: bytes a-b are lines x-y, and
    // what shows around them is the text's start and end.
    let markers = middle_markers(t);
    assert_eq!(markers.len(), 1, "{t}");
    let (a, b, x, y) = markers[0];
    let line_start = |n: u64| log.split_inclusive('\n').take(n as usize - 1).map(str::len).sum::<usize>();
    assert_eq!((line_start(x), line_start(y + 1)), (a as usize, b as usize), "bytes {a}-{b} are lines {x}-{y}");
    assert!(t.ends_with(&log[b as usize..]), "the tail shown is bytes {b}-");
    // The twin shows the same.
    assert_eq!(v["structuredContent"]["content"].as_str(), Some(t));
}

#[test]
fn run_timeout_1_returns_in_about_a_second_with_a_clear_marker() {
    let started = Instant::now();
    let o = cli().args(["run", "--timeout", "1", "--", "sleep", "30"]).output().unwrap();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(4), "took {took:?}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["isError"], true);
    assert!(text(&v).starts_with("[timeout] command did not finish within 1s; its process group was killed"));
}

#[test]
fn run_yes_stops_at_the_drain_limit_in_bounded_memory_and_says_so() {
    let (v, rss) = run_measured(&["run", "--drain-limit", "8388608", "--", "yes"]);
    let t = text(&v);
    assert_eq!(v["isError"], true);
    assert!(t.starts_with("[drain-limit] command was stopped after printing 8388608 bytes (the drain limit)"), "{t}");
    assert!(
        t.contains("[truncated: reading stopped at byte 8388608 (4194304 lines read), the host's drain limit"),
        "{t}"
    );
    let r = record(&v);
    assert_eq!((r["byte_cap_hit"].as_bool(), r["original_bytes"].as_u64()), (Some(true), Some(8 << 20)));
    let base = baseline_rss();
    assert!(rss < base + SLACK, "peak RSS {rss} vs {base} for a tiny output");
}

#[test]
fn make_demos_long_ci_log_shows_its_real_end() {
    // The first case of `make demo`.
    let log = root().join("examples/build-log.txt");
    let (v, _) = run_measured(&["sanitize", log.to_str().unwrap(), "--tool", "shell"]);
    let t = text(&v);
    let file = std::fs::read_to_string(&log).unwrap();
    let last: Vec<&str> = file.lines().rev().take(4).collect();
    for l in last {
        assert!(t.contains(l), "the log's last lines are shown: {l}");
    }
    assert!(t.contains("| test module_7::case_4000 ... FAILED"), "the failure from the middle, numbered");
    // The middle was seen once: its redactions are counted as when the
    // whole file is read into the pipeline.
    let (whole, _) = run_measured(&["sanitize", log.to_str().unwrap(), "--tool", "shell", "--max-bytes", "2000000"]);
    assert_eq!(record(&v)["redactions"], record(&whole)["redactions"]);
}

/// The library reads any reader the same way: here a Unix socket fed by a
/// thread, as an HTTP body or a remote log would be.
#[test]
fn the_library_reads_a_socket_as_head_and_tail() {
    let s = common::sanitizer();
    let (mut w, r) = std::os::unix::net::UnixStream::pair().unwrap();
    let writer = std::thread::spawn(move || {
        for i in 0..200_000 {
            writeln!(w, "event {i}: ok").unwrap();
            if i == 120_000 {
                writeln!(w, "panic: token ghp_4kLm9Pq2Rt7Vx3Yz6Ab1Cd5Ef0Gh2Ij4Kl6M rejected").unwrap();
            }
        }
    });
    let ht = read_head_tail(s, s.default_pack(), r, 6144, 2048, DEFAULT_DRAIN_LIMIT).unwrap();
    writer.join().unwrap();
    let gap = ht.gap.clone().expect("a middle was drained");
    assert_eq!(ht.bytes.len(), 8192);
    assert_eq!(gap.start_byte + gap.bytes + 2048, ht.total);
    assert_eq!((gap.error_lines_seen, gap.error_lines.len()), (1, 1));
    assert!(gap.error_lines[0].text.contains("[REDACTED:github-token]") && !gap.error_lines[0].text.contains("ghp_"));
    let mut opts = common::opts("events");
    opts.max_bytes = Some(8192);
    opts.gap = Some(gap);
    let out = s.sanitize(&ht.bytes, &opts).unwrap();
    let v = common::json(&out);
    let t = text(&v);
    assert!(t.contains("120002| panic: token [REDACTED:github-token] rejected"), "{t}");
    assert!(t.ends_with("event 199999: ok\n"));
    let r = record(&v);
    assert_eq!(r["original_bytes"].as_u64(), Some(ht.total));
    assert!(r["redactions"].as_array().unwrap().iter().any(|c| c["rule_id"] == "github-token"));
}

#[test]
fn a_long_binary_output_is_omitted_with_its_true_size() {
    let (v, _) = run_measured(&["run", "--", "head", "-c", "3000000", "/dev/urandom"]);
    assert_eq!(v["isError"], true);
    assert!(text(&v).contains("binary output omitted"), "{}", text(&v));
    let r = record(&v);
    assert_eq!((r["class"].as_str(), r["original_bytes"].as_u64()), (Some("binary"), Some(3_000_000)));
}

/// A host that keeps the output offers `recall` for the drained middle, and
/// a recall of it gives the middle's own lines.
#[test]
fn a_kept_long_output_shows_its_end_and_recalls_its_middle() {
    use result_sanitizer_host::api::{Slice, SliceUnit};
    use result_sanitizer_host::recall::{OutputStore, StoreConfig};
    let s = common::sanitizer();
    let store = OutputStore::new(StoreConfig::default()).unwrap();
    let log: String = (1..=40_000).map(|i| format!("step {i}: ok\n")).collect();
    let mut o = common::opts("build");
    o.call_id = "call_7".into();
    o.max_bytes = Some(32 * 1024);
    let out = s.sanitize_kept(s.default_pack(), &store, "acme", log.as_bytes(), &o).unwrap();
    let v = common::json(&out);
    let t = text(&v);
    assert!(t.ends_with("step 40000: ok\n"), "the end shows");
    let om = &out.record.omitted[0];
    assert!(om.end_byte > 400_000, "the omitted part is the drained middle: {om:?}");
    let route = format!("recall(call_id=call_7, offset={}, limit={})", om.start_byte, om.end_byte - om.start_byte);
    assert!(t.contains(&route), "{t}");
    let sl = Slice { offset: 20_000, limit: 2, unit: SliceUnit::Lines };
    let back = s.recall(s.default_pack(), &store, "acme", "call_7", sl, &o).unwrap();
    assert!(text(&common::json(&back)).ends_with("step 20000: ok\nstep 20001: ok\n"));
}

/// One long line read as head + tail, where a secret-named assignment runs
/// from the head into the drained middle (found by the `head_tail` fuzz
/// target): the match over the joined text is split at the join, so the
/// omitted span is exactly the drained middle and the spans tile the
/// output.
#[test]
fn a_match_across_the_join_of_head_and_tail_is_split_there() {
    let s = common::sanitizer();
    let unit = " step API_KEY=k3y-not-in-any-vault-0000 done;";
    let line = unit.repeat(400);
    let (head, tail) = (1143usize, 381usize);
    // The head ends inside an assignment's value.
    let at = line[..head].rfind("API_KEY=").unwrap();
    assert!(head - at < "API_KEY=k3y-not-in-any-vault-0000".len(), "the join is inside a value");
    let ht =
        read_head_tail(s, s.default_pack(), line.as_bytes(), head as u64, tail as u64, DEFAULT_DRAIN_LIMIT).unwrap();
    let gap = ht.gap.clone().expect("a middle was drained");
    let mut opts = common::opts("shell");
    opts.max_bytes = Some((head + tail) as u64);
    opts.gap = Some(gap.clone());
    let out = s.sanitize(&ht.bytes, &opts).unwrap();
    let r = &out.record;
    let mut spans: Vec<_> = r.kept.iter().chain(r.omitted.iter()).collect();
    spans.sort_by_key(|s| s.start_byte);
    let mut end = 0;
    for sp in spans {
        assert_eq!(sp.start_byte, end, "spans tile the output: {:?} / {:?}", r.kept, r.omitted);
        end = sp.end_byte;
    }
    assert_eq!(end, line.len() as u64);
    let om = &r.omitted[0];
    assert!(om.start_byte <= gap.start_byte && gap.start_byte + gap.bytes <= om.end_byte, "{om:?} covers {gap:?}");
    assert!(om.end_byte - om.start_byte < gap.bytes + 8, "{om:?} is the drained middle, not more");
    let t = text(&common::json(&out)).to_string();
    assert!(!t.contains("k3y-not-in-any-vault"), "{t}");
}

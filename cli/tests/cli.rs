//! The CLI contract, through real child processes.

mod common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_result-sanitizer"))
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn stdout_json(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "exit {:?}: {}", o.status, String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is one JSON message");
    common::assert_record_valid(common::message_record(&v));
    v
}

#[test]
fn help_on_every_subcommand() {
    for sub in [
        vec![],
        vec!["sanitize"],
        vec!["redact"],
        vec!["run"],
        vec!["pack"],
        vec!["pack", "build"],
        vec!["pack", "inspect"],
        vec!["pack", "check"],
    ] {
        let mut args = sub.clone();
        args.push("--help");
        let o = bin().args(&args).output().unwrap();
        assert!(o.status.success(), "{args:?}");
        assert!(String::from_utf8_lossy(&o.stdout).contains("Usage:"), "{args:?}");
    }
}

#[test]
fn no_secret_from_the_example_log_appears_anywhere() {
    let log = root().join("examples/build-log.txt");
    let secrets: Vec<String> = std::fs::read_to_string(root().join("examples/build-log.secrets.txt"))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert!(secrets.len() > 30);
    for args in [
        vec!["sanitize", log.to_str().unwrap(), "--tool", "shell"],
        vec!["sanitize", log.to_str().unwrap(), "--max-bytes", "2000000", "--format", "openai"],
        vec![
            "sanitize",
            log.to_str().unwrap(),
            "--max-bytes",
            "2000000",
            "--max-tokens",
            "300",
            "--format",
            "anthropic",
            "--untrusted",
        ],
        vec!["redact", log.to_str().unwrap()],
    ] {
        let o = bin().args(&args).output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        let all = [o.stdout.as_slice(), o.stderr.as_slice()].concat();
        let all = String::from_utf8_lossy(&all);
        for s in &secrets {
            assert!(!all.contains(s.as_str()), "a planted secret survived {:?}", args[0]);
        }
    }
    // The whole file read: the PEM block, the curl header and the failing
    // test at the end are all handled.
    let o = bin()
        .args([
            "sanitize",
            log.to_str().unwrap(),
            "--max-bytes",
            "2000000",
            "--max-tokens",
            "2000000",
            "--max-chars",
            "2000000",
        ])
        .output()
        .unwrap();
    let v = stdout_json(&o);
    common::assert_mcp_valid(&v);
    let text = v["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("[REDACTED:private-key-block]"));
    assert!(text.contains("> Authorization: Bearer [REDACTED:authorization-header]"));
    assert!(text.contains("Process exited with code 101"));
}

#[test]
fn file_and_stdin_agree_and_mcp_output_is_valid() {
    let input = b"line one\nline two with password=Xk9mQ2vLp7zz\n";
    let dir = std::env::temp_dir().join(format!("rs-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("in.txt");
    std::fs::write(&f, input).unwrap();
    let a = bin().args(["sanitize", f.to_str().unwrap(), "--tool", "cat"]).output().unwrap();
    let b = common::cli_with_stdin(&["sanitize", "-", "--tool", "cat"], input);
    assert_eq!(a.stdout, b.stdout);
    let v = stdout_json(&a);
    common::assert_mcp_valid(&v);
    assert!(!String::from_utf8_lossy(&a.stdout).contains("Xk9mQ2vLp7zz"));
    let mcp = common::cli_with_stdin(
        &["sanitize", "--input", "mcp"],
        std::fs::read(root().join("examples/mcp-result.json")).unwrap().as_slice(),
    );
    let v = stdout_json(&mcp);
    common::assert_mcp_valid(&v);
    assert_eq!(v["content"][1]["type"], "image");
}

#[test]
fn sanitize_reads_stdin_as_head_and_tail_and_stops_at_the_drain_limit() {
    // 16 MiB on stdin, one line: the CLI keeps the cap's head and tail and
    // drains the rest, so the whole size is known and nothing was cut short.
    let big = vec![b'a'; 16 << 20];
    let o = common::cli_with_stdin(&["sanitize", "--max-bytes", "4096"], &big);
    let v = stdout_json(&o);
    let r = &v["_meta"]["result-sanitizer/record"];
    assert_eq!(r["input_bytes"], 4096);
    assert_eq!((r["original_bytes"].as_u64(), r["byte_cap_hit"].as_bool()), (Some(16 << 20), Some(false)));
    assert_eq!(r["omitted"][0]["end_byte"].as_u64().unwrap(), (16 << 20) - 1024, "the tail is the last quarter");
    // With a drain limit, reading stops there, and the marker says so.
    let o = common::cli_with_stdin(&["sanitize", "--max-bytes", "4096", "--drain-limit", "1000000"], &big);
    let v = stdout_json(&o);
    let text = v["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("[truncated: reading stopped at byte 1000000 (1 lines read), the host's drain limit"),
        "{text}"
    );
    assert_eq!(v["_meta"]["result-sanitizer/record"]["byte_cap_hit"], true);
}

#[test]
fn run_records_exit_status_and_stops_an_endless_writer_at_the_drain_limit() {
    let o = bin().args(["run", "--tool", "sh", "--", "sh", "-c", "echo out; echo err >&2; exit 3"]).output().unwrap();
    let v = stdout_json(&o);
    assert_eq!(v["isError"], true);
    let text = v["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("[exit-status-3] command exited with status 3\n"), "{text}");
    assert!(text.contains("out") && text.contains("err"));
    let o = bin().args(["run", "--", "sh", "-c", "kill -SEGV $$"]).output().unwrap();
    let text = stdout_json(&o)["content"][0]["text"].as_str().unwrap().to_string();
    assert!(text.starts_with("[signal-SIGSEGV] command was killed by signal 11 (SIGSEGV)"), "{text}");
    // An endless writer is stopped at the drain limit, and that is said.
    let t = std::time::Instant::now();
    let args = ["run", "--max-bytes", "10000", "--drain-limit", "1000000", "--", "sh", "-c", "yes 'y'"];
    let v = stdout_json(&bin().args(args).output().unwrap());
    assert!(t.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(v["isError"], true);
    let text = v["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("[drain-limit] command was stopped after printing 1000000 bytes"), "{text}");
    assert_eq!(v["_meta"]["result-sanitizer/record"]["byte_cap_hit"], true);
}

#[test]
fn redact_is_byte_identical_where_nothing_matched() {
    let mut input = Vec::new();
    for i in 0..200_000u32 {
        input.extend_from_slice(format!("{i} ordinary log line ✓\n").as_bytes());
        if i % 50_000 == 0 {
            input.extend_from_slice(b"\xff\xfe raw bytes\n");
        }
    }
    let o = common::cli_with_stdin(&["redact"], &input);
    assert!(o.status.success());
    assert!(o.stdout == input, "redact changed bytes that matched no rule");
    let o =
        common::cli_with_stdin(&["redact"], b"a\nexport GITHUB_TOKEN=ghp_4kLm9Pq2Rt7Vx3Yz6Ab1Cd5Ef0Gh2Ij4Kl6M\nb\n");
    assert_eq!(String::from_utf8_lossy(&o.stdout), "a\nexport GITHUB_TOKEN=[REDACTED:github-token]\nb\n");
}

#[test]
fn failures_are_one_line_on_stderr_with_nonzero_exit() {
    let o = bin().args(["sanitize", "--max-tokens", "5"]).stdin(Stdio::null()).output().unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("result-sanitizer: error: invalid options: max-tokens"));
    assert!(o.stdout.is_empty());
    let o = bin().args(["sanitize", "--pack", "/nonexistent.wasm"]).stdin(Stdio::null()).output().unwrap();
    assert!(!o.status.success());
    let o = bin().args(["sanitize", "--format", "xml"]).output().unwrap();
    assert!(!o.status.success());
}

/// `result-sanitizer sanitize log | head`: the reader of stdout is gone
/// before anything is written (its end is closed before the input's end, so
/// the order is fixed). No panic and no error line: the status a shell
/// gives a command that SIGPIPE ended, as `cat` would have.
#[test]
fn a_closed_stdout_ends_quietly() {
    let log = std::fs::read(root().join("examples/build-log.txt")).unwrap();
    for args in [&["sanitize"][..], &["redact"][..], &["sanitize", "--format", "anthropic"][..]] {
        let mut child =
            bin().args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        drop(child.stdout.take());
        let mut input = child.stdin.take().unwrap();
        // The child may already have failed and closed its stdin: its
        // status and stderr below say why.
        let _ = input.write_all(&log);
        drop(input);
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(141), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?}: {err}");
    }
}

#[test]
fn pack_build_reports_file_and_line() {
    let dir = std::env::temp_dir().join(format!("rs-pack-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rules = dir.join("bad.toml");
    std::fs::write(
        &rules,
        "[pack]\nname = \"t\"\nversion = \"1\"\ntenant = \"acme\"\n\n[[rules]]\nid = \"broken\"\nregex = '(unclosed'\nkeywords = [\"x\"]\nexamples = [\"x\"]\ncounter_examples = [\"y\"]\n",
    )
    .unwrap();
    let o = bin()
        .args(["pack", "build", rules.to_str().unwrap(), "-o", dir.join("p.wasm").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.toml:6: rule `broken`: rule `broken`: regex does not compile"), "{err}");
    // A good one builds, inspects, and redacts its own token format.
    std::fs::write(
        &rules,
        "[pack]\nname = \"acme\"\nversion = \"1.0.0\"\ntenant = \"acme\"\n\n[[rules]]\nid = \"acme-token\"\nregex = '\\b(acme_[a-f0-9]{32})\\b'\nkeywords = [\"acme_\"]\nsecret_group = 1\nexamples = [\"t=acme_0123456789abcdef0123456789abcdef\"]\ncounter_examples = [\"acme_short\"]\n",
    )
    .unwrap();
    let pack = dir.join("acme.wasm");
    let o = bin()
        .args(["pack", "build", rules.to_str().unwrap(), "--no-defaults", "-o", pack.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = bin().args(["pack", "inspect", pack.to_str().unwrap()]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["name"], "acme");
    assert_eq!(v["rule_ids"][0], "acme-token");
    let o = common::cli_with_stdin(&["sanitize", "--pack", pack.to_str().unwrap()], b"x");
    assert!(!o.status.success(), "an unsigned pack needs --allow-unsigned");
    assert!(String::from_utf8_lossy(&o.stderr).contains("unsigned"));
    let o = common::cli_with_stdin(
        &["sanitize", "--pack", pack.to_str().unwrap(), "--allow-unsigned"],
        b"x acme_0123456789abcdef0123456789abcdef y",
    );
    let v = stdout_json(&o);
    assert_eq!(v["content"][0]["text"], "x [REDACTED:acme-token] y");
}

#[test]
fn sanitize_round_prints_one_message_per_file_within_the_round() {
    let dir = std::env::temp_dir().join(format!("rs-round-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let files: Vec<PathBuf> =
        [("grep", "match\n".repeat(3)), ("build", "compiling\n".repeat(20_000)), ("test", "ok\n".repeat(20_000))]
            .iter()
            .map(|(name, body)| {
                let p = dir.join(format!("{name}.txt"));
                std::fs::write(&p, body).unwrap();
                p
            })
            .collect();
    let mut args = vec!["sanitize-round", "--round-tokens", "3000", "--min-tokens", "500", "--priority", "test=3"];
    let paths: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    args.extend(paths.iter().map(String::as_str));
    let o = bin().args(&args).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let msgs = v.as_array().unwrap();
    assert_eq!(msgs.len(), 3);
    msgs.iter().for_each(|m| common::assert_record_valid(common::message_record(m)));
    let mut total = 0;
    for m in msgs {
        common::assert_mcp_valid(m);
        let share = &m["_meta"]["result-sanitizer/record"]["round"];
        total += share["tokens"].as_u64().unwrap();
        let text = m["content"][0]["text"].as_str().unwrap();
        assert!(
            common::tokens(text, result_sanitizer_host::api::Encoding::O200kBase) as u64
                <= share["tokens"].as_u64().unwrap()
        );
    }
    assert!(total <= 3000);
    let t = |i: usize| msgs[i]["_meta"]["result-sanitizer/record"]["round"]["tokens"].as_u64().unwrap();
    assert!(t(2) > t(1), "priority 3 gets more: {} vs {}", t(2), t(1));
}

#[test]
fn the_pipeline_cache_keeps_one_copy_per_build_and_drops_stale_ones() {
    let dir = std::env::temp_dir().join(format!("rs-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let plant = |name: &str, age_hours: u64| {
        let p = dir.join(name);
        let f = std::fs::File::create(&p).unwrap();
        f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(age_hours * 3600)).unwrap();
        p
    };
    let stale = plant("pipeline-00000000000000000000000000000000.cwasm", 48);
    let stale_tmp = plant(".pipeline.1.tmp", 48);
    let recent = plant("pipeline-11111111111111111111111111111111.cwasm", 1);
    let unrelated = plant("notes.txt", 48);
    for _ in 0..2 {
        let o = bin()
            .args(["sanitize", "--tool", "t"])
            .env("RESULT_SANITIZER_CACHE", &dir)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        stdout_json(&o);
    }
    let names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    let ours: Vec<&String> = names
        .iter()
        .filter(|n| n.starts_with("pipeline-") && *n != "pipeline-11111111111111111111111111111111.cwasm")
        .collect();
    assert_eq!(ours.len(), 1, "one copy of this build's pipeline: {names:?}");
    assert!(!stale.exists() && !stale_tmp.exists(), "copies of other builds older than a day go: {names:?}");
    assert!(recent.exists(), "a recent copy of another build may be in use: {names:?}");
    assert!(unrelated.exists(), "other files are not ours to remove");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `run --timeout` stops the command's whole process group (the shell and
/// its `sleep`) and says so, with what it printed until then.
#[test]
fn run_stops_a_command_at_its_timeout() {
    let started = std::time::Instant::now();
    let o = bin()
        .args(["run", "--tool", "slow", "--timeout", "1", "--", "sh", "-c", "echo started; sleep 30; echo never"])
        .output()
        .unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "took {:?}", started.elapsed());
    let v = stdout_json(&o);
    assert_eq!(v["isError"], true);
    let text = v["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("[timeout] command did not finish within 1s"), "{text}");
    assert!(text.contains("started") && !text.contains("never"), "{text}");
    // A command that finishes in time is untouched by the limit.
    let v =
        stdout_json(&bin().args(["run", "--timeout", "20s", "--", "sh", "-c", "echo ok; exit 4"]).output().unwrap());
    assert!(v["content"][0]["text"].as_str().unwrap().starts_with("[exit-status-4]"));
    let o = bin().args(["run", "--timeout", "0", "--", "true"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "a zero timeout is a usage error");
}

/// A drain limit below the cap: nothing was drained, yet the message says
/// the output went on.
#[test]
fn a_drain_limit_below_the_cap_still_says_the_output_went_on() {
    let o = common::cli_with_stdin(&["sanitize", "--drain-limit", "1000"], &b"0123456789\n".repeat(1000));
    let v = stdout_json(&o);
    let text = v["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("[truncated: reading stopped at byte 1000 (91 lines read), the host's drain limit"),
        "{text}"
    );
    assert_eq!(v["_meta"]["result-sanitizer/record"]["input_bytes"], 1000);
}

/// A rule as a rules file writes it.
fn rule_toml(id: &str, regex: &str, keyword: &str, example: &str) -> String {
    format!(
        "[[rules]]\nid = \"{id}\"\nregex = '''{regex}'''\nkeywords = [\"{keyword}\"]\nsecret_group = 1\nexamples = [\"{example}\"]\ncounter_examples = [\"nothing here\"]\n\n"
    )
}

#[test]
fn pack_check_joins_files_and_reports_duplicates_and_shadows() {
    let dir = std::env::temp_dir().join(format!("rs-check-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let check = |args: &[&std::path::Path]| {
        let mut cmd = bin();
        cmd.args(["pack", "check"]);
        cmd.args(args);
        let o = cmd.output().unwrap();
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let a = dir.join("00-a.toml");
    let b = dir.join("01-b.toml");
    // An id taken in another file: named with both places.
    std::fs::write(&a, rule_toml("acme-token", r"\b(acme_[a-f0-9]{16})\b", "acme_", "t=acme_0123456789abcdef"))
        .unwrap();
    std::fs::write(
        &b,
        format!("# b\n{}", rule_toml("acme-token", r"\b(acme_[a-f]{16})\b", "acme_", "acme_fdbeacfdaebcfdea")),
    )
    .unwrap();
    let (ok, _, err) = check(&[&dir]);
    assert!(!ok);
    let (fa, fb) = (a.display().to_string(), b.display().to_string());
    assert!(err.contains(&format!("{fb}:2: rule `acme-token`: duplicate id (first at {fa}:1)")), "{err}");
    // The same regex twice, and a rule whose examples another redacts.
    std::fs::write(
        &b,
        format!(
            "{}{}{}",
            rule_toml("acme-copy", r"\b(acme_[a-f0-9]{16})\b", "acme_", "k=acme_0123456789abcdef"),
            rule_toml("acme-hex-letters", r"\b(acme_[a-f]{16})\b", "acme_", "acme_fdbeacfdaebcfdea"),
            rule_toml("beta-token", r"\b(beta_[a-f]{16})\b", "beta_", "beta_cfaedbfcadebfcad"),
        ),
    )
    .unwrap();
    let (ok, _, err) = check(&[&a, &b]);
    assert!(!ok);
    assert!(
        err.contains(&format!("{fb}:1: rule `acme-copy`: duplicate regex: the same as rule `acme-token` ({fa}:1)")),
        "{err}"
    );
    assert!(err.contains(&format!("{fb}:9: rule `acme-hex-letters`: shadowed by rule `acme-token` ({fa}:1)")), "{err}");
    assert!(!err.contains("beta-token"), "other keywords, not shadowed: {err}");
    assert!(!err.contains("rule `acme-token`: shadowed"), "the wider rule is not shadowed: {err}");
    // Without them it passes; the default rules pass too.
    std::fs::write(&b, rule_toml("beta-token", r"\b(beta_[a-f]{16})\b", "beta_", "beta_cfaedbfcadebfcad")).unwrap();
    let (ok, out, err) = check(&[&dir]);
    assert!(ok, "{err}");
    assert!(out.contains("2 rules, all examples hold"), "{out}");
    let (ok, _, err) = check(&[&root().join("rules/default")]);
    assert!(ok, "{err}");
}

/// A file's name gives its content type in the pipeline (one table for
/// every host): `--file-name` on stdin, and a FILE's own name, read as the
/// declared type reads; without either, the same bytes are text.
#[test]
fn a_file_name_gives_the_content_type_the_pipeline_derives() {
    let code = b"import os\n\nDB_PASSWORD = os.environ.get(\"DB_PASSWORD\", \"\")\npassword = \"Xk9mQ2vLp7zzQ\"\n";
    let run = |args: &[&str]| stdout_json(&common::cli_with_stdin(args, code));
    let declared = run(&["sanitize", "--tool", "read_file", "--content-type", "text/x-python"]);
    let named = run(&["sanitize", "--tool", "read_file", "--file-name", "src/settings.py"]);
    let plain = run(&["sanitize", "--tool", "read_file"]);
    assert_eq!(named, declared);
    assert_ne!(plain, declared, "without a name the text is not read as code");
    // A declared type wins over the name's.
    let both = run(&["sanitize", "--tool", "read_file", "--file-name", "x.py", "--content-type", "text/plain"]);
    assert_eq!(both, run(&["sanitize", "--tool", "read_file", "--content-type", "text/plain"]));
    // A FILE argument: its own name.
    let dir = std::env::temp_dir().join(format!("rs-file-name-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("settings.py");
    std::fs::write(&file, code).unwrap();
    let o = bin().args(["sanitize", "--tool", "read_file"]).arg(&file).output().unwrap();
    let from_file = stdout_json(&o);
    std::fs::remove_dir_all(&dir).unwrap();
    // The file is read by offset and kept (`source: file`): only the
    // recovery route differs from stdin, and nothing here is cut.
    assert_eq!(from_file["content"], declared["content"]);
}

//! Structure survives size (#39): a JSON document, JSON lines or CSV over
//! the byte cap, read as head + tail with the middle drained, comes back
//! as a valid document (or whole records) with both ends shown and the
//! omitted part counted exactly; a file is read by offset, so a 10 GB
//! (sparse) file answers in under a second. The real CLI, from stdin and
//! from a file.

mod common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rs-json-long-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The CLI's message for `input`, given on stdin (`file` None) or as a
/// file named `file`.
fn sanitize(input: &[u8], file: Option<&str>, args: &[&str]) -> Value {
    let mut c = Command::new(env!("CARGO_BIN_EXE_result-sanitizer"));
    c.arg("sanitize").args(args).stdout(Stdio::piped()).stderr(Stdio::inherit());
    let out = match file {
        Some(name) => {
            let p = tmp(name);
            std::fs::write(&p, input).unwrap();
            c.arg(&p).stdin(Stdio::null()).output().unwrap()
        }
        None => {
            let mut child = c.stdin(Stdio::piped()).spawn().unwrap();
            let mut stdin = child.stdin.take().unwrap();
            let data = input.to_vec();
            let w = std::thread::spawn(move || stdin.write_all(&data).unwrap());
            let o = child.wait_with_output().unwrap();
            w.join().unwrap();
            o
        }
    };
    assert!(out.status.success(), "the CLI failed");
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON message");
    common::assert_record_valid(common::message_record(&v));
    v
}

fn text(v: &Value) -> &str {
    v["content"][0]["text"].as_str().unwrap()
}

fn record(v: &Value) -> &Value {
    &v["_meta"]["result-sanitizer/record"]
}

/// The note element a closed document holds in place of the omitted
/// elements: (omitted, first index, last index, total, start byte, end byte).
fn note_numbers(s: &str) -> (u64, u64, u64, u64, u64, u64) {
    let re = regex_lite::Regex::new(
        r"^\[truncated: (\d+) (?:items|members) omitted \(indexes (\d+)-(\d+) of (\d+); bytes (\d+)-(\d+), lines \d+-\d+ of the output, read once\), not kept\]$",
    )
    .unwrap();
    let c = re.captures(s).unwrap_or_else(|| panic!("not a gap note: {s}"));
    let n = |i: usize| c[i].parse::<u64>().unwrap();
    (n(1), n(2), n(3), n(4), n(5), n(6))
}

/// The array `shown` (from a closed document) against the original
/// `all`: its first elements are the original's first, its last the
/// original's last, one note between them counts exactly what is missing,
/// and the note's bytes are those the record says were omitted.
fn check_array(shown: &[Value], all: &[Value], rec: &Value, unit: &str) {
    let at = shown.iter().position(|x| x.as_str().is_some_and(|s| s.starts_with("[truncated:"))).expect("a note");
    let (head, tail) = (&shown[..at], &shown[at + 1..]);
    assert!(!head.is_empty() && !tail.is_empty(), "both ends shown");
    assert_eq!(head, &all[..head.len()]);
    assert_eq!(tail, &all[all.len() - tail.len()..]);
    let (omitted, first, last, total, sb, eb) = note_numbers(shown[at].as_str().unwrap());
    assert_eq!(total, all.len() as u64);
    assert_eq!(omitted, (all.len() - head.len() - tail.len()) as u64);
    assert_eq!((first, last), (head.len() as u64, (all.len() - tail.len() - 1) as u64));
    assert_eq!(rec["strategy"], "json_structure");
    assert_eq!(rec["structure"][unit], omitted);
    let o = &rec["omitted"][0];
    assert_eq!((o["start_byte"].as_u64().unwrap(), o["end_byte"].as_u64().unwrap()), (sb, eb));
}

/// Both ways in: stdin (sniffed) and a file named `name` (its type from
/// the name).
fn both(input: &[u8], name: &str, check: impl Fn(&Value)) {
    for file in [None, Some(name)] {
        let v = sanitize(input, file, &["--max-tokens", "1000"]);
        check(&v);
    }
}

#[test]
fn an_array_of_20000_objects_stays_json_with_both_ends() {
    let all: Vec<Value> = (0..20_000).map(|i| json!({"id": i, "name": format!("n{i}"), "tags": ["a", "b"]})).collect();
    let doc = format!("{}\n", serde_json::to_string(&all).unwrap());
    // A pretty-printed one too: many lines.
    let pretty = serde_json::to_string_pretty(&all).unwrap();
    for d in [doc.as_str(), pretty.as_str()] {
        both(d.as_bytes(), "big.json", |v| {
            let shown: Vec<Value> = serde_json::from_str(text(v)).expect("the text parses");
            check_array(&shown, &all, record(v), "items");
        });
    }
}

#[test]
fn an_object_with_one_huge_array_is_cut_inside_it() {
    let items: Vec<Value> = (0..30_000).map(|i| json!({"id": i, "path": format!("/srv/{i}.txt")})).collect();
    let doc = serde_json::to_string(&json!({"total": 30000, "items": items, "next": "cursor-2"})).unwrap();
    both(doc.as_bytes(), "page.json", |v| {
        let shown: Value = serde_json::from_str(text(v)).expect("the text parses");
        assert_eq!((shown["total"].clone(), shown["next"].clone()), (json!(30000), json!("cursor-2")));
        check_array(shown["items"].as_array().unwrap(), &items, record(v), "items");
    });
}

#[test]
fn nested_arrays_are_cut_in_the_array_the_middle_lies_in() {
    let all: Vec<Value> = (0..20_000).map(|i| json!([i, [i, i + 1], "x"])).collect();
    let doc = serde_json::to_string(&all).unwrap();
    both(doc.as_bytes(), "nested.json", |v| {
        let shown: Vec<Value> = serde_json::from_str(text(v)).expect("the text parses");
        check_array(&shown, &all, record(v), "items");
    });
}

/// (first omitted, last omitted, total) from a records marker.
fn records_marker(t: &str) -> (u64, u64, u64) {
    let re = regex_lite::Regex::new(r"\[truncated: omitted records (\d+)-(\d+) of (\d+) \((\d+) records;").unwrap();
    let c = re.captures(t).expect("a records marker");
    let n = |i: usize| c[i].parse::<u64>().unwrap();
    assert_eq!(n(4), n(2) - n(1) + 1);
    (n(1), n(2), n(3))
}

/// Records shown: whole lines of the original, the first ones and the
/// last ones, the marker's numbers exact.
fn check_records(v: &Value, lines: &[String], header: bool) {
    let t = text(v);
    let (first, last, total) = records_marker(t);
    let records = &lines[usize::from(header)..];
    assert_eq!(total, records.len() as u64);
    let shown: Vec<&str> = t.lines().filter(|l| !l.starts_with("[truncated:")).collect();
    let skip = usize::from(header);
    if header {
        assert_eq!(shown[0], lines[0]);
    }
    let head = (first - 1) as usize;
    assert_eq!(&shown[skip..skip + head], &records[..head].iter().map(String::as_str).collect::<Vec<_>>()[..]);
    let tail = &shown[skip + head..];
    assert_eq!(tail.len() as u64, total - last, "records after the marker");
    assert_eq!(*tail.last().unwrap(), records.last().unwrap().as_str(), "the last record shown");
    assert_eq!(tail, &records[last as usize..].iter().map(String::as_str).collect::<Vec<_>>()[..]);
    assert_eq!(record(v)["strategy"], "records");
    assert_eq!(record(v)["structure"]["total_records"], total);
}

#[test]
fn json_lines_keep_whole_records_at_both_ends() {
    let lines: Vec<String> = (0..20_000).map(|i| json!({"event": i, "ok": i % 7 != 0}).to_string()).collect();
    let doc = lines.iter().map(|l| format!("{l}\n")).collect::<String>();
    both(doc.as_bytes(), "events.jsonl", |v| check_records(v, &lines, false));
}

#[test]
fn csv_keeps_the_header_and_whole_records_at_both_ends() {
    let mut lines = vec!["id,user,amount".to_string()];
    lines.extend((0..30_000).map(|i| format!("{i},user{i},{}.50", i * 7)));
    let doc = lines.iter().map(|l| format!("{l}\n")).collect::<String>();
    both(doc.as_bytes(), "table.csv", |v| check_records(v, &lines, true));
}

#[test]
fn a_10_gb_sparse_file_is_seeked_not_drained() {
    let p = tmp("sparse.log");
    let len: u64 = 10 << 30;
    {
        let f = std::fs::File::create(&p).unwrap();
        f.set_len(len).unwrap();
        use std::os::unix::fs::FileExt;
        let head: String = (1..=100).map(|i| format!("start line {i}\n")).collect();
        f.write_all_at(head.as_bytes(), 0).unwrap();
        let tail: String = (1..=100).map(|i| format!("end line {i}\n")).collect();
        let tail = format!("\n{tail}");
        f.write_all_at(tail.as_bytes(), len - tail.len() as u64).unwrap();
    }
    let t0 = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_result-sanitizer"))
        .args(["sanitize", "--max-tokens", "2000"])
        .arg(&p)
        .output()
        .unwrap();
    let took = t0.elapsed();
    std::fs::remove_file(&p).unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = text(&v);
    // The last line shown, then only the note on what was not scanned.
    let (content, note) = t.rsplit_once("end line 100\n").expect("the last line shown");
    assert!(content.contains("end line 99\n"));
    assert!(note.starts_with("[truncated: bytes 67305472-10737352704 of the omitted part were counted, not scanned"));
    assert!(t.contains("start line 1\n"));
    assert!(took < Duration::from_secs(1), "took {took:?}");
    // Positions exact: 100 lines, the newline before the tail's lines, 100 lines.
    let rec = record(&v);
    assert_eq!(rec["original_bytes"], len);
    assert_eq!(rec["original_lines"], 201);
    let kept = rec["kept"].as_array().unwrap();
    let last = kept.last().unwrap();
    assert_eq!((last["end_byte"].as_u64().unwrap(), last["end_line"].as_u64().unwrap()), (len, 201));
}

/// The same inside MCP (#39): a text block holding a JSON document or
/// JSON lines over the byte cap is read as head + tail and fitted as the
/// document it is, from stdin and from a file.
#[test]
fn inside_mcp_a_json_text_over_the_cap_stays_json_too() {
    let all: Vec<Value> = (0..20_000).map(|i| json!({"id": i, "name": format!("n{i}"), "tags": ["a", "b"]})).collect();
    let msg = json!({"content": [{"type": "text", "text": serde_json::to_string(&all).unwrap()}]}).to_string();
    assert!(msg.len() > 262_144, "over the byte cap");
    for file in [None, Some("result.json")] {
        let v = sanitize(msg.as_bytes(), file, &["--input", "mcp", "--max-tokens", "1000"]);
        assert_eq!(record(&v)["class"], "mcp");
        let shown: Vec<Value> = serde_json::from_str(text(&v)).expect("the text parses");
        check_array(&shown, &all, record(&v), "items");
    }
    let lines: Vec<String> = (0..20_000).map(|i| json!({"event": i, "ok": i % 7 != 0}).to_string()).collect();
    let doc = lines.iter().map(|l| format!("{l}\n")).collect::<String>();
    let msg = json!({"content": [{"type": "text", "text": doc}]}).to_string();
    for file in [None, Some("events.json")] {
        let v = sanitize(msg.as_bytes(), file, &["--input", "mcp", "--max-tokens", "1000"]);
        check_records(&v, &lines, false);
    }
}

//! The conformance vectors in `tests/vectors/` hold for the Rust host: the
//! JSON twin gives each response byte for byte, and the CLI prints each
//! message for the same stdin and flags.

mod common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use base64::Engine;

fn vectors() -> Vec<(PathBuf, serde_json::Value)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors");
    let mut v: Vec<(PathBuf, serde_json::Value)> = std::fs::read_dir(&dir)
        .expect("tests/vectors")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let v = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            (p, v)
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

#[test]
fn every_vector_holds_through_the_library() {
    let all = vectors();
    assert!(all.len() >= 20, "{} vectors", all.len());
    let s = common::sanitizer();
    for (path, v) in &all {
        let got = s.sanitize_json(s.default_pack(), v["request"].as_str().unwrap()).unwrap();
        assert_eq!(got, v["response"].as_str().unwrap(), "{}", path.display());
        let resp: serde_json::Value = serde_json::from_str(&got).unwrap();
        if let Some(ok) = resp.get("Ok") {
            common::assert_record_valid(&ok["record"]);
            let message: serde_json::Value = serde_json::from_str(ok["message"].as_str().unwrap()).unwrap();
            assert_eq!(common::message_record(&message), &ok["record"], "{}", path.display());
        }
    }
}

#[test]
fn the_cli_prints_each_vectors_message() {
    for (path, v) in vectors() {
        let flags: Vec<&str> = v["flags"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
        let req: serde_json::Value = serde_json::from_str(v["request"].as_str().unwrap()).unwrap();
        // The command's stdin: the vector's own when the request keeps less
        // of it (head + tail), else the request's input.
        let src = if v.get("stdin").is_some() || v.get("stdin_base64").is_some() { &v } else { &req };
        let stdin = match (src.get("input").or(src.get("stdin")), src.get("input_base64").or(src.get("stdin_base64"))) {
            (Some(t), _) => t.as_str().unwrap().as_bytes().to_vec(),
            (_, Some(b)) => base64::engine::general_purpose::STANDARD.decode(b.as_str().unwrap()).unwrap(),
            _ => Vec::new(),
        };
        let mut child = Command::new(env!("CARGO_BIN_EXE_result-sanitizer"))
            .arg("sanitize")
            .args(&flags)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut w = child.stdin.take().unwrap();
        let t = std::thread::spawn(move || {
            let _ = w.write_all(&stdin);
        });
        let out = child.wait_with_output().unwrap();
        t.join().unwrap();
        let resp: serde_json::Value = serde_json::from_str(v["response"].as_str().unwrap()).unwrap();
        match resp.get("Ok") {
            Some(ok) => {
                assert!(out.status.success(), "{}: {}", path.display(), String::from_utf8_lossy(&out.stderr));
                let expected = format!("{}\n", ok["message"].as_str().unwrap());
                assert_eq!(String::from_utf8(out.stdout).unwrap(), expected, "{}", path.display());
            }
            None => {
                assert!(!out.status.success(), "{}", path.display());
                assert!(String::from_utf8_lossy(&out.stderr).contains("error"), "{}", path.display());
            }
        }
    }
}

/// The record schema is strict: a record in another naming convention, or
/// with a field it does not know, is refused.
#[test]
fn the_record_schema_refuses_other_spellings() {
    let (_, v) = vectors().into_iter().find(|(p, _)| p.ends_with("char-budget.json")).unwrap();
    let resp: serde_json::Value = serde_json::from_str(v["response"].as_str().unwrap()).unwrap();
    let good = &resp["Ok"]["record"];
    assert!(common::record_validator().is_valid(good));
    for (path, bad) in [
        ("/strategy", serde_json::json!("HeadTailLines")),
        ("/encoding", serde_json::json!("O200kBase")),
        ("/stages/0/stage", serde_json::json!("wrap+final-redact")),
        ("/budget/read_bytes", serde_json::json!(-1)),
    ] {
        let mut r = good.clone();
        *r.pointer_mut(path).unwrap() = bad;
        assert!(!common::record_validator().is_valid(&r), "{path}");
    }
    let mut extra = good.clone();
    extra["unknown_field"] = serde_json::json!(1);
    assert!(!common::record_validator().is_valid(&extra));
}

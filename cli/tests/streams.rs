//! A 1 GiB stream through the real CLI: `redact` in constant memory with
//! secrets split across its chunk boundaries, `sanitize` draining it in
//! bounded memory as head + tail.

use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};

use aho_corasick::AhoCorasick;

const GIB: usize = 1 << 30;
const BLOCK: usize = 4 << 20;
/// The CLI's `redact` reads chunks of this size: a secret straddles each
/// boundary.
const CHUNK: usize = result_sanitizer_host::io::REDACT_CHUNK;
const SECRET: &[u8] = b"AKIAQ3EGRTZ7MBXK4WNP";

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_result-sanitizer"))
}

/// 4 MiB of service log with a secret across every chunk boundary.
fn block() -> Vec<u8> {
    let mut b = Vec::with_capacity(BLOCK);
    let mut i = 0u64;
    while b.len() < BLOCK {
        let line = format!(
            "2026-11-30T10:00:{:02}Z INFO request handled path=/api/v1/items/{i} status=200 latency_ms={}\n",
            i % 60,
            i % 97
        );
        b.extend_from_slice(line.as_bytes());
        i += 1;
    }
    b.truncate(BLOCK);
    // Written modulo the block: the last one straddles the boundary
    // between two blocks (its head ends one block, its tail starts the next).
    for k in 1..=BLOCK / CHUNK {
        let at = k * CHUNK - SECRET.len() / 2 - 1;
        let planted = [&b" "[..], SECRET, b"\n"].concat();
        for (j, &c) in planted.iter().enumerate() {
            b[(at + j) % BLOCK] = c;
        }
    }
    b
}

/// Writes `total` bytes of `block` repeated; returns how many were taken
/// before the reader closed the pipe.
fn feed(mut to: impl Write + Send + 'static, block: Vec<u8>, total: usize) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let mut sent = 0;
        while sent < total {
            match to.write(&block[sent % BLOCK..]) {
                Ok(n) => sent += n,
                Err(_) => break, // EPIPE: the reader stopped.
            }
        }
        sent
    })
}

/// Waits for the child and returns (success, peak RSS in KiB).
fn wait_rss(child: Child) -> (bool, i64) {
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: plain wait4 on our own child with valid out-pointers.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid);
    std::mem::forget(child);
    (libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, usage.ru_maxrss)
}

/// Runs `redact` over `total` bytes; returns (bytes out, secrets seen,
/// redaction markers seen, peak RSS KiB).
fn redact(total: usize) -> (u64, usize, usize, i64) {
    let mut child =
        bin().arg("redact").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let writer = feed(child.stdin.take().unwrap(), block(), total);
    let out = child.stdout.take().unwrap();
    let counter = std::thread::spawn(move || {
        let ac = AhoCorasick::new([&b"AKIAQ3EGRTZ7MBXK4WNP"[..], b"[REDACTED:aws-access-key-id]"]).unwrap();
        let mut counting = Counting { inner: out, n: 0 };
        let (mut secrets, mut markers) = (0, 0);
        for m in ac.stream_find_iter(&mut counting) {
            match m.unwrap().pattern().as_usize() {
                0 => secrets += 1,
                _ => markers += 1,
            }
        }
        (counting.n, secrets, markers)
    });
    assert_eq!(writer.join().unwrap(), total);
    let (bytes, secrets, markers) = counter.join().unwrap();
    let (ok, rss) = wait_rss(child);
    assert!(ok, "redact failed");
    (bytes, secrets, markers, rss)
}

struct Counting<R> {
    inner: R,
    n: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.n += n as u64;
        Ok(n)
    }
}

#[test]
fn a_gibibyte_through_redact_in_constant_memory_with_secrets_across_chunks() {
    let per_block = BLOCK / CHUNK;
    // The secret split at the very end of the stream is only a head.
    let (_, s_small, m_small, rss_small) = redact(4 * BLOCK);
    assert_eq!((s_small, m_small), (0, 4 * per_block - 1));

    let (bytes, secrets, markers, rss) = redact(GIB);
    assert_eq!(secrets, 0, "a secret survived");
    assert_eq!(markers, GIB / BLOCK * per_block - 1, "every planted secret is redacted once");
    // Each 20-byte key becomes a 28-byte marker; nothing else changes.
    let growth = ("[REDACTED:aws-access-key-id]".len() - SECRET.len()) * markers;
    assert_eq!(bytes, (GIB + growth) as u64);
    // Constant memory: 64× the input, at most 16 MiB more peak RSS.
    assert!(rss <= rss_small + 16 * 1024, "peak RSS {rss} KiB for 1 GiB vs {rss_small} KiB for 16 MiB");
}

/// Runs `sanitize` over `total` bytes on stdin; returns (the record, bytes
/// the CLI took, peak RSS KiB).
fn sanitize(total: usize, cap: usize) -> (serde_json::Value, usize, i64) {
    let mut child = bin()
        .args(["sanitize", "--tool", "cat", "--max-bytes", &cap.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let writer = feed(child.stdin.take().unwrap(), block(), total);
    let mut out = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
    let (ok, rss) = wait_rss(child);
    assert!(ok);
    let taken = writer.join().unwrap();
    assert!(!String::from_utf8_lossy(&out).contains("AKIAQ3EGRTZ7MBXK4WNP"));
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    (v["_meta"]["result-sanitizer/record"].clone(), taken, rss)
}

#[test]
fn sanitize_drains_a_gibibyte_in_bounded_memory_and_counts_its_secrets() {
    let cap = 100_000usize;
    let (_, _, rss_small) = sanitize(16 << 20, cap);
    let (rec, taken, rss) = sanitize(GIB, cap);
    // The CLI read it all (head and tail kept, the middle drained once), so
    // the size is known and the byte cap cut nothing short.
    assert_eq!(taken, GIB);
    assert_eq!((&rec["byte_cap_hit"], &rec["truncated"]), (&false.into(), &true.into()), "{rec}");
    assert_eq!(rec["original_bytes"].as_u64(), Some(GIB as u64));
    // Every planted secret was in the drained middle but the split last one.
    let aws = rec["redactions"].as_array().unwrap().iter().find(|c| c["rule_id"] == "aws-access-key-id").unwrap();
    assert_eq!(aws["count"].as_u64(), Some((GIB / CHUNK - 1) as u64), "{rec}");
    assert!(rss <= rss_small + 16 * 1024, "peak RSS {rss} KiB for 1 GiB vs {rss_small} KiB for 16 MiB");
}

//! The proxy as a gateway under load and faults (#42), on loopback: two
//! `result-sanitizer mcp --listen` replicas in front of one HTTP upstream
//! MCP server, sharing one real `redis-server` as their recall store (one
//! key, from `--recall-key-file`). Client sessions (64 by default) run at
//! once; each sends its requests to the two replicas in turn (no sticky
//! routing: one request to A, the next to B), `--calls` tools/call in all
//! (default 20 000): mostly 8 KiB results, one in 50 of 1 MiB.
//!
//! - **Upstream**: a minimal Streamable HTTP MCP server in this process
//!   (tiny_http, JSON answers, stateless): its one tool returns a service
//!   log of the size asked for, every line of which starts with the
//!   call's nonce (`@@s07c00123@@`), so a response given to the wrong
//!   request is seen in any slice of it.
//! - **Checks on every response**: its JSON-RPC id is the request's, every
//!   nonce in it is the call's; an 8 KiB result is the upstream's text
//!   exactly; a 1 MiB one shows the nonce at its head and carries a recall
//!   route. Lost (no answer), duplicated (an earlier id again) and
//!   misrouted (another id or nonce) answers are counted.
//! - **Recall across replicas**: each cut result is recalled (4 KiB at the
//!   marker's offset) through the replica that did NOT keep it; the slice
//!   must be the upstream's text at that offset. The same session then
//!   tries a call id of another session: it must be refused.
//! - **Added time**: some calls (every 4th 8 KiB one, every 1 MiB one) are
//!   also made directly to the upstream by the same client code, in the
//!   same run; added = proxied less direct, at p50 and p99. Under load
//!   that is mostly queueing on the machine's cores, so a first phase
//!   (500 calls, one in 5 of 1 MiB, each made both ways) runs one session
//!   alone: the proxy's own cost per call.
//! - **Faults**: at 30 % of the calls replica A is killed (SIGKILL) and
//!   started again a second later; at 60 % Redis is stopped and started
//!   again on the same port and directory (no persistence, as the docs
//!   advise: what it held is gone). A call that fails with a transport
//!   error (in flight at the kill, or sent to A while it is down) is
//!   counted as "failed during fault" and retried once on the other
//!   replica: the retry must succeed with the right answer.
//! - **Tenants**: at the end a third proxy with another key on the same
//!   Redis must not read any kept result nor take up a session.
//!
//! Every server listens on 127.0.0.1 and is killed at the end (a guard,
//! also on a panic).
//!
//!   target/release/examples/bench_gateway [--calls N] [--sessions N] [--keep-logs]

use std::collections::HashSet;
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

#[path = "bench_inputs.rs"]
#[allow(dead_code)]
mod inputs;

const KEY: &str = "6a1f0e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1";
const OTHER_KEY: &str = "another tenant's key, of at least thirty-two bytes";
const SMALL: usize = 8 << 10;
const BIG: usize = 1 << 20;
const RECALL_LIMIT: usize = 4096;
/// Calls of the one-session phase (one in 5 of 1 MiB).
const QUIET_CALLS: usize = 500;
/// A request that takes longer than this is counted as stalled.
const STALL: Duration = Duration::from_secs(5);

#[path = "bench_gateway/fleet.rs"]
mod fleet;
#[path = "bench_gateway/session.rs"]
mod session;
#[path = "bench_gateway/wire.rs"]
mod wire;
use fleet::*;
use session::*;
use wire::*;

fn main() {
    let arg = |name: &str| std::env::args().skip_while(|a| a != name).nth(1);
    let calls: usize = arg("--calls").map_or(20_000, |n| n.parse().expect("--calls N"));
    let sessions: usize = arg("--sessions").map_or(64, |n| n.parse().expect("--sessions N"));
    let keep_logs = std::env::args().any(|a| a == "--keep-logs");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let bin = root.join("target/release/result-sanitizer");
    assert!(bin.exists(), "build first: {}", bin.display());

    // The upstream, in this process.
    let log: &'static str = String::from_utf8(inputs::service_log(1 << 20)).unwrap().leak();
    let lines = Arc::new(log.lines().collect::<Vec<_>>());
    let up_port = free_port();
    let listener = TcpListener::bind(("127.0.0.1", up_port)).expect("the upstream listens");
    {
        // TCP_NODELAY, inherited by its connections (Linux), as the proxy's
        // listener: tiny_http writes head and body apart, and Nagle would
        // hold the body for the head's delayed ACK (40 ms).
        use std::os::fd::AsRawFd;
        let one: libc::c_int = 1;
        // SAFETY: setsockopt(2) on our own socket, with an int option value.
        let r = unsafe {
            libc::setsockopt(
                listener.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_NODELAY,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        assert_eq!(r, 0, "TCP_NODELAY on the upstream's listener");
    }
    let server = Arc::new(tiny_http::Server::from_listener(listener, None).expect("the upstream serves"));
    let upstream_calls = Arc::new(AtomicUsize::new(0));
    for _ in 0..8 {
        let (s, l, c) = (server.clone(), lines.clone(), upstream_calls.clone());
        std::thread::spawn(move || upstream(s, l, c));
    }
    let upstream_url = format!("http://127.0.0.1:{up_port}/mcp");

    let dir = std::env::temp_dir().join(format!("rs-bench-gateway-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("recall.key"), format!("{KEY}\n")).unwrap();
    let mut fleet = Fleet {
        dir,
        bin,
        redis_port: free_port(),
        upstream_url: upstream_url.clone(),
        redis: None,
        replicas: vec![(free_port(), None), (free_port(), None)],
        others: Vec::new(),
        keep: false,
    };
    fleet.start_redis();
    fleet.start_replica(0);
    fleet.start_replica(1);
    let url = |p: u16| format!("http://127.0.0.1:{p}/mcp");
    let replicas = [url(fleet.replicas[0].0), url(fleet.replicas[1].0)];
    println!(
        "MCP gateway under load: 2 replicas (HTTP) -> 1 HTTP upstream, 1 redis-server, {sessions} sessions, {calls} tools/call"
    );

    // First one session alone (no queueing): what the proxy adds to a
    // call on an idle machine; every call also made directly.
    let mut quiet = Run::new(replicas.clone(), &upstream_url, &lines, QUIET_CALLS);
    (quiet.big_every, quiet.direct_every, quiet.prefix) = (5, 1, "q");
    let (quiet_tally, quiet_samples) = session(&quiet, 0);

    // Then the load, and the faults.
    let run = Arc::new(Run::new(replicas, &upstream_url, &lines, calls));
    let workers: Vec<_> = (0..sessions)
        .map(|s| {
            let run = run.clone();
            std::thread::spawn(move || session(&run, s))
        })
        .collect();

    // The faults, from this thread, as the calls go.
    let wait_for = |n: usize| {
        while run.done.load(Ordering::Relaxed) < n && !workers.iter().all(|w| w.is_finished()) {
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    wait_for(calls * 3 / 10);
    let kill_at_call = run.done.load(Ordering::Relaxed);
    let t_kill = run.start.elapsed();
    *run.killed_at.lock().unwrap() = Some(t_kill);
    fleet.kill_replica(0);
    std::thread::sleep(Duration::from_secs(1));
    fleet.start_replica(0);
    let t_back = run.start.elapsed();
    *run.a_back_at.lock().unwrap() = Some(t_back);
    wait_for(calls * 6 / 10);
    let redis_at_call = run.done.load(Ordering::Relaxed);
    let t_redis_down = run.start.elapsed();
    fleet.stop_redis();
    std::thread::sleep(Duration::from_secs(1));
    fleet.start_redis();
    let t_redis_up = run.start.elapsed();
    // Redis answers now; the proxies retry it at most once a second.
    *run.redis_back_at.lock().unwrap() = Some(t_redis_up);

    let mut tally = Tally::default();
    tally.add(&quiet_tally);
    let mut samples = Vec::new();
    for w in workers {
        let (t, s) = w.join().expect("a session thread panicked");
        tally.add(&t);
        samples.extend(s);
    }
    let wall = run.start.elapsed();

    // Another tenant: a proxy with another key on the same Redis reads
    // none of the kept results and takes up no session.
    let c_port = free_port();
    let c = fleet.proxy(c_port, Some(OTHER_KEY), "tenant-c.log");
    fleet.others.push(c);
    let agent = agent();
    let init = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "other-tenant", "version": "1" } } });
    let Posted::Ok { sid: Some(c_sid), .. } = post(&agent, &url(c_port), None, &serde_json::to_vec(&init).unwrap())
    else {
        panic!("the other tenant's proxy answers initialize")
    };
    let kept = run.kept.lock().unwrap().clone();
    let sample: Vec<_> = kept.iter().rev().take(50).collect();
    let (mut tenant_refused, mut tenant_leaked, mut takeover_refused) = (0, 0, 0);
    for (i, (owner_sid, call_id, nonce)) in sample.iter().enumerate() {
        let body =
            call(i as u64 + 1, "read_truncated_output", json!({ "call_id": call_id, "offset": 0, "limit": 4096 }));
        if let Posted::Ok { status: 200, body: b, .. } = post(&agent, &url(c_port), Some(&c_sid), &body) {
            let v: Value = serde_json::from_slice(&b).unwrap_or(Value::Null);
            if v["result"]["isError"] == true && !text_of(&v).contains(&format!("@@{nonce}@@")) {
                tenant_refused += 1;
            } else {
                tenant_leaked += 1;
            }
        }
        // The owner's session id itself, at the other tenant: not taken up.
        if i < 10 {
            match post(&agent, &url(c_port), Some(owner_sid), &body) {
                Posted::Ok { status: 404, .. } => takeover_refused += 1,
                Posted::Ok { status, body: b, .. } => {
                    tenant_leaked += 1;
                    tally.note(format!("tenant C took up a session: {status} {}", String::from_utf8_lossy(&b)));
                }
                Posted::Transport(e) => tally.note(format!("tenant C: {e}")),
            }
        }
    }

    // The table.
    let row = |label: &str, size: usize, samples: &[Sample]| {
        let mut d: Vec<Duration> = samples.iter().filter(|x| x.size == size && !x.proxied).map(|x| x.took).collect();
        let mut p: Vec<Duration> = samples.iter().filter(|x| x.size == size && x.proxied).map(|x| x.took).collect();
        if d.is_empty() || p.is_empty() {
            return;
        }
        let (d50, d99, p50, p99) = (pct(&mut d, 50), pct(&mut d, 99), pct(&mut p, 50), pct(&mut p, 99));
        println!(
            "| {label} | {} | {} | {} / {} | {} / {} | {} / {} |",
            p.len(),
            d.len(),
            ms(d50),
            ms(d99),
            ms(p50),
            ms(p99),
            ms(p50.saturating_sub(d50)),
            ms(p99.saturating_sub(d99))
        );
    };
    println!();
    println!(
        "| result, phase | proxied calls | direct calls | direct p50 / p99 | proxied p50 / p99 | added p50 / p99 |"
    );
    println!("|---|---|---|---|---|---|");
    row("8 KiB, 1 session alone", SMALL, &quiet_samples);
    row("1 MiB, 1 session alone", BIG, &quiet_samples);
    row(&format!("8 KiB, {sessions} sessions, faults"), SMALL, &samples);
    row(&format!("1 MiB, {sessions} sessions, faults"), BIG, &samples);
    let proxied = samples.iter().filter(|x| x.proxied).count();
    let during = |a: Duration, b: Duration, r: Option<usize>| {
        samples.iter().filter(|x| x.proxied && x.ended >= a && x.ended <= b && r.is_none_or(|r| x.replica == r)).count()
    };
    println!();
    println!(
        "{} proxied calls answered in {:.1} s ({:.0} calls/s through the gateway), upstream served {} tools/call",
        proxied,
        wall.as_secs_f64(),
        proxied as f64 / wall.as_secs_f64(),
        upstream_calls.load(Ordering::Relaxed)
    );
    println!(
        "responses (both phases): right {} | lost {} | duplicated {} | misrouted {} | wrong content {} | HTTP errors {} | \
         stalled over {} s {}",
        tally.ok,
        tally.lost,
        tally.duplicated,
        tally.misrouted,
        tally.wrong_content,
        tally.http_errors,
        STALL.as_secs(),
        tally.stalled
    );
    println!(
        "recall through the other replica: right {} | wrong {} | cut while Redis was away (marker: not kept) {} | \
         store unreachable {} | kept before the Redis restart, gone {}",
        tally.recall_ok, tally.recall_wrong, tally.not_kept, tally.recall_unavailable, tally.recall_lost
    );
    println!(
        "another session's call id: refused {} | read {}; another tenant (other key, same Redis): refused {} | read {} | \
         session ids not taken up {}/{}",
        tally.foreign_refused,
        tally.foreign_leaked,
        tenant_refused,
        tenant_leaked,
        takeover_refused,
        sample.len().min(10)
    );
    println!(
        "fault 1, SIGKILL replica A after {kill_at_call} calls (t={:.1} s), restarted {:.1} s later: failed during fault {} \
         (in flight {}, sent to A while down or on a dead connection {}); retried on the other replica: {} right, {} failed again (lost); \
         replica B answered {} calls while A was down; after its restart A answered {} calls and {} recalls of \
         results B kept",
        t_kill.as_secs_f64(),
        (t_back - t_kill).as_secs_f64(),
        tally.failed_in_flight + tally.failed_while_down,
        tally.failed_in_flight,
        tally.failed_while_down,
        tally.retried_ok,
        tally.lost,
        during(t_kill, t_back, Some(1)),
        during(t_back, wall, Some(0)),
        tally.recall_ok_a_back,
    );
    println!(
        "fault 2, Redis stopped after {redis_at_call} calls (t={:.1} s), started again {:.1} s later: {} calls answered \
         meanwhile; after it was back, {} right recalls through the other replica",
        t_redis_down.as_secs_f64(),
        (t_redis_up - t_redis_down).as_secs_f64(),
        during(t_redis_down, t_redis_up, None),
        tally.recall_ok_redis_back,
    );
    for e in &tally.examples {
        println!("  e.g. {e}");
    }
    if tally.stalled > 0 {
        println!(
            "  stalled calls: tiny_http's task pool once queued new connections behind live ones (patched in \
             third_party/tiny_http; docs/benchmarks.md, issue #42 section)"
        );
    }
    let bad = tally.lost
        + tally.duplicated
        + tally.misrouted
        + tally.wrong_content
        + tally.http_errors
        + tally.stalled
        + tally.recall_wrong
        + tally.foreign_leaked
        + tenant_leaked;
    let recovered = tally.recall_ok_a_back > 0 && tally.recall_ok_redis_back > 0;
    let verdict = if bad == 0 && recovered { "PASS" } else { "FAIL" };
    println!("acceptance: {verdict}");
    let _ = std::io::stdout().flush();
    if verdict == "FAIL" || keep_logs {
        fleet.keep = true;
        println!("the processes' logs are kept in {}", fleet.dir.display());
        drop(fleet);
        if verdict == "FAIL" {
            std::process::exit(1);
        }
    }
}

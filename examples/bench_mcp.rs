//! What `result-sanitizer mcp` adds to a tool call: the median round trip
//! through the proxy, less the same call made to the server directly
//! (tests/mcp, `make mcp-deps`), for an 8 KiB and a 1 MiB result. Goals: at
//! most 1 ms and 20 ms added. Two real servers:
//!
//! - server-everything's `echo` of a service log: the result is the text
//!   once (`content`), the size named;
//! - server-filesystem's `read_text_file` of a file of that size: its
//!   result holds the text twice (`content` and `structuredContent`), so
//!   the pipeline reads twice the size named.
//!
//! Also printed: the pipeline alone on the same result, in process
//! (`Sanitizer::sanitize_with`, the options the proxy uses), so the rest
//! is the proxy's own part (JSON, pipes, the recall store).
//!
//! The text is a service log whose lines all differ (`bench_inputs.rs`'s
//! `service_log`, fixed seed): a log of one repeated line would flatter
//! anything that remembers what it has seen.
//!
//! `--baseline BIN` also runs every call through another build of the
//! proxy, in turn with the other two, and prints its added time and the
//! ratio of the two: a before/after measured in one run.
//!
//! `--only TEXT` runs only the calls whose label holds TEXT (to profile one).
//!
//!   target/release/examples/bench_mcp [--runs N] [--baseline BIN] [--only TEXT]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use result_sanitizer_host::api::{InputKind, OutputSource};
use result_sanitizer_host::{default_options, Limits, Sanitizer};
use serde_json::{json, Value};

#[path = "bench_inputs.rs"]
#[allow(dead_code)]
mod inputs;

/// A JSON-RPC client on a child's stdio: the harness, not under test.
struct Rpc {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next: u64,
}

impl Rpc {
    fn start(program: &Path, args: &[String]) -> Self {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the command starts");
        let input = child.stdin.take().unwrap();
        let output = BufReader::with_capacity(1 << 20, child.stdout.take().unwrap());
        let mut r = Self { child, input, output, next: 1 };
        r.request(
            "initialize",
            json!({ "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "bench", "version": "1" } }),
        );
        r.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        r
    }

    /// Writes one message in one write, as the SDK clients do (`writeln!`
    /// of a `Value` would make a write of every escaped piece: thousands
    /// of small writes for a megabyte of log lines).
    fn send(&mut self, m: &Value) {
        let mut line = serde_json::to_vec(m).unwrap();
        line.push(b'\n');
        self.input.write_all(&line).unwrap();
    }

    /// Sends a request and reads up to its response; its line.
    fn request(&mut self, method: &str, params: Value) -> String {
        let id = self.next;
        self.next += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        let mut line = String::new();
        loop {
            line.clear();
            assert!(self.output.read_line(&mut line).unwrap() > 0, "the server closed");
            // Only the response is parsed (notifications and logs pass by).
            if line.contains(&format!("\"id\":{id}")) {
                let v: Value = serde_json::from_str(&line).unwrap();
                if v["id"] == id {
                    assert!(v.get("result").is_some(), "{}", &line[..line.len().min(300)]);
                    return line;
                }
            }
        }
    }
}

impl Drop for Rpc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let arg = |name: &str| std::env::args().skip_while(|a| a != name).nth(1);
    let runs: usize = arg("--runs").map_or(41, |n| n.parse().unwrap());
    let baseline = arg("--baseline").map(PathBuf::from);
    let only = arg("--only").unwrap_or_default();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let bin_dir = root.join("tests/mcp/node_modules/.bin");
    let server = bin_dir.join("mcp-server-filesystem");
    assert!(server.exists(), "run `make mcp-deps` first");
    let bin = root.join("target/release/result-sanitizer");
    let dir = std::env::temp_dir().join(format!("rs-bench-mcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.canonicalize().unwrap();
    let log = String::from_utf8(inputs::service_log(1 << 20)).unwrap();
    let make = |n: usize| log[..n].to_string();
    std::fs::write(dir.join("8k.txt"), make(8 << 10)).unwrap();
    std::fs::write(dir.join("1m.txt"), make(1 << 20)).unwrap();

    // Each server directly, and behind the proxy.
    let start = |server_args: Vec<String>| {
        let mut proxy_args = vec!["mcp".to_string(), "--".into(), "node".into()];
        proxy_args.extend(server_args.iter().cloned());
        let base = baseline.as_ref().map(|b| Rpc::start(b, &proxy_args));
        (Rpc::start(Path::new("node"), &server_args), Rpc::start(&bin, &proxy_args), base)
    };
    let mut everything = start(vec![bin_dir.join("mcp-server-everything").display().to_string()]);
    let mut filesystem = start(vec![server.display().to_string(), dir.display().to_string()]);

    let sanitizer = Sanitizer::new(Limits::default()).expect("the embedded components load");
    println!("MCP proxy overhead: median of {runs} calls each, direct and proxied in turn");
    println!(
        "{:>30} {:>10} {:>10} {:>10} {:>8} {:>8} {:>16} {:>12}{}",
        "call",
        "direct",
        "proxied",
        "added",
        "goal",
        "result",
        "pipeline alone",
        "proxy's own",
        if baseline.is_some() { "  baseline added   ratio" } else { "" }
    );
    let cases = [
        ("echo 8 KiB", "echo", (8 << 10) - 6, Duration::from_millis(1)),
        ("echo 1 MiB", "echo", (1 << 20) - 6, Duration::from_millis(20)),
        ("read_text_file 8 KiB (twice)", "read_text_file", 8 << 10, Duration::from_millis(1)),
        ("read_text_file 1 MiB (twice)", "read_text_file", 1 << 20, Duration::from_millis(20)),
    ];
    for (label, tool, size, goal) in cases.into_iter().filter(|c| c.0.contains(&only)) {
        // "Echo: " + the message is the size named.
        let (params, (direct, proxied, base)) = if tool == "echo" {
            (json!({ "name": "echo", "arguments": { "message": make(size) } }), &mut everything)
        } else {
            let name = if size == 8 << 10 { "8k.txt" } else { "1m.txt" };
            let path = dir.join(name).display().to_string();
            (json!({ "name": tool, "arguments": { "path": path } }), &mut filesystem)
        };
        let (mut d, mut p, mut b) = (Vec::new(), Vec::new(), Vec::new());
        // Alternate them, after a warm-up, so all see the same machine.
        let timed = |r: &mut Rpc| {
            let t = Instant::now();
            r.request("tools/call", params.clone());
            t.elapsed()
        };
        for i in 0..runs + 3 {
            let td = timed(direct);
            let tp = timed(proxied);
            let tb = base.as_mut().map(timed);
            if i >= 3 {
                d.push(td);
                p.push(tp);
                b.extend(tb);
            }
        }
        let (md, mp) = (median(d), median(p));
        let added = mp.saturating_sub(md);
        let base_added = (!b.is_empty()).then(|| median(b).saturating_sub(md));
        // The same result through the pipeline alone, as the proxy calls it.
        let v: Value = serde_json::from_str(&direct.request("tools/call", params.clone())).unwrap();
        let input = serde_json::to_vec(&v["result"]).unwrap();
        let mut o = default_options();
        o.tool = tool.into();
        o.call_id = "call_1".into();
        o.input = InputKind::Mcp;
        o.source = OutputSource::Tool;
        o.recall_bytes = Some(input.len() as u64);
        let pipeline = median(
            (0..runs)
                .map(|_| {
                    let t = Instant::now();
                    sanitizer.sanitize(&input, &o).expect("sanitizes");
                    t.elapsed()
                })
                .collect(),
        );
        let ms = |d: Duration| format!("{:.2} ms", d.as_secs_f64() * 1e3);
        let vs = base_added.map_or(String::new(), |b| {
            format!("  {:>14}   {:.2}", ms(b), b.as_secs_f64() / added.as_secs_f64().max(1e-6))
        });
        println!(
            "{label:>30} {:>10} {:>10} {:>10} {:>8} {:>8} {:>16} {:>12}{vs}",
            ms(md),
            ms(mp),
            ms(added),
            ms(goal),
            if added <= goal { "met" } else { "not met" },
            ms(pipeline),
            ms(added.saturating_sub(pipeline)),
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

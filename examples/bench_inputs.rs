//! Inputs shared by `bench` and `profile`: generated, so that both measure
//! the same bytes, and deterministic (a fixed xorshift seed per input).
//! Also the tenant rules file of `bench_tenants` and `profile tenant`.

pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn s(&mut self, n: usize, a: &str) -> String {
        (0..n).map(|_| a.as_bytes()[(self.next() % a.len() as u64) as usize] as char).collect()
    }
}
pub const AN: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
pub const HEX: &str = "0123456789abcdef";

/// A clean Java-style service log of about `bytes` bytes.
pub fn service_log(bytes: usize) -> Vec<u8> {
    let mut r = Rng(7);
    let mut out = String::with_capacity(bytes + 256);
    let paths = ["/api/v1/orders", "/api/v1/users", "/health", "/api/v1/cart/items", "/metrics"];
    let mut i = 0u64;
    while out.len() < bytes {
        i += 1;
        let uuid = format!("{}-{}-{}-{}-{}", r.s(8, HEX), r.s(4, HEX), r.s(4, HEX), r.s(4, HEX), r.s(12, HEX));
        let p = paths[(r.next() % 5) as usize];
        out.push_str(&format!(
            "2026-11-30T14:{:02}:{:02}.{:03}Z INFO  [http-nio-8080-exec-{}] c.acme.api.Controller - GET {p}/{} status=200 dur={}ms req_id={uuid} user=u_{}\n",
            (i / 60) % 60, i % 60, i % 1000, i % 16, r.next() % 100000, r.next() % 900, r.next() % 100000
        ));
        if i.is_multiple_of(50) {
            out.push_str(&format!("2026-11-30T14:00:00.000Z DEBUG [pool-2] c.acme.db.Pool - connection {} returned, active=3 idle=7 commit {}\n", r.s(8, HEX), r.s(40, HEX)));
        }
    }
    out.into_bytes()
}

/// A file where every line holds a credential.
pub fn dense(bytes: usize) -> Vec<u8> {
    let mut r = Rng(11);
    let mut out = String::new();
    while out.len() < bytes {
        let line = match r.next() % 8 {
            0 => format!("AWS_ACCESS_KEY_ID=AKIA{}\n", r.s(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")),
            1 => format!("export GITHUB_TOKEN=ghp_{}\n", r.s(36, AN)),
            2 => format!("DATABASE_URL=postgres://app:{}@db:5432/app\n", r.s(16, AN)),
            3 => format!("> Authorization: Bearer {}\n", r.s(40, AN)),
            4 => format!("STRIPE_KEY=sk_live_{}\n", r.s(40, AN)),
            5 => format!("slack: xoxb-{}-{}-{}\n", r.s(11, "0123456789"), r.s(13, "0123456789"), r.s(24, AN)),
            6 => format!("{{\"password\": \"{}\"}}\n", r.s(14, AN)),
            _ => format!("OPENAI_API_KEY=sk-proj-{}\n", r.s(80, AN)),
        };
        out.push_str(&line);
    }
    out.into_bytes()
}

fn pick<'a>(r: &mut Rng, v: &[&'a str]) -> &'a str {
    v[(r.next() % v.len() as u64) as usize]
}

fn uuid(r: &mut Rng) -> String {
    format!("{}-{}-4{}-{}{}-{}", r.s(8, HEX), r.s(4, HEX), r.s(3, HEX), r.s(1, "89ab"), r.s(3, HEX), r.s(12, HEX))
}

/// `2026-11-30T..Z` at `ms` milliseconds after 08:00.
fn iso(ms: u64) -> String {
    format!("2026-11-30T{:02}:{:02}:{:02}.{:03}Z", 8 + ms / 3_600_000 % 14, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000)
}

/// A clean service log of about `bytes` bytes whose lines vary as a real
/// one's do: access-log, logfmt, JSON, Spring, kubelet, Postgres and cache
/// lines with request and trace ids, UUIDs, hex digests, paths,
/// timestamps, durations and status codes. Nothing in it is a secret, so
/// every redaction in it is a false alarm.
pub fn varied_log(bytes: usize) -> Vec<u8> {
    let mut r = Rng(13);
    let mut out = String::with_capacity(bytes + 512);
    let status = [200, 200, 200, 200, 200, 201, 204, 301, 304, 400, 401, 403, 404, 404, 409, 422, 429, 500, 502, 503];
    let methods = ["GET", "GET", "GET", "GET", "POST", "POST", "PUT", "PATCH", "DELETE"];
    let words = ["running+shoes", "usb-c%20hub", "coffee", "garden+hose", "laptop+stand", "red+jacket", "xl"];
    let agents = [
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
        "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148",
        "okhttp/4.12.0",
        "python-requests/2.32.3",
        "kube-probe/1.31",
        "Go-http-client/2.0",
    ];
    let callers =
        ["server/handler.go", "server/middleware.go", "payments/capture.go", "store/orders.go", "auth/session.go"];
    let messages = ["request completed", "upstream slow", "cache refreshed", "retrying request", "request canceled"];
    let mut ms = 0u64;
    while out.len() < bytes {
        ms += r.next() % 40;
        let st = status[(r.next() % status.len() as u64) as usize];
        let m = pick(&mut r, &methods);
        let path = match r.next() % 9 {
            0 => format!("/api/v2/orders/{}", r.next() % 10_000_000),
            1 => format!("/api/v2/customers/{}/addresses", uuid(&mut r)),
            2 => format!("/v1/payments/pay_{}/capture", r.s(14, AN)),
            3 => format!("/static/js/main.{}.js", r.s(8, HEX)),
            4 => "/healthz".to_string(),
            5 => format!("/api/v2/search?q={}&page={}&limit=50", pick(&mut r, &words), r.next() % 40),
            6 => "/graphql".to_string(),
            7 => format!("/api/v2/carts/{}/items/{}", uuid(&mut r), r.next() % 100),
            _ => "/metrics".to_string(),
        };
        let d = r.next() % 900 + 1;
        let line = match r.next() % 10 {
            0..=2 => format!(
                "10.{}.{}.{} - - [30/Nov/2026:{:02}:{:02}:{:02} +0000] \"{m} {path} HTTP/1.1\" {st} {} \"-\" \"{}\" rt={}.{:03} upstream_rt={}.{:03} req_id={}\n",
                r.next() % 256, r.next() % 256, r.next() % 256, 8 + ms / 3_600_000 % 14, ms / 60_000 % 60, ms / 1000 % 60,
                r.next() % 50_000, pick(&mut r, &agents), d / 1000, d % 1000, d / 1000, (d * 7 / 8) % 1000, r.s(32, HEX)
            ),
            3 | 4 => format!(
                "time={} level={} caller={}:{} msg=\"{}\" method={m} path={path} status={st} duration={d}ms trace_id={} span_id={} tenant={}\n",
                iso(ms), pick(&mut r, &["info", "info", "warn", "debug"]), pick(&mut r, &callers), r.next() % 400 + 10,
                pick(&mut r, &messages), r.s(32, HEX), r.s(16, HEX), uuid(&mut r)
            ),
            5 => format!(
                "{{\"@timestamp\":\"{}\",\"level\":\"INFO\",\"logger_name\":\"com.acme.billing.InvoiceService\",\"thread_name\":\"worker-{}\",\"message\":\"invoice in_{} finalized for customer {}\",\"total_cents\":{},\"currency\":\"EUR\",\"request_id\":\"req_{}\",\"duration_ms\":{d}}}\n",
                iso(ms), r.next() % 32, r.s(14, AN), uuid(&mut r), r.next() % 100_000, r.s(14, AN)
            ),
            6 => format!(
                "2026-11-30 {:02}:{:02}:{:02}.{:03}  INFO 1 --- [nio-8080-exec-{}] o.s.web.servlet.DispatcherServlet        : Completed {st} in {d} ms ({m} {path})\n",
                8 + ms / 3_600_000 % 14, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000, r.next() % 200
            ),
            7 => format!(
                "{} kubelet[{}]: Successfully pulled image \"registry.acme.internal/shop/api@sha256:{}\" in {d}ms ({}ms including waiting). Image size: {} bytes. pod=api-{}-{}\n",
                iso(ms), r.next() % 9000 + 1000, r.s(64, HEX), d + r.next() % 200, r.next() % 90_000_000, r.s(10, HEX), r.s(5, "bcdfghjklmnpqrstvwxz2456789")
            ),
            8 => format!(
                "{} [{}] LOG:  duration: {}.{:03} ms  execute <unnamed>: SELECT id, status, total_cents FROM orders WHERE customer_id = $1 AND created_at > $2 ORDER BY created_at DESC LIMIT 50\n{} [{}] DETAIL:  parameters: $1 = '{}', $2 = '2026-11-01'\n",
                iso(ms), r.next() % 90_000, d / 10, r.next() % 1000, iso(ms), r.next() % 90_000, uuid(&mut r)
            ),
            _ => match r.next() % 2 {
                0 => format!(
                    "{} cache {} key=sessions:{} ttl={}s size={}B node=redis-{}.cache.internal:6379 took={}us\n",
                    iso(ms), pick(&mut r, &["hit", "hit", "miss"]), uuid(&mut r), r.next() % 86_400, r.next() % 20_000, r.next() % 6, d
                ),
                _ => format!(
                    "{} deploy rev={} image_digest=sha256:{} replicas={}/6 rollout=progressing after {}s\n",
                    iso(ms), r.s(40, HEX), r.s(64, HEX), r.next() % 7, d / 10
                ),
            },
        };
        out.push_str(&line);
    }
    out.into_bytes()
}

/// A CI log of about `bytes` bytes: cargo, npm, pytest, docker and deploy
/// steps. With `non_ascii`, the lines real CI tools decorate carry their
/// emoji, box drawing, progress blocks and CJK text (about a third of the
/// lines); without, the same lines in ASCII. Both draw the same random
/// numbers, so they differ only in those characters.
pub fn ci_log(bytes: usize, non_ascii: bool) -> Vec<u8> {
    let mut r = Rng(17);
    let u = |ascii: &'static str, uni: &'static str| if non_ascii { uni } else { ascii };
    let crates = ["serde", "tokio", "regex", "hyper", "clap", "rustls", "tracing", "wasmtime", "syn", "anyhow"];
    let tests = [
        ("renders the user name", "renders 用户名 in the header"),
        ("parses dates in ja-JP", "parses 2026年11月30日 in ja-JP"),
        ("formats currency", "formats €1.234,56 and ¥12,000"),
        ("keeps emoji in comments", "keeps 👍🏽 and 🎉 in comments"),
        ("sorts names (de-DE)", "sorts Müller, Möller, Mahler (de-DE)"),
        ("escapes quotes", "escapes « guillemets » and „quotes“"),
    ];
    let mut out = String::with_capacity(bytes + 512);
    let mut ms = 0u64;
    while out.len() < bytes {
        ms += r.next() % 300;
        let ts = format!("{}{:04}Z", &iso(ms)[..23], r.next() % 10_000);
        let d = r.next() % 5000;
        let line = match r.next() % 16 {
            0..=3 => format!(
                "{ts} \x1b[1m\x1b[32m   Compiling\x1b[0m {} v1.{}.{} (registry+https://github.com/rust-lang/crates.io-index)\n",
                pick(&mut r, &crates), r.next() % 40, r.next() % 20
            ),
            4 | 5 => format!(
                "{ts} test {}::tests::case_{} ... ok\n",
                pick(&mut r, &["parser", "lexer", "render", "cache", "store::orders"]), r.next() % 500
            ),
            6 => format!(
                "{ts} tests/test_{}.py::test_{}[{}] PASSED                                [{:>3}%]\n",
                pick(&mut r, &["api", "models", "views", "tasks"]), pick(&mut r, &["create", "update", "delete", "list"]),
                r.s(8, HEX), r.next() % 101
            ),
            7 => format!(
                "{ts} #{} [builder {}/9] RUN --mount=type=cache,target=/usr/local/cargo/registry cargo build --release --locked\n{ts} #{} DONE {}.{}s\n",
                r.next() % 30, r.next() % 9 + 1, r.next() % 30, d / 100, d % 10
            ),
            8 => format!("{ts} #{} writing image sha256:{} done\n", r.next() % 30, r.s(64, HEX)),
            9 => format!(
                "{ts} npm http fetch GET 200 https://registry.npmjs.org/{}/-/{}-{}.{}.{}.tgz {}ms (cache miss)\n",
                pick(&mut r, &["lodash", "react", "typescript", "esbuild", "vite"]), pick(&mut r, &["pkg", "lib"]),
                r.next() % 20, r.next() % 20, r.next() % 20, d % 900
            ),
            // The decorated lines.
            10 => {
                let (a, b) = tests[(r.next() % tests.len() as u64) as usize];
                format!("{ts}     {} {} {} ({} ms)\n", u("[ok]", "✓"), u(">", "›"), u(a, b), d % 300)
            }
            11 => format!(
                "{ts} {} {}@{}.{}.{}\n",
                u(pick(&mut r, &["|--", "`--", "|   |--"]), pick(&mut r, &["├──", "└──", "│   ├──"])),
                pick(&mut r, &crates), r.next() % 3, r.next() % 40, r.next() % 20
            ),
            12 => {
                let pct = r.next() % 101;
                let full = (pct * 30 / 100) as usize;
                format!(
                    "{ts} Downloading layer {} [{}{}] {pct}% {}.{}MB/48.2MB\n",
                    r.s(12, HEX), u("#", "█").repeat(full), u("-", "░").repeat(30 - full), pct * 48 / 100, r.next() % 10
                )
            }
            13 => format!(
                "{ts} {} Deployed {} to {} in {}.{}s {}\n",
                u("==>", "🚀"), pick(&mut r, &["api", "web", "worker"]), pick(&mut r, &["staging", "production"]),
                d / 100, d % 10, u("(ok)", "✅")
            ),
            14 => format!(
                "{ts} {} {:<22} {} {:>6} ms {} {}\n",
                u("|", "│"), pick(&mut r, &["checkout", "search", "login", "cart"]), u("|", "│"), d,
                u("|", "│"), u(pick(&mut r, &["pass", "FAIL"]), pick(&mut r, &["✅ pass", "❌ FAIL"]))
            ),
            _ => format!(
                "{ts} {} {}.{}s\n",
                u("info: build finished in", "信息：构建完成，用时"), d / 100, d % 100
            ),
        };
        out.push_str(&line);
    }
    out.into_bytes()
}

/// Tenant `i`'s rules file as `bench_tenants` builds its pack (over the
/// default rules): one in-house token, `t{i}_` and 32 hex digits.
pub fn tenant_rules(i: usize) -> String {
    format!(
        "[pack]\nname = \"tenant-{i}\"\nversion = \"1.0.0\"\ntenant = \"tenant-{i}\"\n\n[[rules]]\nid = \"t{i}-token\"\n\
         regex = '\\b(t{i}_[a-f0-9]{{32}})\\b'\nkeywords = [\"t{i}_\"]\nsecret_group = 1\n\
         examples = [\"t{i}_0123456789abcdef0123456789abcdef\"]\ncounter_examples = [\"t{i}_x\"]\n"
    )
}

//! Error scrubbing: tool errors keep what a model needs to correct itself
//! (the error class, the failed operation, the file's base name and line,
//! the statement's shape, the exit status) and lose internal host names,
//! private addresses, SQL literals, server paths and database accounts.
//! Each sample is the shape a real driver, client or runtime prints (the
//! values are made up); each test states the before and the after.

mod common;

use std::process::Command;

use result_sanitizer_host::api::{OutputFormat, ToolError};
use result_sanitizer_pack_build::{self as pack_build, RulesFile};

/// Sanitizes `text` as the output of a failed call (a tool error).
fn failed(text: &str) -> String {
    let mut o = common::opts("db_query");
    o.tool_error = Some(ToolError { code: "exit-status-1".into(), message: "command exited with status 1".into() });
    let out = common::sanitizer().sanitize(text.as_bytes(), &o).unwrap();
    common::assert_record_valid(common::message_record(&common::json(&out)));
    common::visible_text(&out, OutputFormat::Mcp)
}

/// Asserts `out` keeps every `kept` and holds none of `gone`.
fn check(out: &str, kept: &[&str], gone: &[&str]) {
    for k in kept {
        assert!(out.contains(k), "lost {k:?}:\n{out}");
    }
    for g in gone {
        assert!(!out.contains(g), "kept {g:?}:\n{out}");
    }
}

#[test]
fn psycopg2_and_asyncpg() {
    let out = failed(
        "Traceback (most recent call last):\n  File \"/srv/app/billing/repo.py\", line 88, in fetch\n    \
         cur.execute(\"SELECT card_number, cvv FROM payments WHERE customer_id = 99812\")\n\
         psycopg2.OperationalError: connection to server at \"pg-prod-7.int.acme.corp\" (10.20.3.44), port 5432 failed: \
         FATAL:  password authentication failed for user \"billing_svc\"\n",
    );
    check(
        &out,
        &[
            "psycopg2.OperationalError",
            "password authentication failed for user",
            "…/repo.py\", line 88, in fetch",
            "SELECT card_number, cvv FROM payments WHERE customer_id = ?",
            "port 5432",
        ],
        &["pg-prod-7", "10.20.3.44", "billing_svc", "/srv/app/billing", "99812"],
    );
    let out = failed(
        "asyncpg.exceptions.InvalidPasswordError: password authentication failed for user \"ledger_rw\"\n\
         OSError: Multiple exceptions: [Errno 111] Connect call failed ('10.1.8.20', 5432), \
         [Errno 99] Cannot assign requested address\n",
    );
    check(
        &out,
        &["asyncpg.exceptions.InvalidPasswordError", "Connect call failed", "5432"],
        &["ledger_rw", "10.1.8.20"],
    );
}

#[test]
fn jdbc_and_hibernate() {
    let out = failed(
        "org.hibernate.exception.ConstraintViolationException: could not execute statement \
         [insert into payments (card_last4, customer_id, note) values ('4242', 99812, 'vip')]\n\
         \tat org.hibernate.exception.internal.SQLStateConversionDelegate.convert(SQLStateConversionDelegate.java:112)\n\
         Caused by: org.postgresql.util.PSQLException: Connection to pg-billing.db.internal:5432 refused.\n\
         \tat org.postgresql.core.v3.ConnectionFactoryImpl.openConnectionImpl(ConnectionFactoryImpl.java:319)\n\
         url: jdbc:postgresql://pg-billing:5432/billing?user=svc_reader&ssl=true\n",
    );
    check(
        &out,
        &[
            "ConstraintViolationException",
            "insert into payments (card_last4, customer_id, note) values (?, ?, ?)",
            "SQLStateConversionDelegate.java:112",
            "PSQLException: Connection to",
            "refused",
        ],
        &["4242", "99812", "'vip'", "pg-billing", "svc_reader"],
    );
}

#[test]
fn mysql() {
    let out = failed(
        "ERROR 1045 (28000): Access denied for user 'root'@'172.18.0.5' (using password: YES)\n\
         ERROR 1062 (23000) at line 12: Duplicate entry 'ann@acme-mail.io' for key 'users.email' \
         in statement: UPDATE users SET email = 'ann@acme-mail.io' WHERE id = 7\n",
    );
    check(
        &out,
        &[
            "ERROR 1045 (28000): Access denied for user",
            "(using password: YES)",
            "UPDATE users SET email = ? WHERE id = ?",
            "at line 12",
        ],
        &["'root'", "172.18.0.5", "WHERE id = 7", "= 'ann@"],
    );
}

#[test]
fn go_database_sql_and_a_go_panic() {
    let out = failed(
        "2026/12/01 10:00:00 pq: password authentication failed for user \"orders\"\n\
         dial tcp 10.0.3.7:5432: connect: connection refused\n\
         panic: runtime error: invalid memory address or nil pointer dereference\n\
         goroutine 1 [running]:\nmain.fetch(...)\n\t/home/runner/work/orders/internal/db/db.go:42 +0x1d\n",
    );
    check(
        &out,
        &[
            "pq: password authentication failed for user",
            "dial tcp",
            "connect: connection refused",
            "nil pointer dereference",
            "…/db.go:42 +0x1d",
        ],
        &["\"orders\"", "10.0.3.7", "/home/runner/work/orders"],
    );
}

#[test]
fn node_pg() {
    let out = failed(
        "error: password authentication failed for user \"app_user\"\n    at Parser.parseErrorMessage \
         (/srv/api/node_modules/pg-protocol/dist/parser.js:287:98)\n\
         Error: connect ECONNREFUSED 192.168.10.4:5432\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)\n",
    );
    check(
        &out,
        &["password authentication failed for user", "…/parser.js:287:98", "connect ECONNREFUSED", "node:net:1555:16"],
        &["app_user", "192.168.10.4", "/srv/api"],
    );
}

#[test]
fn curl_and_requests() {
    let out = failed(
        "curl: (7) Failed to connect to billing.svc.cluster.local port 8443 after 3 ms: Couldn't connect to server\n\
         curl: (6) Could not resolve host: ledger.corp\n",
    );
    check(
        &out,
        &["curl: (7) Failed to connect to", "port 8443", "curl: (6) Could not resolve host:"],
        &["billing.svc", "ledger.corp"],
    );
    let out = failed(
        "requests.exceptions.ConnectionError: HTTPConnectionPool(host='10.42.0.17', port=8080): Max retries exceeded \
         with url: /api/v1/charge (Caused by NewConnectionError('<urllib3.connection.HTTPConnection object at \
         0x7f>: Failed to establish a new connection: [Errno 111] Connection refused'))\n",
    );
    check(
        &out,
        &["requests.exceptions.ConnectionError", "port=8080", "url: /api/v1/charge", "Connection refused"],
        &["10.42.0.17"],
    );
}

#[test]
fn kubernetes_api() {
    let out = failed(
        "Error from server (Forbidden): pods is forbidden: User \"system:serviceaccount:billing:deployer\" cannot list \
         resource \"pods\" in API group \"\" in the namespace \"billing\"\n\
         Unable to connect to the server: dial tcp 10.96.0.1:443: i/o timeout\n",
    );
    check(
        &out,
        &["Error from server (Forbidden): pods is forbidden", "cannot list resource \"pods\"", "i/o timeout"],
        &["system:serviceaccount:billing:deployer", "10.96.0.1"],
    );
}

#[test]
fn python_and_java_stack_traces() {
    let out = failed(
        "Traceback (most recent call last):\n  File \"/opt/acme/ledger/app/main.py\", line 12, in <module>\n    run()\n  \
         File \"/opt/acme/ledger/app/jobs.py\", line 57, in run\n    open(\"/var/lib/ledger/state.json\")\n\
         FileNotFoundError: [Errno 2] No such file or directory: '/var/lib/ledger/state.json'\n",
    );
    check(
        &out,
        &[
            "…/main.py\", line 12, in <module>",
            "…/jobs.py\", line 57, in run",
            "FileNotFoundError: [Errno 2]",
            "…/state.json",
        ],
        &["/opt/acme", "/var/lib/ledger"],
    );
    let out = failed(
        "Exception in thread \"main\" java.io.FileNotFoundException: /srv/ledger/conf/app.yml (No such file or directory)\n\
         \tat java.base/java.io.FileInputStream.open0(Native Method)\n\tat com.acme.ledger.Config.load(Config.java:41)\n",
    );
    check(
        &out,
        &[
            "java.io.FileNotFoundException: …/app.yml (No such file or directory)",
            "com.acme.ledger.Config.load(Config.java:41)",
        ],
        &["/srv/ledger"],
    );
}

#[test]
fn successful_output_is_not_scrubbed() {
    // The same lines in a result that did not fail: nothing here is a
    // secret, and a model reading a log or a query it asked for needs them.
    let text =
        "connected to pg-prod-7.int.acme.corp (10.20.3.44)\nSELECT * FROM t WHERE id = 7\n/srv/app/billing/repo.py\n";
    let out = common::sanitizer().sanitize(text.as_bytes(), &common::opts("db_query")).unwrap();
    assert_eq!(common::visible_text(&out, OutputFormat::Mcp), text);
}

#[test]
fn an_mcp_error_result_is_scrubbed_structured_content_too() {
    let input = serde_json::json!({
        "content": [{"type": "text", "text": "dial tcp 10.0.3.7:5432: connect: connection refused"}],
        "structuredContent": {"error": {"host": "db.internal", "query": "SELECT 1 FROM t WHERE id = 42"}},
        "isError": true
    });
    let mut o = common::opts("db");
    o.input = result_sanitizer_host::api::InputKind::Mcp;
    let out = common::sanitizer().sanitize(input.to_string().as_bytes(), &o).unwrap();
    let v = common::json(&out);
    common::assert_mcp_valid(&v);
    let s = v.to_string();
    check(&s, &["connect: connection refused", "WHERE id = ?"], &["10.0.3.7", "db.internal", "id = 42"]);
    assert_eq!(v["isError"], true);
}

#[test]
fn a_pack_names_its_internal_domains_and_opts_a_tool_in() {
    let rules = "internal_domains = ['*.int.acme.corp', '*.acme.dev']\nscrub_tools = ['deploy']\nreadable_roots = ['/srv/app']\n\n\
                 [pack]\nname = \"acme\"\nversion = \"1\"\ntenant = \"acme\"\n";
    let rf = RulesFile::parse("acme.toml", rules).unwrap();
    let wasm = pack_build::build(&rf, &rf.identity(None, None, None).unwrap()).unwrap();
    let s = common::sanitizer();
    let pack = s.load_pack_unverified(&wasm).unwrap();
    let text = "deployed to api.int.acme.corp and ci.acme.dev from /srv/app/release/v2.tar via github.com and /opt/cache/x.bin\n";
    let out = s.sanitize_with(&pack, text.as_bytes(), &common::opts("deploy")).unwrap();
    // (`.corp` is an internal suffix of the platform's own rule, which
    // finds it first; `.dev` is only this pack's.)
    assert_eq!(
        common::visible_text(&out, OutputFormat::Mcp),
        "deployed to [REDACTED:internal-host] and [REDACTED:internal-domain] from /srv/app/release/v2.tar via github.com \
         and …/x.bin\n"
    );
    // Another tool's successful result is left alone.
    let out = s.sanitize_with(&pack, text.as_bytes(), &common::opts("build")).unwrap();
    assert_eq!(common::visible_text(&out, OutputFormat::Mcp), text);
}

/// The issue's command, as a user runs it.
#[test]
fn the_cli_run_of_a_failing_query() {
    let script = r#"echo "psycopg2.OperationalError: connection to server at \"pg-prod-7.int.acme.corp\" (10.20.3.44), port 5432 failed: FATAL: password authentication failed for user \"billing_svc\"" >&2; echo "  File \"/srv/app/billing/repo.py\", line 88, in fetch" >&2; echo "    cur.execute(\"SELECT card_number, cvv FROM payments WHERE customer_id = 99812\")" >&2; exit 2"#;
    let o = Command::new(env!("CARGO_BIN_EXE_result-sanitizer"))
        .args(["run", "--tool", "db_query", "--", "sh", "-c", script])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let text = v["content"][0]["text"].as_str().unwrap();
    check(
        text,
        &[
            "exited with status 2",
            "psycopg2.OperationalError",
            "password authentication failed for user",
            "…/repo.py\", line 88",
            "WHERE customer_id = ?",
        ],
        &["pg-prod-7.int.acme.corp", "10.20.3.44", "billing_svc", "/srv/app/billing", "99812"],
    );
    assert_eq!(v["isError"], true);
}

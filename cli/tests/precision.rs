//! Precision on content nobody here wrote, and the ways to ask why:
//! real code lines that generic rules once redacted (tests/precision/),
//! secrets in the places real tools print them, the report and the inline
//! allow marker. Through the real CLI.

use std::path::PathBuf;
use std::process::{Command, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_result-sanitizer"))
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `redact` of `input` with `args`, through stdin.
fn redact(args: &[&str], input: &str) -> String {
    let mut child = bin().arg("redact").args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn real_code_lines_are_left_alone_as_code() {
    for name in ["code-lines.rs", "code-lines.py", "code-lines.js"] {
        let path = root().join("tests/precision").join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        // The file name says what it is.
        let o = bin().arg("redact").arg(&path).output().unwrap();
        assert!(o.status.success());
        let out = String::from_utf8(o.stdout).unwrap();
        let changed: Vec<&str> = out.lines().zip(text.lines()).filter(|(a, b)| a != b).map(|(a, _)| a).collect();
        assert!(changed.is_empty(), "{name}: {} lines changed, first: {}", changed.len(), changed[0]);
        // So does a content type, for stdin.
        let ct = result_sanitizer_rule_engine::content_type_for_path(name).unwrap();
        assert_eq!(redact(&["--content-type", ct], &text), text, "{name}");
        // As plain text only the value shapes hold: printed, not asserted.
        let plain = redact(&[], &text);
        let n = plain.lines().zip(text.lines()).filter(|(a, b)| a != b).count();
        eprintln!("{name}: {n} of {} lines changed when read as plain text", text.lines().count());
    }
}

#[test]
fn code_still_loses_secrets_in_its_string_literals() {
    let py = "import os\n\nDEBUG = False\nSECRET_KEY = 'django-insecure-&8l$#k(v)x!w^%3=q@z_u*n0c7e#r2$y!m+'\n\
              DATABASES = {'default': {'PASSWORD': 'Xk9#mQ2!vLp7qz'}}\nGITHUB = \"ghp_aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3\"\n\
              token = t.next()\n\n\ndef main():\n    from app import run\n    return run(token)\n";
    let out = redact(&["--content-type", "text/x-python"], py);
    for gone in ["django-insecure", "Xk9#mQ2", "ghp_aB3"] {
        assert!(!out.contains(gone), "a secret in a literal survived");
    }
    assert!(out.contains("token = t.next()"));
    // Code is sniffed too (no content type, a whole file's worth of lines).
    let o = bin()
        .args(["sanitize", "--tool", "read_file"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            std::io::Write::write_all(&mut c.stdin.take().unwrap(), py.as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    let msg: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let text = msg["content"][0]["text"].as_str().unwrap();
    assert_eq!(msg["_meta"]["result-sanitizer/record"]["class"], "code", "{msg}");
    assert!(text.contains("token = t.next()") && !text.contains("django-insecure"));
}

/// A random body of `n` characters of `alphabet` (a fresh value per run
/// and context, so no test passes on a remembered string).
fn body(seed: &mut u64, n: usize, alphabet: &str) -> String {
    let a = alphabet.as_bytes();
    (0..n)
        .map(|_| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            a[(*seed % a.len() as u64) as usize] as char
        })
        .collect()
}

#[test]
fn secrets_where_real_tools_print_them() {
    const AN: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let telegram = format!("{}:AA{}", body(&mut seed, 10, "0123456789"), body(&mut seed, 33, AN));
    let slack = body(&mut seed, 24, AN);
    let discord = format!("MT{}.{}.{}", body(&mut seed, 22, AN), body(&mut seed, 6, AN), body(&mut seed, 30, AN));
    let basic = body(&mut seed, 24, AN);
    let django = format!("django-insecure-{}!@#$%^&*(-_=+){}", body(&mut seed, 20, AN), body(&mut seed, 10, AN));
    let heroku = format!(
        "{}-{}-{}-{}-{}",
        body(&mut seed, 8, "0123456789abcdef"),
        body(&mut seed, 4, "0123456789abcdef"),
        body(&mut seed, 4, "0123456789abcdef"),
        body(&mut seed, 4, "0123456789abcdef"),
        body(&mut seed, 12, "0123456789abcdef")
    );
    let cases = [
        (format!("INFO:httpx:HTTP Request: POST https://api.telegram.org/bot{telegram}/getUpdates \"HTTP/1.1 200 OK\"\n"), &telegram),
        (format!("* Connected to hooks.slack.com (3.1.2.3) port 443\n> POST /services/T0123ABCD/B0456EFGH/{slack} HTTP/1.1\n> Host: hooks.slack.com\n> User-Agent: curl/8.5.0\n"), &slack),
        (format!("Traceback (most recent call last):\n  File \"/app/main.py\", line 40, in <module>\n    bot.run('{discord}')\ndiscord.errors.LoginFailure: Improper token has been passed.\n"), &discord),
        (format!("send: b'GET /v1/me HTTP/1.1\\r\\nHost: api.acme.io\\r\\nAuthorization: Basic {basic}\\r\\n\\r\\n'\n"), &basic),
        (format!("$ python manage.py diffsettings\nSECRET_KEY = '{django}'\n"), &django),
        (format!("$ heroku config:get HEROKU_API_KEY\n{heroku}\n"), &heroku),
    ];
    for (i, (text, secret)) in cases.iter().enumerate() {
        let out = redact(&[], text);
        assert!(!out.contains(secret.as_str()), "context {i}: the secret survived");
        assert!(out.contains("[REDACTED:"), "context {i}");
    }
}

#[test]
fn placeholders_and_masks_are_not_secrets() {
    for text in [
        "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n",
        "STRIPE_KEY=sk_test_xxxxxxxxxxxxxxxxxxxxxxxx\n",
        "HF_TOKEN=hf_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX\n",
        "SLACK_BOT_TOKEN=xoxb-your-bot-token\n",
        "SECRET=%SECRET%\n",
        "      + password = (sensitive value)\n",
        "DB_PASSWORD=\nAPI_KEY=\n",
    ] {
        assert_eq!(redact(&[], text), text);
    }
}

#[test]
fn the_report_says_where_and_never_what() {
    let dir = std::env::temp_dir().join(format!("rs-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("env.txt");
    let report = dir.join("report.jsonl");
    let text = "HOME=/home/ci\nDB_PASSWORD=Xk9#mQ2!vLp7\n  é token: ghp_aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3aB3\n";
    std::fs::write(&input, text).unwrap();
    let o = bin().arg("redact").arg("--report").arg(&report).arg(&input).output().unwrap();
    assert!(o.status.success());
    let lines: Vec<serde_json::Value> =
        std::fs::read_to_string(&report).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let ids: Vec<&str> = lines.iter().filter_map(|l| l["rule_id"].as_str()).collect();
    assert_eq!(ids, ["home-path-unix", "env-secret-assignment", "github-token"]);
    for l in &lines {
        // Offsets and lengths are bytes of the input; line and column
        // (bytes from the line start, from 1) point at the same place.
        let (off, len) = (l["offset"].as_u64().unwrap() as usize, l["length"].as_u64().unwrap() as usize);
        let line_no = l["line"].as_u64().unwrap() as usize;
        let col = l["column"].as_u64().unwrap() as usize;
        let line_start: usize = text.split_inclusive('\n').take(line_no - 1).map(str::len).sum();
        assert_eq!(line_start + col - 1, off);
        let value = &text[off..off + len];
        let raw = std::fs::read_to_string(&report).unwrap();
        assert!(!raw.contains(value), "the report holds a value");
        assert_eq!(l["hash"].as_str().unwrap().len(), 16);
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_inline_marker_allows_a_line_unless_the_content_is_untrusted() {
    let text = "API_KEY=q8vR2mK7tLw3Yx9bN1cF # result-sanitizer:allow\nDB_PASSWORD=Xk9#mQ2!vLp7\n";
    let out = redact(&[], text);
    assert!(out.starts_with("API_KEY=q8vR2mK7tLw3Yx9bN1cF # result-sanitizer:allow\n"));
    assert!(!out.contains("Xk9#mQ2"), "the marker allows its own line only");
    let strict = redact(&["--untrusted"], text);
    assert!(!strict.contains("q8vR2mK7tLw3Yx9bN1cF"));
}

#[test]
fn the_record_says_where_on_request() {
    let text = "HOME=/srv\nDB_PASSWORD=Xk9#mQ2!vLp7\n  again: DB_PASSWORD=Xk9#mQ2!vLp7\n";
    let run = |args: &[&str]| -> serde_json::Value {
        let mut c = bin().arg("sanitize").args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        std::io::Write::write_all(&mut c.stdin.take().unwrap(), text.as_bytes()).unwrap();
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success());
        let msg: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        msg["_meta"]["result-sanitizer/record"].clone()
    };
    assert_eq!(run(&[])["sites"], serde_json::json!([]), "no sites unless asked");
    let rec = run(&["--report"]);
    let sites = rec["sites"].as_array().unwrap();
    assert_eq!(sites.len(), 2);
    for s in sites {
        let (a, b) = (s["start_byte"].as_u64().unwrap() as usize, s["end_byte"].as_u64().unwrap() as usize);
        assert_eq!(&text[a..b].len(), &12);
        let line_start: usize =
            text.split_inclusive('\n').take(s["line"].as_u64().unwrap() as usize - 1).map(str::len).sum();
        assert_eq!(line_start + s["column"].as_u64().unwrap() as usize - 1, a);
        assert!(!rec.to_string().contains(&text[a..b]), "the record holds a value");
    }
    // One value, one hash.
    assert_eq!(sites[0]["hash"], sites[1]["hash"]);
    assert_eq!((sites[0]["line"].as_u64(), sites[1]["line"].as_u64()), (Some(2), Some(3)));
}

/// Shapes met in public repositories' agent outputs (session 33), written
/// here: a Ruby test read without its name keeps its fixtures, and a
/// fixture's other uses; a `.env` template's placeholders, an elided value
/// and an `echo ... >> file` stay; a generic value made of letters alone is
/// not sought elsewhere. The same secrets in a real `.env` still go.
#[test]
fn agent_reads_keep_fixtures_placeholders_and_elided_values() {
    let ruby = "# frozen_string_literal: true\n\nrequire \"test_helper\"\n\n\
                class CallbacksTest < ActionDispatch::IntegrationTest\n  PROFILE = {\n    \"uid\" => '4321',\n    \
                \"site\" => 'http://blog.vintracorp.com.br'\n  }\n\n  setup do\n    OmniAuth.config.mock_auth[:github] = {\n      \
                \"credentials\" => {\"token\" => 'vintracorp'},\n    }\n  end\n\n  test \"signs in\" do\n    \
                get \"/users/auth/github/callback\"\n    assert_equal \"vintracorp\", session[\"token\"]\n  end\nend\n";
    // `sed -n` piped to `redact --sniff`, and a `cat -n` listing.
    assert_eq!(redact(&["--sniff"], ruby), ruby);
    let listing: String = ruby.lines().enumerate().map(|(i, l)| format!("{:>6}\t{l}\n", i + 1)).collect();
    assert_eq!(redact(&[], &listing), listing);
    // A Python module that opens with comments and a docstring is code.
    let py = "#!/usr/bin/env python3\n# Copyright the authors.\n# Licensed as the project.\n\"\"\"Connection settings.\n\n\
              The defaults are for a local database started by the\ndeveloper's compose file.\n\"\"\"\n\nimport os\n\n\n\
              def settings(env=os.environ):\n    \"\"\"The settings, from ``env``.\"\"\"\n    if \"DB_URL\" in env:\n        \
              return {\"url\": env[\"DB_URL\"]}\n    return {\n        \"host\": \"localhost\",\n    }\n";
    let mut child =
        bin().args(["sanitize", "--tool", "read_file"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), py.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["_meta"]["result-sanitizer/record"]["class"], "code");
    // grep over a `.env` template; the same line from a real `.env` goes.
    let template = "./.env.example:3:SESSION_SECRET=sessionsecret\n./.env.example:4:MAIL_PASSWORD=mysecurepassword\n";
    assert_eq!(redact(&[], template), template);
    let real = redact(&[], "./.env:3:SESSION_SECRET=sessionsecret\n");
    assert!(!real.contains("sessionsecret"));
    let readme = "# echo \"export SESSION_SECRET=99ae8af...snip...ec0f262ac\" >> ~/.bashrc\n```\n";
    assert_eq!(redact(&[], readme), readme);
    let log = "token: vintracorp\nurl: http://blog.vintracorp.com.br\n";
    assert_eq!(redact(&[], log), "token: [REDACTED:env-secret-assignment]\nurl: http://blog.vintracorp.com.br\n");
}

/// The other side of telling code from text (session 33's review): a
/// shell's rc file and a printed object are not code, so an unquoted or
/// weak secret in them still goes; a password found at its key still goes
/// where a trace prints it again; dots at a value's end elide nothing.
#[test]
fn shell_files_printed_objects_and_repeated_passwords_still_lose_their_secrets() {
    let bashrc = "# ~/.bashrc: executed by bash(1) for non-login shells.\n\n# If not running interactively, don't do anything\n\
                  case $- in\n    *i*) ;;\n      *) return;;\nesac\n\nHISTCONTROL=ignoreboth\nshopt -s histappend\n\n\
                  if [ -f ~/.bash_aliases ]; then\n    . ~/.bash_aliases\nfi\n\nalias ll='ls -alF'\nalias la='ls -A'\n\n\
                  export PATH=\"$HOME/bin:$PATH\"\nexport DB_PASSWORD=Tr0ub4dor&3x\nexport API_TOKEN=Xk9mQ2vLp7Rt4wZsB8nC3dF6\n";
    let printed = "{\n  host: 'db.internal',\n  port: 5432,\n  user: 'app',\n  password: 'Tr0ub4dor&3x',\n  \
                   pool: { min: 1, max: 10 },\n  ssl: false\n}\n";
    // Configuration written as calls: PowerShell's `param(`, CMake's `set(`.
    let ps1 = "param(\n    [string]$Environment = \"staging\",\n    [string]$Region = \"eu-west-1\"\n)\n\n\
               function Deploy-App {\n    Write-Host \"Deploying\"\n}\n\nif ($Environment -eq \"prod\") {\n    \
               $password = \"P4ssw0rd2023\"\n}\n$env:DB_PASSWORD = \"s3cr3tpass\"\nDeploy-App\n";
    for (text, gone) in [
        (bashrc, &["Tr0ub4dor", "Xk9mQ2vLp7"][..]),
        (printed, &["Tr0ub4dor"][..]),
        (ps1, &["P4ssw0rd2023", "s3cr3tpass"][..]),
    ] {
        let listing: String = text.lines().enumerate().map(|(i, l)| format!("{:>6}\t{l}\n", i + 1)).collect();
        for out in [redact(&["--sniff"], text), redact(&[], &listing)] {
            assert!(gone.iter().all(|g| !out.contains(g)), "a secret survived in a shell file or a printed object");
        }
    }
    let trace = "+ export DB_PASSWORD=k8Fz2Lq9wX\n+ psql --host db --db-pass k8Fz2Lq9wX -c 'select 1'\n";
    assert!(!redact(&[], trace).contains("k8Fz2Lq9wX"));
    assert!(!redact(&[], "{\"password\": \"Tr0ub4dor&3x...\"}\n").contains("Tr0ub4dor"));
}

/// What cloud APIs return (session 34, from the AWS CLI's own examples):
/// the handles an agent passes back to the next call stay (a page cursor,
/// a lock token, a secret's ARN, a format string's field in a URL), while
/// the credentials a call returns go, wherever their name is not the key
/// (a SecureString's `Value`, a container's `{"name": ..., "value": ...}`,
/// a secret's `SecretString`, a sensitive Terraform output).
#[test]
fn cloud_api_outputs_keep_their_handles_and_lose_their_credentials() {
    const AN: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let handles = "{\n    \"ARN\": \"arn:aws:secretsmanager:us-west-2:123456789012:secret:prod/db-AbCdEf\",\n    \
                   \"Name\": \"prod/db\",\n    \"NextToken\": \"eyJOZXh0VG9rZW4iOiBudWxsLCAiYm90b190cnVuY2F0ZV9hbW91bnQiOiAyfQ==\"\n}\n\
                   {\n    \"Summary\": {\n        \"Name\": \"blocklist\",\n        \
                   \"LockToken\": \"0bd4d26d-1e2f-4a4c-9d4a-0c2b7d8f4a21\"\n    },\n    \
                   \"nextPageToken\": \"CgwI8rKxvwYQgJ3LqQM\"\n}\n";
    assert_eq!(redact(&[], handles), handles);
    let code = "    PIP_INDEX_URL_FMT = '{scheme}://aws:{auth_token}@{netloc}{path}simple/'\n\
                \x20   DEFAULT_NETRC_FMT = u'machine {hostname} login token password {auth_token}'\n";
    assert_eq!(redact(&[], code), code);
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let secrets: Vec<String> = (0..11).map(|_| body(&mut seed, 24, AN)).collect();
    let [param, env, pass, tf, rails, azure, page, kite, odbc, cm, fb] = &secrets[..] else { unreachable!() };
    let outputs = [
        format!("{{\n    \"Parameter\": {{\n        \"Name\": \"/prod/app/db\",\n        \"Type\": \"SecureString\",\n        \"Value\": \"{param}\",\n        \"Version\": 3\n    }}\n}}\n"),
        format!("Parameter:\n  Name: /prod/app/db\n  Type: SecureString\n  Value: {param}\n"),
        format!("{{\"containerDefinitions\": [{{\"environment\": [{{\"name\": \"DB_HOST\", \"value\": \"db\"}}, {{\"name\": \"STRIPE_SECRET\", \"value\": \"{env}\"}}]}}]}}\n"),
        format!("{{\n    \"Name\": \"prod/db\",\n    \"SecretString\": \"{{\\\"username\\\":\\\"app\\\",\\\"token\\\":\\\"{pass}\\\"}}\"\n}}\n"),
        format!("{{\n  \"db_password\": {{\n    \"sensitive\": true,\n    \"type\": \"string\",\n    \"value\": \"{tf}\"\n  }}\n}}\n"),
        format!("=== app Config Vars\nRACK_ENV:         production\nSECRET_KEY_BASE:  {rails}\n"),
        format!("[\n  {{\n    \"name\": \"DB_PASSWORD\",\n    \"slotSetting\": false,\n    \"value\": \"{azure}\"\n  }}\n]\n"),
        // Names that only end like a handle's, a query after an ARN, a
        // password an ODBC string quotes in braces (the review of the first
        // version of this change).
        format!("FACEBOOK_PAGE_TOKEN={page}\n"),
        format!("GET /connect/session?api_key=k&request_token={kite}&checksum=c\nhttps://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-east-1:123456789012:t&Token={kite}\n"),
        format!("Driver={{ODBC Driver 18 for SQL Server}};Server=db;UID=app;PWD={{{odbc}}};\n"),
        // An ARN ends where a JSON string's escaped line ends (the second
        // review); a bare `page_token` is a Facebook Page's credential.
        format!("{{\"data\": {{\"app.env\": \"ROLE_ARN=arn:aws:iam::123456789012:role/app\\nDB_PASSWORD={cm}\\n\"}}}}\n"),
        format!("facebook:\n  page_id: 1234567890\n  page_token: {fb}\n"),
    ];
    for (i, text) in outputs.iter().enumerate() {
        let out = redact(&[], text);
        assert!(secrets.iter().all(|s| !out.contains(s.as_str())), "output {i}: a credential survived");
        assert!(out.contains("[REDACTED:"), "output {i}");
    }
}

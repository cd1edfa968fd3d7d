//! The platform's floor: a tenant pack adds to the platform's rules and
//! cannot weaken them, whatever it is (no defaults, an allow-all regex,
//! code only); only a platform-signed grant turns a platform rule off,
//! exactly that rule, and the record says so. Real packs built by the pack
//! builder, signed, loaded by the host; the CLI end to end.

mod common;

use result_sanitizer_host::api::OutputFormat;
use result_sanitizer_host::signing::{self, SecretKey, TrustPolicy};
use result_sanitizer_host::{LoadedPack, Sanitizer};
use result_sanitizer_pack_build::{self as pack_build, RulesFile};

/// Secrets of three kinds the default pack finds, built at run time.
fn secrets() -> (String, String, String) {
    let aws = format!("AKIA{}", "Z7QX4MBN2KT5WYHR");
    let password = format!("DB_PASSWORD={}", "Xk9mQ2vLp7zzR4");
    let key = format!(
        "-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEA7Yf8q2xkLmN3pQ9rT5vW1zA4bC6dE8fG0hJ2kL4mN6pQ8rS0tU2vW4xY6zA8bC0d"
    );
    (aws, password, key)
}

const TENANT_RULES: &str = r#"
[pack]
name = "acme"
version = "1.0.0"
tenant = "acme"

[[rules]]
id = "acme-token"
regex = '\b(acme_[a-f0-9]{32})\b'
keywords = ["acme_"]
secret_group = 1
examples = ["t=acme_0123456789abcdef0123456789abcdef"]
counter_examples = ["acme_x"]
"#;

/// A tenant pack built from `extra` and the acme rule, without the
/// defaults (with `rule` false, the acme identity only).
fn tenant_pack(extra: &str, rule: bool) -> Vec<u8> {
    let rules = if rule { TENANT_RULES } else { &TENANT_RULES[..TENANT_RULES.find("[[rules]]").unwrap()] };
    let rf = RulesFile::parse("acme.toml", &format!("{extra}\n{rules}")).unwrap();
    let id = rf.identity(None, None, None).unwrap();
    pack_build::build(&rf, &id).unwrap()
}

fn load(s: &Sanitizer, wasm: &[u8], key: &SecretKey, may_relax: &[String]) -> LoadedPack {
    let signed = signing::sign(wasm, key, None, may_relax).unwrap();
    let policy = TrustPolicy { keys: vec![key.public()], allow_unsigned: false };
    s.load_pack(&signed, &policy, Some("acme"), None).unwrap()
}

fn input() -> String {
    let (aws, password, key) = secrets();
    format!("aws {aws}\n{password}\n{key}\ntoken acme_0123456789abcdef0123456789abcdef\n")
}

fn text(out: &result_sanitizer_host::api::Sanitized) -> String {
    common::visible_text(out, OutputFormat::Mcp)
}

fn assert_floor_holds(text: &str) {
    let (aws, password, key) = secrets();
    assert!(!text.contains(&aws), "AWS key id passed: {text}");
    assert!(!text.contains(&password[12..]), "password passed: {text}");
    assert!(!text.contains(&key[32..60]), "private key passed: {text}");
    assert!(text.contains("[REDACTED:aws-access-key-id]") && text.contains("[REDACTED:private-key-block]"), "{text}");
}

#[test]
fn no_tenant_pack_weakens_the_platform_floor() {
    let s = common::sanitizer();
    let key = SecretKey::generate();
    // (The pack builder checks a rule's examples under its file's
    // allowlist, so the allow-all pack has no rule of its own.)
    let packs = [
        ("no defaults", tenant_pack("", true)),
        ("an allow-all regex", tenant_pack("[allowlist]\nregexes = ['.*']\nstopwords = ['a', 'e']\n", false)),
        ("lenient everywhere", tenant_pack("lenient_tools = ['x']\n[generic]\nallow_regexes = ['.*']\n", true)),
        ("a relax without a grant", tenant_pack("relax = ['aws-access-key-id', 'private-key-block']\n", true)),
    ];
    for (what, wasm) in packs {
        let pack = load(s, &wasm, &key, &[]);
        let out = s.sanitize_with(&pack, input().as_bytes(), &common::opts("x")).unwrap();
        let t = text(&out);
        assert_floor_holds(&t);
        assert_eq!((out.record.pack_name.as_str(), out.record.platform_name.as_str()), ("acme", "default"), "{what}");
        assert!(out.record.relaxed.is_empty(), "{what}");
        common::assert_record_valid(common::message_record(&common::json(&out)));
        assert_eq!(t.contains("[REDACTED:acme-token]"), what != "an allow-all regex", "{what}: {t}");
    }
}

#[test]
fn a_pack_with_code_only_still_gets_the_floor() {
    let core = common::pack_template_core();
    let s = common::sanitizer();
    let wasm = s.wrap_pack_core(&core).unwrap();
    let pack = load(s, &wasm, &SecretKey::generate(), &[]);
    let out = s.sanitize_with(&pack, input().as_bytes(), &common::opts("x")).unwrap();
    assert_floor_holds(&text(&out));
    assert_eq!(out.record.pack_name, "acme-code");
}

#[test]
fn a_platform_grant_relaxes_exactly_the_named_rule_and_the_record_says_so() {
    let s = common::sanitizer();
    let key = SecretKey::generate();
    let wasm = tenant_pack("relax = ['aws-access-key-id', 'private-key-block']\n", true);
    // Granted one of the two it asks for.
    let pack = load(s, &wasm, &key, &["aws-access-key-id".into()]);
    assert_eq!(pack.may_relax(), ["aws-access-key-id"]);
    let out = s.sanitize_with(&pack, input().as_bytes(), &common::opts("x")).unwrap();
    let t = text(&out);
    let (aws, password, _) = secrets();
    assert!(t.contains(&format!("aws {aws}\n")), "the relaxed rule is off: {t}");
    assert!(
        !t.contains(&password) && t.contains("[REDACTED:private-key-block]") && t.contains("[REDACTED:acme-token]"),
        "{t}"
    );
    assert_eq!(out.record.relaxed, ["aws-access-key-id"]);
    common::assert_record_valid(common::message_record(&common::json(&out)));
    // A grant the pack does not ask for changes nothing.
    let pack = load(s, &tenant_pack("", true), &key, &["aws-access-key-id".into()]);
    let out = s.sanitize_with(&pack, input().as_bytes(), &common::opts("x")).unwrap();
    assert_floor_holds(&text(&out));
    assert!(out.record.relaxed.is_empty());
}

#[test]
fn a_platform_pack_of_its_own_is_the_floor() {
    // The operator's platform pack: one rule of its own and no defaults.
    let mut s = Sanitizer::new(result_sanitizer_host::Limits::default()).unwrap();
    let platform_rules = TENANT_RULES.replace("acme", "plat").replace("name = \"plat\"", "name = \"platform\"");
    let rf = RulesFile::parse("platform.toml", &platform_rules).unwrap();
    let platform = s.load_pack_unverified(&pack_build::build(&rf, &rf.identity(None, None, None).unwrap()).unwrap());
    s.set_platform_pack(std::sync::Arc::new(platform.unwrap()));
    let pack = load(&s, &tenant_pack("[allowlist]\nregexes = ['.*']\n", false), &SecretKey::generate(), &[]);
    let input = "plat_0123456789abcdef0123456789abcdef acme_0123456789abcdef0123456789abcdef";
    let out = s.sanitize_with(&pack, input.as_bytes(), &common::opts("x")).unwrap();
    assert_eq!(text(&out), "[REDACTED:plat-token] acme_0123456789abcdef0123456789abcdef");
    assert_eq!(out.record.pack_name, "acme");
    assert_eq!(out.record.platform_name, "platform");
}

/// `pack sign --may-relax`, `pack verify`, `sanitize --platform-pack`, as a
/// user runs them.
#[test]
fn the_cli_signs_a_grant_and_serves_a_platform_pack() {
    let dir = common::tmpdir("platform-cli");
    let p = |f: &str| dir.join(f).display().to_string();
    let run = |args: &[&str], stdin: &str| -> String {
        let o = common::cli_with_stdin(args, stdin.as_bytes());
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    std::fs::write(p("acme.toml"), format!("relax = ['aws-access-key-id']\n{TENANT_RULES}")).unwrap();
    let (key, acme, platform) = (p("platform"), p("acme.wasm"), p("platform.wasm"));
    run(&["keygen", "-o", &key], "");
    run(&["pack", "build", &p("acme.toml"), "--no-defaults", "-o", &acme], "");
    run(&["pack", "sign", &acme, "--key", &key, "--may-relax", "aws-access-key-id"], "");
    let trusted = p("platform.pub");
    let v = run(&["pack", "verify", &acme, "--trusted-key", &trusted], "");
    assert!(v.contains("may relax aws-access-key-id"), "{v}");
    let (aws, password, _) = secrets();
    let line = format!("{aws} {password}\n");
    let tenant = ["sanitize", "--tool", "x", "--pack", &acme, "--trusted-key", &trusted, "--tenant", "acme"];
    let out: serde_json::Value = serde_json::from_str(&run(&tenant, &line)).unwrap();
    assert_eq!(out["content"][0]["text"], format!("{aws} DB_PASSWORD=[REDACTED:env-secret-assignment]\n"));
    assert_eq!(out["_meta"]["result-sanitizer/record"]["relaxed"], serde_json::json!(["aws-access-key-id"]));
    // Over a platform pack of the acme rule alone no default rule is in
    // the floor: both pass, as the operator chose.
    let platform_rules = TENANT_RULES.replace("name = \"acme\"", "name = \"platform\"");
    std::fs::write(p("platform.toml"), platform_rules).unwrap();
    run(&["pack", "build", &p("platform.toml"), "--no-defaults", "-o", &platform], "");
    let mut args = tenant.to_vec();
    args.extend(["--platform-pack", &platform]);
    let out: serde_json::Value = serde_json::from_str(&run(&args, &line)).unwrap();
    assert_eq!(out["content"][0]["text"], line);
    assert_eq!(out["_meta"]["result-sanitizer/record"]["platform_name"], "platform");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `pack build` builds a pack scoped to one tenant on the platform's floor
/// (its own rules) and a pack for any tenant, which can be a floor, over the
/// default rules. Under the default floor a tenant's pack with the defaults
/// copied in finds exactly what the same pack on the floor finds: the same
/// text and record on every default rule's examples and counter-examples,
/// each alone and all joined, under a shell tool and a file read.
#[test]
fn a_tenant_pack_on_the_floor_finds_what_one_with_the_defaults_copied_finds() {
    let dir = common::tmpdir("platform-floor");
    let p = |f: &str| dir.join(f).display().to_string();
    let file = format!("[allowlist]\nstopwords = ['zzqplaceholder']\n{TENANT_RULES}");
    std::fs::write(p("acme.toml"), &file).unwrap();
    let rule_ids = |args: &[&str]| -> usize {
        let built =
            common::cli_with_stdin(&[&["pack", "build", &p("acme.toml"), "-o", &p("x.wasm")], args].concat(), b"");
        assert!(built.status.success(), "{args:?}: {}", String::from_utf8_lossy(&built.stderr));
        let o = common::cli_with_stdin(&["pack", "inspect", &p("x.wasm")], b"");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["rule_ids"].as_array().unwrap().len()
    };
    let defaults = RulesFile::defaults().unwrap();
    let n = defaults.rules.len();
    assert_eq!(rule_ids(&[]), 1, "scoped to acme: its own rule");
    assert_eq!(rule_ids(&["--tenant", "*"]), n + 1, "for any tenant: over the defaults");
    assert_eq!(rule_ids(&["--with-defaults"]), n + 1);
    assert_eq!(rule_ids(&["--tenant", "*", "--no-defaults"]), 1);
    let _ = std::fs::remove_dir_all(&dir);

    let s = common::sanitizer();
    let key = SecretKey::generate();
    let build = |rf: RulesFile| pack_build::build(&rf, &rf.identity(None, None, None).unwrap()).unwrap();
    let on_floor = build(RulesFile::parse("acme.toml", &file).unwrap().on_floor().unwrap());
    let copied = build(RulesFile::parse("acme.toml", &file).unwrap().over_defaults().unwrap());
    assert!(on_floor.len() * 20 < copied.len(), "{} against {} bytes", on_floor.len(), copied.len());
    let (on_floor, copied) = (load(s, &on_floor, &key, &[]), load(s, &copied, &key, &[]));
    let mut texts: Vec<String> = defaults
        .rules
        .iter()
        .flat_map(|r| {
            let e = r.get_ref();
            e.examples.iter().chain(&e.counter_examples).cloned().collect::<Vec<_>>()
        })
        .collect();
    texts.extend([input(), "zzqplaceholder acme_0123456789abcdef0123456789abcdef".into()]);
    texts.push(texts.join("\n"));
    let mut redacted = 0;
    for (i, t) in texts.iter().enumerate() {
        for tool in ["x", "read_file"] {
            let o = common::opts(tool);
            let a = s.sanitize_with(&on_floor, t.as_bytes(), &o).unwrap();
            let b = s.sanitize_with(&copied, t.as_bytes(), &o).unwrap();
            // Text `i` of the list, not the text: the examples are secrets' shapes.
            assert!(common::json(&a) == common::json(&b), "text {i} of {}, tool {tool}: outputs differ", texts.len());
            redacted += usize::from(text(&a).contains("[REDACTED:"));
        }
    }
    // Most examples are redacted: the floor ran.
    assert!(redacted > texts.len(), "{redacted} of {} redacted", 2 * texts.len());
}

//! Outputs that interleave named files (issue #37): grep hits, diffs,
//! `cat -n` listings, diagnostics. Code in them keeps every byte that is
//! not a secret; a secret in them (a key added to a `.env` in a diff, a
//! token in a grep hit of a YAML file, a `.netrc` password in a listing, a
//! private key block in `git show`) is still redacted. Through the real
//! CLI's `run`, as an agent's shell tool sends them. The planted values
//! are drawn at run time.

mod common;

use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_result-sanitizer"))
}

/// Random text over `alphabet`, from a seed (xorshift).
fn draw(seed: &mut u64, alphabet: &str, n: usize) -> String {
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

const AN: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// What `run` prints for a command that printed `output`: the message's
/// text and its record.
fn run(output: &str) -> (String, serde_json::Value) {
    let dir = std::env::temp_dir().join(format!("rs-shapes-{}-{}", std::process::id(), output.len()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("out.txt");
    std::fs::write(&file, output).unwrap();
    let o =
        bin().args(["run", "--format", "openai", "--max-tokens", "100000", "--", "cat"]).arg(&file).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    (v["message"]["content"].as_str().unwrap().to_string(), v["record"].clone())
}

fn regions(record: &serde_json::Value) -> Vec<(String, u64)> {
    record["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["class"].as_str().unwrap().to_string(), r["count"].as_u64().unwrap()))
        .collect()
}

#[test]
fn code_in_grep_hits_and_diffs_is_left_alone() {
    // Lines of the kind the default pack redacted in grep and diff output
    // of real repositories (docs/benchmarks.md, issue #37), written here.
    let grep = "net/url/url.go:359:\ts := escape(u.username, encodeUserPassword)\n\
                internal/token.go:186:func newTokenRequest(tokenURL, clientID, clientSecret string, v url.Values) (*http.Request, error) {\n\
                internal/token.go-187-\tif clientSecret != \"\" {\n\
                --\n\
                lib/core/mergeConfig.js:71:    baseURL: defaultToConfig2,\n\
                HEAD:jws/jws.go:160:\tprivBytes, err := base64.RawURLEncoding.DecodeString(token)\n\
                docs/HISTORY.md:457:- Requests no longer outputs password in basic auth usage warning.\n";
    let (text, record) = run(grep);
    assert_eq!(text, grep);
    assert_eq!(regions(&record), [("code".to_string(), 4), ("text".to_string(), 1)]);

    let diff = "commit 510acbce1f16510acbce1f16510acbce1f165100\n\
                Author: Dev <dev@example.com>\n\
                \n\
                \x20   read the secret access key\n\
                \n\
                diff --git a/google/aws.go b/google/aws.go\n\
                --- a/google/aws.go\n\
                +++ b/google/aws.go\n\
                @@ -10,3 +10,3 @@ func (cs awsCredentialSource) subjectToken() (string, error) {\n\
                -\t\tif secretKey := getenv(\"AWS_SECRET_ACCESS_KEY\"); secretKey != \"\" {\n\
                +\t\tif secretAccessKey := getenv(\"AWS_SECRET_ACCESS_KEY\"); secretAccessKey != \"\" {\n\
                \x20\t\t\tSecretAccessKey: secretAccessKey,\n\
                \x20\t\t}\n";
    let (text, record) = run(diff);
    assert_eq!(text, diff);
    assert_eq!(regions(&record), [("code".to_string(), 1)]);

    // A call chain whose names hold digits is code, not a key.
    let grep =
        "app/sign.py:12:    token = base64.b64encode(raw)\napp/sign.py:13:    secret_key = self.v2.hmac256.digest()\n";
    assert_eq!(run(grep).0, grep);
}

#[test]
fn secrets_in_these_shapes_are_still_caught() {
    let mut seed = 0x5DEE_CE66_D1CE_4E5Bu64;
    let aws = draw(&mut seed, B64, 40);
    let token = draw(&mut seed, AN, 32);
    let netrc = draw(&mut seed, AN, 20);
    let pem_body: Vec<String> = (0..6).map(|_| format!("+{}", draw(&mut seed, B64, 64))).collect();
    let literal = draw(&mut seed, AN, 24);
    // A key made of an id and a secret, which reads like a member access.
    let id_secret = format!("{}.{}", draw(&mut seed, "0123456789abcdef", 32), draw(&mut seed, AN, 16));

    let log = format!(
        "commit 0123456789abcdef0123456789abcdef01234567\nAuthor: Dev <dev@example.com>\n\n    deploy settings\n\n\
         diff --git a/.env.production b/.env.production\nnew file mode 100644\n--- /dev/null\n+++ b/.env.production\n\
         @@ -0,0 +1,3 @@\n+REGION=eu-west-1\n+AWS_SECRET_ACCESS_KEY={aws}\n+PORT=8080\n\
         diff --git a/app/client.py b/app/client.py\n--- a/app/client.py\n+++ b/app/client.py\n\
         @@ -1,2 +1,3 @@\n import os\n+API_TOKEN = \"{literal}\"\n def connect():\n"
    );
    let grep = format!(
        "src/app.py:14:    token = settings.api_token\nconfig/app.yml:3:  api_token: {token}\nREADME.md:40:Set the token.\n\
         config/ai.py:3:ZHIPU_API_KEY = \"{id_secret}\"\n"
    );
    let cat_n = format!("     1\tmachine api.example.com\n     2\t  login deploy\n     3\t  password {netrc}\n");
    let show = format!(
        "commit 1123456789abcdef0123456789abcdef01234567\nAuthor: Dev <dev@example.com>\n\n    add the deploy key\n\n\
         diff --git a/deploy/id_rsa b/deploy/id_rsa\nnew file mode 100600\n--- /dev/null\n+++ b/deploy/id_rsa\n\
         @@ -0,0 +1,8 @@\n+-----BEGIN RSA PRIVATE KEY-----\n{}\n+-----END RSA PRIVATE KEY-----\n",
        pem_body.join("\n")
    );
    for (name, output, secrets) in [
        ("git log -p", &log, vec![aws.as_str(), literal.as_str()]),
        ("grep -rn", &grep, vec![token.as_str(), id_secret.as_str()]),
        ("cat -n", &cat_n, vec![netrc.as_str()]),
        ("git show", &show, pem_body.iter().map(|l| &l[1..]).collect()),
    ] {
        let (text, _) = run(output);
        for (i, s) in secrets.iter().enumerate() {
            assert!(!text.contains(&s[..16]), "{name}: planted secret {i} is not redacted");
        }
        assert!(text.contains("[REDACTED:"), "{name}");
    }
}

#[test]
fn fixtures_in_tests_are_left_and_provider_tokens_in_them_are_not() {
    // Test code, in the shapes the default pack redacted in real
    // repositories' grep, diff and listing output (docs/benchmarks.md),
    // written here: generic rules are off in a test's code and data.
    let mut seed = 0x1234_5678_9ABC_DEF1u64;
    let fixture = draw(&mut seed, "0123456789abcdef", 40);
    let basic = draw(&mut seed, B64, 32);
    let grep = format!(
        "oauth2_test.go:82:\t\tw.Write([]byte(\"access_token={fixture}&scope=user\"))\n\
         google/google_test.go:37:  \"private_key_id\": \"{fixture}\",\n\
         spec/requests/auth_spec.rb:12:    headers = {{ \"Authorization\" => \"Basic {basic}\" }}\n\
         test/fixtures/creds.yml:3:  client_secret: {fixture}\n"
    );
    let (text, record) = run(&grep);
    assert_eq!(text, grep);
    assert_eq!(regions(&record), [("test".to_string(), 4)]);

    // A `cat -n` of a test file has no name: it reads as a test by its lines.
    let listing: String = [
        "package oauth2",
        "",
        "import (",
        "\t\"net/http\"",
        "\t\"testing\"",
        ")",
        "",
        "func TestTokenRefresh(t *testing.T) {",
        &format!("\tw.Write([]byte(`{{\"access_token\": \"{fixture}\"}}`))"),
        "}",
    ]
    .iter()
    .enumerate()
    .map(|(i, l)| format!("{:6}\t{l}\n", i + 1))
    .collect();
    let (text, record) = run(&listing);
    assert_eq!(text, listing);
    assert_eq!(regions(&record), [("test".to_string(), 1)]);
    // The same file without numbers (`sed -n`), sniffed as a test's code.
    let plain: String = listing.lines().map(|l| format!("{}\n", &l[7..])).collect();
    assert_eq!(run(&plain).0, plain);

    // A provider's token in a test is a secret all the same; so is a
    // generic one in a `.env` under `tests/`.
    let aws = format!("AKIA{}", draw(&mut seed, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16));
    let env = draw(&mut seed, AN, 24);
    let grep = format!("auth_test.go:9:\tkey := \"{aws}\"\ntests/.env:2:API_TOKEN={env}\n");
    let (text, _) = run(&grep);
    assert!(!text.contains(&aws) && !text.contains(&env), "a provider token or a .env secret in tests is redacted");
}

#[test]
fn word_like_fixtures_in_rust_test_modules_are_left_and_random_passwords_are_not() {
    // reqwest's proxy tests, in the shapes they reached the model in
    // (docs/benchmarks.md): a `#[cfg(test)] mod tests` at the foot of
    // `src/proxy.rs` as `cat -n` lists it, and a hunk of it in `git show`.
    let mut seed = 0x0BAD_5EED_1234_5678u64;
    let random = draw(&mut seed, AN, 18);
    let src = [
        "use std::fmt;".to_string(),
        String::new(),
        "pub fn all(url: &str) -> Proxy {".to_string(),
        "    Proxy::new(url)".to_string(),
        "}".to_string(),
        String::new(),
        "#[cfg(test)]".to_string(),
        "mod tests {".to_string(),
        "    use super::*;".to_string(),
        String::new(),
        "    #[test]".to_string(),
        "    fn test_basic_auth() {".to_string(),
        "        let m = Proxy::all(\"http://letme:in@yo.local\");".to_string(),
        "        let n = Proxy::all(\"http://Aladdin:opensesame@yo.local\");".to_string(),
        format!("        let o = Proxy::all(\"http://app:{random}@db.internal\");"),
        "        let q = Proxy::all(\"http://app:Summer2024!@db.internal\");".to_string(),
        "    }".to_string(),
        "}".to_string(),
    ];
    let listing: String = src.iter().enumerate().map(|(i, l)| format!("{:6}\t{l}\n", i + 1)).collect();
    let diff = String::from(
        "commit 0123456789abcdef0123456789abcdef01234567\nAuthor: A <a@b.c>\n\n    proxy: test auth\n\n\
         diff --git a/src/proxy.rs b/src/proxy.rs\n--- a/src/proxy.rs\n+++ b/src/proxy.rs\n\
         @@ -912,3 +912,3 @@ mod tests {\n     fn test_basic_auth() {\n\
         -        let m = Proxy::all(\"https://letme:in@yo.local\");\n\
         +        let m = Proxy::all(\"http://letme:in@yo.local\");\n\
         @@ -3,2 +3,2 @@ pub fn all(url: &str) -> Proxy {\n\
         -    Proxy::new(\"http://u:opensesame@yo.local\")\n\
         +    Proxy::new(url)\n",
    );
    assert!(!run(&listing).0.contains("Summer2024!"), "a password that is not words is redacted in a test");
    for (shape, text) in [("cat -n", &listing), ("git show", &diff)] {
        let (out, _) = run(text);
        assert!(out.contains("letme:in@yo.local"), "{shape}: a test's word-like password is a fixture");
        assert!(!out.contains(&random), "{shape}: a random password in a test is still redacted");
    }
    // Outside the test hunk the same word-like password is redacted.
    assert!(!run(&diff).0.contains("u:opensesame@"));

    // `redact --sniff` judges a whole file piped without a name as `run` does.
    let plain: String = src.iter().map(|l| format!("{l}\n")).collect::<String>().repeat(40);
    let redact = |args: &[&str]| -> String {
        let o = common::cli_with_stdin(args, plain.as_bytes());
        assert!(o.status.success());
        String::from_utf8(o.stdout).unwrap()
    };
    let sniffed = redact(&["redact", "--sniff"]);
    assert_eq!(sniffed.matches("letme:in@").count(), 40);
    assert!(!sniffed.contains(&random) && !sniffed.contains("Summer2024!"), "a password that is not words is redacted");
    // Without --sniff a stream of unknown type is plain text.
    assert!(!redact(&["redact"]).contains("letme:in@"));
}

#[test]
fn every_credential_rules_examples_are_still_redacted_in_a_tests_code() {
    // In a test's code a value that reads as words is a fixture: no
    // credential format of the default rules may read so. Generic, path,
    // personal-data and scrubbing rules aside (off there, or not secrets).
    use result_sanitizer_pack_build::RulesFile;
    use result_sanitizer_rule_engine::pack_api::RuleKind;
    let rf = RulesFile::defaults().unwrap();
    let base = rf.to_rule_set();
    let (mut checked, mut left) = (0, Vec::new());
    for entry in &rf.rules {
        let e = entry.get_ref();
        let r = &e.rule;
        if r.strict_only || r.errors_only || matches!(r.kind, RuleKind::Path | RuleKind::Pii) {
            continue;
        }
        // The rule alone, with the default settings and allowlists.
        let set = result_sanitizer_rule_engine::pack_api::RuleSet { rules: vec![r.clone()], ..base.clone() };
        let pack = result_sanitizer_rule_engine::CompiledPack::from_rule_set(set).unwrap();
        for (i, ex) in e.examples.iter().enumerate() {
            assert!(pack.findings(ex).iter().any(|f| f.rule_id == r.id), "{} example {}", r.id, i + 1);
            checked += 1;
            if !pack.findings_in_tests(ex).iter().any(|f| f.rule_id == r.id) {
                left.push(format!("{} example {}", r.id, i + 1));
            }
        }
    }
    assert!(checked > 300, "{checked}");
    assert!(left.is_empty(), "left as fixtures in a test's code: {left:?}");
}

#[test]
fn an_unquoted_secret_in_a_call_or_a_flow_map_keeps_the_closing_bracket() {
    // The value of a secret-named argument runs to a space or a quote; a
    // call's `)` or a flow map's `}` right after it is code, not secret.
    let mut seed = 0x0DDB_A11C_0FFE_E123u64;
    let a = draw(&mut seed, AN, 32);
    let b = draw(&mut seed, AN, 24);
    // A REPL's echo and a deploy tool's log line (not code read by name,
    // where only string literals are looked at).
    let out = format!(">>> MailchimpSDK.initialize(token: {a}-us18)\n[deploy] creds: {{api_key: {b}}}\n");
    let (text, _) = run(&out);
    assert!(!text.contains(&a[..16]) && !text.contains(&b[..16]), "a planted secret is not redacted");
    assert!(text.contains("initialize(token: [REDACTED:env-secret-assignment])"), "the call's `)` is lost");
    assert!(text.contains("{api_key: [REDACTED:env-secret-assignment]}"), "the map's `}}` is lost");
    // A template field and an index keep their brackets and are no secret.
    let fields = "[deploy] SUMO_ACCESS_KEY={SumoAccessKey}\n[deploy] token = auth[1]}\n";
    assert_eq!(run(fields).0.matches("[REDACTED").count(), 0, "{}", run(fields).0);
}

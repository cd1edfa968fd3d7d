//! Recall and false-positive rate of the default pack on a generated corpus,
//! through the real pipeline component (`redact`).
//!
//! Positives: random secret bodies in each provider's documented format
//! (prefix, alphabet, length), planted in realistic tool output: env dumps,
//! `kubectl get secret -o yaml`, `docker inspect`, `curl -v`, stack traces,
//! JSON API responses, CSV. A secret counts as caught when no 8-character
//! fragment of it survives. Negatives: the same kinds of output with values
//! that look like secrets and are not (UUIDs, git and content hashes,
//! integrity hashes, lock files, base64 images, keybindings, placeholders,
//! masked values), and lines of real code that generic rules once
//! redacted (tests/precision/, read as code). The test prints both rates
//! per kind and fails below recall 0.99 or above a false-positive rate of
//! 0.01.
//!
//! What it can show: that each provider format is caught in each context
//! here, and that the listed kinds of non-secret stay. What it cannot: the
//! generator and the rules come from the same hands, so a format or
//! context missing here is missing from both; `make precision` and the
//! real-code lines are the checks on content nobody here wrote.

mod common;

use std::collections::BTreeMap;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick(&mut self, a: &[u8]) -> u8 {
        a[(self.next() % a.len() as u64) as usize]
    }
    fn s(&mut self, n: usize, alphabet: &str) -> String {
        (0..n).map(|_| self.pick(alphabet.as_bytes()) as char).collect()
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const AN: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const AN_: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const HEX: &str = "0123456789abcdef";
const UP: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const B32: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const LOWER: &str = "abcdefghijklmnopqrstuvwxyz0123456789";

fn uuid(r: &mut Rng) -> String {
    format!("{}-{}-{}-{}-{}", r.s(8, HEX), r.s(4, HEX), r.s(4, HEX), r.s(4, HEX), r.s(12, HEX))
}

/// (kind, variable name, generator of the secret value as written).
type Gen = fn(&mut Rng) -> String;
fn kinds() -> Vec<(&'static str, &'static str, Gen)> {
    vec![
        ("aws-access-key-id", "AWS_ACCESS_KEY_ID", |r| format!("AKIA{}", r.s(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"))),
        ("aws-secret-access-key", "AWS_SECRET_ACCESS_KEY", |r| r.s(40, B64)),
        ("aws-session-token", "AWS_SESSION_TOKEN", |r| format!("IQoJb3JpZ2luX2Vj{}", r.s(300, B64))),
        ("gcp-api-key", "GOOGLE_API_KEY", |r| format!("AIza{}", r.s(35, AN_))),
        ("gcp-oauth-token", "GOOGLE_ACCESS_TOKEN", |r| format!("ya29.{}", r.s(150, AN_))),
        ("google-oauth-secret", "GOOGLE_CLIENT_SECRET", |r| format!("GOCSPX-{}", r.s(28, AN_))),
        ("azure-storage-key", "AZURE_STORAGE_CONNECTION_STRING", |r| {
            format!(
                "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={}==;EndpointSuffix=core.windows.net",
                r.s(86, B64)
            )
        }),
        ("azure-ad-secret", "AZURE_CLIENT_SECRET", |r| format!("{}8Q~{}", r.s(3, AN), r.s(34, AN_))),
        ("alibaba-key-id", "ALIBABA_CLOUD_ACCESS_KEY_ID", |r| format!("LTAI{}", r.s(20, AN))),
        ("tencent-secret-id", "TENCENTCLOUD_SECRET_ID", |r| format!("AKID{}", r.s(32, AN))),
        ("digitalocean", "DIGITALOCEAN_TOKEN", |r| format!("dop_v1_{}", r.s(64, HEX))),
        ("heroku", "HEROKU_API_KEY", |r| uuid(r)),
        ("cloudflare", "CLOUDFLARE_API_TOKEN", |r| r.s(40, AN_)),
        ("github-classic", "GITHUB_TOKEN", |r| format!("ghp_{}", r.s(36, AN))),
        ("github-oauth", "GH_OAUTH_TOKEN", |r| format!("gho_{}", r.s(36, AN))),
        ("github-app", "GH_APP_TOKEN", |r| format!("ghs_{}", r.s(36, AN))),
        ("github-refresh", "GH_REFRESH_TOKEN", |r| format!("ghr_{}", r.s(36, AN))),
        ("github-fine-grained", "GITHUB_PAT", |r| format!("github_pat_{}_{}", r.s(22, AN), r.s(59, AN))),
        ("gitlab-pat", "GITLAB_TOKEN", |r| format!("glpat-{}", r.s(20, AN_))),
        ("gitlab-runner", "RUNNER_TOKEN", |r| format!("glrt-{}", r.s(20, AN_))),
        ("gitlab-deploy", "DEPLOY_TOKEN", |r| format!("gldt-{}", r.s(20, AN_))),
        ("atlassian", "JIRA_API_TOKEN", |r| format!("ATATT3{}", r.s(186, AN_))),
        ("terraform-cloud", "TFE_TOKEN", |r| format!("{}.atlasv1.{}", r.s(14, AN), r.s(67, AN_))),
        ("pulumi", "PULUMI_ACCESS_TOKEN", |r| format!("pul-{}", r.s(40, HEX))),
        ("doppler", "DOPPLER_TOKEN", |r| format!("dp.st.{}", r.s(43, AN))),
        ("vault", "VAULT_TOKEN", |r| format!("hvs.{}", r.s(95, AN_))),
        ("slack-bot", "SLACK_BOT_TOKEN", |r| {
            format!("xoxb-{}-{}-{}", r.s(11, "0123456789"), r.s(13, "0123456789"), r.s(24, AN))
        }),
        ("slack-user", "SLACK_USER_TOKEN", |r| {
            format!(
                "xoxp-{}-{}-{}-{}",
                r.s(11, "0123456789"),
                r.s(11, "0123456789"),
                r.s(13, "0123456789"),
                r.s(32, HEX)
            )
        }),
        ("slack-webhook", "SLACK_WEBHOOK_URL", |r| {
            format!("https://hooks.slack.com/services/T{}/B{}/{}", r.s(8, UP), r.s(10, UP), r.s(24, AN))
        }),
        ("discord-webhook", "DISCORD_WEBHOOK", |r| {
            format!("https://discord.com/api/webhooks/{}/{}", r.s(18, "0123456789"), r.s(68, AN_))
        }),
        ("telegram", "TELEGRAM_BOT_TOKEN", |r| format!("{}:AA{}", r.s(10, "0123456789"), r.s(33, AN_))),
        ("sendgrid", "SENDGRID_API_KEY", |r| format!("SG.{}.{}", r.s(22, AN_), r.s(43, AN_))),
        ("mailgun", "MAILGUN_API_KEY", |r| format!("key-{}", r.s(32, HEX))),
        ("mailchimp", "MAILCHIMP_API_KEY", |r| format!("{}-us{}", r.s(32, HEX), 1 + r.below(20))),
        ("twilio", "TWILIO_AUTH_TOKEN", |r| r.s(32, HEX)),
        ("stripe-live", "STRIPE_SECRET_KEY", |r| format!("sk_live_{}", r.s(99, AN))),
        ("stripe-test", "STRIPE_TEST_KEY", |r| format!("sk_test_{}", r.s(24, AN))),
        ("stripe-restricted", "STRIPE_RESTRICTED_KEY", |r| format!("rk_live_{}", r.s(99, AN))),
        ("square", "SQUARE_ACCESS_TOKEN", |r| format!("EAAA{}", r.s(60, AN_))),
        ("braintree", "BRAINTREE_ACCESS_TOKEN", |r| {
            format!("access_token$production${}${}", r.s(16, LOWER), r.s(32, HEX))
        }),
        ("shopify", "SHOPIFY_ACCESS_TOKEN", |r| format!("shpat_{}", r.s(32, HEX))),
        ("openai-project", "OPENAI_API_KEY", |r| format!("sk-proj-{}", r.s(156, AN_))),
        ("openai-svcacct", "OPENAI_SVC_KEY", |r| format!("sk-svcacct-{}", r.s(156, AN_))),
        ("openai-legacy", "OPENAI_KEY", |r| format!("sk-{}T3BlbkFJ{}", r.s(20, AN), r.s(20, AN))),
        ("anthropic", "ANTHROPIC_API_KEY", |r| format!("sk-ant-api03-{}AA", r.s(93, AN_))),
        ("huggingface", "HF_TOKEN", |r| {
            format!("hf_{}", r.s(34, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"))
        }),
        ("postgres-url", "DATABASE_URL", |r| format!("postgres://app:{}@db.internal:5432/app", r.s(20, AN))),
        ("mysql-url", "MYSQL_URL", |r| format!("mysql://root:{}@mysql:3306/app", r.s(16, AN))),
        ("mongodb-url", "MONGO_URL", |r| {
            format!("mongodb+srv://admin:{}@cluster0.abcde.mongodb.net/test", r.s(16, AN))
        }),
        ("redis-url", "REDIS_URL", |r| format!("redis://default:{}@cache:6379/0", r.s(24, AN))),
        ("amqp-url", "AMQP_URL", |r| format!("amqps://svc:{}@mq.internal:5671/vhost", r.s(18, AN))),
        ("datadog", "DD_API_KEY", |r| r.s(32, HEX)),
        ("newrelic", "NEW_RELIC_API_KEY", |r| format!("NRAK-{}", r.s(27, UP))),
        ("grafana", "GRAFANA_TOKEN", |r| format!("glsa_{}_{}", r.s(32, AN), r.s(8, HEX))),
        ("sentry-dsn", "SENTRY_DSN", |r| {
            format!("https://{}@o{}.ingest.sentry.io/{}", r.s(32, HEX), r.s(6, "0123456789"), r.s(7, "0123456789"))
        }),
        ("npm", "NPM_TOKEN", |r| format!("npm_{}", r.s(36, AN))),
        ("pypi", "PYPI_TOKEN", |r| format!("pypi-AgEIcHlwaS5vcmc{}", r.s(150, AN_))),
        ("dockerhub", "DOCKERHUB_TOKEN", |r| format!("dckr_pat_{}", r.s(27, AN_))),
        ("okta", "OKTA_API_TOKEN", |r| format!("00{}", r.s(40, AN_))),
        ("jwt", "ID_TOKEN", |r| format!("eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJ{}.{}", r.s(80, AN_), r.s(86, AN_))),
        ("oauth-client-secret", "OAUTH_CLIENT_SECRET", |r| r.s(40, AN_)),
        ("eks-token", "EKS_TOKEN", |r| format!("k8s-aws-v1.{}", r.s(600, AN_))),
        ("totp", "TOTP_URI", |r| format!("otpauth://totp/Acme:ops?secret={}&issuer=Acme", r.s(32, B32))),
        ("age", "AGE_KEY", |r| format!("AGE-SECRET-KEY-1{}", r.s(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"))),
        ("db-password", "DB_PASSWORD", |r| format!("{}!{}", r.s(10, AN), r.s(6, AN))),
        ("api-key-generic", "PAYMENTS_API_KEY", |r| r.s(32, AN)),
        ("linear", "LINEAR_API_KEY", |r| format!("lin_api_{}", r.s(40, AN))),
        ("databricks", "DATABRICKS_TOKEN", |r| format!("dapi{}", r.s(32, HEX))),
    ]
}

/// The part of a written value that is the secret.
fn secret_part<'a>(kind: &str, written: &'a str) -> &'a str {
    let between = |a: &str, b: char| -> &'a str {
        let start = written.find(a).map_or(0, |i| i + a.len());
        let rest = &written[start..];
        &rest[..rest.find(b).unwrap_or(rest.len())]
    };
    match kind {
        k if k.ends_with("-url") => {
            let after = between("://", '@');
            &after[after.find(':').map_or(0, |i| i + 1)..]
        }
        "azure-storage-key" => between("AccountKey=", ';'),
        "sentry-dsn" => between("https://", '@'),
        "totp" => between("secret=", '&'),
        _ => written,
    }
}

/// Realistic tool output around a secret.
fn contexts(r: &mut Rng, var: &str, value: &str) -> Vec<(&'static str, String)> {
    let id = r.s(12, HEX);
    vec![
        ("env", format!("HOSTNAME=web-{id}\nLANG=C.UTF-8\n{var}={value}\nPATH=/usr/local/bin:/usr/bin\nSHLVL=1\n")),
        (
            "docker-inspect",
            format!("[\n  {{\n    \"Id\": \"{id}{id}\",\n    \"Config\": {{\n      \"Env\": [\n        \"PATH=/usr/bin\",\n        \"{var}={value}\"\n      ]\n    }}\n  }}\n]\n"),
        ),
        ("yaml", format!("spec:\n  containers:\n  - name: app\n    env:\n    - name: {var}\n      value: \"{value}\"\n")),
        ("json-api", format!("{{\"ok\":true,\"data\":{{\"id\":\"{id}\",\"config\":{{\"{}\":\"{value}\"}}}}}}\n", var.to_ascii_lowercase())),
        (
            "stack-trace",
            format!("Traceback (most recent call last):\n  File \"/app/main.py\", line 42, in connect\n    client = Client(\"{value}\")\nValueError: authentication failed for {var}={value}\n"),
        ),
        ("csv", format!("name,value,updated\nregion,us-east-1,2026-11-01\n{var},{value},2026-11-02\n")),
        ("export", format!("$ export {var}='{value}'\n$ ./deploy.sh\ndeploying {id}...\n")),
        // Encoded: only a decoder sees these.
        (
            "k8s-secret-b64",
            format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-{id}\ntype: Opaque\ndata:\n  {}: {}\n", var.to_ascii_lowercase(), b64(value)),
        ),
        ("configmap-env-b64", format!("apiVersion: v1\nkind: ConfigMap\ndata:\n  dotenv: {}\n", b64(&format!("{var}={value}\n")))),
        ("git-extraheader", format!("$ git -c http.extraheader=\"AUTHORIZATION: basic {}\" fetch\n", b64(&format!("x-access-token:{value}")))),
        ("percent-encoded", format!("GET /callback?{var}={} HTTP/1.1\n", value.bytes().map(|c| format!("%{c:02X}")).collect::<String>())),
        ("json-escaped", format!("{{\"log\":\"loaded {var}={}\"}}\n", value.chars().map(|c| format!("\\u{:04x}", c as u32)).collect::<String>())),
        // Where real tools print them (issue #15): a query string in a
        // client's log line, a curl -v request, JSON inside a JSON string,
        // a bytes repr with \r\n escapes, the line after a command that
        // printed the variable, a call argument in a traceback.
        ("query-string", format!("INFO:httpx:HTTP Request: GET https://api.acme.io/v1/items?{}={value}&page=2 \"HTTP/1.1 200 OK\"\n", var.to_ascii_lowercase())),
        ("curl-v", format!("* Connected to api.acme.io port 443\n> GET /v1/me HTTP/1.1\n> Host: api.acme.io\n> Authorization: Bearer {value}\n> Accept: */*\n")),
        ("escaped-json", format!("{{\"body\": \"{{\\\"{}\\\":\\\"{value}\\\"}}\"}}\n", var.to_ascii_lowercase())),
        ("bytes-repr", format!("send: b'POST /v1 HTTP/1.1\\r\\nHost: api\\r\\n{var}: {value}\\r\\n\\r\\n'\n")),
        ("printed-by-command", format!("$ printenv {var}\n{value}\n$ echo done\ndone\n")),
        ("call-argument", format!("  File \"/app/main.py\", line 40, in <module>\n    client.login(\"{value}\")\nAuthError: bad credentials\n")),
        // The outputs agents read code through (issue #37), where regions
        // name their file and are judged as it: a key added to a `.env` in
        // `git log -p`, a grep hit in a YAML file, a `cat -n` of a
        // `.netrc`, a literal added to code in `git show`.
        (
            "git-log-p-env",
            format!("commit {id}{id}{id}{}\nAuthor: Dev <dev@acme.example>\nDate:   Tue Nov 4 10:00:00 2026 +0000\n\n    deploy settings\n\ndiff --git a/.env.production b/.env.production\nnew file mode 100644\nindex 0000000..{}\n--- /dev/null\n+++ b/.env.production\n@@ -0,0 +1,3 @@\n+HOSTNAME=web-{id}\n+{var}={value}\n+PORT=8080\n", &id[..4], &id[..7]),
        ),
        (
            "grep-yaml",
            format!("src/app.py:14:    key = settings.{}\nconfig/secrets.yml:3:  {}: {value}\nREADME.md:40:Set the {var} variable.\n", var.to_ascii_lowercase(), var.to_ascii_lowercase()),
        ),
        ("cat-n-netrc", format!("     1\tmachine api.acme.io\n     2\t  login deploy\n     3\t  password {value}\n")),
        (
            "git-show-code",
            format!("commit {id}{id}{id}{}\nAuthor: Dev <dev@acme.example>\n\n    wire the client\n\ndiff --git a/app/client.py b/app/client.py\nindex {}..{} 100644\n--- a/app/client.py\n+++ b/app/client.py\n@@ -1,3 +1,4 @@ import os\n import os\n+{var} = \"{value}\"\n \n def connect():\n", &id[..4], &id[..7], &id[5..12]),
        ),
    ]
}

/// Source code around a secret, read as code (the content type says so):
/// generic rules look only inside its string literals.
fn code_contexts(var: &str, value: &str) -> Vec<(&'static str, &'static str, String)> {
    vec![
        ("python-settings", "text/x-python", format!("import os\n\nDEBUG = False\n{var} = \"{value}\"\n\ndef main():\n    return os.environ.get(\"{var}\")\n")),
        ("js-config", "text/javascript", format!("const config = {{\n  region: 'eu-west-1',\n  {}: '{value}',\n}};\nmodule.exports = config;\n", var.to_ascii_lowercase())),
    ]
}

fn b64(s: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(s)
}

fn negatives(r: &mut Rng) -> Vec<(&'static str, String)> {
    let sha = r.s(40, HEX);
    let sha256 = r.s(64, HEX);
    let b64img = r.s(400, B64);
    vec![
        ("uuid", format!("request_id={} trace_id={}\nuser_id: {}\n", uuid(r), uuid(r), uuid(r))),
        ("git-log", format!("commit {sha}\nAuthor: Dev <dev@acme.example>\n\n    fix: handle token refresh\n\nMerge: {} {}\n", r.s(7, HEX), r.s(7, HEX))),
        ("sha256sum", format!("{sha256}  dist/app-linux-amd64.tar.gz\n{}  dist/app-darwin-arm64.tar.gz\n", r.s(64, HEX))),
        ("npm-lock", format!("\"node_modules/lodash\": {{\n  \"version\": \"4.17.21\",\n  \"resolved\": \"https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz\",\n  \"integrity\": \"sha512-{}==\"\n}}\n", r.s(86, B64))),
        ("cargo-lock", format!("[[package]]\nname = \"serde\"\nversion = \"1.0.228\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\nchecksum = \"{sha256}\"\n")),
        ("pip-hash", format!("requests==2.32.3 \\\n    --hash=sha256:{sha256}\n")),
        ("image", format!("<img src=\"data:image/png;base64,{b64img}\" alt=\"chart\">\n")),
        ("keybindings", "{\n  \"key\": \"ctrl+shift+p\",\n  \"command\": \"workbench.action.showCommands\"\n},\n{ \"key\": \"cmd+k cmd+s\", \"command\": \"keybindings\" }\n".to_string()),
        ("placeholders", "PASSWORD=${DB_PASSWORD}\nAPI_KEY=your-api-key-here\nSECRET={{ .Values.secret }}\nTOKEN=<token>\nAWS_SECRET_ACCESS_KEY=****************\nOPENAI_API_KEY=sk-...abcd\n".to_string()),
        ("docs-example", "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nexport AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n".to_string()),
        ("k8s-configmap", format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  LOG_LEVEL: info\n  REGION: eu-west-1\n  BUILD: \"{}\"\n", r.s(7, HEX))),
        ("build-log", "   Compiling tokio v1.48.0\n   Compiling token-bucket v0.3.1\n    Finished release in 41.2s\ntest auth::token_refresh ... ok\nwarning: unused variable `secret_len`\n".to_string()),
        ("metrics", format!("http_requests_total{{method=\"GET\",code=\"200\"}} {}\nprocess_cpu_seconds_total {}.{}\n", r.below(100000), r.below(1000), r.below(100))),
        ("csv-data", format!("id,email,plan,created\n{},alice@example.com,pro,2026-01-03\n{},bob@example.com,free,2026-02-11\n", uuid(r), uuid(r))),
        ("json-api", format!("{{\"token_type\":\"Bearer\",\"expires_in\":3600,\"scope\":\"read write\",\"id\":\"{}\"}}\n", uuid(r))),
    ]
}

#[test]
fn recall_and_false_positive_rate_per_kind() {
    let s = common::sanitizer();
    let pack = s.default_pack();
    let redact_as = |text: &str, content_type: Option<&str>| -> (String, u32) {
        let req = result_sanitizer_host::api::RedactRequest {
            data: text.as_bytes().to_vec(),
            last: true,
            content_type: content_type.map(str::to_string),
            sniff: false,
            untrusted: true,
            report: false,
            pii: false,
            pii_public_ip: false,
        };
        let resp = s.redact_request(pack, &req).unwrap();
        (String::from_utf8(resp.output).unwrap(), resp.redactions.iter().map(|r| r.count).sum())
    };
    let redact = |text: &str| redact_as(text, None);
    let mut r = Rng(0x9E37_79B9_7F4A_7C15);
    let mut per_kind: BTreeMap<&str, (u32, u32)> = BTreeMap::new();
    let mut misses = Vec::new();
    let rounds = 6;
    for _ in 0..rounds {
        for (kind, var, gen) in kinds() {
            let written = gen(&mut r);
            let secret = secret_part(kind, &written);
            let plain = contexts(&mut r, var, &written).into_iter().map(|(ctx, doc)| (ctx, None, doc));
            let code = code_contexts(var, &written).into_iter().map(|(ctx, ct, doc)| (ctx, Some(ct), doc));
            for (ctx, ct, doc) in plain.chain(code) {
                let (out, _) = redact_as(&doc, ct);
                // Caught: no 8-byte run of the secret survives, other than
                // runs the document has elsewhere (a key name, say).
                let elsewhere = doc.replace(secret, "\u{0}");
                let leaked = (0..=secret.len().saturating_sub(8))
                    .map(|i| &secret[i..(i + 8).min(secret.len())])
                    .any(|frag| out.contains(frag) && !elsewhere.contains(frag));
                let e = per_kind.entry(kind).or_default();
                e.0 += 1;
                if leaked {
                    e.1 += 1;
                    misses.push(format!("{kind}/{ctx}"));
                }
            }
        }
    }
    let mut fp: BTreeMap<&str, (u32, u32)> = BTreeMap::new();
    // Negatives cut from real code (tests/precision/), read as code: one
    // document per line.
    for (kind, name) in
        [("real-code-rs", "code-lines.rs"), ("real-code-py", "code-lines.py"), ("real-code-js", "code-lines.js")]
    {
        let text =
            std::fs::read_to_string(format!("{}/../tests/precision/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let ct = result_sanitizer_rule_engine::content_type_for_path(name);
        for line in text.lines() {
            let (_, n) = redact_as(&format!("{line}\n"), ct);
            let e = fp.entry(kind).or_default();
            e.0 += 1;
            e.1 += u32::from(n > 0);
        }
    }
    for _ in 0..rounds * 4 {
        for (kind, doc) in negatives(&mut r) {
            let (_, n) = redact(&doc);
            let e = fp.entry(kind).or_default();
            e.0 += 1;
            if n > 0 {
                e.1 += 1;
            }
        }
    }
    println!("{:<24} {:>6} {:>8}", "kind", "docs", "recall");
    for (k, (n, miss)) in &per_kind {
        println!("{k:<24} {n:>6} {:>8.3}", 1.0 - f64::from(*miss) / f64::from(*n));
    }
    println!("\n{:<24} {:>6} {:>8}", "negative kind", "docs", "FP rate");
    for (k, (n, hit)) in &fp {
        println!("{k:<24} {n:>6} {:>8.3}", f64::from(*hit) / f64::from(*n));
    }
    let (pn, pm) = per_kind.values().fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    let (nn, nh) = fp.values().fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    let recall = 1.0 - f64::from(pm) / f64::from(pn);
    let fpr = f64::from(nh) / f64::from(nn);
    println!(
        "\nkinds: {}  positives: {pn}  recall: {recall:.4}  negatives: {nn}  false-positive rate: {fpr:.4}",
        per_kind.len()
    );
    misses.sort();
    misses.dedup();
    println!("missed: {misses:?}");
    assert!(per_kind.len() >= 60);
    assert!(recall >= 0.99, "recall {recall:.4} below 0.99");
    assert!(fpr <= 0.01, "false-positive rate {fpr:.4} above 0.01");
}

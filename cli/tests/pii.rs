//! Personal data (issue #40), on the native pipeline with the default
//! rules (`rules/default/`): the same code the component runs, without
//! building it.
//!
//! - error results: the parameters, keys and rows that ORMs and drivers
//!   print, emails, phone numbers and cloud account ids are gone, one test
//!   per library shape, and the error class and code still read;
//! - PII on: recall over a generated set of values in real formats
//!   (Luhn-valid cards of several brands, mod-97-valid IBANs of several
//!   countries, phone numbers of several countries, SSNs, emails, private
//!   addresses, dates of birth) in logs, JSON, CSV and prose, with JSON
//!   and CSV still parsing; close negatives (order ids, UUIDs, versions,
//!   timestamps, port lists) left alone;
//! - PII off: a successful result keeps them all.
//!
//! Values are generated (made-up names, `example.org` addresses, numbers
//! that only pass their checksums); no test name or message prints one.

use std::collections::BTreeMap;

use result_sanitizer_pack_build::RulesFile;
use result_sanitizer_pipeline::{redact_step, sanitize};
use result_sanitizer_rule_engine::api::{Options, RedactRequest, ToolError};
use result_sanitizer_rule_engine::pack_api::{PackInfo, RuleSet};
use result_sanitizer_rule_engine::{default_options, CompiledPack, StaticRules};

fn rules() -> RuleSet {
    RulesFile::defaults().expect("default rules parse").to_rule_set()
}

fn pack_of(rules: RuleSet) -> CompiledPack {
    let info = PackInfo {
        name: "default".into(),
        version: "0".into(),
        tenant: "*".into(),
        wit_version: "0.1.0".into(),
        description: String::new(),
    };
    CompiledPack::new(Box::new(StaticRules { info, rules })).expect("pack compiles")
}

fn pack() -> &'static CompiledPack {
    static P: std::sync::OnceLock<CompiledPack> = std::sync::OnceLock::new();
    P.get_or_init(|| pack_of(rules()))
}

/// The model-visible text of an MCP message.
fn text_of(message: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(message).expect("message is JSON");
    v["content"].as_array().unwrap().iter().filter_map(|c| c["text"].as_str()).collect::<Vec<_>>().join("\n")
}

/// The redaction counts of an MCP message's record, by rule id.
fn counts_of(message: &str) -> BTreeMap<String, u64> {
    let v: serde_json::Value = serde_json::from_str(message).unwrap();
    let r = &v["_meta"]["result-sanitizer/record"]["redactions"];
    r.as_array()
        .unwrap()
        .iter()
        .map(|c| (c["rule_id"].as_str().unwrap().to_string(), c["count"].as_u64().unwrap()))
        .collect()
}

fn big(o: &mut Options) {
    o.max_tokens = Some(1_000_000);
    o.max_chars = Some(10_000_000);
    o.max_bytes = Some(64 << 20);
}

/// `text` as a failed call's output.
fn failed(text: &str) -> String {
    let mut o = default_options();
    o.tool = "db_query".into();
    o.tool_error = Some(ToolError { code: "exit-status-1".into(), message: "command exited with status 1".into() });
    text_of(&sanitize(text.as_bytes(), &o, pack()).expect("sanitize").message)
}

/// Asserts `out` keeps every `kept` and holds none of `gone` (which are
/// not printed: they are personal data).
fn check(shape: &str, out: &str, kept: &[&str], gone: &[&str]) {
    for k in kept {
        assert!(out.contains(k), "{shape}: lost {k:?}:\n{out}");
    }
    for (i, g) in gone.iter().enumerate() {
        assert!(!out.contains(g), "{shape}: identifier {} of {} kept:\n{out}", i + 1, gone.len());
    }
}

#[test]
fn error_results_lose_personal_data_and_keep_the_error() {
    let cases: &[(&str, &str, &[&str], &[&str])] = &[
        (
            "SQLAlchemy",
            "sqlalchemy.exc.IntegrityError: (psycopg2.errors.UniqueViolation) duplicate key value violates unique constraint \"users_email_key\"\n\
             DETAIL:  Key (email)=(carol@example.org) already exists.\n\
             [SQL: INSERT INTO users (email, name, phone) VALUES (%(email)s, %(name)s, %(phone)s)]\n\
             [parameters: {'email': 'carol@example.org', 'name': 'Carol Danvers', 'phone': '+1 415 555 0132'}]\n\
             (Background on this error at: https://sqlalche.me/e/20/gkpj)\n",
            &["sqlalchemy.exc.IntegrityError", "UniqueViolation", "users_email_key", "Key (email)=? already exists", "[SQL: INSERT INTO users (email, name, phone)", "[parameters: ?]"],
            &["carol@example.org", "Carol Danvers", "415 555 0132"],
        ),
        (
            "psycopg2",
            "psycopg2.errors.NotNullViolation: null value in column \"name\" of relation \"users\" violates not-null constraint\n\
             DETAIL:  Failing row contains (7, dana.scully@example.org, null, 1964-02-23).\n",
            &["psycopg2.errors.NotNullViolation", "not-null constraint", "Failing row contains ?"],
            &["dana.scully@example.org", "1964-02-23"],
        ),
        (
            "Django",
            "django.db.utils.IntegrityError: duplicate key value violates unique constraint \"auth_user_username_key\"\n\
             DETAIL:  Key (username)=(fox.mulder) already exists.\n",
            &["django.db.utils.IntegrityError", "auth_user_username_key", "Key (username)=?"],
            &["fox.mulder"],
        ),
        (
            "Rails",
            "ActiveRecord::RecordNotUnique: PG::UniqueViolation: ERROR:  duplicate key value violates unique constraint \"index_users_on_email\"\n\
             DETAIL:  Key (email)=(walter.skinner@example.org) already exists.\n\
             : INSERT INTO \"users\" (\"email\", \"name\") VALUES ($1, $2) RETURNING \"id\"  [[\"email\", \"walter.skinner@example.org\"], [\"name\", \"Walter Skinner\"]]\n",
            &["ActiveRecord::RecordNotUnique", "PG::UniqueViolation", "index_users_on_email", "VALUES ($1, $2) RETURNING"],
            &["walter.skinner@example.org", "Walter Skinner"],
        ),
        (
            "Hibernate",
            "org.hibernate.exception.ConstraintViolationException: could not execute statement [ERROR: duplicate key value violates unique constraint \"uk_email\"\n  Detail: Key (email)=(monica.reyes@example.org) already exists.]\n\
             TRACE o.h.t.d.s.BasicBinder - binding parameter [1] as [VARCHAR] - [monica.reyes@example.org]\n\
             TRACE o.h.t.d.s.BasicBinder - binding parameter [2] as [VARCHAR] - [+44 7911 123456]\n",
            &["ConstraintViolationException", "uk_email", "binding parameter [1] as [VARCHAR] - ?"],
            &["monica.reyes@example.org", "7911 123456"],
        ),
        (
            "MySQL (JDBC)",
            "java.sql.SQLIntegrityConstraintViolationException: Duplicate entry 'john.doggett@example.org' for key 'users.email_UNIQUE'\n",
            &["SQLIntegrityConstraintViolationException", "Duplicate entry ? for key 'users.email_UNIQUE'"],
            &["john.doggett@example.org"],
        ),
        (
            "SQL Server",
            "Msg 2627, Level 14, State 1: Violation of UNIQUE KEY constraint 'UQ_users_email'. Cannot insert duplicate key in object 'dbo.users'. The duplicate key value is (alex.krycek@example.org).\n",
            &["Msg 2627", "UQ_users_email", "The duplicate key value is ?"],
            &["alex.krycek@example.org"],
        ),
        (
            "pymongo",
            "pymongo.errors.DuplicateKeyError: E11000 duplicate key error collection: app.users index: email_1 dup key: { email: \"jeffrey.spender@example.org\" }, full error: {'index': 0, 'code': 11000, 'keyPattern': {'email': 1}, 'keyValue': {'email': 'jeffrey.spender@example.org'}}\n",
            &["pymongo.errors.DuplicateKeyError", "E11000", "index: email_1 dup key: ?"],
            &["jeffrey.spender@example.org"],
        ),
        (
            "SQL literals",
            "ERROR:  syntax error at or near \"WHER\"\nLINE 1: SELECT * FROM users WHER email = 'alice@example.com' OR ssn = '536-22-8410' OR phone IN ('+1 415 555 0132')\n",
            &["syntax error at or near", "SELECT * FROM users WHER email = ? OR ssn = ? OR phone IN (?)"],
            &["alice@example.com", "536-22-8410", "415 555 0132"],
        ),
        (
            "a plain message",
            "Traceback (most recent call last):\n  File \"app.py\", line 12, in <module>\nValueError: no account for jane.doe@example.com (phone 020 7946 0958)\n",
            &["ValueError: no account for", "app.py\", line 12"],
            &["jane.doe@example.com", "7946 0958"],
        ),
        (
            "smtplib",
            "smtplib.SMTPAuthenticationError: (535, b'5.7.8 Username and Password not accepted for billing-bot@acme.io. Learn more at https://support.google.com/mail/?p=BadCredentials')\n",
            &["smtplib.SMTPAuthenticationError", "535", "Username and Password not accepted"],
            &["billing-bot@acme.io"],
        ),
        (
            "botocore",
            "botocore.exceptions.ClientError: An error occurred (AccessDenied) when calling the GetObject operation: User: arn:aws:iam::483920175564:user/ci-deployer is not authorized to perform: s3:GetObject on resource: \"arn:aws:s3:::acme-billing/exports/2026.csv\"\n",
            &["botocore.exceptions.ClientError", "AccessDenied", "GetObject", "is not authorized to perform: s3:GetObject", "arn:aws:iam::"],
            &["483920175564"],
        ),
        (
            "docker / ECR",
            "Error response from daemon: pull access denied for 483920175564.dkr.ecr.us-east-1.amazonaws.com/billing-api, repository does not exist or may require 'docker login'\n",
            &["pull access denied", "dkr.ecr.us-east-1.amazonaws.com/billing-api"],
            &["483920175564"],
        ),
        (
            "Google Cloud",
            "google.api_core.exceptions.PermissionDenied: 403 Cloud Resource Manager API has not been used in project 731942658310 before or it is disabled. Enable it by visiting https://console.developers.google.com/apis/api/cloudresourcemanager.googleapis.com/overview?project=731942658310\n",
            &["google.api_core.exceptions.PermissionDenied", "403", "has not been used in project"],
            &["731942658310"],
        ),
        (
            "Azure",
            "(AuthorizationFailed) The client 'deploy@acme.onmicrosoft.com' with object id 'b1f0c3a2-6d4e-4f8a-9b7c-2e5d1a3f8c90' does not have authorization to perform action 'Microsoft.Resources/subscriptions/resourcegroups/read' over scope '/subscriptions/3f2a9c41-7b6d-4e8f-9a12-5c3d7e9b1f04/resourcegroups/rg-prod'\n",
            &["AuthorizationFailed", "does not have authorization to perform action", "resourcegroups/rg-prod"],
            &["3f2a9c41-7b6d-4e8f-9a12-5c3d7e9b1f04", "deploy@acme.onmicrosoft.com"],
        ),
        (
            "a card in a payment error",
            "stripe.error.CardError: Request req_8Hq2: card 4242 4242 4242 4242 declined (IBAN DE89 3704 0044 0532 0130 00 on file)\n",
            &["stripe.error.CardError", "declined"],
            &["4242 4242 4242 4242", "DE89 3704 0044 0532 0130 00"],
        ),
    ];
    for (shape, text, kept, gone) in cases {
        check(shape, &failed(text), kept, gone);
    }
}

#[test]
fn error_results_keep_git_remotes_and_ordinary_numbers() {
    let out = failed(
        "git@github.com: Permission denied (publickey).\nfatal: Could not read from remote repository.\n\
         error: process exited with status 137 after 4823 ms; pid 48213; 12 tests, 3 failed; at 2026-12-04T07:00:00Z\n",
    );
    check(
        "git",
        &out,
        &["git@github.com: Permission denied", "status 137 after 4823 ms; pid 48213", "2026-12-04T07:00:00Z"],
        &[],
    );
}

// ----------------------------------------------------------------- values

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn digits(&mut self, n: usize) -> String {
        (0..n).map(|_| char::from(b'0' + self.below(10) as u8)).collect()
    }
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len() as u64) as usize]
    }
}

fn luhn_complete(body: &str) -> String {
    for d in 0..10 {
        let n = format!("{body}{d}");
        let sum: u32 = n
            .bytes()
            .rev()
            .enumerate()
            .map(|(i, c)| {
                let v = u32::from(c - b'0');
                if i % 2 == 1 {
                    let x = v * 2;
                    if x > 9 {
                        x - 9
                    } else {
                        x
                    }
                } else {
                    v
                }
            })
            .sum();
        if sum.is_multiple_of(10) {
            return n;
        }
    }
    unreachable!()
}

/// A card number of a real brand's prefix and length, Luhn-valid,
/// printed as cards are.
fn card(r: &mut Rng) -> String {
    let (prefix, len) = match r.below(8) {
        0 => ("4".to_string(), 16),
        1 => (format!("5{}", 1 + r.below(5)), 16),
        2 => (format!("{}", 2221 + r.below(500)), 16),
        3 => (r.pick(&["34", "37"]).to_string(), 15),
        4 => ("6011".to_string(), 16),
        5 => (format!("{}", 3528 + r.below(62)), 16),
        6 => ("62".to_string(), 16 + r.below(4) as usize),
        _ => ("36".to_string(), 14),
    };
    let n = luhn_complete(&format!("{prefix}{}", r.digits(len - prefix.len() - 1)));
    match (r.below(3), n.len()) {
        (0, 16) => n.as_bytes().chunks(4).map(|c| std::str::from_utf8(c).unwrap()).collect::<Vec<_>>().join(" "),
        (1, 16) => n.as_bytes().chunks(4).map(|c| std::str::from_utf8(c).unwrap()).collect::<Vec<_>>().join("-"),
        (0, 15) => format!("{} {} {}", &n[..4], &n[4..10], &n[10..]),
        _ => n,
    }
}

/// An IBAN of one of several countries with right check digits.
fn iban(r: &mut Rng) -> String {
    let (cc, bban) = match r.below(10) {
        0 => ("DE", r.digits(18)),
        1 => ("FR", format!("{}{}", r.digits(21), r.digits(2))),
        2 => ("GB", format!("{}{}", r.pick(&["NWBK", "BARC", "HBUK", "LOYD"]), r.digits(14))),
        3 => ("NL", format!("{}{}", r.pick(&["ABNA", "INGB", "RABO"]), r.digits(10))),
        4 => ("ES", r.digits(20)),
        5 => ("IT", format!("X{}", r.digits(22))),
        6 => ("BE", r.digits(12)),
        7 => ("CH", r.digits(17)),
        8 => ("PL", r.digits(24)),
        _ => ("AT", r.digits(16)),
    };
    let moved = format!("{bban}{cc}00");
    let mut rem: u64 = 0;
    for c in moved.bytes() {
        rem = if c.is_ascii_digit() {
            (rem * 10 + u64::from(c - b'0')) % 97
        } else {
            (rem * 100 + u64::from(c - b'A') + 10) % 97
        };
    }
    let n = format!("{cc}{:02}{bban}", 98 - rem);
    if r.below(2) == 0 {
        n.as_bytes().chunks(4).map(|c| std::str::from_utf8(c).unwrap()).collect::<Vec<_>>().join(" ")
    } else {
        n
    }
}

fn nanp(r: &mut Rng) -> (String, String, String) {
    let area = format!("{}{}{}", 2 + r.below(8), r.below(9), r.below(10));
    let area = if &area[1..] == "11" { format!("{}20", &area[..1]) } else { area };
    let exch = format!("{}{}", 2 + r.below(8), r.digits(2));
    let exch = if &exch[1..] == "11" { format!("{}55", &exch[..1]) } else { exch };
    (area, exch, r.digits(4))
}

/// A phone number of one of several countries, in an international or a
/// printed national form.
fn phone(r: &mut Rng) -> String {
    match r.below(12) {
        0 => {
            let (a, e, s) = nanp(r);
            format!("+1 {a} {e} {s}")
        }
        1 => {
            let (a, e, s) = nanp(r);
            format!("({a}) {e}-{s}")
        }
        2 => {
            let (a, e, s) = nanp(r);
            format!("{a}-{e}-{s}")
        }
        3 => format!("+44 7{} {}", r.digits(3), r.digits(6)),
        4 => format!("020 {} {}", r.digits(4), r.digits(4)),
        5 => format!("+49 30 {}", r.digits(8)),
        6 => format!("+33 {} {} {} {} {}", 6 + r.below(2), r.digits(2), r.digits(2), r.digits(2), r.digits(2)),
        7 => format!("0{} {} {} {} {}", 1 + r.below(7), r.digits(2), r.digits(2), r.digits(2), r.digits(2)),
        8 => format!("+91 9{} {}", r.digits(4), r.digits(5)),
        9 => format!("+61 4{} {} {}", r.digits(2), r.digits(3), r.digits(3)),
        10 => format!("+81 90-{}-{}", r.digits(4), r.digits(4)),
        _ => format!("+5511{}", r.digits(9)),
    }
}

fn ssn(r: &mut Rng) -> String {
    let mut area = 1 + r.below(899);
    if area == 666 {
        area = 667;
    }
    format!("{area:03}-{:02}-{:04}", 1 + r.below(99), 1 + r.below(9999))
}

fn email(r: &mut Rng) -> String {
    let first = r.pick(&["carol", "dana", "fox", "walter", "monica", "john", "alex", "jeffrey", "marita", "brad"]);
    let last = r.pick(&["danvers", "scully", "mulder", "skinner", "reyes", "doggett", "krycek", "spender"]);
    let domain = r.pick(&["example.org", "example.com", "mail.example.net", "acme.io", "corp.example.co.uk"]);
    match r.below(3) {
        0 => format!("{first}.{last}@{domain}"),
        1 => format!("{first}{}@{domain}", r.below(100)),
        _ => format!("{first}.{last}+crm@{domain}"),
    }
}

fn private_ip(r: &mut Rng) -> String {
    match r.below(4) {
        0 => format!("10.{}.{}.{}", r.below(256), r.below(256), 1 + r.below(254)),
        1 => format!("192.168.{}.{}", r.below(256), 1 + r.below(254)),
        2 => format!("172.{}.{}.{}", 16 + r.below(16), r.below(256), 1 + r.below(254)),
        _ => format!("fd{:02x}:{:x}:{:x}::{:x}", r.below(256), r.below(65536), r.below(65536), 1 + r.below(65535)),
    }
}

fn dob(r: &mut Rng) -> String {
    let (y, m, d) = (1940 + r.below(66), 1 + r.below(12), 1 + r.below(28));
    match r.below(3) {
        0 => format!("{y}-{m:02}-{d:02}"),
        1 => format!("{d:02}/{m:02}/{y}"),
        _ => format!("{d:02}.{m:02}.{y}"),
    }
}

/// One record's values, by kind.
struct Person {
    email: String,
    phone: String,
    card: String,
    iban: String,
    ssn: String,
    ip: String,
    dob: String,
}

fn person(r: &mut Rng) -> Person {
    Person {
        email: email(r),
        phone: phone(r),
        card: card(r),
        iban: iban(r),
        ssn: ssn(r),
        ip: private_ip(r),
        dob: dob(r),
    }
}

impl Person {
    fn values(&self) -> [(&'static str, &str); 7] {
        [
            ("email", &self.email),
            ("phone", &self.phone),
            ("card", &self.card),
            ("iban", &self.iban),
            ("ssn", &self.ssn),
            ("ip", &self.ip),
            ("dob", &self.dob),
        ]
    }
}

/// Redacts `text` with PII on (`pii`) or off, as `redact` does.
fn redact(text: &str, pii: bool) -> (String, BTreeMap<String, u32>) {
    let req = RedactRequest {
        data: text.as_bytes().to_vec(),
        last: true,
        content_type: None,
        sniff: false,
        untrusted: false,
        report: false,
        pii,
        pii_public_ip: false,
    };
    let r = redact_step(&req, pack()).expect("redact");
    (String::from_utf8(r.output).unwrap(), r.redactions.into_iter().map(|c| (c.rule_id, c.count)).collect())
}

/// Sanitizes `text` as a successful result with PII on, as `content_type`.
fn sanitized(text: &str, content_type: &str) -> (String, BTreeMap<String, u64>) {
    let mut o = default_options();
    o.tool = "crm".into();
    o.content_type = Some(content_type.into());
    o.pii = true;
    big(&mut o);
    let s = sanitize(text.as_bytes(), &o, pack()).expect("sanitize");
    (text_of(&s.message), counts_of(&s.message))
}

/// The four contexts of one generated set: a log, a JSON document, a CSV
/// file and prose.
fn corpus(seed: u64, n: usize) -> (Vec<Person>, String, String, String, String) {
    let mut r = Rng(seed);
    let people: Vec<Person> = (0..n).map(|_| person(&mut r)).collect();
    let mut log = String::new();
    let mut prose = String::new();
    let mut csv = String::from("id,name,email,phone,iban,card,ssn,dob,ip\n");
    let mut json = Vec::new();
    for (i, p) in people.iter().enumerate() {
        let ts = format!("2026-12-04T07:{:02}:{:02}.{:03}Z", i % 60, (i * 7) % 60, i % 1000);
        log.push_str(&format!(
            "{ts} INFO crm.sync request_id=req_{i:06} user={} phone={} status=200 took={}ms\n\
             {ts} WARN payments card {} declined for iban {} (ssn {}) from {}\n\
             {ts} DEBUG profile dob={} updated\n",
            p.email,
            p.phone,
            3 + i % 90,
            p.card,
            p.iban,
            p.ssn,
            p.ip,
            p.dob
        ));
        prose.push_str(&format!(
            "Customer {i} wrote from {} and asked us to call back on {}. Their card {} was charged twice; \
             refund to {} please. SSN on file: {}. Date of birth: {}. Last login from {}.\n\n",
            p.email, p.phone, p.card, p.iban, p.ssn, p.dob, p.ip
        ));
        csv.push_str(&format!(
            "{i},Person {i},{},\"{}\",{},{},{},{},{}\n",
            p.email, p.phone, p.iban, p.card, p.ssn, p.dob, p.ip
        ));
        json.push(serde_json::json!({
            "id": i, "name": format!("Person {i}"), "email": p.email, "phone": p.phone, "iban": p.iban,
            "card": p.card, "ssn": p.ssn, "dob": p.dob, "last_ip": p.ip, "order": format!("ORD-{:08}", i * 7919),
        }));
    }
    let json = serde_json::to_string_pretty(&serde_json::json!({ "customers": json })).unwrap();
    (people, log, json, csv, prose)
}

#[test]
fn pii_on_recall_over_generated_values_in_context() {
    let (people, log, json, csv, prose) = corpus(40, 60);
    let mut planted = 0usize;
    let mut missed: BTreeMap<&str, usize> = BTreeMap::new();
    let outputs = [
        ("log", redact(&log, true).0),
        ("prose", redact(&prose, true).0),
        ("json", sanitized(&json, "application/json").0),
        ("csv", sanitized(&csv, "text/csv").0),
    ];
    for (context, out) in &outputs {
        for p in &people {
            for (kind, v) in p.values() {
                planted += 1;
                if out.contains(v) {
                    *missed.entry(kind).or_default() += 1;
                    eprintln!("missed a {kind} value in {context}");
                }
            }
        }
    }
    let found = planted - missed.values().sum::<usize>();
    let recall = found as f64 / planted as f64;
    eprintln!("recall {found}/{planted} = {recall:.4}; missed by kind: {missed:?}");
    assert!(planted >= 1000, "{planted} values");
    assert!(recall >= 0.98, "recall {recall:.4} ({found}/{planted}); missed by kind: {missed:?}");

    // The JSON is still JSON, with every value replaced inside its string.
    let out = &outputs[2].1;
    let doc: serde_json::Value = serde_json::from_str(out).expect("still JSON");
    let first = &doc["customers"][0];
    assert_eq!(first["email"], "[REDACTED:email]");
    assert_eq!(first["order"], "ORD-00000000");
    // The CSV keeps its shape: as many cells on every line.
    let cells: Vec<usize> = outputs[3].1.lines().map(|l| l.matches(',').count()).collect();
    assert!(cells.iter().all(|&c| c == cells[0]), "{cells:?}");
}

#[test]
fn pii_replacements_are_counted_in_the_record() {
    let (_, _, json, _, _) = corpus(7, 5);
    let (_, counts) = sanitized(&json, "application/json");
    for (kind, n) in [("email", 5), ("card", 5), ("iban", 5), ("ssn", 5), ("dob", 5), ("ip", 5), ("phone", 5)] {
        assert_eq!(counts.get(kind), Some(&n), "{kind}: {counts:?}");
    }
}

#[test]
fn a_bare_json_number_becomes_a_string() {
    let doc = r#"{"name": "Carol", "phone": 14155550132, "card": 4111111111111111, "count": 4111111111111112}"#;
    let (out, _) = sanitized(doc, "application/json");
    let v: serde_json::Value = serde_json::from_str(&out).expect("still JSON");
    assert_eq!(v["phone"], "[REDACTED:phone]");
    assert_eq!(v["card"], "[REDACTED:card]");
    assert_eq!(v["count"], 4111111111111112u64);
}

#[test]
fn pii_off_leaves_successful_results_alone() {
    let (people, log, _, _, prose) = corpus(41, 20);
    for text in [&log, &prose] {
        let (out, counts) = redact(text, false);
        assert_eq!(&out, text, "{counts:?}");
        assert!(people.iter().all(|p| out.contains(&p.email) && out.contains(&p.card)));
    }
}

#[test]
fn close_negatives_stay_with_pii_on() {
    let text = "\
order 4111111111111112 shipped (ids ORD-41111111 and 1234567890123456)
request 123e4567-e89b-12d3-a456-426614174000 trace 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
rustc 1.83.0 (90b35a623 2024-11-26); node v20.18.1; python 3.12.7; chrome 131.0.6778.85
2026-12-04T07:00:00.123456+01:00 took 1234567 ns; epoch 1733295600 ms 1733295600123 us 1733295600123456
listening on ports 8080 8443 9090 5432 6379 27017; pid 48213 ppid 1
checksum 3141592653589793 size 4096 offsets 10 20 30 40 50 60 70 80
version 10.0.19045.5131 build 22631.4602; v1.2.3.4
sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
GET /users/4155550132/orders?page=2 200
mac 00:1a:2b:3c:4d:5e ipv6 ::1 and 127.0.0.1 and 0.0.0.0:8080
amount 1234.56 EUR, total 98765432.10 EUR
";
    let (out, counts) = redact(text, true);
    assert_eq!(out, text, "{counts:?}");
}

#[test]
fn a_pack_can_turn_pii_on_for_every_tool() {
    let mut rf = RulesFile::parse("tenant.toml", "pii = true\n").unwrap().over_defaults().unwrap();
    rf.pack.name = Some("tenant".into());
    let rules = rf.to_rule_set();
    assert_eq!(rules.pii_tools, ["*"]);
    let p = pack_of(rules);
    let mut o = default_options();
    o.tool = "crm".into();
    let s = sanitize(b"contact: carol@example.org", &o, &p).unwrap();
    assert!(text_of(&s.message).contains("contact: [REDACTED:email]"));
    // The default pack: off.
    let s = sanitize(b"contact: carol@example.org", &o, pack()).unwrap();
    assert!(text_of(&s.message).contains("carol@example.org"));
}

/// The CLI's `--pii`: on `sanitize` and `redact`, off by default.
#[test]
fn the_cli_flag() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let run = |args: &[&str]| -> String {
        let mut child = Command::new(env!("CARGO_BIN_EXE_result-sanitizer"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(b"owner: carol@example.org, +44 7911 123456, 10.0.0.7\n").unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let on = run(&["redact", "--pii"]);
    assert_eq!(on, "owner: [REDACTED:email], [REDACTED:phone], [REDACTED:ip]\n");
    assert!(run(&["redact"]).contains("carol@example.org"));
    let msg = run(&["sanitize", "--pii", "--tool", "crm"]);
    assert!(msg.contains("[REDACTED:email]") && !msg.contains("7911"), "{msg}");
    assert!(run(&["sanitize", "--tool", "crm"]).contains("carol@example.org"));
}

/// The MCP proxy's config key, per tool and for every tool.
#[test]
fn the_proxy_config_key() {
    use result_sanitizer_mcp::config::ProxyConfig;
    let c = ProxyConfig::parse("proxy.toml", "[tools.crm_lookup]\npii = true\npii_public_ip = true\n").unwrap();
    let base = result_sanitizer_host::default_options();
    let (crm, other) = (c.options_for(&base, "crm_lookup"), c.options_for(&base, "read_file"));
    assert!(crm.pii && crm.pii_public_ip && !other.pii);
    let c = ProxyConfig::parse("proxy.toml", "[defaults]\npii = true\n[tools.docs]\npii = false\n").unwrap();
    assert!(c.options_for(&base, "x").pii && !c.options_for(&base, "docs").pii);
}

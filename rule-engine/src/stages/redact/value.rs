//! What counts as a secret value: a candidate's entropy, the allowlists
//! (rule, global, and for generic rules the shapes of code), the stopwords
//! (rule and global), and in source code the secret shape.

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

use super::rules::{literal_automaton, CompiledRule, Lazy, Ruleset, Whose};

impl Ruleset {
    /// The global stopwords, built on the first candidate (an instance
    /// that redacts nothing never builds them).
    pub(super) fn stopwords(&self) -> Option<&AhoCorasick> {
        self.global_stop
            .get_or_init(|| {
                literal_automaton(
                    &self.stopwords,
                    true,
                    MatchKind::Standard,
                    AhoCorasickKind::ContiguousNFA,
                    "global stopwords",
                )
                .map_err(|e| self.record_error(e))
                .ok()
                .flatten()
            })
            .as_ref()
    }

    pub(super) fn accept(&self, rule: &CompiledRule, secret: &str, fast: bool) -> bool {
        if memchr::memmem::find(secret.as_bytes(), crate::markup::REDACTED_PREFIX.as_bytes()).is_some() {
            return false;
        }
        if let Some(min) = rule.entropy {
            if shannon_entropy(secret.as_bytes()) < f64::from(min) {
                return false;
            }
        }
        // The global stopwords and allowlist describe placeholder secrets
        // (`example`, `xxxx`): a scrubbed SQL literal or an address at
        // example.org goes whatever it holds.
        let global = !(rule.errors_only || rule.pii);
        // A hand-typed placeholder is judged only where a value is machine
        // made: a rule with an entropy floor, or a value of 16 bytes or more.
        // A rule without a floor takes passwords people choose, and
        // `Pass11111` or `Abcdefgh2024!` must not pass for placeholders.
        let machine_made = rule.entropy.is_some() || secret.len() >= 16;
        if global
            && (self.stopwords().is_some_and(|ac| ac.is_match(secret))
                || (machine_made && reads_as_placeholder(secret)))
        {
            return false;
        }
        if !rule.stopwords.is_empty() {
            let lower = secret.to_ascii_lowercase();
            if rule.stopwords.iter().any(|w| lower.contains(w.as_str())) {
                return false;
            }
        }
        let allow = |l: &Lazy, whose: Whose| match l.matches(secret, fast) {
            Ok(m) => m,
            Err(e) => {
                self.record_error(whose.error(e));
                false
            }
        };
        // A generic rule's candidate also must not be a shape of code.
        let generic = rule.strict_only && allow(&self.generic_allow, Whose::Generic);
        !(allow(&rule.allow, Whose::Rule(&rule.id)) || (global && allow(&self.global_allow, Whose::Global)) || generic)
    }

    /// Whether a generic rule's value in source code is shaped like a
    /// secret: long enough, random enough, and mixing letters, digits and
    /// other characters (see the WIT's `generic-values`).
    pub(super) fn secret_shaped(&self, value: &str) -> bool {
        let want = &self.code_shape;
        let b = value.as_bytes();
        let (mut letters, mut digits, mut other) = (false, false, false);
        for &c in b {
            match c {
                b'a'..=b'z' | b'A'..=b'Z' => letters = true,
                b'0'..=b'9' => digits = true,
                b'_' | b'-' | b'.' | b'/' | b':' => {}
                _ => other = true,
            }
        }
        let classes = u32::from(letters) + u32::from(digits) + u32::from(other);
        b.len() >= want.code_min_length as usize
            && classes >= want.code_min_classes
            && shannon_entropy(b) >= f64::from(want.code_min_entropy)
    }
}

/// A value at least this long is judged by its tokens.
const WORDLIKE_MIN_LEN: usize = 6;
/// Bytes per o200k token from which a value reads as words, names or
/// calls rather than random text. Measured on the issue #37 benchmark
/// (docs/benchmarks.md): the values generic rules took from grep hits,
/// diffs and listings of real code have a median of 4.7 bytes per token
/// (a quarter under 3.3: `u.username`, `encodeUserPassword`,
/// `ReFrEsHtOkEn`), random secrets of 12 to 40 characters (alphanumeric,
/// hex, base64, with punctuation) at most 2.3 (median 1.5).
const WORDLIKE_BYTES_PER_TOKEN: f64 = 3.0;

/// Whether `value` tokenizes like words, identifiers, paths or calls
/// (a generic rule's value that is not a secret): few tokens for its
/// length, in the tokenizer the pipeline holds anyway.
pub(super) fn tokenizes_like_words(value: &str) -> bool {
    if value.len() < WORDLIKE_MIN_LEN {
        return false;
    }
    // Most candidates of a secret-dense text are random: a lower bound on
    // their tokens already puts them under the threshold, without the
    // tokenizer (about 15 µs a value in wasm).
    if (value.len() as f64) < WORDLIKE_BYTES_PER_TOKEN * o200k_pieces_at_least(value.as_bytes()) as f64 {
        return false;
    }
    let tokens = crate::support::tokenizer::Tokenizer::get(crate::api::Encoding::O200kBase).count(value).max(1);
    value.len() as f64 / tokens as f64 >= WORDLIKE_BYTES_PER_TOKEN
}

/// Whether `value` is made of ASCII letters alone or tokenizes like
/// words: a generic rule's value that is not sought where it appears
/// again (`scan.rs`), since nothing there says it is a secret.
pub(super) fn letters_or_words(value: &str) -> bool {
    value.bytes().all(|c| c.is_ascii_alphabetic()) || tokenizes_like_words(value)
}

/// Whether a value found in a test's code or data is a fixture written to
/// be read: shorter than [`WORDLIKE_MIN_LEN`] (`in`) or tokenizing like
/// words (`opensesame`). Random values of any format are neither.
/// A value from a URL is judged as written before it was percent-encoded
/// (`open%20sesame` is `open sesame`).
pub(super) fn reads_as_fixture(value: &str) -> bool {
    let decoded = percent_decoded(value);
    let value = decoded.as_deref().unwrap_or(value);
    value.len() < WORDLIKE_MIN_LEN || tokenizes_like_words(value)
}

/// A placeholder's body is at least this long before it is judged.
const PLACEHOLDER_MIN_LEN: usize = 8;
/// A run of this many consecutive letters (`abcdefgh`, `AbCdEfGh`) reads
/// as typed by hand: in a random value over 62 characters it has odds of
/// about 1 in 3.5e12 per position. Runs of digits are not counted: test
/// fixtures and tenants' packs are full of `0123456789abcdef` secrets
/// whose redaction their tests check, and a rule's example is often one.
const PLACEHOLDER_RUN: usize = 8;

/// Whether `value` is a placeholder written by hand rather than a
/// generated secret: one character makes half of it or more
/// (`hvs.xxxxxxxx`, `glc_1111111111`, `AIzaaaaaaaaa`), or it holds a run
/// of [`PLACEHOLDER_RUN`] consecutive letters (`sk_live_abcdefghijklmnop`). Documentation and test
/// fixtures are full of both; generated secrets, of any alphabet from hex
/// up, hold neither (a 40-character hex value's most frequent character is
/// about an eighth of it). Cost: one pass over the value.
pub(super) fn reads_as_placeholder(value: &str) -> bool {
    let b = value.as_bytes();
    if b.len() < PLACEHOLDER_MIN_LEN {
        return false;
    }
    let mut counts = [0u16; 256];
    let (mut run, mut prev) = (1usize, 0u8);
    for (i, &c) in b.iter().enumerate() {
        counts[c as usize] = counts[c as usize].saturating_add(1);
        let l = c.to_ascii_lowercase();
        if i > 0 && l.is_ascii_lowercase() && prev.is_ascii_lowercase() && l == prev + 1 {
            run += 1;
            if run >= PLACEHOLDER_RUN {
                return true;
            }
        } else {
            run = 1;
        }
        prev = l;
    }
    // Counted over the letters and digits: a prefix's `_` or `-` is not
    // the body.
    let alnum = b.iter().filter(|c| c.is_ascii_alphanumeric()).count();
    let most =
        counts.iter().enumerate().filter(|(c, _)| (*c as u8).is_ascii_alphanumeric()).map(|(_, n)| *n as usize).max();
    alnum >= PLACEHOLDER_MIN_LEN && most.is_some_and(|m| 2 * m >= alnum)
}

/// `value` with its `%XX` escapes decoded, when it has any and the result
/// is UTF-8.
fn percent_decoded(value: &str) -> Option<String> {
    let b = value.as_bytes();
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(b.len());
    let (mut i, mut any) = (0, false);
    while i < b.len() {
        match (b[i], b.get(i + 1).copied().and_then(hex), b.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(h), Some(l)) => {
                out.push(h << 4 | l);
                any = true;
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    any.then(|| String::from_utf8(out).ok()).flatten()
}

/// A lower bound on the o200k tokens of ASCII `b` (0 for other text),
/// from its pre-tokenizer alone: a piece never joins letters and digits,
/// a digit piece holds at most three digits, and a lower-case letter
/// followed by an upper-case one ends a piece (`[A-Z]*[a-z]+`). Each
/// piece is one token or more. Other characters may join a letter piece,
/// so they are not counted.
fn o200k_pieces_at_least(b: &[u8]) -> usize {
    if !b.is_ascii() {
        return 0;
    }
    let (mut pieces, mut digits) = (0usize, 0usize);
    let mut prev = 0u8;
    for &c in b {
        if c.is_ascii_digit() {
            digits += 1;
        } else {
            pieces += digits.div_ceil(3);
            digits = 0;
        }
        if c.is_ascii_alphabetic()
            && !(prev.is_ascii_alphabetic() && !(prev.is_ascii_lowercase() && c.is_ascii_uppercase()))
        {
            pieces += 1;
        }
        prev = c;
    }
    pieces + digits.div_ceil(3)
}

/// Whether the text from `end` on makes what ends there the name side of
/// an assignment: `x = ...`, `x := ...`, `x += ...`, `x, err := ...`.
/// A value is never there.
pub(super) fn name_side(b: &[u8], end: usize) -> bool {
    let skip = |mut i: usize| {
        while b.get(i).is_some_and(|c| *c == b' ' || *c == b'\t') {
            i += 1;
        }
        i
    };
    let mut i = skip(end);
    // Further names of a multiple assignment.
    for _ in 0..4 {
        if b.get(i) != Some(&b',') {
            break;
        }
        i = skip(i + 1);
        let n = b[i..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count();
        if n == 0 {
            return false;
        }
        i = skip(i + n);
    }
    let rest = &b[i.min(b.len())..];
    let op = rest.iter().take_while(|c| b"+-*/|&:".contains(c)).count();
    rest.get(op) == Some(&b'=') && op <= 1 && !matches!(rest.get(op + 1), Some(b'=' | b'>'))
}

/// Whether `at` lies in an Amazon Resource Name
/// (`arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-AbCdEf`):
/// its segments name a resource (`secret:` is Secrets Manager's resource
/// type), they hold no secret, and an agent needs the name whole. Looks back
/// at most 256 bytes, to the first byte outside an ARN's alphabet (a space,
/// a quote, `=`, `&`, `;`, a `\n` escaped in a JSON string).
pub(super) fn inside_arn(b: &[u8], at: usize) -> bool {
    let lo = at.saturating_sub(256);
    b[lo..at]
        .iter()
        .rposition(|c| {
            !(c.is_ascii_alphanumeric() || matches!(c, b':' | b'/' | b'-' | b'_' | b'.' | b'+' | b'@' | b'*' | b'$'))
        })
        .is_some_and(|i| b[lo + i + 1..at].starts_with(b"arn:"))
}

/// Names whose token is no credential but a handle an agent passes back
/// to the next call, as cloud APIs print them (compared without case, `_`
/// or `-`): page cursors (`NextToken`, `nextPageToken`,
/// `NextContinuationToken`, `nextForwardToken`, `StartingToken`,
/// `$skiptoken`), optimistic locks (`LockToken`, `ChangeToken`,
/// `PolicyUpdateToken`) and idempotency keys (`IdempotencyToken`,
/// `ClientRequestToken`). Whole names only: `FACEBOOK_PAGE_TOKEN`,
/// `REPO_SYNC_TOKEN` or a Kite `request_token` are credentials, and so is
/// a bare `page_token` (a Facebook Page's): responses print `nextPageToken`.
/// `ClientToken` is not here: Vault's `client_token` is its credential.
const HANDLE_TOKENS: &[&[u8]] = &[
    b"nexttoken",
    b"nextpagetoken",
    b"paginationtoken",
    b"continuationtoken",
    b"nextcontinuationtoken",
    b"nextforwardtoken",
    b"nextbackwardtoken",
    b"startingtoken",
    b"nextsequencetoken",
    b"uploadsequencetoken",
    b"nextsynctoken",
    b"skiptoken",
    b"locktoken",
    b"nextlocktoken",
    b"changetoken",
    b"policyupdatetoken",
    b"idempotencytoken",
    b"clientrequesttoken",
];

/// Whether the value starting at `start` is assigned to a handle's name
/// ([`HANDLE_TOKENS`]): the name before the separator (`"NextToken": "`,
/// `next_page_token=`, `LockToken: `). A name in capitals alone
/// (`NEXT_TOKEN=`) is an environment variable's, where a handle never is.
pub(super) fn handle_token_name(b: &[u8], start: usize) -> bool {
    let mut i = start;
    let lo = start.saturating_sub(8);
    while i > lo && matches!(b[i - 1], b'"' | b'\'' | b'`' | b'\\' | b' ' | b'\t' | b':' | b'=' | b'>') {
        i -= 1;
    }
    let end = i;
    let stop = i.saturating_sub(32);
    while i > stop && (b[i - 1].is_ascii_alphanumeric() || matches!(b[i - 1], b'_' | b'-')) {
        i -= 1;
    }
    let name = &b[i..end];
    if !name.iter().any(u8::is_ascii_lowercase) || (i > 0 && b[i - 1].is_ascii_alphanumeric()) {
        return false;
    }
    let mut folded = [0u8; 32];
    let mut n = 0;
    for c in name.iter().filter(|c| c.is_ascii_alphanumeric()) {
        folded[n] = c.to_ascii_lowercase();
        n += 1;
    }
    HANDLE_TOKENS.contains(&&folded[..n])
}

/// Shannon entropy in bits per byte.
pub fn shannon_entropy(s: &[u8]) -> f64 {
    if s.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &b in s {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` characters of `alphabet`, from a seed (xorshift).
    fn draw(seed: &mut u64, alphabet: &[u8], n: usize) -> String {
        (0..n)
            .map(|_| {
                *seed ^= *seed << 13;
                *seed ^= *seed >> 7;
                *seed ^= *seed << 17;
                alphabet[(*seed % alphabet.len() as u64) as usize] as char
            })
            .collect()
    }

    #[test]
    fn hand_typed_placeholders_are_not_secrets() {
        for v in [
            "hvs.xxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "glc_111111111111111111111111111111=",
            "AIzaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "xoxp-XXXXXXXXXX-XXXXXXXXXX-XXXXXXXXXXX-XXXXXXXXXXXXXXXX",
            "sk_live_abcdefghijklmnopqrstuvwxyz123456",
            "prf_test_AbCdEfGhIjKlMnOpQrStUvWxYz123456",
            "00000000000000000000000000000000000TUVWXYZ",
        ] {
            assert!(reads_as_placeholder(v), "{v}");
        }
        // Generated values of every common alphabet, and short ones.
        let mut seed = 0x5eed_u64;
        for (alphabet, n) in [
            (&b"0123456789abcdef"[..], 32),
            (b"0123456789abcdef", 64),
            (b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
            (b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 40),
            (b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/", 88),
            (b"0123456789", 20),
        ] {
            for _ in 0..2000 {
                let v = draw(&mut seed, alphabet, n);
                assert!(!reads_as_placeholder(&v), "{v}");
            }
        }
        assert!(!reads_as_placeholder("aaaa"));
        assert!(!reads_as_placeholder("acme_0123456789abcdef0123456789abcdef"));
    }

    #[test]
    fn words_names_and_calls_are_not_secrets() {
        for v in ["u.username", "encodeUserPassword", "subjectToken()", "config.auth.password", "new_password"] {
            assert!(tokenizes_like_words(v), "{v}");
        }
        // Random text of the lengths and alphabets secrets have; built at
        // run time from a fixed seed.
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let alnum = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        for n in [8, 12, 20, 32, 40] {
            for alphabet in [&alnum[..], b"0123456789abcdef", b"abcdefghijklmnopqrstuvwxyz0123456789+/!#%&*"] {
                let v = draw(&mut x, alphabet, n);
                assert!(!tokenizes_like_words(&v), "random value of {n} characters read as words");
            }
        }
    }

    #[test]
    fn the_name_side_of_an_assignment() {
        let at = |s: &str, name: &str| name_side(s.as_bytes(), s.find(name).unwrap() + name.len());
        assert!(at("privBytes, err := base64.StdEncoding.DecodeString(x)", "privBytes"));
        assert!(at("let token = next()", "token"));
        assert!(at("total += 1", "total"));
        assert!(!at("if token == other {", "token"));
        assert!(!at("password: Xk9mQ2vLp7,", "Xk9mQ2vLp7"));
        assert!(!at("API_KEY=Xk9mQ2vLp7\n", "Xk9mQ2vLp7"));
        assert!(!at("{:password => x}", ":password"));
    }

    #[test]
    fn handles_named_token_are_no_credentials() {
        let at = |s: &str, v: &str| handle_token_name(s.as_bytes(), s.find(v).unwrap());
        assert!(at(r#"    "NextToken": "eyJOZXh0VG9rZW4iOiBudWxsfQ==","#, "eyJ"));
        assert!(at(r#""LockToken":"0bd4d26d-1e2f-4a4c-9d4a-0c2b7d8f4a21""#, "0bd4"));
        assert!(at("?page_size=50&next_page_token=Cg5Xk9mQ2vLp7", "Cg5X"));
        assert!(!at("page_token: Cg5Xk9mQ2vLp7", "Cg5X"));
        assert!(at("PolicyUpdateToken: Xk9mQ2vLp7", "Xk9m"));
        assert!(at(r#"{\"nextToken\":\"Xk9mQ2vLp7\"}"#, "Xk9m"));
        assert!(at("$skiptoken=Xk9mQ2vLp7", "Xk9m"));
        assert!(!at(r#""SessionToken": "Xk9mQ2vLp7""#, "Xk9m"));
        assert!(!at(r#""client_token": "Xk9mQ2vLp7""#, "Xk9m"));
        assert!(!at("GITHUB_TOKEN=Xk9mQ2vLp7", "Xk9m"));
        assert!(!at("token=Xk9mQ2vLp7", "Xk9m"));
        assert!(!at("next_password=Xk9mQ2vLp7", "Xk9m"));
        // Credentials whose names end like a handle's, and a handle's name
        // in capitals (an environment variable).
        for cred in ["FACEBOOK_PAGE_TOKEN=", "statuspage_token=", "repo_sync_token=", "request_token=", "NEXT_TOKEN="] {
            let text = format!("{cred}Xk9mQ2vLp7");
            assert!(!at(&text, "Xk9m"), "{cred}");
        }
    }

    #[test]
    fn a_segment_of_an_arn() {
        let at = |s: &str| inside_arn(s.as_bytes(), s.find("secret:").unwrap());
        assert!(at(r#""ARN": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-AbCdEf","#));
        assert!(at("Resource: arn:aws-us-gov:secretsmanager:us-gov-west-1:1:secret:db-*"));
        assert!(!at("client_secret: Xk9mQ2vLp7"));
        assert!(!at("warn: secret: Xk9mQ2vLp7"));
        assert!(!at("yarn:secret: Xk9mQ2vLp7"));
        // A query or a list after an ARN is not the ARN.
        assert!(!at("?TopicArn=arn:aws:sns:us-east-1:1:t&secret:Xk9mQ2vLp7"));
        assert!(!at("role=arn:aws:iam::1:role/r;secret:Xk9mQ2vLp7"));
        assert!(!at(r#""ROLE_ARN=arn:aws:iam::1:role/app\nDB_secret:Xk9mQ2vLp7""#));
    }

    #[test]
    fn the_piece_bound_is_never_over_the_tokens() {
        let tok = crate::support::tokenizer::Tokenizer::get(crate::api::Encoding::O200kBase);
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let alphabets = [
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
            "0123456789abcdef",
            "aB0_-./:+=",
            "abcdefghij",
        ];
        let mut values: Vec<String> =
            ["encodeUserPassword", "ReFrEsHtOkEn", "HTTPServer2Go", "u.username", "x1y22z333w4444", "abcdef123456XYZ"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        for i in 0..2000 {
            let a = alphabets[i % alphabets.len()].as_bytes();
            let n = 6 + i % 50;
            values.push(draw(&mut seed, a, n));
        }
        for v in &values {
            assert!(o200k_pieces_at_least(v.as_bytes()) <= tok.count(v), "{v}");
        }
    }

    #[test]
    fn fixtures_read_as_words_and_credentials_do_not() {
        for v in ["in", "pass", "opensesame", "open%20sesame", "hunter2hunter2", "letmein", "secret_token_value"] {
            assert!(reads_as_fixture(v), "{v}");
        }
        for v in ["Summer2024!", "S3cr3t-pa55", "P@ssw0rd123", "q8vR2mK7tL", "q8vR%2FmK7tL"] {
            assert!(!reads_as_fixture(v), "{v}");
        }
        // Random values of the formats the review named: letters only
        // (`hf_`), AWS key ids, hex keys. None reads as a fixture.
        let mut seed = 0x5DEE_CE66_D1CE_4E5Bu64;
        for _ in 0..300 {
            let hf = format!("hf_{}", draw(&mut seed, b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", 34));
            let aws = format!("AKIA{}", draw(&mut seed, b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16));
            let hex = draw(&mut seed, b"0123456789abcdef", 32);
            for v in [hf, aws, hex] {
                assert!(!reads_as_fixture(&v), "a random credential read as a fixture");
            }
        }
    }
}

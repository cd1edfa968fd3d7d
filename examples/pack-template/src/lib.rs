//! A rule pack with code: start here when regexes are not enough.
//!
//! This one finds Acme's in-house live tokens, `acme_live_` + 24 base32
//! characters + 8 lower-case hex digits of the CRC-32 of everything before
//! them. A regex cannot check the checksum; `detect` can, so random strings
//! of the right shape are not redacted.
//!
//! Build and ship:
//!
//! ```sh
//! cargo build --release --target wasm32-unknown-unknown -p pack-template
//! result-sanitizer pack wrap target/wasm32-unknown-unknown/release/pack_template.wasm -o acme-code.wasm
//! result-sanitizer pack sign acme-code.wasm --key acme.key
//! ```
//!
//! `detect` runs in its own instance under the pack's fuel and memory
//! limits; it sees decoded text and returns byte offsets, which the
//! pipeline checks before using.

wit_bindgen::generate!({ path: "../../wit", world: "pack" });

use exports::result_sanitizer::core::rule_pack::{Finding, GenericValues, Guest, PackInfo, RuleSet};

/// Prefix of the token.
pub const PREFIX: &[u8] = b"acme_live_";
const BODY: usize = 24;
const CHECK: usize = 8;

/// Spans of valid tokens in `text`.
pub fn find_tokens(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    for start in memchr::memmem::find_iter(b, PREFIX) {
        let body_end = start + PREFIX.len() + BODY;
        let end = body_end + CHECK;
        if end > b.len() {
            continue;
        }
        let body = &b[start + PREFIX.len()..body_end];
        let check = &b[body_end..end];
        if !body.iter().all(|c| matches!(c, b'A'..=b'Z' | b'2'..=b'7')) {
            continue;
        }
        if b.get(end).is_some_and(|c| c.is_ascii_alphanumeric()) {
            continue;
        }
        let want = format!("{:08x}", crc32fast::hash(&b[start..body_end]));
        if check == want.as_bytes() {
            out.push((start, end));
        }
    }
    out
}

struct AcmePack;

impl Guest for AcmePack {
    fn info() -> PackInfo {
        PackInfo {
            name: "acme-code".into(),
            version: "1.0.0".into(),
            tenant: "acme".into(),
            wit_version: "0.1.0".into(),
            description: "Acme live tokens, checksum-verified".into(),
        }
    }

    fn rules() -> RuleSet {
        RuleSet {
            rules: vec![],
            allow_regexes: vec![],
            stopwords: vec![],
            path_roots: vec![],
            budgets: vec![],
            lenient_tools: vec![],
            // No generic rules here: nothing to judge.
            generic: GenericValues {
                allow_regexes: vec![],
                code_min_length: 0,
                code_min_entropy: 0.0,
                code_min_classes: 0,
            },
            scrub_tools: vec![],
            readable_roots: vec![],
            relax: vec![],
            pii_tools: vec![],
        }
    }

    fn has_detect() -> bool {
        true
    }

    fn detect(text: String) -> Vec<Finding> {
        find_tokens(&text)
            .into_iter()
            .map(|(s, e)| Finding { rule_id: "acme-live-token".into(), start: s as u32, end: e as u32 })
            .collect()
    }
}

#[cfg(target_arch = "wasm32")]
export!(AcmePack);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_decides() {
        let body = "ABCDEFGHIJKLMNOPQRSTUVWX";
        let head = format!("acme_live_{body}");
        let good = format!("{head}{:08x}", crc32fast::hash(head.as_bytes()));
        let text = format!("x {good} y {head}00000000 z");
        assert_eq!(find_tokens(&text), vec![(2, 2 + good.len())]);
    }
}

//! What counts as a secret value: a candidate's entropy, the allowlists
//! (rule, global, and for generic rules the shapes of code), the stopwords
//! (rule and global), and in source code the secret shape.

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

use super::rules::{literal_automaton, CompiledRule, Lazy, Ruleset};

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
        if global && self.stopwords().is_some_and(|ac| ac.is_match(secret)) {
            return false;
        }
        if !rule.stopwords.is_empty() {
            let lower = secret.to_ascii_lowercase();
            if rule.stopwords.iter().any(|w| lower.contains(w.as_str())) {
                return false;
            }
        }
        let allow = |l: &Lazy| match l.matches(secret, fast) {
            Ok(m) => m,
            Err(e) => {
                self.record_error(e);
                false
            }
        };
        // A generic rule's candidate also must not be a shape of code.
        let generic = rule.strict_only && allow(&self.generic_allow);
        !(allow(&rule.allow) || (global && allow(&self.global_allow)) || generic)
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

/// Shannon entropy in bits per byte.
pub(crate) fn shannon_entropy(s: &[u8]) -> f64 {
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

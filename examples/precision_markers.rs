//! What `make precision`'s two tables count: the `[REDACTED:<id>]`
//! markers a redaction added (shared by `precision.rs` and
//! `precision_shell.rs`).

use std::collections::BTreeMap;

/// The marker every redaction starts with.
pub const MARKER: &[u8] = b"[REDACTED:";

/// `[REDACTED:<id>]` markers in `text`, by rule id.
pub fn markers(text: &[u8]) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    let mut i = 0;
    while let Some(p) = text[i..].windows(MARKER.len()).position(|w| w == MARKER) {
        let start = i + p + MARKER.len();
        let id_len =
            text[start..].iter().take(65).take_while(|&&b| b.is_ascii_alphanumeric() || b"._-".contains(&b)).count();
        if (1..=64).contains(&id_len) && text.get(start + id_len) == Some(&b']') {
            *m.entry(String::from_utf8_lossy(&text[start..start + id_len]).into_owned()).or_insert(0) += 1;
        }
        i = start;
    }
    m
}

/// Markers in `output` that `input` did not already hold: a file that
/// quotes our marker (docs, tests) must not count as redacted.
pub fn new_markers(input: &[u8], output: &[u8]) -> BTreeMap<String, u64> {
    let before = markers(input);
    let mut m = markers(output);
    for (k, v) in m.iter_mut() {
        *v = v.saturating_sub(before.get(k).copied().unwrap_or(0));
    }
    m.retain(|_, v| *v > 0);
    m
}

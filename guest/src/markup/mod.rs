//! The text the model sees besides the content itself: truncation
//! markers, the untrusted-source boundary, the tool-error line and notices.
//! Every such string is built here, so its wording lives in one place.

pub(crate) mod compose;
pub(crate) mod frame;
pub(crate) mod marker;
pub(crate) mod notice;

/// Prefix of a redaction; content after it is never itself treated as a
/// secret.
pub(crate) const REDACTED_PREFIX: &str = "[REDACTED:";

/// What a redacted span becomes: `[REDACTED:<rule-id>]`, nothing of the
/// secret kept, not even its length.
pub(crate) fn redacted(rule_id: &str) -> String {
    let mut s = String::with_capacity(REDACTED_PREFIX.len() + rule_id.len() + 1);
    s.push_str(REDACTED_PREFIX);
    s.push_str(rule_id);
    s.push(']');
    s
}

/// [`redacted`], appended to a byte buffer (the streaming step).
pub(crate) fn push_redacted(out: &mut Vec<u8>, rule_id: &str) {
    out.extend_from_slice(REDACTED_PREFIX.as_bytes());
    out.extend_from_slice(rule_id.as_bytes());
    out.push(b']');
}

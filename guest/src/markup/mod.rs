//! The text the model sees besides the content itself: truncation
//! markers, the untrusted-source boundary, the tool-error line and notices.
//! Every such string is built here, so its wording lives in one place,
//! and so is [`defang`], which keeps content from imitating them (the
//! redaction and the error-line excerpt both call it).

pub(crate) mod defang;
pub(crate) mod frame;
pub(crate) mod lexicon;
pub(crate) mod marker;
pub(crate) mod notice;

pub(crate) use lexicon::{push_redacted, redacted, REDACTED_PREFIX};

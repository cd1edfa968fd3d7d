//! The text the model sees besides the content itself: truncation
//! markers, the untrusted-source boundary, the tool-error line and notices.
//! Every such string is built here, so its wording lives in one place;
//! the few the rule engine must know (what a redaction becomes, the marker
//! prefix, the boundary tags: `lexicon`) and [`defang`], which keeps
//! content from imitating them (the redaction and the error-line excerpt
//! both call it), are the engine's (`rule-engine/src/markup/`), re-exported
//! here.

pub(crate) mod frame;
pub(crate) mod marker;
pub(crate) mod notice;

pub(crate) use lexicon::{push_redacted, redacted};
pub(crate) use result_sanitizer_rule_engine::markup::{defang, lexicon};

//! The part of the pipeline's markup the engine must know: what a
//! redaction becomes, where markup is in a rendered text ([`lexicon`]), and
//! [`defang`], which keeps content from imitating it. Rendering markers,
//! the frame and notices is the pipeline's (`markup/` there).

pub mod defang;
pub mod lexicon;

pub use lexicon::{push_redacted, redacted, spans, REDACTED_PREFIX};

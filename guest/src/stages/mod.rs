//! The pipeline's stages, one module each, in the order
//! [`crate::pipeline`] calls them.

pub(crate) mod byte_cap;
pub(crate) mod char_budget;
pub(crate) mod decode;
pub(crate) mod html;
pub(crate) mod mcp;
pub(crate) mod redact;
pub(crate) mod structure;
pub(crate) mod token_budget;
pub(crate) mod triage;
pub(crate) mod wrap;

//! Helpers shared by the stages: replacements with offset maps, text
//! positions, the tokenizer, its chunks and its upper bound, media token
//! estimates.

pub(crate) mod chunks;
pub(crate) mod code;
pub(crate) mod edits;
pub(crate) mod error_words;
pub(crate) mod json_scan;
pub(crate) mod located;
pub(crate) mod media;
pub(crate) mod pieces;
pub(crate) mod regions;
pub(crate) mod text;
pub(crate) mod token_bound;
pub(crate) mod tokenizer;

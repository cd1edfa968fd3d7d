//! Helpers shared by the stages: text positions of the whole output
//! (`located`), JSON scanning, media token estimates; and, re-exported at
//! their old paths, the rule engine's that the stages use (replacements
//! with offset maps, text boundaries, content types, sniffing and regions, the
//! tokenizer, the error words).

pub(crate) mod json_scan;
pub(crate) mod located;
pub(crate) mod media;

pub(crate) use result_sanitizer_rule_engine::support::{code, edits, error_words, regions, sniff, text, tokenizer};

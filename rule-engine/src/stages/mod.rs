//! The pipeline stage the engine is: redaction (`stages/redact/` in the
//! pipeline's layout, kept so that paths read the same in both crates).

pub mod redact;

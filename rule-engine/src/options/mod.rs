//! The options' defaults and bounds ([`defaults`]); how the pipeline
//! resolves the budget it applies from them is its own `options/`.

pub mod defaults;

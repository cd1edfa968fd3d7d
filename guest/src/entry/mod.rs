//! Entry points other than [`crate::sanitize`]: the wasm component glue,
//! the JSON twin, the streaming redaction step, the drain step over a long
//! output's middle, and round budgets.

#[cfg(target_arch = "wasm32")]
mod component;
pub(crate) mod drain;
pub(crate) mod json_twin;
pub(crate) mod round;
pub(crate) mod stream;

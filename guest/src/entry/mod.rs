//! Entry points other than [`crate::sanitize`]: the wasm component glue,
//! the JSON twin, the streaming redaction step, and round budgets. The
//! drain step over a long output's middle is the byte cap's
//! ([`crate::stages::byte_cap::drain`]), as the pipeline drains with it too.

#[cfg(target_arch = "wasm32")]
mod component;
pub(crate) mod json_twin;
pub(crate) mod round;
pub(crate) mod stream;

//! Core wasm module → component, with wit-component.

use anyhow::Result;
use wit_component::ComponentEncoder;

/// Turns a core module carrying a `component-type` section (as
/// wit-bindgen emits) into a validated component.
pub fn componentize(core: &[u8]) -> Result<Vec<u8>> {
    ComponentEncoder::default().module(core)?.validate(true).encode()
}

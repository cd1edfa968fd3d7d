//! Limits applied to every guest call, with safe defaults.
//!
//! | limit | default | protects against |
//! |---|---|---|
//! | `fuel` | 20 000 000 000 units per call | a pipeline that computes forever (deterministic) |
//! | `pack_fuel` | 2 000 000 000 units per pack call | a pack whose code loops |
//! | `timeout` | 5 s per call | anything fuel misses: wall-clock backstop (epochs) |
//! | `memory` | 256 MiB per pipeline memory | unbounded allocation in the pipeline |
//! | `pack_memory` | 32 MiB per pack memory | unbounded allocation in a pack |
//! | `rule_set_bytes` | 4 MiB of rule text per pack | a pack whose rules would make every pipeline instance compile and hold megabytes |
//! | `pack_bytes` | 16 MiB per pack file | compile time and memory spent on an oversized pack, refused before compiling |
//! | stack | 1 MiB of wasm stack | runaway recursion (fixed in the engine) |
//!
//! Fuel is about one unit per wasm instruction; building the o200k tables
//! once per instance costs a few billion, a 256 KiB call far less.

use std::time::Duration;

/// Epoch tick: the wall-clock resolution of `timeout`.
pub const TICK: Duration = Duration::from_millis(5);
/// Wasm stack size (engine-wide; it is part of the compiled code's contract).
pub const MAX_WASM_STACK: usize = 1 << 20;

/// Per-call limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Fuel for one pipeline call.
    pub fuel: u64,
    /// Fuel for one call into a pack.
    pub pack_fuel: u64,
    /// Wall-clock limit of one call.
    pub timeout: Duration,
    /// Largest linear memory of the pipeline, bytes.
    pub memory: usize,
    /// Largest linear memory of a pack, bytes.
    pub pack_memory: usize,
    /// Largest rule set a pack may return: the sum of its strings' lengths
    /// plus 64 bytes per rule, bytes.
    pub rule_set_bytes: usize,
    /// Largest pack file the host compiles, bytes.
    pub pack_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            fuel: 20_000_000_000,
            pack_fuel: 2_000_000_000,
            timeout: Duration::from_secs(5),
            memory: 256 << 20,
            pack_memory: 32 << 20,
            rule_set_bytes: 4 << 20,
            pack_bytes: 16 << 20,
        }
    }
}

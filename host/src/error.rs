//! Typed errors. None of them carries any part of the input.

use std::fmt;

/// Which guest a limit or trap belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Guest {
    /// The pipeline component.
    Pipeline,
    /// A rule pack, by name.
    Pack(String),
}

impl fmt::Display for Guest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Guest::Pipeline => write!(f, "the pipeline"),
            Guest::Pack(n) => write!(f, "rule pack `{n}`"),
        }
    }
}

/// Everything that can go wrong in the host.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Fuel ran out.
    #[error("{guest} ran out of fuel (limit {limit} units)")]
    Fuel { guest: Guest, limit: u64 },
    /// The wall-clock deadline passed.
    #[error("{guest} exceeded the time limit of {ms} ms")]
    Timeout { guest: Guest, ms: u128 },
    /// A memory cap was hit.
    #[error("{guest} exceeded its memory limit of {bytes} bytes")]
    Memory { guest: Guest, bytes: usize },
    /// A guest returned more than a host limit allows (a pack's rule set,
    /// a flood of findings); checked before the data reaches the pipeline.
    #[error("{guest} returned {what} of {size} (limit {limit})")]
    TooLarge { guest: Guest, what: &'static str, size: u64, limit: u64 },
    /// Any other trap (a panic, a stack overflow).
    #[error("{guest} trapped: {reason}")]
    Trap { guest: Guest, reason: String },
    /// The caller's options were rejected by the pipeline.
    #[error("invalid options: {0}")]
    InvalidOptions(String),
    /// The input could not be read as declared.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// The pack's rules are unusable.
    #[error("invalid rule pack: {0}")]
    InvalidPack(String),
    /// The pipeline returned something the host will not pass on.
    #[error("the pipeline returned an invalid result: {0}")]
    InvalidOutput(String),
    /// A component could not be loaded or linked.
    #[error("cannot load {what}: {reason}")]
    Load { what: String, reason: String },
    /// A pack failed verification; nothing was compiled.
    #[error(transparent)]
    Refused(#[from] crate::signing::Refusal),
    /// A recall was refused (unknown, expired, evicted, other tenant).
    #[error("recall refused: {0}")]
    Recall(#[from] RecallError),
    /// Reading input or running a command failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
}

/// Result alias.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a recall was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecallError {
    /// No output was ever kept under this id.
    #[error("no output is kept under this call id")]
    Unknown,
    /// The output was kept but its time to live has passed.
    #[error("the output of this call has expired")]
    Expired,
    /// The output was dropped to make room for newer ones.
    #[error("the output of this call was evicted to make room")]
    Evicted,
    /// The id belongs to another tenant.
    #[error("this call id belongs to another tenant")]
    OtherTenant,
    /// The id is already in use by a kept output.
    #[error("an output is already kept under this call id")]
    Duplicate,
    /// The shared store (Redis) cannot be reached now.
    #[error("the shared recall store cannot be reached now; try again later")]
    Unavailable,
}

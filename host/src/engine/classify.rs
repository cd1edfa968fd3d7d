//! Wasm errors turned into typed [`Error`]s that name the guest and limit.
//!
//! A wasmtime error alone says little (a trap code, or a host refusal
//! wrapped in backtrace context). What the host saw on the way is in the
//! store data: a size limit a pack's return value broke (`too_large`), a
//! memory cap the limiter refused (`memory_hit`), the guest running when it
//! stopped (`last_guest`). [`classify`] reads those first, in that order,
//! then the trap code; the typed errors themselves live in `crate::error`.

use wasmtime::{Store, Trap};

use super::store::Host;
use crate::bindings::pipeline::exports::result_sanitizer::core::result_sanitizer as api;
use crate::error::{Error, Guest};

/// Maps a load or link failure of `what` to [`Error::Load`].
pub(super) fn load_err(what: &str) -> impl Fn(wasmtime::Error) -> Error + '_ {
    move |e| Error::Load { what: what.into(), reason: format!("{e:#}") }
}

/// Turns a wasmtime error into a typed error naming the guest and limit.
pub(super) fn classify(e: wasmtime::Error, store: &Store<Host>, default: Guest) -> Error {
    let host = store.data();
    let guest = host.last_guest.clone().unwrap_or(default);
    if let Some((what, size, limit)) = host.too_large {
        return Error::TooLarge { guest, what, size, limit };
    }
    if let Some(g) = host.memory_hit.clone() {
        let bytes = if matches!(g, Guest::Pack(_)) { host.limits.pack_memory } else { host.limits.memory };
        return Error::Memory { guest: g, bytes };
    }
    match e.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => {
            let limit = if matches!(guest, Guest::Pack(_)) { host.limits.pack_fuel } else { host.limits.fuel };
            Error::Fuel { guest, limit }
        }
        Some(Trap::Interrupt) => Error::Timeout { guest, ms: host.limits.timeout.as_millis() },
        Some(t) => Error::Trap { guest, reason: t.to_string() },
        // Host-side refusals are wrapped in wasm backtrace context: report
        // the root cause.
        None => Error::Trap { guest, reason: first_line(&e.root_cause().to_string()) },
    }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").chars().take(200).collect()
}

/// The pipeline's own refusals (a `result<_, sanitize-error>` it returned,
/// not a trap) as typed errors.
pub(super) fn guest_error(e: api::SanitizeError) -> Error {
    match e {
        api::SanitizeError::InvalidOptions(m) => Error::InvalidOptions(m),
        api::SanitizeError::InvalidInput(m) => Error::InvalidInput(m),
        api::SanitizeError::InvalidPack(m) => Error::InvalidPack(m),
    }
}

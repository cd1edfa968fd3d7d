"""Typed errors. None of them quotes the input: messages name the guest,
the limit or the kind, never the bytes a tool produced."""

from __future__ import annotations

import builtins


class SanitizerError(Exception):
    """Base of every error this package raises on purpose."""

    code: str = "error"


class TimeoutError(SanitizerError, builtins.TimeoutError):
    """A call passed its wall-clock limit and was stopped (epoch
    interruption); the instances were dropped and the next call gets fresh
    ones."""

    code = "timeout"

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the pipeline exceeded the time limit of {round(seconds * 1000)} ms")
        self.seconds = seconds


class TrapError(SanitizerError):
    """A guest trapped: a panic, a memory cap hit, a bad value. `guest` is
    `"pipeline"` or the rule pack's name. The instances were dropped."""

    code = "trap"

    def __init__(self, reason: str, guest: str = "pipeline") -> None:
        who = "the pipeline" if guest == "pipeline" else f"rule pack `{guest}`"
        super().__init__(f"{who} trapped: {reason}")
        self.reason = reason
        self.guest = guest


class OutOfFuelError(TrapError):
    """A guest ran out of fuel (about one unit per wasm instruction)."""

    code = "out_of_fuel"

    def __init__(self, guest: str, limit: int) -> None:
        who = "the pipeline" if guest == "pipeline" else f"rule pack `{guest}`"
        SanitizerError.__init__(self, f"{who} ran out of fuel (limit {limit} units)")
        self.reason = "out of fuel"
        self.guest = guest
        self.limit = limit


class SanitizeError(SanitizerError):
    """The pipeline refused the call. `code` is the kind: `invalid options`,
    `invalid input` or `invalid rule pack` (the JSON twin's
    `invalid_options`, `invalid_input`, `invalid_pack`), the words the Rust
    CLI prints."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.code = kind
        self.message = message


class InvalidOutputError(SanitizerError):
    """The pipeline returned something the host does not pass on (a message
    of the wrong shape, a record that disagrees, a budget overrun)."""

    code = "invalid_output"

    def __init__(self, what: str) -> None:
        super().__init__(f"the pipeline returned an invalid result: {what}")
        self.what = what


class PackRefusedError(SanitizerError):
    """A pack was refused before any of it was compiled. `code` is one of
    `malformed`, `unsigned`, `incompatible_wit`, `untrusted_key`,
    `tampered`, `expired`, `wrong_tenant` (as the JS host's `code` and the
    Go host's `Kind`), or `invalid_trusted_key` (a configuration error:
    `index` is the key's position)."""

    def __init__(self, code: str, message: str, index: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.index = index

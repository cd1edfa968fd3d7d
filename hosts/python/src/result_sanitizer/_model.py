"""What the Sanitizer is given and hands back, and where its components are.

The limits (`Limits`), the result of a call (`Result`) and of a head + tail
read (`HeadTail`), the pipeline's and packs' interface names, the loaded pack
and the live set of instances (`_Pack`, `_Live`), and the two error helpers
every part uses (`_twin_error`, `_first_line`). Plain data without wasm calls,
kept apart so the modules that act on it (`_sanitizer`, `_instances`,
`_headtail`, `_redact`, `_checks`) share one definition."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Mapping, Optional, Union

import wasmtime
from wasmtime.component import Component

from ._errors import SanitizeError
from ._wasm import WIT_VERSION

RULE_PACK = f"result-sanitizer:core/rule-pack@{WIT_VERSION}"
PLATFORM = f"result-sanitizer:core/platform@{WIT_VERSION}"
PIPELINE = f"result-sanitizer:core/result-sanitizer@{WIT_VERSION}"

PackSource = Union[bytes, bytearray, memoryview, str, "os.PathLike[str]"]
Source = Union[BinaryIO, Iterable[bytes]]


def components_dir() -> Path:
    """Where the components are: $RESULT_SANITIZER_COMPONENTS, else the
    `components/` directory the wheel carries."""
    env = os.environ.get("RESULT_SANITIZER_COMPONENTS")
    return Path(env) if env else Path(__file__).parent / "components"


def component_path(name: str) -> Path:
    return components_dir() / name


def _pipeline_path() -> Path:
    # The pre-initialised pipeline (tokenizer tables in its snapshot), as
    # the Rust host embeds; the plain one otherwise.
    warm = component_path("pipeline-warm.wasm")
    return warm if warm.exists() else component_path("pipeline.wasm")


@dataclass(frozen=True)
class Limits:
    """Per-call limits; the defaults are the Rust host's (docs/SECURITY.md)."""

    #: Fuel for one pipeline call (about one unit per wasm instruction).
    fuel: int = 20_000_000_000
    #: Fuel for one call into a pack.
    pack_fuel: int = 2_000_000_000
    #: Wall-clock limit of one call, seconds.
    timeout: float = 5.0
    #: Largest linear memory of the pipeline, MiB.
    memory_mib: int = 256
    #: Largest linear memory of a pack, MiB.
    pack_memory_mib: int = 32


@dataclass(frozen=True)
class Result:
    """One tool message and its record."""

    #: The tool message as JSON text, ready to send: an MCP result, or
    #: `{"message": ..., "record": ...}` for OpenAI and Anthropic.
    message: str
    #: The record (docs/record.schema.json).
    record: dict[str, Any]
    #: The result is an error result (a tool error, MCP isError).
    is_error: bool = False
    format: str = "mcp"

    @property
    def tool_message(self) -> dict[str, Any]:
        """What to send the model: the MCP result, or the OpenAI /
        Anthropic message without the record."""
        m: dict[str, Any] = json.loads(self.message)
        return m if self.format == "mcp" else m["message"]

    @property
    def text(self) -> str:
        """The model-visible text (text blocks joined)."""
        m = self.tool_message
        c = m.get("content")
        if isinstance(c, str):
            return c
        return "".join(b.get("text", "") for b in c or [] if isinstance(b, dict))


@dataclass
class HeadTail:
    """A long output as a host keeps it: head and tail, the middle drained."""

    #: The head, then the tail: the input to sanitize.
    data: bytes
    #: The drained middle (pass as the `gap` option), None when it fit.
    gap: Optional[dict[str, Any]]
    #: Bytes read in all.
    total: int
    #: Reading stopped at the drain limit; the output went on.
    stopped: bool


@dataclass
class _Pack:
    name: str
    component: Component
    index: dict[str, Any]
    grant: Optional[list[str]]  # None: the platform (relax emptied)


@dataclass
class _Live:
    """One live set of instances: never entered again after a failure."""

    pipe_store: wasmtime.Store
    pack_store: wasmtime.Store
    funcs: dict[str, Any]
    packs: dict[str, Any]  # role -> {name: Func}
    infos: dict[str, dict[str, Any]] = field(default_factory=dict)
    rule_ids: dict[str, set[str]] = field(default_factory=dict)
    has_detect: dict[str, bool] = field(default_factory=dict)
    failed_pack: Optional[str] = None


_KINDS = {"invalid_options": "invalid options", "invalid_input": "invalid input", "invalid_pack": "invalid rule pack"}


def _twin_error(err: Mapping[str, Any]) -> SanitizeError:
    for k, v in err.items():
        return SanitizeError(_KINDS.get(k, k), str(v))
    return SanitizeError("invalid output", "an empty error")


def _first_line(e: BaseException) -> str:
    """What went wrong, in one line: wasmtime's cause (`wasm trap: ...`)
    rather than the backtrace (function names, never data)."""
    s = str(e).strip()
    if "Caused by:" in s:
        causes = [x.strip() for x in s.split("Caused by:", 1)[1].splitlines() if x.strip()]
        if causes:
            return "; ".join(c.split(": ", 1)[1] if c[:1].isdigit() and ": " in c else c for c in causes)
    return s.splitlines()[0] if s else type(e).__name__

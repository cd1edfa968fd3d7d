"""Options as Python callers write them, to the JSON twin's options.

The twin spells field names and enum cases alike in snake_case (the WIT
names with `-` as `_`, docs/record.schema.json), which is also how Python
spells keyword arguments: `format="openai"` is `"format": "openai"`. Enum
values are checked here, so a typo is a ValueError naming the choices
rather than the pipeline's error."""

from __future__ import annotations

import base64
import json
from typing import Any, Mapping

FORMATS = ("mcp", "openai", "anthropic")
INPUTS = ("raw", "mcp")
ENCODINGS = ("o200k_base", "cl100k_base")
SOURCES = ("tool", "file", "pipe")
STRUCTURED_FITS = ("marked", "schema", "omitted")

_ENUMS = {"format": FORMATS, "input": INPUTS, "encoding": ENCODINGS, "source": SOURCES, "structured_fit": STRUCTURED_FITS}
_INTS = (
    "max_bytes",
    "max_chars",
    "head_chars",
    "tail_chars",
    "max_tokens",
    "total_bytes",
    "markup_bytes",
    "recall_bytes",
)
_STRS = ("tool", "call_id", "content_type", "file_name", "recall_tool", "report_key")
_BOOLS = ("untrusted", "lenient", "pii", "pii_public_ip")
# Passed through as the twin's own JSON (a gap as read_head_tail returns
# it, a slice as {"offset", "limit", "unit"}).
_OBJECTS = ("gap", "slice")

OPTION_NAMES = frozenset(_ENUMS) | frozenset(_INTS) | frozenset(_STRS) | frozenset(_BOOLS) | frozenset(_OBJECTS) | {"tool_error"}


def twin_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword options to the twin's options object (None: left out)."""
    out: dict[str, Any] = {}
    for name, value in options.items():
        if name not in OPTION_NAMES:
            raise TypeError(f"unknown option {name!r}")
        if value is None:
            continue
        if name in _ENUMS:
            if value not in _ENUMS[name]:
                raise ValueError(f"unknown {name} {value!r}; expected one of {', '.join(_ENUMS[name])}")
            out[name] = value
        elif name in _INTS:
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise TypeError(f"option {name} must be a non-negative int")
            out[name] = value
        elif name in _STRS:
            if not isinstance(value, str):
                raise TypeError(f"option {name} must be a str")
            out[name] = value
        elif name in _BOOLS:
            out[name] = bool(value)
        elif name == "tool_error":
            out[name] = _tool_error(value)
        else:
            out[name] = value
    return out


def _tool_error(value: Any) -> dict[str, str]:
    if isinstance(value, Mapping):
        code, message = value.get("code", ""), value.get("message", "")
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        code, message = value
    else:
        raise TypeError("tool_error must be {'code': ..., 'message': ...} or (code, message)")
    return {"code": str(code), "message": str(message)}


def twin_request(data: str | bytes | bytearray | memoryview, options: Mapping[str, Any]) -> str:
    """The twin request for `data` (text or bytes): exact UTF-8 travels as
    text, anything else as base64 (as the JS and Go hosts send it)."""
    req: dict[str, Any] = {}
    if isinstance(data, str):
        try:
            data.encode("utf-8")
            req["input"] = data
        except UnicodeEncodeError:
            # Lone surrogates: not text; their bytes travel as base64.
            raw = data.encode("utf-8", "surrogateescape" if _escapable(data) else "replace")
            req["input_base64"] = base64.b64encode(raw).decode("ascii")
    else:
        raw = bytes(data)
        try:
            req["input"] = raw.decode("utf-8")
        except UnicodeDecodeError:
            req["input_base64"] = base64.b64encode(raw).decode("ascii")
    req["options"] = twin_options(options)
    return json.dumps(req, ensure_ascii=False, separators=(",", ":"))


def _escapable(text: str) -> bool:
    try:
        text.encode("utf-8", "surrogateescape")
        return True
    except UnicodeEncodeError:
        return False

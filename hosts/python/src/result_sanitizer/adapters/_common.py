"""What the adapters share: turning a framework's tool output into the
pipeline's input, and the pipeline's MCP blocks back."""

from __future__ import annotations

import json
from typing import Any, Optional

from .._sanitizer import Result, Sanitizer

#: Where the adapters put the record (not sent to the model).
RECORD_KEY = "result-sanitizer/record"
#: The tool error code the adapters give a tool that failed.
TOOL_ERROR = {"code": "tool-error", "message": "the tool failed; its error output is below"}

_default: Optional[Sanitizer] = None


def default_sanitizer() -> Sanitizer:
    """One shared Sanitizer with the default pack, made on first use."""
    global _default
    if _default is None:
        _default = Sanitizer()
    return _default


def as_text(output: Any) -> str:
    """A tool's return value as the text a framework would send: str as
    is, bytes decoded, anything else as JSON when it serializes."""
    if isinstance(output, str):
        return output
    if isinstance(output, (bytes, bytearray)):
        return bytes(output).decode("utf-8", "replace")
    try:
        return json.dumps(output, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(output)


def sanitize_text(
    s: Sanitizer, text: str, *, tool: str, call_id: str, error: bool, options: dict[str, Any]
) -> Result:
    opts = dict(options)
    if error:
        opts["tool_error"] = TOOL_ERROR
    return s.sanitize(text, tool=tool, call_id=call_id or "", format="openai", **opts)

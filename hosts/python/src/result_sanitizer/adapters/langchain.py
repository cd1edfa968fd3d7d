"""LangChain / LangGraph: every ToolMessage a tool produces goes through the
pipeline before the model sees it.

    from langchain.agents import create_agent
    from result_sanitizer.adapters.langchain import SanitizeToolResults

    agent = create_agent(model, tools, middleware=[SanitizeToolResults()])

`SanitizeToolResults` is an agent middleware (`wrap_tool_call` and
`awrap_tool_call`); with LangGraph's own `ToolNode`, pass its methods:
`ToolNode(tools, wrap_tool_call=m.wrap_tool_call, awrap_tool_call=m.awrap_tool_call)`.

The message keeps its tool name, call id and artifact; its content is the
sanitized text (a string, or content blocks when the tool returned blocks);
`status` is "error" when the tool failed or the result is an error result;
the record is in `response_metadata["result-sanitizer/record"]`, which is
not sent to the model.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, Optional

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolMessage

from .._sanitizer import Sanitizer
from ._common import RECORD_KEY, as_text, default_sanitizer, sanitize_text

__all__ = ["SanitizeToolResults", "sanitize_tool_message"]


def _blocks_to_mcp(content: list[Any]) -> dict[str, Any]:
    out: list[dict[str, Any]] = []
    for b in content:
        if isinstance(b, str):
            out.append({"type": "text", "text": b})
        elif isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str):
            out.append({"type": "text", "text": b["text"]})
        elif isinstance(b, dict) and b.get("type") == "image" and isinstance(b.get("base64") or b.get("data"), str):
            out.append(
                {"type": "image", "data": b.get("base64") or b.get("data"), "mimeType": b.get("mime_type") or b.get("mimeType") or "image/png"}
            )
        else:
            out.append({"type": "text", "text": as_text(b)})
    return {"content": out}


def _mcp_to_blocks(content: list[dict[str, Any]]) -> list[Any]:
    out: list[Any] = []
    for b in content:
        if b.get("type") == "image":
            out.append({"type": "image", "base64": b.get("data", ""), "mime_type": b.get("mimeType", "image/png")})
        elif "text" in b:
            out.append({"type": "text", "text": b["text"]})
    return out


def sanitize_tool_message(
    msg: ToolMessage, sanitizer: Optional[Sanitizer] = None, *, tool: Optional[str] = None, **options: Any
) -> ToolMessage:
    """The ToolMessage with its content sanitized (a new message; name,
    call id, id and artifact kept)."""
    s = sanitizer or default_sanitizer()
    name = tool or msg.name or ""
    failed = msg.status == "error"
    if isinstance(msg.content, list):
        res = s.sanitize_mcp(
            dict(_blocks_to_mcp(msg.content), isError=failed), tool=name, call_id=msg.tool_call_id or "", **options
        )
        content: Any = _mcp_to_blocks(res.tool_message.get("content") or [])
    else:
        res = sanitize_text(s, as_text(msg.content), tool=name, call_id=msg.tool_call_id or "", error=failed, options=options)
        content = res.text
    meta = dict(msg.response_metadata or {})
    meta[RECORD_KEY] = res.record
    return msg.model_copy(
        update={"content": content, "status": "error" if (failed or res.is_error) else msg.status, "response_metadata": meta}
    )


class SanitizeToolResults(AgentMiddleware):
    """Agent middleware: sanitizes the result of every tool call.

    `sanitizer`: the Sanitizer to use (default: one with the default
    pack, shared). Other keywords are sanitize options for every call
    (`max_tokens=4000`, `untrusted=True`, `encoding="cl100k_base"`, ...).
    Sanitizing runs in a worker thread under `ainvoke`, so the event loop
    is not blocked."""

    def __init__(self, sanitizer: Optional[Sanitizer] = None, **options: Any) -> None:
        super().__init__()
        self.sanitizer = sanitizer
        self.options = options

    def _apply(self, request: Any, result: Any) -> Any:
        s = self.sanitizer or default_sanitizer()
        call = request.tool_call
        if isinstance(result, ToolMessage):
            return sanitize_tool_message(result, s, tool=call.get("name"), **self.options)
        # A Command: sanitize the ToolMessages it adds.
        update = getattr(result, "update", None)
        if isinstance(update, dict) and isinstance(update.get("messages"), list):
            msgs = [
                sanitize_tool_message(m, s, tool=call.get("name"), **self.options) if isinstance(m, ToolMessage) else m
                for m in update["messages"]
            ]
            return result.__class__(**{**_fields(result), "update": {**update, "messages": msgs}})
        return result

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return self._apply(request, handler(request))

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        result = await handler(request)
        return await asyncio.to_thread(self._apply, request, result)


def _fields(cmd: Any) -> dict[str, Any]:
    import dataclasses

    return {f.name: getattr(cmd, f.name) for f in dataclasses.fields(cmd)}

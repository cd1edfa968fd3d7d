"""OpenAI Agents SDK: what the model sees of a tool's output is the
sanitized output.

    from agents import Agent, function_tool
    from result_sanitizer.adapters.openai_agents import sanitize_tools, sanitize_mcp_server

    agent = Agent(name="ops", tools=sanitize_tools([run_shell, query_db]),
                  mcp_servers=[sanitize_mcp_server(server)])

`sanitize_function_tool(tool)` returns a copy of a FunctionTool whose
output (text, or the error text the SDK makes of an exception) goes
through the pipeline with the tool's name and call id; `sanitize_tools`
does it for a list (other tool kinds pass through). `sanitize_mcp_server`
wraps an MCP server's `call_tool`, so every MCP result is sanitized as an
MCP result (blocks, structured content, isError) before the SDK turns it
into model input.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any, Optional, Sequence

from agents import FunctionTool

from .._sanitizer import Sanitizer
from ._common import as_text, default_sanitizer, sanitize_text

__all__ = ["sanitize_function_tool", "sanitize_tools", "sanitize_mcp_server"]


def _sanitize_output(s: Sanitizer, out: Any, tool: str, call_id: str, options: dict[str, Any]) -> Any:
    from agents.tool import ToolOutputText

    if isinstance(out, ToolOutputText):
        return out.model_copy(update={"text": sanitize_text(s, out.text, tool=tool, call_id=call_id, error=False, options=options).text})
    if isinstance(out, list):
        return [_sanitize_output(s, o, tool, call_id, options) for o in out]
    if hasattr(out, "type") and getattr(out, "type", None) in ("image", "file"):
        return out  # media: passed as the SDK passes it
    text = out if isinstance(out, str) else (as_text(out.model_dump(mode="json")) if hasattr(out, "model_dump") else as_text(out))
    return sanitize_text(s, text, tool=tool, call_id=call_id, error=False, options=options).text


def sanitize_function_tool(tool: FunctionTool, sanitizer: Optional[Sanitizer] = None, **options: Any) -> FunctionTool:
    """A copy of `tool` whose output reaches the model sanitized. Keywords
    are sanitize options (`max_tokens=4000`, `untrusted=True`, ...)."""
    inner = tool.on_invoke_tool

    async def on_invoke_tool(ctx: Any, args: str) -> Any:
        s = sanitizer or default_sanitizer()
        name = getattr(ctx, "tool_name", None) or tool.name
        call_id = getattr(ctx, "tool_call_id", None) or ""
        try:
            out = await inner(ctx, args)
        except Exception as e:
            # A tool made without an error function raises; its message may
            # hold what the tool saw, so it is sanitized as an error result.
            res = await asyncio.to_thread(
                sanitize_text, s, f"{type(e).__name__}: {e}", tool=name, call_id=call_id, error=True, options=options
            )
            return res.text
        return await asyncio.to_thread(_sanitize_output, s, out, name, call_id, options)

    return dataclasses.replace(tool, on_invoke_tool=on_invoke_tool)


def sanitize_tools(tools: Sequence[Any], sanitizer: Optional[Sanitizer] = None, **options: Any) -> list[Any]:
    """Every FunctionTool of `tools` wrapped; other tools unchanged."""
    return [sanitize_function_tool(t, sanitizer, **options) if isinstance(t, FunctionTool) else t for t in tools]


def sanitize_mcp_server(server: Any, sanitizer: Optional[Sanitizer] = None, **options: Any) -> Any:
    """Wraps `server.call_tool` (any agents.mcp.MCPServer) so that every
    result is sanitized as an MCP result; returns the same server."""
    from mcp.types import CallToolResult

    inner = server.call_tool

    async def call_tool(tool_name: str, arguments: Optional[dict[str, Any]], meta: Optional[dict[str, Any]] = None) -> Any:
        s = sanitizer or default_sanitizer()
        result = await (inner(tool_name, arguments) if meta is None else inner(tool_name, arguments, meta))
        raw = result.model_dump(by_alias=True, exclude_none=True, mode="json")
        res = await asyncio.to_thread(lambda: s.sanitize_mcp(raw, tool=tool_name, **options))
        return CallToolResult.model_validate(res.tool_message)

    server.call_tool = call_tool
    return server

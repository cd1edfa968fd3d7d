"""A real MCP client (the official Python SDK, PyPI `mcp`) driven line by line.

The same protocol as driver.mjs: cli/tests/mcp_proxy.rs writes one JSON
command per line on stdin and reads one JSON answer per line on stdout.

    python driver.py '{"command": "...", "args": [...]}'     (stdio)
    python driver.py '{"url": "http://127.0.0.1:PORT/mcp"}'  (streamable HTTP)

"clientName" in either sets the clientInfo.name it sends at initialize.
"""

import json
import sys

import anyio
import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

target = json.loads(sys.argv[1])
stats = {"sampled": 0, "elicited": 0, "roots": 0, "progress": 0, "logs": 0}


async def sampling(context, params):
    stats["sampled"] += 1
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text="a sampled reply"), model="test-model"
    )


def fill(p):
    """A value that satisfies one property of an elicitation's schema."""
    if "enum" in p:
        return p["enum"][0]
    if "oneOf" in p:
        return p["oneOf"][0]["const"]
    t = p.get("type")
    if t == "boolean":
        return True
    if t in ("number", "integer"):
        return p.get("minimum", 1)
    if t == "array":
        items = p.get("items", {})
        if "enum" in items:
            return [items["enum"][0]]
        if "anyOf" in items:
            return [items["anyOf"][0]["const"]]
        return []
    fmt = {"email": "someone@example.com", "uri": "https://example.com/", "date": "2026-01-01"}
    return fmt.get(p.get("format"), "x" * max(1, p.get("minLength", 1)))


async def elicitation(context, params):
    stats["elicited"] += 1
    schema = getattr(params, "requested_schema", None)
    if schema is None:
        return types.ElicitResult(action="accept")
    if not isinstance(schema, dict):
        schema = schema.model_dump(mode="json", by_alias=True, exclude_none=True)
    content = {k: fill(p) for k, p in (schema.get("properties") or {}).items()}
    return types.ElicitResult(action="accept", content=content)


async def roots(context):
    stats["roots"] += 1
    return types.ListRootsResult(roots=[types.Root(uri="file:///tmp", name="tmp")])


async def logging(params):
    stats["logs"] += 1


async def progress(p, total, message):
    stats["progress"] += 1


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def handle(session, cmd):
    op = cmd["op"]
    if op == "list_tools":
        return dump(await session.list_tools())
    if op == "call":
        r = await session.call_tool(cmd["name"], cmd.get("args") or {}, progress_callback=progress)
        return dump(r)
    if op == "list_resources":
        return dump(await session.list_resources())
    if op == "read":
        return dump(await session.read_resource(cmd["uri"]))
    if op == "get_prompt":
        return dump(await session.get_prompt(cmd["name"], cmd.get("args") or {}))
    if op == "stats":
        return stats
    raise ValueError(f"unknown op {op}")


async def serve(read, write):
    async with ClientSession(
        read,
        write,
        sampling_callback=sampling,
        elicitation_callback=elicitation,
        list_roots_callback=roots,
        logging_callback=logging,
        client_info=types.Implementation(name=target["clientName"], version="1.0.0") if "clientName" in target else None,
    ) as session:
        await session.initialize()
        while True:
            line = await anyio.to_thread.run_sync(sys.stdin.readline)
            if not line:
                return
            if not line.strip():
                continue
            cmd = json.loads(line)
            if cmd["op"] == "close":
                return
            try:
                answer = {"ok": await handle(session, cmd)}
            except Exception as e:  # the test reads the error
                answer = {"error": str(e), "code": getattr(getattr(e, "error", None), "code", None)}
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()


async def main():
    if "url" in target:
        async with streamable_http_client(target["url"]) as (read, write, *_):
            await serve(read, write)
    else:
        params = StdioServerParameters(command=target["command"], args=target.get("args", []))
        async with stdio_client(params) as (read, write):
            await serve(read, write)


anyio.run(main)

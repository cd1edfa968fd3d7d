"""A plain MCP server (stdio, standard library only) that remembers what it
was sent, for cli/tests/mcp_proxy.rs:

- tool `echo(text)`: answers `text`;
- tool `seen()`: the tool calls it received so far, as JSON lines
  `{"name": ..., "arguments": ...}` (`seen` itself left out): a test asks it
  whether a call reached the server;
- tool `sized(bytes)`: a text of that many bytes, lines of prose;
- prompts `planted` (a text message and an embedded resource, each holding
  the secret in $PLAIN_SECRET) and `plain`.

    python3 plain_server.py
"""

import json
import os
import sys

SECRET = os.environ.get("PLAIN_SECRET", "")
SEEN = []

WORDS = ("the proxy reads each result and cuts what does not fit, keeping the "
         "head and the tail with a marker that says where the rest is").split()


def prose(size):
    out, i = [], 0
    n = 0
    while n < size:
        line = f"{i:06} " + " ".join(WORDS[(i + k) % len(WORDS)] for k in range(12)) + "\n"
        out.append(line)
        n += len(line)
        i += 1
    return "".join(out)[:size]


def text_result(text):
    return {"content": [{"type": "text", "text": text}]}


TOOLS = [
    {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
    {"name": "seen", "inputSchema": {"type": "object"}},
    {"name": "sized", "inputSchema": {"type": "object", "properties": {"bytes": {"type": "integer"}}}},
]

PROMPTS = [
    {"name": "planted", "description": "a prompt that holds a secret"},
    {"name": "plain", "description": "a prompt without one"},
]


def result(msg):
    method, params = msg.get("method"), msg.get("params") or {}
    if method == "initialize":
        return {"protocolVersion": params["protocolVersion"],
                "capabilities": {"tools": {}, "prompts": {}},
                "serverInfo": {"name": "plain", "version": "1"}}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "prompts/list":
        return {"prompts": PROMPTS}
    if method == "prompts/get":
        if params.get("name") == "planted":
            return {"description": "deploy notes",
                    "messages": [
                        {"role": "user", "content": {"type": "text",
                                                     "text": f"Deploy with key {SECRET} to eu-west-1."}},
                        {"role": "user", "content": {"type": "resource", "resource": {
                            "uri": "file:///notes/creds.txt", "mimeType": "text/plain",
                            "text": f"[default]\naws_access_key_id = {SECRET}\nregion = eu-west-1\n"}}},
                    ]}
        return {"messages": [{"role": "user", "content": {"type": "text", "text": "Say hello."}}]}
    if method == "tools/call":
        name, args = params.get("name"), params.get("arguments") or {}
        if name == "seen":
            return text_result("".join(json.dumps(s) + "\n" for s in SEEN) or "(none)")
        SEEN.append({"name": name, "arguments": args})
        if name == "echo":
            return text_result(str(args.get("text", "")))
        if name == "sized":
            return text_result(prose(int(args.get("bytes", 1000))))
        return {"content": [{"type": "text", "text": f"no tool {name}"}], "isError": True}
    return None


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        rid = msg.get("id")
        if rid is None or "method" not in msg:
            continue
        r = result(msg)
        if r is None:
            out = {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no such method"}}
        else:
            out = {"jsonrpc": "2.0", "id": rid, "result": r}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


main()

"""An MCP server that answers with what real servers sometimes send and
serde_json or the MCP schema do not take: a lone UTF-16 surrogate escape
(JavaScript's JSON.stringify writes one for half an emoji), invalid UTF-8,
nesting deeper than 128, trailing bytes, a `task` on a plain result, a result
without `content`, a JSON-RPC error quoting a secret. Each tool's answer holds
the secret in $ODD_SECRET. For cli/tests/mcp_proxy.rs; standard library only.

    python3 odd_server.py            (stdio)
    python3 odd_server.py --http P   (Streamable HTTP on 127.0.0.1:P, pretty-printed JSON bodies)
"""

import http.server
import json
import os
import sys

SECRET = os.environ["ODD_SECRET"]
TOOLS = ["lone_surrogate", "bad_utf8", "deep", "trailing", "forged_task", "no_content", "error", "plain", "big"]


def text_result(text):
    return {"content": [{"type": "text", "text": text}]}


def answer(msg):
    """The bytes of the response to `msg` (one JSON-RPC request), or None."""
    method, rid = msg.get("method"), msg.get("id")
    if rid is None:
        return None
    head = '{"jsonrpc":"2.0","id":' + json.dumps(rid) + ',"result":'
    if method == "initialize":
        r = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "odd", "version": "1"}}
    elif method == "tools/list":
        r = {"tools": [{"name": t, "inputSchema": {"type": "object"}} for t in TOOLS]}
    elif method == "resources/read":
        # A long resource: cut by the proxy, read back by its recall tool.
        big = "".join(f"line {i:06}\n" for i in range(1, 40001))
        r = {"contents": [{"uri": msg["params"]["uri"], "mimeType": "text/plain", "text": big}]}
    elif method == "tools/call":
        name = msg["params"]["name"]
        if name == "lone_surrogate":
            return (head + '{"content":[{"type":"text","text":"key ' + SECRET + ' cut \\ud83d"}]}}').encode()
        if name == "bad_utf8":
            return (head + '{"content":[{"type":"text","text":"key ' + SECRET + ' ').encode() + b"\xff\xfe" + b'"}]}}'
        if name == "deep":
            return (head + '{"content":[],"structuredContent":' + '{"a":' * 200 + json.dumps(SECRET)
                    + "}" * 200 + "}}").encode()
        if name == "trailing":
            return (head + json.dumps(text_result("key " + SECRET)) + "} trailing").encode()
        if name == "forged_task":
            r = dict(text_result("key " + SECRET), task={"taskId": "t-1", "status": "completed"})
        elif name == "big":
            r = text_result("".join(f"line {i:06}\n" for i in range(1, 40001)))
        elif name == "no_content":
            r = {"structuredContent": {"key": SECRET}}
        elif name == "error":
            err = {"code": -32001, "message": "failed with key " + SECRET, "data": {"detail": "key " + SECRET}}
            return json.dumps({"jsonrpc": "2.0", "id": rid, "error": err}).encode()
        else:
            r = text_result("key " + SECRET)
    else:
        return json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}}).encode()
    return (head + json.dumps(r) + "}").encode()


def stdio():
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        msg = json.loads(line)
        if msg.get("method") == "odd/exit":
            # The server ends in the middle of a request (cli/tests'
            # session bound test).
            sys.exit(3)
        out = answer(msg)
        if out is not None:
            sys.stdout.buffer.write(out + b"\n")
            sys.stdout.buffer.flush()


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        msg = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        out = answer(msg)
        if out is None:
            self.send_response(202)
            self.end_headers()
            return
        try:
            # Pretty-printed, as many servers send a JSON body.
            out = json.dumps(json.loads(out), indent=2).encode()
        except ValueError:
            pass
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Mcp-Session-Id", "odd-session")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def do_GET(self):
        self.send_response(405)
        self.end_headers()

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), Handler).serve_forever()
    else:
        stdio()

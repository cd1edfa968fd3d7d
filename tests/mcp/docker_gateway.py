"""result-sanitizer as the `after:exec` interceptor of Docker's MCP Gateway.

A check by hand, not part of `make test`: the gateway (github.com/docker/mcp-gateway)
is not served by the Go module proxy, so a clean machine cannot build it. With a
gateway binary built from its source:

    make mcp-deps
    target/mcp-venv/bin/python tests/mcp/docker_gateway.py /path/to/docker-mcp

It runs the real gateway (stdio) in front of server-everything (streamable HTTP,
a catalog's remote server), with `result-sanitizer sanitize --input mcp` as its
after-interceptor, and talks to it with the official Python SDK client
(driver.py). It checks that a result's secret is redacted and its record is in
`_meta`, that a long result is cut with markers, and that when the sanitizer
fails the client gets an error and never the raw result. Then it runs
`result-sanitizer mcp` in front of the gateway (no interceptor), where recall
works.

The gateway runs without a Docker daemon here: `DOCKER_MCP_IN_CONTAINER=1` and
`--static` skip its container checks (the server is remote), and
`DOCKER_MCP_ALLOW_INSECURE_REMOTE_URLS=1` lets it reach a plain-HTTP server on
127.0.0.1. Its own `--block-secrets` is off, since it refuses a result with a
secret before an interceptor sees it.
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SANITIZER = ROOT / "target/release/result-sanitizer"
EVERYTHING = ROOT / "tests/mcp/node_modules/.bin/mcp-server-everything"
DRIVER = ROOT / "tests/mcp/driver.py"
# A fake AWS access key id, built so no scanner flags this file.
KEY = "".join(["AKIA", "R7WQ", "ZT3M", "XK5P", "LN2V"])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port):
    end = time.time() + 20
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"server-everything did not listen on {port}")


def through_gateway(gateway, home, interceptor, commands, front=False):
    """Answers of driver.py to `commands`, through the gateway (with
    `interceptor` as its after-interceptor, if any), and with `front`
    through `result-sanitizer mcp` in front of it."""
    wrapper = Path(home) / "gateway.sh"
    after = f' --interceptor "after:exec:{interceptor}"' if interceptor else ""
    wrapper.write_text(
        "#!/bin/sh\n"
        "export DOCKER_MCP_IN_CONTAINER=1 DOCKER_MCP_ALLOW_INSECURE_REMOTE_URLS=1\n"
        f'exec "{gateway}" gateway run --static --servers=everything --catalog=rs-test.yaml '
        f"--block-secrets=false{after}\n"
    )
    wrapper.chmod(0o755)
    lines = "".join(json.dumps(c) + "\n" for c in commands + [{"op": "close"}])
    env = dict(os.environ, HOME=home)
    target = {"command": str(SANITIZER), "args": ["mcp", "--", str(wrapper)]} if front else {
        "command": str(wrapper), "args": []}
    out = subprocess.run(
        [sys.executable, str(DRIVER), json.dumps(target)],
        input=lines, capture_output=True, text=True, env=env, timeout=120,
    )
    answers = [json.loads(l) for l in out.stdout.splitlines() if l.strip()]
    if len(answers) != len(commands):
        sys.exit(f"the gateway answered {len(answers)} of {len(commands)}:\n{out.stderr[-3000:]}")
    return answers


def text_of(result):
    return "".join(b.get("text", "") for b in result.get("content", []))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: docker_gateway.py /path/to/docker-mcp")
    gateway = Path(sys.argv[1]).resolve()
    for p in (gateway, SANITIZER, EVERYTHING):
        if not p.exists():
            sys.exit(f"missing {p} (build the gateway; make build; make mcp-deps)")
    port = free_port()
    with tempfile.TemporaryDirectory() as home:
        catalogs = Path(home) / ".docker/mcp/catalogs"
        catalogs.mkdir(parents=True)
        (catalogs / "rs-test.yaml").write_text(
            "registry:\n  everything:\n    remote:\n"
            f'      url: "http://127.0.0.1:{port}/mcp"\n      transport_type: http\n'
        )
        # The server's environment holds a secret and a long value: its
        # get-env tool prints them.
        # (One variable holds at most 128 KiB.)
        env = dict(os.environ, PORT=str(port), PLANTED_KEY=KEY)
        env.update({f"LONG_VALUE_{i}": f"{i}" * 100_000 for i in range(4)})
        server = subprocess.Popen(
            [str(EVERYTHING), "streamableHttp"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            wait_for(port)
            sanitize = f"{SANITIZER} sanitize --input mcp"
            echo, env_out = through_gateway(
                gateway, home, sanitize,
                [{"op": "call", "name": "echo", "args": {"message": f"key {KEY} here"}},
                 {"op": "call", "name": "get-env", "args": {}}],
            )
            r = echo["ok"]
            assert text_of(r) == "Echo: key [REDACTED:aws-access-key-id] here", r
            record = r["_meta"]["result-sanitizer/record"]
            assert record["redactions"] == [{"rule_id": "aws-access-key-id", "count": 1}], record
            print("ok: a secret in a result is redacted; the record is in _meta")

            r = env_out["ok"]
            t = text_of(r)
            assert KEY not in json.dumps(r), "the planted key is redacted"
            assert "[truncated:" in t and len(t) < 200_000, t[:300]
            assert r["_meta"]["result-sanitizer/record"]["truncated"] is True
            size = r["_meta"]["result-sanitizer/record"]["original_bytes"]
            print(f"ok: a {size // 1000} KB result comes back cut with markers ({len(t)} chars)")

            # The sanitizer fails (options it refuses): an error, never the raw result.
            (failed,) = through_gateway(
                gateway, home, f"{SANITIZER} sanitize --input mcp --max-tokens 1",
                [{"op": "call", "name": "echo", "args": {"message": f"key {KEY} here"}}],
            )
            assert "ok" not in failed and KEY not in json.dumps(failed), failed
            print(f"ok: a failing sanitizer gives the client an error: {failed['error']}")

            # In front of the gateway instead: tool names, per-tool budgets
            # and recall, which an interceptor (one process per result,
            # shown no tool name) cannot have.
            listed, env_out = through_gateway(
                gateway, home, None, [{"op": "list_tools"}, {"op": "call", "name": "get-env", "args": {}}], front=True
            )
            names = [t["name"] for t in listed["ok"]["tools"]]
            assert "echo" in names and "read_truncated_output" in names, names
            t = text_of(env_out["ok"])
            assert KEY not in t and "read_truncated_output(call_id=" in t, t[:500]
            print("ok: result-sanitizer mcp in front of the gateway cuts, redacts and offers recall")
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()

"""The library API against the real components: formats, MCP results,
streams read as head + tail, the streaming `redact` (byte for byte the
Rust CLI's), the budget, the output checks."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import subprocess
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any, Iterator

import pytest

from conftest import CACHE, REPO, assert_working_marker, aws_key, check_record, password
import result_sanitizer
from result_sanitizer import InvalidOutputError, Sanitizer

CLI = REPO / "target" / "release" / "result-sanitizer"
BUILD_LOG = REPO / "examples" / "build-log.txt"


def secret_output() -> str:
    return f"deploying\nAWS_ACCESS_KEY_ID={aws_key()}\nDB_PASSWORD={password()}\ndone\n"


@pytest.mark.parametrize("fmt", ["mcp", "openai", "anthropic"])
def test_each_format_redacts_and_carries_the_record(sanitizer: Sanitizer, record_validator: Any, fmt: str) -> None:
    out = sanitizer.sanitize(secret_output(), tool="deploy", call_id="call_7", format=fmt)
    assert aws_key() not in out.message and password() not in out.message
    assert "[REDACTED:" in out.text and "deploying" in out.text
    check_record(record_validator, out.record, fmt)
    assert sum(r["count"] for r in out.record["redactions"]) >= 2
    m = out.tool_message
    if fmt == "openai":
        assert m["role"] == "tool" and m["tool_call_id"] == "call_7" and isinstance(m["content"], str)
    elif fmt == "anthropic":
        assert m["type"] == "tool_result" and m["tool_use_id"] == "call_7" and m["is_error"] is False
        assert m["content"][0]["type"] == "text"
    else:
        assert m["_meta"]["result-sanitizer/record"] == out.record


def test_one_pack_on_both_imports_is_one_layer(sanitizer: Sanitizer) -> None:
    """With no tenant pack the default pack serves both imports, and the
    tenant import answers as an empty layer (its rules are not lifted a
    second time). The result is the one the pipeline makes of the same pack
    given as a tenant pack: its own instance, its rules lifted and compared."""
    default = (Path(result_sanitizer.__file__).parent / "components" / "default-pack.wasm").read_bytes()
    twin = Sanitizer(default, allow_unsigned=True, cache_dir=CACHE)
    try:
        for text in (secret_output(), BUILD_LOG.read_text()[:20000]):
            one = sanitizer.sanitize(text, tool="deploy", call_id="call_1")
            two = twin.sanitize(text, tool="deploy", call_id="call_1")
            assert one.message == two.message and one.record == two.record
        assert sanitizer.sanitize(secret_output(), tool="deploy").record["redactions"]
    finally:
        twin.close()


def test_an_mcp_result(sanitizer: Sanitizer, record_validator: Any) -> None:
    result = {"content": [{"type": "text", "text": secret_output()}], "isError": True}
    out = sanitizer.sanitize_mcp(result, tool="deploy")
    assert out.is_error and out.tool_message["isError"] is True
    assert aws_key() not in out.message and password() not in out.message
    check_record(record_validator, out.record, "mcp")


def test_a_stream_reads_as_the_rust_cli_reads_stdin(sanitizer: Sanitizer) -> None:
    """1 MB on stdin: the Rust CLI's bytes, from bytes, a file object and an
    iterable of small chunks (head + tail, the middle drained)."""
    data = BUILD_LOG.read_bytes()
    rust = subprocess.run([str(CLI), "sanitize", "--tool", "shell"], input=data, capture_output=True, check=True).stdout
    want = rust.decode().rstrip("\n")
    assert "[truncated:" in want
    assert sanitizer.sanitize(data, tool="shell", source="pipe").message == want
    with BUILD_LOG.open("rb") as f:
        assert sanitizer.sanitize(f, tool="shell", source="pipe").message == want

    def chunks() -> Iterator[bytes]:
        for i in range(0, len(data), 4093):
            yield data[i : i + 4093]

    assert sanitizer.sanitize(chunks(), tool="shell", source="pipe").message == want


def test_head_tail_keeps_the_ends_and_drains_the_middle(sanitizer: Sanitizer) -> None:
    data = b"".join(b"line %d\n" % i for i in range(400_000))
    ht = sanitizer.read_head_tail(io.BytesIO(data), 1000, 2000)
    assert ht.data == data[:1000] + data[-2000:]
    assert ht.total == len(data) and not ht.stopped
    assert ht.gap is not None and ht.gap["start_byte"] == 1000 and ht.gap["bytes"] == len(data) - 3000
    stopped = sanitizer.read_head_tail(io.BytesIO(data), 1000, 2000, drain_limit=100_000)
    assert stopped.stopped and stopped.total == 100_000 and stopped.gap is not None and stopped.gap["unfinished"]


def test_redact_streams_the_rust_clis_bytes(sanitizer: Sanitizer) -> None:
    data = BUILD_LOG.read_bytes()
    rust = subprocess.run([str(CLI), "redact"], input=data, capture_output=True, check=True).stdout
    stream = sanitizer.redact(io.BytesIO(data))
    got = b"".join(stream)
    assert got == rust
    assert stream.total > 0 and b"[REDACTED:" in got


def test_redact_with_pii_gives_the_rust_clis_bytes(sanitizer: Sanitizer) -> None:
    """`pii=True` is the CLI's `redact --pii`: personal data goes too."""
    mail = "jane.doe" + "@" + "corp-mail.net"
    data = f"order 4411 shipped to {mail}\n".encode()
    rust = subprocess.run([str(CLI), "redact", "--pii"], input=data, capture_output=True, check=True).stdout
    got = b"".join(sanitizer.redact(io.BytesIO(data), pii=True))
    assert got == rust and mail.encode() not in got and b"[REDACTED:email]" in got
    assert mail.encode() in b"".join(sanitizer.redact(io.BytesIO(data)))


def test_redact_sniff_gives_the_rust_clis_bytes(sanitizer: Sanitizer) -> None:
    """`sniff=True` is the CLI's `redact --sniff`: a Go test's fixture (a
    word-like URL password) is left, a secret-shaped one is not, in small
    steps as in one (the judgment is made once, on the first 16 KiB)."""
    secret = password()
    lines = ["package proxy", "", 'import "testing"', ""]
    for i in range(600):
        lines += [f"func TestProxy{i}(t *testing.T) {{", '\tp := Parse("http://letme:in@yo.local")', "}"]
    lines += ["func TestDB(t *testing.T) {", f'\tu := "postgres://app:{secret}@db/app"', "}", ""]
    data = "\n".join(lines).encode()
    rust = subprocess.run([str(CLI), "redact", "--sniff"], input=data, capture_output=True, check=True).stdout
    for chunk in (4096, 1 << 20):
        assert b"".join(sanitizer.redact(io.BytesIO(data), sniff=True, chunk_size=chunk)) == rust
    assert rust.count(b"letme:in@") == 600 and secret.encode() not in rust
    plain = b"".join(sanitizer.redact(io.BytesIO(data)))
    assert b"letme:in@" not in plain and secret.encode() not in plain


def test_redact_memory_stays_constant(sanitizer: Sanitizer) -> None:
    """6 MiB streamed in 64 KiB steps: the host holds a few steps' worth
    (the step's bytes as wasmtime's C API lays them out: 32 bytes each),
    not the stream."""
    block = "".join(f"ok step {j}\n" if j % 50 else f"AWS_ACCESS_KEY_ID={aws_key()}\n" for j in range(25000)).encode()
    block = block[: block.rindex(b"\n", 0, 256 << 10) + 1]
    rounds = (6 << 20) // len(block)
    tracemalloc.start()
    try:
        stream = sanitizer.redact(iter([block] * rounds), chunk_size=64 << 10)
        out = 0
        for b in stream:
            assert aws_key().encode() not in b
            out += len(b)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    n = rounds * len(block)
    assert n > 5 << 20 and out > n and stream.total == rounds * block.count(b"AKIA")
    assert peak < 4 << 20, f"peak {peak >> 20} MiB for {n >> 20} MiB streamed"


def test_effective_budget(sanitizer: Sanitizer) -> None:
    b = sanitizer.effective_budget(tool="x", max_bytes=16384)
    assert b["max_bytes"] == 16384 and b["read_bytes"] == 16385 and b["head_bytes"] > 0 and b["tail_bytes"] > 0
    m = sanitizer.effective_budget(input="mcp")
    assert m["head_bytes"] == 0 and m["read_bytes"] == (64 << 20) + 1


def test_what_the_pipeline_returns_is_checked(sanitizer: Sanitizer) -> None:
    out = sanitizer.sanitize(secret_output(), tool="x", format="openai")
    opts = {"tool": "x", "format": "openai"}
    sanitizer._validate(opts, out)  # the real result passes
    rec = dict(out.record, pack_name="someone-else")
    with pytest.raises(InvalidOutputError, match="differs"):
        sanitizer._validate(opts, dataclasses.replace(out, record=rec))
    msg = json.loads(out.message)
    msg["record"] = rec
    with pytest.raises(InvalidOutputError, match="another pack"):
        sanitizer._validate(opts, dataclasses.replace(out, message=json.dumps(msg), record=rec))
    with pytest.raises(InvalidOutputError, match="larger than the budget"):
        sanitizer._validate(dict(opts, max_tokens=100), out)
    msg = json.loads(out.message)
    msg["record"]["relaxed"] = ["aws-access-key-id"]
    with pytest.raises(InvalidOutputError, match="relaxation"):
        sanitizer._validate(opts, dataclasses.replace(out, message=json.dumps(msg), record=msg["record"]))
    with pytest.raises(InvalidOutputError, match="not JSON"):
        sanitizer._validate(opts, dataclasses.replace(out, message="{"))


def test_calls_from_threads(sanitizer: Sanitizer) -> None:
    want = sanitizer.sanitize(secret_output(), tool="t").message
    got: list[str] = []

    def work() -> None:
        for _ in range(5):
            got.append(sanitizer.sanitize(secret_output(), tool="t").message)

    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert got == [want] * 20


def test_markers_tell_true_offsets_of_a_2mb_output(sanitizer: Sanitizer) -> None:
    text = "".join(f"row {i:07d} " + "x" * 80 + "\n" for i in range(22000))
    assert len(text) > 2_000_000
    out = sanitizer.sanitize(text, tool="fetch_rows")
    assert_working_marker(out.text, text.encode())


def test_a_dropped_sanitizer_ends_its_watchdog_thread() -> None:
    import gc

    def watchdogs() -> int:
        return sum(t.name == "result-sanitizer-epoch" and t.is_alive() for t in threading.enumerate())

    before = watchdogs()
    s = Sanitizer(cache_dir=CACHE)
    s.sanitize("hello", tool="t")
    assert watchdogs() == before + 1
    del s
    gc.collect()
    for _ in range(100):
        if watchdogs() == before:
            break
        time.sleep(0.02)
    assert watchdogs() == before

"""The shared conformance vectors through the Python host: the JSON twin
gives every response byte for byte, the library's `sanitize` (reading as
the commands read) and `python -m result_sanitizer` print every message;
every record matches docs/record.schema.json."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from conftest import REPO, VECTORS, check_record, message_record, run_cli

VECTOR_FILES = sorted(VECTORS.glob("*.json"))


def load(p: Any) -> dict[str, Any]:
    v: dict[str, Any] = json.loads(p.read_text(encoding="utf-8"))
    return v


def stdin_of(v: dict[str, Any]) -> bytes:
    """The vector's stdin: its own when the request keeps less of it."""
    if "stdin" in v:
        return v["stdin"].encode("utf-8")
    if "stdin_base64" in v:
        return base64.b64decode(v["stdin_base64"])
    req = json.loads(v["request"])
    return req["input"].encode("utf-8") if "input" in req else base64.b64decode(req.get("input_base64", ""))


def flags_to_options(flags: list[str]) -> tuple[dict[str, Any], int | None]:
    """The command's flags as library keywords (as __main__ maps them)."""
    opts: dict[str, Any] = {"source": "pipe"}
    drain = None
    i = 0
    while i < len(flags):
        f = flags[i].lstrip("-").replace("-", "_")
        if f in ("untrusted", "lenient"):
            opts[f] = True
            i += 1
            continue
        val: Any = flags[i + 1]
        if f in ("max_bytes", "max_chars", "max_tokens", "drain_limit"):
            val = int(val)
        if f == "drain_limit":
            drain = val
        else:
            opts[f] = val
        i += 2
    return opts, drain


def test_there_are_vectors() -> None:
    assert len(VECTOR_FILES) >= 20


@pytest.mark.parametrize("path", VECTOR_FILES, ids=[p.stem for p in VECTOR_FILES])
def test_vector_through_the_twin(sanitizer: Any, record_validator: Any, path: Any) -> None:
    v = load(path)
    got = sanitizer.sanitize_json(v["request"])
    assert got == v["response"], v["name"]
    r = json.loads(got)
    if "Ok" in r:
        check_record(record_validator, r["Ok"]["record"], v["name"])
        assert message_record(r["Ok"]["message"]) == r["Ok"]["record"]


@pytest.mark.parametrize("path", VECTOR_FILES, ids=[p.stem for p in VECTOR_FILES])
def test_vector_through_the_library(sanitizer: Any, record_validator: Any, path: Any) -> None:
    """`sanitize(stdin bytes, **flags)` reads as the commands read (head +
    tail with the middle drained, the drain limit) and gives the message."""
    from result_sanitizer import SanitizeError

    v = load(path)
    opts, drain = flags_to_options(v["flags"])
    resp = json.loads(v["response"])
    kw: dict[str, Any] = {"drain_limit": drain} if drain is not None else {}
    if "Ok" not in resp:
        with pytest.raises((SanitizeError, ValueError)):
            sanitizer.sanitize(stdin_of(v), **opts, **kw)
        return
    out = sanitizer.sanitize(stdin_of(v), **opts, **kw)
    assert out.message == resp["Ok"]["message"], v["name"]
    assert out.record == resp["Ok"]["record"]
    assert out.is_error == resp["Ok"]["is_error"]
    check_record(record_validator, out.record, v["name"])


def test_the_command_prints_each_vectors_message(record_validator: Any) -> None:
    from concurrent.futures import ThreadPoolExecutor

    vs = [load(p) for p in VECTOR_FILES]
    with ThreadPoolExecutor(4) as pool:
        runs = list(pool.map(lambda v: run_cli(v["flags"], stdin_of(v)), vs))
    for v, r in zip(vs, runs):
        resp = json.loads(v["response"])
        if "Ok" in resp:
            assert r.returncode == 0, f"{v['name']}: {r.stderr.decode()}"
            assert r.stdout.decode("utf-8") == resp["Ok"]["message"] + "\n", v["name"]
            check_record(record_validator, message_record(r.stdout.decode()), f"{v['name']} (command)")
        else:
            assert r.returncode == 1, v["name"]
            assert b"error" in r.stderr, v["name"]


def test_a_file_gives_the_rust_clis_bytes() -> None:
    """FILE: its name gives the content type, its size the output's (a log
    cut as head + tail, a source file, an HTML page read whole)."""
    import subprocess

    cli = str(REPO / "target" / "release" / "result-sanitizer")
    for name in ("examples/build-log.txt", "guest/src/pipeline.rs", "examples/page.html"):
        flags = [str(REPO / name), "--tool", "read_file", "--max-tokens", "2000"]
        rust = subprocess.run([cli, "sanitize", *flags], capture_output=True, timeout=120)
        py = run_cli(flags, b"")
        assert rust.returncode == 0 and py.returncode == 0, (rust.stderr, py.stderr)
        assert py.stdout == rust.stdout, name
    out = run_cli([str(REPO / "guest/src/pipeline.rs")], b"")
    assert message_record(out.stdout.decode())["class"] == "code"

"""Shared fixtures: the real components from `make build`, the shared
vectors and test packs, the record schema."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
COMPONENTS = REPO / "target" / "components"
TEST_PACKS = REPO / "target" / "test-packs"
HOSTILE = COMPONENTS / "test-packs"
VECTORS = REPO / "tests" / "vectors"
SCHEMA = REPO / "docs" / "record.schema.json"
CACHE = REPO / "target" / "py-cache"

import result_sanitizer  # noqa: E402

# An installed wheel carries the components; a source checkout (PYTHONPATH
# = hosts/python/src) reads them from target/components.
if not (Path(result_sanitizer.__file__).parent / "components" / "default-pack.wasm").exists():
    os.environ.setdefault("RESULT_SANITIZER_COMPONENTS", str(COMPONENTS))


def aws_key() -> str:
    """An AWS access key id the default rules find, made at run time so no
    key-shaped literal sits in the repository."""
    return "AKIA" + "Q3EGRTZ7" + "MBXK4WNP"


def password() -> str:
    return "Xk9mQ2vLp7" + "zzR4"


@pytest.fixture(scope="session")
def sanitizer() -> Any:
    s = result_sanitizer.Sanitizer(cache_dir=CACHE)
    yield s
    s.close()


@pytest.fixture(scope="session")
def record_validator() -> Any:
    from jsonschema import Draft202012Validator

    schema = json.loads(SCHEMA.read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def check_record(validator: Any, record: Any, what: str) -> None:
    errors = sorted(validator.iter_errors(record), key=lambda e: list(e.path))
    assert not errors, f"{what}: the record does not match docs/record.schema.json: {[e.message for e in errors[:3]]}"


def message_record(message: str) -> Any:
    m = json.loads(message)
    return (m.get("_meta") or {}).get("result-sanitizer/record") or m.get("record")


def run_cli(args: list[str], stdin: bytes, timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, XDG_CACHE_HOME=str(CACHE / "cli"))
    return subprocess.run(
        [sys.executable, "-m", "result_sanitizer", *args], input=stdin, capture_output=True, env=env, timeout=timeout
    )


def assert_working_marker(shown: str, original: bytes) -> None:
    """The cut is marked, and the marker's byte range is the part not
    shown: the lines right around it are the original's at those offsets,
    and re-reading `offset=N limit=M` gives exactly the omitted bytes."""
    m = re.search(r"\[truncated: omitted bytes (\d+)-(\d+) \((\d+) bytes", shown)
    assert m, "no omitted-bytes marker"
    start, end, n = (int(x) for x in m.groups())
    assert end - start == n and 0 < start < end <= len(original)
    r = re.search(r"offset=(\d+) limit=(\d+)", shown)
    assert r and int(r.group(1)) == start and int(r.group(2)) == n
    before = shown[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
    assert original[:start].decode().rstrip("\n").endswith(before)
    after_marker = shown[m.end():].split("\n", 1)[1]
    first_after = after_marker.split("\n", 1)[0]
    assert original[end:].decode().startswith(first_after)

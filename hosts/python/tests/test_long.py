"""Structure survives size (#39), as cli/tests/json_long.rs checks the Rust
CLI: JSON, JSON lines and CSV over the byte cap, from stdin and from a
file, come back as a valid document (or whole records) with both ends
shown and the omitted part counted exactly, in the Rust CLI's bytes; a file
is read by offset (`read_file_head_tail`), so a 10 GB (sparse) file is not
drained. The real components, `python -m result_sanitizer` and the Rust CLI
as child processes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any, Callable, Optional

import pytest

import result_sanitizer
from conftest import REPO, check_record, message_record, run_cli

CLI = REPO / "target" / "release" / "result-sanitizer"


@pytest.fixture(scope="module")
def rust_cli() -> Path:
    if not CLI.exists():
        pytest.skip(f"the Rust CLI is not built ({CLI}): run `make build` to compare with its bytes")
    return CLI


def run_rust(cli: Path, args: list[str], stdin: bytes) -> bytes:
    r = subprocess.run([str(cli), "sanitize", *args], input=stdin, capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr[:300]
    return r.stdout


def run_py(args: list[str], stdin: bytes) -> tuple[bytes, float]:
    t0 = time.monotonic()
    r = run_cli(args, stdin)
    took = time.monotonic() - t0
    assert r.returncode == 0, r.stderr[:300]
    return r.stdout, took


def parse(out: bytes, validator: Any) -> tuple[str, dict[str, Any]]:
    """The message's text and its record (validated)."""
    m = json.loads(out)
    rec = message_record(out.decode())
    check_record(validator, rec, "long")
    return m["content"][0]["text"], rec


def same_as_rust(cli: Path, tmp: Path, data: bytes, file: Optional[str], flags: list[str], validator: Any) -> tuple[str, dict[str, Any]]:
    """The Python command's message for `data` on stdin (`file` None) or as
    a file named `file`, checked equal to the Rust CLI's."""
    stdin = data
    if file is not None:
        p = tmp / file
        p.write_bytes(data)
        flags, stdin = [str(p), *flags], b""
    got, _ = run_py(flags, stdin)
    assert got == run_rust(cli, flags, stdin), f"the Python command differs from the Rust CLI ({file or 'stdin'})"
    return parse(got, validator)


NOTE = re.compile(
    r"^\[truncated: (\d+) (?:items|members) omitted \(indexes (\d+)-(\d+) of (\d+); bytes (\d+)-(\d+), lines \d+-\d+ of the output, read once\), not kept\]$"
)


def check_array(shown: list[Any], all_: list[Any], rec: dict[str, Any]) -> None:
    """The array shown (from a closed document) against the original: its
    first elements are the original's first, its last the original's last,
    one note between them counts exactly what is missing, at the bytes the
    record says were omitted."""
    at = next(i for i, x in enumerate(shown) if isinstance(x, str) and x.startswith("[truncated:"))
    head, tail = shown[:at], shown[at + 1 :]
    assert head and tail, "both ends shown"
    assert head == all_[: len(head)] and tail == all_[len(all_) - len(tail) :]
    m = NOTE.match(shown[at])
    assert m, f"not a gap note: {shown[at]}"
    omitted, first, last, total, sb, eb = (int(x) for x in m.groups())
    assert total == len(all_)
    assert omitted == len(all_) - len(head) - len(tail)
    assert (first, last) == (len(head), len(all_) - len(tail) - 1)
    assert rec["strategy"] == "json_structure"
    assert rec["structure"]["items"] == omitted
    assert (rec["omitted"][0]["start_byte"], rec["omitted"][0]["end_byte"]) == (sb, eb)


def check_records(text: str, rec: dict[str, Any], lines: list[str], header: bool) -> None:
    """Records shown: whole lines of the original, the first ones and the
    last ones, the marker's numbers exact."""
    m = re.search(r"\[truncated: omitted records (\d+)-(\d+) of (\d+) \((\d+) records;", text)
    assert m, "a records marker"
    first, last, total, count = (int(x) for x in m.groups())
    assert count == last - first + 1
    records = lines[int(header) :]
    assert total == len(records)
    shown = [x for x in text.splitlines() if not x.startswith("[truncated:")]
    skip = int(header)
    if header:
        assert shown[0] == lines[0]
    assert shown[skip : skip + first - 1] == records[: first - 1]
    tail = shown[skip + first - 1 :]
    assert len(tail) == total - last, "records after the marker"
    assert tail == records[last:] and tail[-1] == records[-1]
    assert rec["strategy"] == "records" and rec["structure"]["total_records"] == total


def both(cli: Path, tmp: Path, data: bytes, name: str, validator: Any, check: Callable[[str, dict[str, Any]], None]) -> None:
    """Both ways in: stdin (sniffed) and a file named `name` (its type from the name)."""
    for file in (None, name):
        check(*same_as_rust(cli, tmp, data, file, ["--max-tokens", "1000"], validator))


def test_an_array_of_20000_objects_stays_json_with_both_ends(rust_cli: Path, tmp_path: Path, record_validator: Any) -> None:
    all_ = [{"id": i, "name": f"n{i}", "tags": ["a", "b"]} for i in range(20_000)]
    for doc in (json.dumps(all_, separators=(",", ":")) + "\n", json.dumps(all_, indent=2)):
        both(rust_cli, tmp_path, doc.encode(), "big.json", record_validator, lambda t, r: check_array(json.loads(t), all_, r))


def test_an_object_with_one_huge_array_is_cut_inside_it(rust_cli: Path, tmp_path: Path, record_validator: Any) -> None:
    items = [{"id": i, "path": f"/srv/{i}.txt"} for i in range(30_000)]
    doc = json.dumps({"total": 30000, "items": items, "next": "cursor-2"}, separators=(",", ":"))

    def check(text: str, rec: dict[str, Any]) -> None:
        shown = json.loads(text)
        assert (shown["total"], shown["next"]) == (30000, "cursor-2")
        check_array(shown["items"], items, rec)

    both(rust_cli, tmp_path, doc.encode(), "page.json", record_validator, check)


def test_nested_arrays_are_cut_in_the_array_the_middle_lies_in(rust_cli: Path, tmp_path: Path, record_validator: Any) -> None:
    all_ = [[i, [i, i + 1], "x"] for i in range(20_000)]
    doc = json.dumps(all_, separators=(",", ":"))
    both(rust_cli, tmp_path, doc.encode(), "nested.json", record_validator, lambda t, r: check_array(json.loads(t), all_, r))


def test_json_lines_keep_whole_records_at_both_ends(rust_cli: Path, tmp_path: Path, record_validator: Any) -> None:
    lines = [json.dumps({"event": i, "ok": i % 7 != 0}, separators=(",", ":")) for i in range(20_000)]
    doc = "".join(x + "\n" for x in lines)
    both(rust_cli, tmp_path, doc.encode(), "events.jsonl", record_validator, lambda t, r: check_records(t, r, lines, False))


def test_csv_keeps_the_header_and_whole_records_at_both_ends(rust_cli: Path, tmp_path: Path, record_validator: Any) -> None:
    lines = ["id,user,amount", *(f"{i},user{i},{i * 7}.50" for i in range(30_000))]
    doc = "".join(x + "\n" for x in lines)
    both(rust_cli, tmp_path, doc.encode(), "table.csv", record_validator, lambda t, r: check_records(t, r, lines, True))


def sparse(p: Path, size: int, at: dict[int, bytes]) -> None:
    """A file of `size` bytes, holes but for the bytes written at each
    offset (negative: from the end)."""
    with open(p, "wb") as f:
        f.truncate(size)
        for off, b in at.items():
            os.pwrite(f.fileno(), b, off if off >= 0 else size + off)


def test_a_10_gb_sparse_file_is_seeked_not_drained(rust_cli: Path, tmp_path: Path, sanitizer: Any, record_validator: Any) -> None:
    """The library's read and call take well under a second; the command
    takes less than a second more than on a file of the same shape of
    head + tail + 1 MiB (the interpreter's start-up and the pipeline's work
    on the bytes kept are the same for both). The last line and the
    positions exact, the Rust CLI's bytes."""
    size = 10 << 30
    tail = b"\n" + b"".join(b"end line %d\n" % i for i in range(1, 101))

    def shaped(name: str, n: int) -> Path:
        p = tmp_path / name
        sparse(p, n, {0: b"".join(b"start line %d\n" % i for i in range(1, 101)), -len(tail): tail})
        return p

    p = shaped("sparse.log", size)
    flags = ["--max-tokens", "2000"]
    try:
        opts = dict(max_tokens=2000, source="file", total_bytes=size, file_name=str(p))
        b = sanitizer.effective_budget(**opts)
        with open(p, "rb") as f:
            t0 = time.monotonic()
            ht = sanitizer.read_file_head_tail(f.fileno(), size, b["head_bytes"], b["tail_bytes"], result_sanitizer.SCAN_BOUND)
            read = time.monotonic() - t0
        t0 = time.monotonic()
        lib = sanitizer.sanitize(ht.data, gap=ht.gap, **opts)
        call = time.monotonic() - t0
        small = shaped("small.log", b["head_bytes"] + b["tail_bytes"] + (1 << 20))
        run_py([str(small), *flags], b"")  # warm the compile cache and the page cache
        _, base = run_py([str(small), *flags], b"")
        got, took = run_py([str(p), *flags], b"")
        rust = run_rust(rust_cli, [str(p), *flags], b"")
    finally:
        p.unlink()
    print(f"10 GB file: the library's read {read * 1e3:.1f} ms, its sanitize call {call * 1e3:.0f} ms; the command {took:.2f} s, on head + tail + 1 MiB {base:.2f} s")
    assert read + call < 1.0, f"the library took {read:.2f} s to read and {call:.2f} s to sanitize"
    assert took < base + 1.0, f"the command took {took:.2f} s, {took - base:.2f} s more than on head + tail + 1 MiB"
    assert got == rust, "the Python command differs from the Rust CLI"
    assert got.decode().rstrip("\n") == lib.message, "the library's message is not the command's"
    text, rec = parse(got, record_validator)
    content, _, note = text.rpartition("end line 100\n")
    assert content, "the last line shown"
    assert "end line 99\n" in content and "start line 1\n" in text
    assert note.startswith("[truncated: bytes 67305472-10737352704 of the omitted part were counted, not scanned"), note[:200]
    # Positions exact: 100 lines, the newline before the tail's lines, 100 lines.
    assert (rec["original_bytes"], rec["original_lines"]) == (size, 201)
    assert (rec["kept"][-1]["end_byte"], rec["kept"][-1]["end_line"]) == (size, 201)


def test_a_file_under_the_scan_bound_is_drained_whole(rust_cli: Path, tmp_path: Path, record_validator: Any) -> None:
    """A middle under the bound goes through `drain` whole: its error lines
    and secrets found, nothing said unscanned, the Rust CLI's bytes; a
    sparse one too, with holes in the scanned middle."""
    token = "ghp_" + "4kLm9Pq2Rt7Vx3Yz6Ab1Cd5Ef0Gh2Ij4Kl6M"
    lines = [
        f"error: unit {i} failed: token {token} rejected\n" if i % 100_000 == 50_000 else f"   Compiling unit {i} (step {i % 97})\n"
        for i in range(300_000)
    ]
    data = "".join(lines).encode()
    text, rec = same_as_rust(rust_cli, tmp_path, data, "build.log", ["--max-tokens", "2000"], record_validator)
    assert "250001| error: unit 250000 failed: token [REDACTED:github-token] rejected" in text and "ghp_" not in text
    assert "not scanned" not in text
    assert rec["original_bytes"] == len(data)

    # 40 MiB, holes around an error line in the middle.
    p = tmp_path / "holes.log"
    end = b"\n" + b"".join(b"end %d\n" % i for i in range(1, 101))
    sparse(p, 40 << 20, {0: b"".join(b"start line %d\n" % i for i in range(1, 101)), 20 << 20: b"\nerror: the middle failed\n", -len(end): end})
    got, _ = run_py([str(p), "--max-tokens", "2000"], b"")
    assert got == run_rust(rust_cli, [str(p), "--max-tokens", "2000"], b""), "sparse: the Python command differs from the Rust CLI"
    text, rec = parse(got, record_validator)
    assert "error: the middle failed" in text and rec["original_bytes"] == 40 << 20


def test_a_json_file_past_the_scan_bound_is_counted_not_scanned(rust_cli: Path, tmp_path: Path, sanitizer: Any, record_validator: Any) -> None:
    """70 MiB of JSON (not sparse): the first 64 MiB of its middle are
    drained, the rest only counted, its nesting there unknown (the gap's
    JSON scans dead), so it is not closed as JSON: the Rust CLI's bytes,
    the note on the bytes not scanned exact."""
    p = tmp_path / "dense.json"
    parts, n, i = ["["], 1, 0
    while n < 70 << 20:
        parts.append(f'{{"id": {i}, "name": "n{i}"}},')
        n += len(parts[-1])
        i += 1
    parts.append(f'{{"id": {i}, "name": "n{i}"}}]\n')
    p.write_bytes("".join(parts).encode())
    del parts
    size = p.stat().st_size
    b = sanitizer.effective_budget(max_tokens=1000, file_name=str(p))
    flags = [str(p), "--max-tokens", "1000"]
    try:
        got, _ = run_py(flags, b"")
        rust = run_rust(rust_cli, flags, b"")
    finally:
        p.unlink()
    assert got == rust, "the Python command differs from the Rust CLI"
    text, rec = parse(got, record_validator)
    start, end = b["head_bytes"] + result_sanitizer.SCAN_BOUND, size - b["tail_bytes"]
    assert f"[truncated: bytes {start}-{end} of the omitted part were counted, not scanned" in text
    assert f'"name": "n{i}"}}]' in text, "the last element shown"
    assert rec["strategy"] != "json_structure" and rec["original_bytes"] == size

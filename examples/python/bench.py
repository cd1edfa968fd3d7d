"""The Python host's figures for `make bench`, printed as examples/bench.rs
prints its lines: warm `sanitize` of an 8 KiB service log (the bytes
`bench` and `profile` measure, written by `profile write-clean`) next to
the Rust host's warm figure measured in the same run (`profile warm`), as a
ratio (goal: within 1.5x), and the time a LangChain tool call gains from
the SanitizeToolResults middleware.

    target/py-venv/bin/python examples/python/bench.py   (after make build)
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROFILE = ROOT / "target" / "release" / "examples" / "profile"
N = 400


def line(name: str, value: str, target: str = "", mark: str = "") -> None:
    print(f"{name:<58} {value:>26}   {target:<22} {mark}")


def rust_warm_us(kib: int, n: int) -> float:
    out = subprocess.run([str(PROFILE), "warm", str(kib), str(n)], capture_output=True, text=True, check=True).stdout
    m = re.search(r"([\d.]+)(ns|µs|us|ms|s) per call", out)
    if not m:
        raise SystemExit(f"unexpected output from profile: {out!r}")
    scale = {"ns": 1e-3, "µs": 1.0, "us": 1.0, "ms": 1e3, "s": 1e6}[m.group(2)]
    return float(m.group(1)) * scale


def timed(f, n: int) -> list[float]:
    v = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        v.append((time.perf_counter() - t) * 1e6)
    return v


def main() -> None:
    from result_sanitizer import Sanitizer

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "clean-8k.log"
        subprocess.run([str(PROFILE), "write-clean", "8", str(path)], check=True, capture_output=True)
        data = path.read_bytes()
    s = Sanitizer(cache_dir=ROOT / "target" / "py-cache")
    opts = dict(tool="logs", max_bytes=2 << 20)
    for _ in range(5):
        s.sanitize(data, **opts)  # warm: tables built, rules compiled
    # Interleaved with the Rust host's figure, so both see the same machine.
    rust = [rust_warm_us(8, N)]
    py = timed(lambda: s.sanitize(data, **opts), N)
    rust.append(rust_warm_us(8, N))
    py_mean = statistics.fmean(py)
    rust_mean = statistics.fmean(rust)
    p50, p99 = statistics.median(py), sorted(py)[int(0.99 * (len(py) - 1))]
    line("python: warm sanitize 8 KiB (median / p99)", f"{p50:.0f} µs / {p99:.0f} µs")
    ratio = py_mean / rust_mean
    line(
        "python: warm sanitize 8 KiB, mean vs Rust host's same run",
        f"{py_mean:.0f} / {rust_mean:.0f} µs = {ratio:.2f}x",
        "≤ 1.5x",
        "met" if ratio <= 1.5 else "NOT MET",
    )

    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool
    from langgraph.prebuilt import ToolNode

    from result_sanitizer.adapters.langchain import SanitizeToolResults

    text = data.decode()

    @tool
    def logs(n: int) -> str:
        """The service log."""
        return text

    from langgraph.graph import END, START, MessagesState, StateGraph

    def graph(node: ToolNode):
        g = StateGraph(MessagesState)
        g.add_node("tools", node)
        g.add_edge(START, "tools")
        g.add_edge("tools", END)
        return g.compile()

    m = SanitizeToolResults(s)
    plain = graph(ToolNode([logs]))
    guarded = graph(ToolNode([logs], wrap_tool_call=m.wrap_tool_call))
    call = {"messages": [AIMessage(content="", tool_calls=[{"name": "logs", "args": {"n": 1}, "id": "call_1"}])]}
    for node in (plain, guarded):
        for _ in range(5):
            node.invoke(call)
    a = statistics.median(timed(lambda: plain.invoke(call), 200))
    b = statistics.median(timed(lambda: guarded.invoke(call), 200))
    line("python: LangChain tool call (8 KiB), added by the middleware", f"{b - a:.0f} µs ({a:.0f} -> {b:.0f} µs)")
    s.close()


if __name__ == "__main__":
    if not PROFILE.exists():
        sys.exit(f"{PROFILE} is missing: run make build")
    main()

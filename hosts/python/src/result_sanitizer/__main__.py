"""`python -m result_sanitizer`: the `sanitize` command of the Rust CLI and
the JS and Go hosts: stdin (or FILE) in, the message JSON out (one line),
errors on stderr with exit status 1. The same flags, the same bytes."""

from __future__ import annotations

import argparse
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any, Optional, Sequence

from . import DEFAULT_DRAIN_LIMIT, SCAN_BOUND, Limits, Sanitizer, read_public_key
from ._options import ENCODINGS, FORMATS, INPUTS


def _duration(text: str) -> float:
    """Seconds from `5`, `1.5s`, `1500ms` or Go's `1m30s`."""
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|us|µs|ns|s|m|h)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise argparse.ArgumentTypeError(f"invalid duration {text!r}")
    scale = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
    return sum(float(n) * scale[u] for n, u in parts)


def _cache_dir() -> Optional[Path]:
    if os.environ.get("RESULT_SANITIZER_NO_CACHE"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "result-sanitizer-python"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m result_sanitizer", description=__doc__.splitlines()[0])
    p.add_argument("file", nargs="?", help="input file; `-` or nothing reads stdin")
    p.add_argument("--tool", default="", help="tool name")
    p.add_argument("--call-id", default="", help="tool call id")
    p.add_argument("--format", default="mcp", choices=FORMATS)
    p.add_argument("--input", default="raw", choices=INPUTS)
    p.add_argument("--max-bytes", type=int, help="byte hard cap")
    p.add_argument("--max-chars", type=int, help="character budget")
    p.add_argument("--max-tokens", type=int, help="token budget")
    p.add_argument("--encoding", default="o200k_base", choices=ENCODINGS)
    p.add_argument("--untrusted", action="store_true", help="wrap in the untrusted-source boundary")
    p.add_argument("--content-type", help="content type of raw input")
    p.add_argument("--file-name", help="name of the file stdin holds (a source file's extension gives the content type)")
    p.add_argument(
        "--structured-fit",
        choices=("marked", "schema", "omitted"),
        help="MCP input: how structuredContent over its share is fitted",
    )
    p.add_argument("--lenient", action="store_true", help="lenient (documentation) mode")
    p.add_argument("--pii", action="store_true", help="redact personal data (emails, phone numbers, cards, IBANs, SSNs, private IPs, dates of birth)")
    p.add_argument("--pii-public-ip", action="store_true", help="with --pii: public IP addresses too")
    p.add_argument("--pipeline", help="pipeline component (default: the one the package carries)")
    p.add_argument("--pack", help="rule pack component, verified (default: the default pack, not verified)")
    p.add_argument("--trusted-key", action="append", default=[], help="public key (PREFIX.pub) trusted to sign --pack; repeat for several")
    p.add_argument("--allow-unsigned", action="store_true", help="accept an unsigned --pack (development only)")
    p.add_argument("--tenant", help="tenant the --pack serves (none: a pack of any scope)")
    p.add_argument("--platform-pack", help="the platform's pack, applied whatever --pack says (default: the default pack)")
    p.add_argument("--timeout-ms", type=int, help="wall-clock limit per call, ms (default 5000)")
    p.add_argument("--timeout", type=_duration, help="wall-clock limit per call, as Go's --timeout (5s, 1500ms)")
    p.add_argument("--drain-limit", type=int, default=DEFAULT_DRAIN_LIMIT, help="stop reading after this many bytes")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    a = parser().parse_args(argv)
    timeout = a.timeout if a.timeout is not None else (a.timeout_ms / 1000 if a.timeout_ms is not None else 5.0)
    s = None
    try:
        s = Sanitizer(
            a.pack,
            platform_pack=a.platform_pack,
            trusted_keys=[read_public_key(k) for k in a.trusted_key],
            allow_unsigned=a.allow_unsigned,
            tenant=a.tenant,
            limits=Limits(timeout=timeout),
            pipeline=a.pipeline,
            cache_dir=_cache_dir(),
        )
        opts: dict[str, Any] = dict(
            call_id=a.call_id,
            input=a.input,
            max_bytes=a.max_bytes,
            max_chars=a.max_chars,
            max_tokens=a.max_tokens,
            encoding=a.encoding,
            untrusted=a.untrusted,
            content_type=a.content_type,
            file_name=a.file_name,
            structured_fit=a.structured_fit,
            lenient=a.lenient,
            pii=a.pii,
            pii_public_ip=a.pii and a.pii_public_ip,
            # stdin is not kept: an omitted part cannot be read back.
            source="pipe",
        )
        # A FILE (not `-`): its name gives the content type, and a regular
        # file's size is the output's size; a regular file is read by
        # offset (head, tail, the middle scanned up to SCAN_BOUND), anything
        # else as stdin is, as a stream. As the Rust CLI.
        source: Any = sys.stdin.buffer
        size: Optional[int] = None
        if a.file is not None and a.file != "-":
            source = open(a.file, "rb")
            st = os.fstat(source.fileno())
            if stat.S_ISREG(st.st_mode):
                opts.update(source="file", total_bytes=st.st_size)
                # By offset where there is pread (not on Windows).
                size = st.st_size if hasattr(os, "pread") else None
            if a.file_name is None:
                opts["file_name"] = a.file
        # Read as the pipeline says (head + tail, or up to read_bytes).
        with source:
            b = s.effective_budget(tool=a.tool, format=a.format, **opts) if size is not None else None
            if b is not None and b["head_bytes"] > 0:
                assert size is not None
                ht = s.read_file_head_tail(source.fileno(), size, b["head_bytes"], b["tail_bytes"], SCAN_BOUND)
                out = s.sanitize(ht.data, tool=a.tool, format=a.format, gap=ht.gap, **opts)
            else:
                out = s.sanitize(source, tool=a.tool, format=a.format, drain_limit=a.drain_limit, **opts)
        sys.stdout.write(out.message + "\n")
        sys.stdout.flush()
        return 0
    except BrokenPipeError:
        return 141
    except Exception as e:  # every error is one line, never the input
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        sys.stderr.write(f"result-sanitizer: error: {msg}\n")
        return 1
    finally:
        if s is not None:
            s.close()


if __name__ == "__main__":
    sys.exit(main())

"""Head + tail reading: a long output kept as its head and tail, the middle
drained through the pipeline's `drain` step in 1 MiB steps and not kept.

`read_head_tail` (a mixin of `Sanitizer`) with its drain step and the empty
gap, as the other hosts read (host/src/io.rs, hosts/js/src/index.js,
hosts/go/headtail.go); and the `read(n)` over a file object or an iterable of
bytes that this and streaming redaction share (`_reader`, `_read_up_to`)."""

from __future__ import annotations

import base64
import json
from typing import Any, Callable, Optional

from ._errors import InvalidOutputError
from ._instances import _Instances
from ._model import HeadTail, Source

#: Bytes of a long output's middle sent per `drain` step (as the other hosts).
DRAIN_CHUNK = 1 << 20
#: Reading stops here by default: a producer that never ends is cut.
DEFAULT_DRAIN_LIMIT = 1 << 30
_READ = 64 * 1024


def _emptygap(start: int) -> dict[str, Any]:
    return {
        "start_byte": start,
        "bytes": 0,
        "newlines": 0,
        "ends_line": False,
        "error_lines": [],
        "error_lines_seen": 0,
        "redactions": [],
        "unfinished": False,
    }


class _HeadTail(_Instances):
    """`read_head_tail` and its drain step."""

    def _drain(self, gap: dict[str, Any], pending: bytes, last: bool) -> tuple[dict[str, Any], bytes]:
        req = json.dumps({"gap": gap, "data_base64": base64.b64encode(pending).decode("ascii"), "last": last})
        r = self._twin("drain-json", req)["Ok"]
        consumed = r.get("consumed")
        g = r.get("gap")
        if not isinstance(consumed, int) or not isinstance(g, dict) or consumed < 0 or consumed > len(pending) or (last and consumed != len(pending)):
            raise InvalidOutputError("drain step consumed a bad number of bytes")
        if g.get("start_byte") != gap["start_byte"] or g.get("bytes") != gap["bytes"] + consumed or g.get("newlines", 0) > g.get("bytes", 0):
            raise InvalidOutputError("drain step: the gap's sizes do not add up")
        lines = g.get("error_lines") or []
        if len(lines) > 64 or any(len(str(x.get("text", "")).encode()) > 1024 for x in lines):
            raise InvalidOutputError("drain step: too many or too long error lines")
        rest = pending[consumed:]
        if not last and len(rest) > 2 * DRAIN_CHUNK + (1 << 20):
            raise InvalidOutputError("drain step made no progress")
        return g, rest

    def read_head_tail(self, source: Source, head_bytes: int, tail_bytes: int, drain_limit: int = DEFAULT_DRAIN_LIMIT) -> HeadTail:
        """Reads `source` (a binary file object, or an iterable of bytes) to
        its end or to `drain_limit` bytes, keeping the first `head_bytes`
        and the last `tail_bytes` (the budget's `head_bytes`, `tail_bytes`).
        The bytes between go through the pipeline's `drain` step once and
        are not kept: memory stays about head + tail + 2 MiB. Sanitize
        `HeadTail.data` with `gap=HeadTail.gap`."""
        read = _reader(source)
        kept = bytearray()
        ring = bytearray()
        pending = bytearray()
        gap: Optional[dict[str, Any]] = None
        total = 0
        stopped = False
        h, t = head_bytes, tail_bytes
        while True:
            room = min(drain_limit - total, _READ)
            if room <= 0:
                # At the limit: stopped only if the output goes on.
                stopped = len(read(1)) > 0
                break
            chunk = read(room)
            if not chunk:
                break
            total += len(chunk)
            data = memoryview(chunk)
            if len(kept) < h:
                k = min(h - len(kept), len(data))
                kept += data[:k]
                data = data[k:]
            ring += data
            if len(ring) > t + _READ:
                out = len(ring) - t
                pending += ring[:out]
                del ring[:out]
                if gap is None:
                    gap = _emptygap(len(kept))
                if len(pending) >= DRAIN_CHUNK:
                    assert gap is not None
                    gap, rest = self._drain(gap, bytes(pending), False)
                    pending = bytearray(rest)
        if len(ring) > t:
            out = len(ring) - t
            pending += ring[:out]
            del ring[:out]
            if gap is None:
                gap = _emptygap(len(kept))
        if gap is not None:
            gap, _ = self._drain(gap, bytes(pending), True)
        if stopped:
            if gap is None:
                gap = _emptygap(len(kept))
            gap = dict(gap, unfinished=True)
        return HeadTail(data=bytes(kept + ring), gap=gap, total=total, stopped=stopped)


def _reader(source: Source) -> Callable[[int], bytes]:
    """A `read(n)` over a binary file object or an iterable of bytes."""
    if hasattr(source, "read"):
        f = source

        def read_file(n: int) -> bytes:
            b = f.read(n)
            if isinstance(b, str):
                raise TypeError("read a text stream: open it in binary mode")
            return b or b""

        return read_file
    it = iter(source)
    buf = bytearray()

    def read_iter(n: int) -> bytes:
        while not buf:
            try:
                c = next(it)
            except StopIteration:
                return b""
            buf.extend(c.encode("utf-8") if isinstance(c, str) else c)
        out = bytes(buf[:n])
        del buf[:n]
        return out

    return read_iter


def _read_up_to(source: Any, n: int) -> bytes:
    read = _reader(source)
    out = bytearray()
    while len(out) < n:
        b = read(min(n - len(out), _READ))
        if not b:
            break
        out += b
    return bytes(out)

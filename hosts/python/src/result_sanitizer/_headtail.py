"""Head + tail reading: a long output kept as its head and tail, the middle
drained through the pipeline's `drain` step in 1 MiB steps and not kept.

`read_head_tail` (a mixin of `Sanitizer`) with its drain step and the empty
gap, as the other hosts read (host/src/io.rs, hosts/js/src/index.js,
hosts/go/headtail.go); `read_file_head_tail`, the same for a regular file
read by offset, its middle scanned only up to `SCAN_BOUND` (as
host/src/io.rs `read_file_head_tail`, hosts/go/fileread.go); and the `read(n)`
over a file object or an iterable of bytes that this and streaming redaction
share (`_reader`, `_read_up_to`)."""

from __future__ import annotations

import base64
import errno
import json
import os
from typing import Any, Callable, Iterator, Optional

from ._errors import InvalidOutputError
from ._instances import _Instances
from ._model import HeadTail, Source

#: Bytes of a long output's middle sent per `drain` step (as the other hosts).
DRAIN_CHUNK = 1 << 20
#: Reading stops here by default: a producer that never ends is cut.
DEFAULT_DRAIN_LIMIT = 1 << 30
#: How much of a file's middle `read_file_head_tail` scans (drains) at most:
#: the first 64 MiB after the head, as the Rust host. Past it the middle is
#: only counted (bytes, newlines; a sparse file's holes skipped): its error
#: lines and secrets are not looked for, and the marker says which bytes.
SCAN_BOUND = 64 << 20
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

    def read_file_head_tail(self, fd: int, size: int, head_bytes: int, tail_bytes: int, scan_bound: int = SCAN_BOUND) -> HeadTail:
        """Reads a regular file of `size` bytes (`fd`: its descriptor, e.g.
        `f.fileno()`) as `read_head_tail` reads a stream, but by offset: the
        head from 0, the tail from `size - tail_bytes`, and of the middle
        only its first `scan_bound` bytes go through `drain`; the rest is
        counted, not sent to the pipeline, so a 10 GB log answers in the
        time its head, its tail and the bound take. The Rust host's steps
        (host/src/io.rs `read_file_head_tail`), so its gap and its bytes."""
        head, tail = head_bytes, tail_bytes
        if size <= head + tail:
            return HeadTail(data=_pread(fd, size, 0), gap=None, total=size, stopped=False)
        kept = _pread(fd, head, 0)
        mid_end = size - tail
        scan_end = min(mid_end, head + scan_bound)
        gap = _emptygap(head)
        pending = bytearray()
        # Only the data is drained: a sparse file's holes (zeros: no line,
        # no secret) are counted.
        off, holes = head, False
        for start, end in _data_regions(fd, head, scan_end):
            if start > off:
                gap, _ = self._drain(gap, bytes(pending), True)
                pending = bytearray()
                gap = dict(gap, bytes=gap["bytes"] + start - off, ends_line=False)
                holes = True
            off = start
            while off < end:
                n = min(end - off, DRAIN_CHUNK)
                pending += _pread(fd, n, off)
                off += n
                if len(pending) >= DRAIN_CHUNK and off < end:
                    gap, rest = self._drain(gap, bytes(pending), False)
                    pending = bytearray(rest)
        gap, _ = self._drain(gap, bytes(pending), True)
        if off < scan_end:
            gap = dict(gap, bytes=gap["bytes"] + scan_end - off, ends_line=False)
            holes = True
        if scan_end < mid_end:
            newlines, last = _count_newlines(fd, scan_end, mid_end)
            gap = dict(
                gap,
                bytes=gap["bytes"] + mid_end - scan_end,
                newlines=gap["newlines"] + newlines,
                ends_line=last == b"\n",
                unscanned=mid_end - scan_end,
            )
        if scan_end < mid_end or holes:
            # Its JSON nesting is not known past the bound (nor across a hole).
            scans = gap.get("json") or [_DEAD_SCAN] * 3
            gap = dict(gap, json=[dict(j, dead=True) for j in scans])
        return HeadTail(data=kept + _pread(fd, tail, mid_end), gap=gap, total=size, stopped=False)


_DEAD_SCAN: dict[str, Any] = {"in_str": False, "esc": False, "dead": True, "depth": 0, "min_depth": 0, "commas": 0}


def _pread(fd: int, n: int, off: int) -> bytes:
    """Exactly `n` bytes at `off` (a file shorter than its size is an error)."""
    out = bytearray()
    while len(out) < n:
        b = os.pread(fd, n - len(out), off + len(out))
        if not b:
            raise OSError(errno.EIO, "the file is shorter than its size")
        out += b
    return bytes(out)


def _data_regions(fd: int, at: int, to: int) -> Iterator[tuple[int, int]]:
    """The data regions of bytes `at..to`, in order (SEEK_DATA, SEEK_HOLE);
    the whole range where the system or file system cannot tell. The Rust
    host's `DataRegions`, step for step."""
    seek_data, seek_hole = getattr(os, "SEEK_DATA", None), getattr(os, "SEEK_HOLE", None)
    while at < to:
        try:
            start = max(os.lseek(fd, at, seek_data), at) if seek_data is not None else at
        except OSError as e:
            if e.errno == errno.ENXIO:
                return  # a hole to the end
            start = at  # no SEEK_DATA here: all of it is data
        if start >= to:
            return
        try:
            end = min(max(os.lseek(fd, start, seek_hole), start + 1), to) if seek_hole is not None else to
        except OSError:
            end = to
        at = end
        yield start, end


def _count_newlines(fd: int, start: int, end: int) -> tuple[int, bytes]:
    """Newlines in bytes `start..end`, reading only the data (holes are
    zeros), and the last byte."""
    n = 0
    for a, b in _data_regions(fd, start, end):
        while a < b:
            k = min(b - a, DRAIN_CHUNK)
            n += _pread(fd, k, a).count(b"\n")
            a += k
    return n, _pread(fd, 1, end - 1)


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

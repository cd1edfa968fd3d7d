"""Streaming redaction: the pipeline's typed `redact` export, one step at a
time, in constant memory.

`redact` and `_redact_step` (a mixin of `Sanitizer`; each step's output
checked as the Rust host's validate.rs checks it: bytes consumed, spans, the
content type judged when asked to sniff) and `RedactStream`, which iterates
the redacted bytes and counts the replacements. Kept apart from the JSON twins
(`_instances`, `_headtail`): the one call that passes typed values."""

from __future__ import annotations

from typing import Any, BinaryIO, Iterator, Optional

from wasmtime.component import Variant

from ._errors import InvalidOutputError
from ._headtail import _reader
from ._instances import _Instances
from ._model import Source, _twin_error
from ._wasm import record, to_python

#: Bytes `redact` sends per step (as the Rust CLI).
REDACT_CHUNK = 1 << 20


class _Redaction(_Instances):
    """`redact` and its step."""

    def redact(
        self,
        source: Source,
        *,
        content_type: Optional[str] = None,
        untrusted: bool = False,
        chunk_size: int = REDACT_CHUNK,
        pii: bool = False,
        pii_public_ip: bool = False,
        sniff: bool = False,
    ) -> "RedactStream":
        """Streams `source` through the pipeline's `redact` step: iterate
        the returned RedactStream for the redacted bytes. Memory stays at
        about one chunk plus the pipeline's overlap, whatever the length.
        Its `counts` (rule id -> replacements) grow as it goes. `pii`
        (and `pii_public_ip`) also redact personal data, as `--pii` does.
        `sniff`, without a `content_type`: the pipeline judges the stream
        from its first 16 KiB (code, a test's code, or text), as
        `redact --sniff` does."""
        stream = RedactStream(self, source, content_type, untrusted, max(1, chunk_size), (pii, pii_public_ip))
        stream._sniff = sniff and content_type is None
        return stream

    def _redact_step(
        self,
        data: bytes,
        last: bool,
        content_type: Optional[str],
        untrusted: bool,
        pii: tuple[bool, bool] = (False, False),
        sniff: bool = False,
    ) -> tuple[bytes, int, list[Any], Optional[str]]:
        req = record(
            data=data,
            last=last,
            content_type=content_type,
            sniff=sniff,
            untrusted=untrusted,
            report=False,
            pii=pii[0],
            pii_public_ip=pii[1],
        )
        out = self._call("redact", req)
        if isinstance(out, Variant):
            raise _twin_error(to_python(out))
        consumed = getattr(out, "consumed")
        if consumed > len(data) or (last and consumed != len(data)):
            raise InvalidOutputError("redact consumed a bad number of bytes")
        if getattr(out, "spans"):
            raise InvalidOutputError("redact returned a bad report span")
        # As the Rust host's validate.rs: a judgment only when asked, made
        # before any byte is consumed, and one the WIT names.
        judged = getattr(out, "content-type")
        sniffing = sniff and content_type is None
        if judged is not None and (not sniffing or judged not in ("", "text/x-source", "text/x-source; test")):
            raise InvalidOutputError("redact returned a content type it was not asked for")
        if judged is None and sniffing and consumed > 0:
            raise InvalidOutputError("redact consumed a stream it had not judged")
        return bytes(getattr(out, "output")), consumed, to_python(getattr(out, "redactions")), judged


class RedactStream:
    """Iterates the redacted bytes of a stream, one step at a time."""

    def __init__(
        self, s: _Redaction, source: Source, content_type: Optional[str], untrusted: bool, chunk: int, pii: tuple[bool, bool] = (False, False)
    ) -> None:
        self._pii = pii
        self._s, self._read = s, _reader(source)
        self._ct, self._untrusted, self._chunk = content_type, untrusted, chunk
        # Asked to sniff: until the pipeline says what the stream is.
        self._sniff = False
        #: Replacements so far, by rule id.
        self.counts: dict[str, int] = {}

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def __iter__(self) -> Iterator[bytes]:
        carry = b""
        eof = False
        while not eof:
            buf = bytearray()
            while len(buf) < self._chunk:
                got = self._read(self._chunk - len(buf))
                if not got:
                    eof = True
                    break
                buf += got
            data = carry + bytes(buf)
            out, consumed, counts, judged = self._s._redact_step(data, eof, self._ct, self._untrusted, self._pii, self._sniff)
            if judged is not None:
                self._sniff, self._ct = False, judged or None
            for c in counts:
                self.counts[c["rule_id"]] = self.counts.get(c["rule_id"], 0) + int(c["count"])
            if out:
                yield out
            carry = data[consumed:]
            if not eof and len(carry) > self._chunk + (1 << 20):
                raise InvalidOutputError("redact step made no progress")

    def write_to(self, out: BinaryIO) -> int:
        """Writes everything to `out`; returns the number of replacements."""
        for b in self:
            out.write(b)
        return self.total

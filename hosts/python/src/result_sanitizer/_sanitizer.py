"""The Sanitizer: the pipeline component and two rule packs (the platform's
floor and the tenant's) on wasmtime, through the `wasmtime.component` API.

Model (as the Rust host): the pipeline runs in one store, the packs in
another, each with its own memory cap; the pipeline's `platform` and
`rule-pack` imports are Python functions that call the pack instances'
exports, each pack call under the pack's fuel. A tenant rule set's `relax`
keeps only the ids its verified signature grants (`may_relax`); the
platform's is emptied. Calls go through the pipeline's JSON twins
(`sanitize-json`, `effective-budget-json`, `drain-json`), strings in and
out; `redact` is the typed export. Every call runs under fuel and a
wall-clock deadline (epoch interruption); after any trap or timeout both
stores are dropped and the next call gets fresh instances. What the
pipeline returns is checked before it is passed on."""

from __future__ import annotations

import base64
import io
import json
import os
import threading
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Iterator, Mapping, Optional, Union

import wasmtime
from wasmtime.component import Component, Linker, Record, Variant

from ._errors import InvalidOutputError, OutOfFuelError, SanitizeError, SanitizerError, TimeoutError, TrapError
from ._options import twin_options, twin_request
from ._verify import Time, check_manifest, read_pack, verify_pack
from ._verify import _get as _verifier
from ._wasm import WIT_VERSION, Watchdog, call_str, compile_component, engine_config, record, to_python

RULE_PACK = f"result-sanitizer:core/rule-pack@{WIT_VERSION}"
PLATFORM = f"result-sanitizer:core/platform@{WIT_VERSION}"
PIPELINE = f"result-sanitizer:core/result-sanitizer@{WIT_VERSION}"

#: Bytes of a long output's middle sent per `drain` step (as the other hosts).
DRAIN_CHUNK = 1 << 20
#: Reading stops here by default: a producer that never ends is cut.
DEFAULT_DRAIN_LIMIT = 1 << 30
#: Bytes `redact` sends per step (as the Rust CLI).
REDACT_CHUNK = 1 << 20
#: Largest rule set a pack may return: strings + 64 bytes per rule.
RULE_SET_BYTES = 4 << 20
#: Most findings one `detect` call may return.
MAX_FINDINGS = 1_000_000
# Ids no pack rule has: tenant roots and the pipeline's personal-data
# detectors (guest/src/stages/redact/pii/mod.rs, DETECTOR_IDS).
BUILTIN_RULE_IDS = frozenset({"tenant-path-root", "card", "iban", "phone", "ssn", "ip", "dob"})
_READ = 64 * 1024

PackSource = Union[bytes, bytearray, memoryview, str, "os.PathLike[str]"]
Source = Union[BinaryIO, Iterable[bytes]]


def components_dir() -> Path:
    """Where the components are: $RESULT_SANITIZER_COMPONENTS, else the
    `components/` directory the wheel carries."""
    env = os.environ.get("RESULT_SANITIZER_COMPONENTS")
    return Path(env) if env else Path(__file__).parent / "components"


def component_path(name: str) -> Path:
    return components_dir() / name


def _pipeline_path() -> Path:
    # The pre-initialised pipeline (tokenizer tables in its snapshot), as
    # the Rust host embeds; the plain one otherwise.
    warm = component_path("pipeline-warm.wasm")
    return warm if warm.exists() else component_path("pipeline.wasm")


@dataclass(frozen=True)
class Limits:
    """Per-call limits; the defaults are the Rust host's (docs/SECURITY.md)."""

    #: Fuel for one pipeline call (about one unit per wasm instruction).
    fuel: int = 20_000_000_000
    #: Fuel for one call into a pack.
    pack_fuel: int = 2_000_000_000
    #: Wall-clock limit of one call, seconds.
    timeout: float = 5.0
    #: Largest linear memory of the pipeline, MiB.
    memory_mib: int = 256
    #: Largest linear memory of a pack, MiB.
    pack_memory_mib: int = 32


@dataclass(frozen=True)
class Result:
    """One tool message and its record."""

    #: The tool message as JSON text, ready to send: an MCP result, or
    #: `{"message": ..., "record": ...}` for OpenAI and Anthropic.
    message: str
    #: The record (docs/record.schema.json).
    record: dict[str, Any]
    #: The result is an error result (a tool error, MCP isError).
    is_error: bool = False
    format: str = "mcp"

    @property
    def tool_message(self) -> dict[str, Any]:
        """What to send the model: the MCP result, or the OpenAI /
        Anthropic message without the record."""
        m: dict[str, Any] = json.loads(self.message)
        return m if self.format == "mcp" else m["message"]

    @property
    def text(self) -> str:
        """The model-visible text (text blocks joined)."""
        m = self.tool_message
        c = m.get("content")
        if isinstance(c, str):
            return c
        return "".join(b.get("text", "") for b in c or [] if isinstance(b, dict))


@dataclass
class HeadTail:
    """A long output as a host keeps it: head and tail, the middle drained."""

    #: The head, then the tail: the input to sanitize.
    data: bytes
    #: The drained middle (pass as the `gap` option), None when it fit.
    gap: Optional[dict[str, Any]]
    #: Bytes read in all.
    total: int
    #: Reading stopped at the drain limit; the output went on.
    stopped: bool


@dataclass
class _Pack:
    name: str
    component: Component
    index: dict[str, Any]
    grant: Optional[list[str]]  # None: the platform (relax emptied)


@dataclass
class _Live:
    """One live set of instances: never entered again after a failure."""

    pipe_store: wasmtime.Store
    pack_store: wasmtime.Store
    funcs: dict[str, Any]
    packs: dict[str, Any]  # role -> {name: Func}
    infos: dict[str, dict[str, Any]] = field(default_factory=dict)
    rule_ids: dict[str, set[str]] = field(default_factory=dict)
    has_detect: dict[str, bool] = field(default_factory=dict)
    failed_pack: Optional[str] = None


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


_KINDS = {"invalid_options": "invalid options", "invalid_input": "invalid input", "invalid_pack": "invalid rule pack"}


def _twin_error(err: Mapping[str, Any]) -> SanitizeError:
    for k, v in err.items():
        return SanitizeError(_KINDS.get(k, k), str(v))
    return SanitizeError("invalid output", "an empty error")


def _first_line(e: BaseException) -> str:
    """What went wrong, in one line: wasmtime's cause (`wasm trap: ...`)
    rather than the backtrace (function names, never data)."""
    s = str(e).strip()
    if "Caused by:" in s:
        causes = [x.strip() for x in s.split("Caused by:", 1)[1].splitlines() if x.strip()]
        if causes:
            return "; ".join(c.split(": ", 1)[1] if c[:1].isdigit() and ": " in c else c for c in causes)
    return s.splitlines()[0] if s else type(e).__name__


class Sanitizer:
    """The pipeline with a tenant's rule pack over the platform's floor.

    `pack`: the tenant's pack component (bytes or a path), verified before
    any of it is compiled (signature by one of `trusted_keys`, the text of
    `.pub` files; expiry at `now`; WIT version; scope `tenant`, None: any
    scope); `allow_unsigned` accepts an unsigned pack (development only).
    Default: the default pack built with the package, as the Rust host's
    embedded pack. `platform_pack`: the platform's pack, whose rules apply
    whatever the tenant's says (the operator's own file, not verified;
    default: the default pack). `cache_dir` keeps compiled code between
    processes. Refusals raise PackRefusedError; calls are serialized (one
    Sanitizer is safe to share between threads)."""

    def __init__(
        self,
        pack: Optional[PackSource] = None,
        *,
        platform_pack: Optional[PackSource] = None,
        trusted_keys: Iterable[str] = (),
        allow_unsigned: bool = False,
        tenant: Optional[str] = None,
        now: Time = None,
        limits: Limits = Limits(),
        pipeline: Optional[PackSource] = None,
        cache_dir: Optional[Union[str, "os.PathLike[str]"]] = None,
    ) -> None:
        self.limits = limits
        cache = Path(cache_dir) if cache_dir is not None else None
        _verifier(cache)
        grant: list[str] = []
        tenant_bytes: Optional[bytes] = None
        if pack is not None:
            tenant_bytes = read_pack(pack)
            verified = verify_pack(
                tenant_bytes, trusted_keys=trusted_keys, allow_unsigned=allow_unsigned, tenant=tenant, now=now
            )
            self.verified: Optional[dict[str, Any]] = verified
            grant = list((verified.get("signed") or {}).get("may_relax") or [])
        else:
            self.verified = None
        default_bytes = component_path("default-pack.wasm").read_bytes()
        platform_bytes = read_pack(platform_pack) if platform_pack is not None else default_bytes
        # The operator's own packs are not verified; their manifest and
        # WIT version are still checked (as in every host).
        check_manifest(platform_bytes)
        if tenant_bytes is None and platform_pack is not None:
            check_manifest(default_bytes)
        pipeline_bytes = Path(pipeline).read_bytes() if isinstance(pipeline, (str, os.PathLike)) else (
            bytes(pipeline) if pipeline is not None else _pipeline_path().read_bytes()
        )
        self._engine = wasmtime.Engine(engine_config())
        self._watchdog = Watchdog(self._engine)
        # A Sanitizer dropped without close() still ends its thread.
        weakref.finalize(self, self._watchdog.close)
        self._lock = threading.RLock()
        self._budgets: dict[str, dict[str, Any]] = {}
        self._pipeline = compile_component(self._engine, pipeline_bytes, cache)
        self._pipe_index = self._exports(self._pipeline, PIPELINE, ("sanitize-json", "effective-budget-json", "drain-json", "redact"))
        platform = self._load_pack(platform_bytes, cache, None)
        if tenant_bytes is None and platform_pack is None:
            # The default pack is both, one instance (as the other hosts).
            self._packs = {"platform": platform, "tenant": platform}
        else:
            tenant_pack = self._load_pack(tenant_bytes if tenant_bytes is not None else default_bytes, cache, grant)
            self._packs = {"platform": platform, "tenant": tenant_pack}
        self._linker = Linker(self._engine)
        with self._linker.root() as root:
            for iface, role in ((PLATFORM, "platform"), (RULE_PACK, "tenant")):
                with root.add_instance(iface) as inst:
                    for name in ("info", "rules", "has-detect", "detect"):
                        inst.add_func(name, self._forwarder(role, name))
        self._live: Optional[_Live] = None

    # --- loading -------------------------------------------------------

    @staticmethod
    def _exports(comp: Component, iface: str, names: Iterable[str]) -> dict[str, Any]:
        i = comp.get_export_index(iface)
        if i is None:
            raise SanitizeError("invalid rule pack", f"the component exports no {iface.split('/')[1]}")
        out = {}
        for n in names:
            x = comp.get_export_index(n, i)
            if x is None:
                raise SanitizeError("invalid rule pack", f"the component has no export {n}")
            out[n] = x
        return out

    def _load_pack(self, wasm: bytes, cache: Optional[Path], grant: Optional[list[str]]) -> _Pack:
        try:
            comp = compile_component(self._engine, wasm, cache)
        except wasmtime.WasmtimeError as e:
            raise SanitizeError("invalid rule pack", f"the pack does not compile: {_first_line(e)}") from None
        index = self._exports(comp, RULE_PACK, ("info", "rules", "has-detect", "detect"))
        return _Pack(name="", component=comp, index=index, grant=grant)

    def _instantiate(self) -> _Live:
        lim = self.limits
        pack_store = wasmtime.Store(self._engine)
        pack_store.set_limits(memory_size=lim.pack_memory_mib << 20)
        pipe_store = wasmtime.Store(self._engine)
        pipe_store.set_limits(memory_size=lim.memory_mib << 20)
        for st in (pack_store, pipe_store):
            st.set_fuel(lim.fuel)
            st.set_epoch_deadline(1)
        empty = Linker(self._engine)
        packs: dict[str, Any] = {}
        made: dict[int, Any] = {}
        for role in ("platform", "tenant"):
            p = self._packs[role]
            if id(p) not in made:
                try:
                    inst = empty.instantiate(pack_store, p.component)
                except wasmtime.WasmtimeError as e:
                    raise SanitizeError("invalid rule pack", f"the pack does not instantiate: {_first_line(e)}") from None
                made[id(p)] = {n: inst.get_func(pack_store, i) for n, i in p.index.items()}
            packs[role] = made[id(p)]
        inst = Linker.instantiate(self._linker, pipe_store, self._pipeline)
        funcs = {n: inst.get_func(pipe_store, i) for n, i in self._pipe_index.items()}
        live = _Live(pipe_store=pipe_store, pack_store=pack_store, funcs=funcs, packs=packs)
        for role in ("platform", "tenant"):
            pack_store.set_fuel(lim.pack_fuel)
            live.infos[role] = to_python(packs[role]["info"](pack_store))
        return live

    def _forwarder(self, role: str, name: str) -> Callable[..., Any]:
        # wasmtime-py keeps host functions in a global table until their
        # linker is deleted: a weak reference, so a Sanitizer (and its
        # linker, engine and compiled code) can still be collected.
        me = weakref.ref(self)

        def forward(_store: Any, *args: Any) -> Any:
            self = me()
            live = self._live if self is not None else None
            if self is None or live is None:  # pragma: no cover - only during instantiation
                raise RuntimeError("no live instance")
            try:
                live.pack_store.set_fuel(self.limits.pack_fuel)
                out = live.packs[role][name](live.pack_store, *args)
            except BaseException:
                live.failed_pack = role
                raise
            if name == "rules":
                out = self._checked_rules(live, role, out)
            elif name == "detect" and len(out) > MAX_FINDINGS:
                live.failed_pack = role
                raise SanitizerError("too many findings")
            elif name == "has-detect":
                live.has_detect[role] = bool(out)
            return out

        return forward

    def _checked_rules(self, live: _Live, role: str, rs: Record) -> Record:
        rules = getattr(rs, "rules")
        size = 0
        for r in rules:
            size += 64 + sum(len(getattr(r, f)) for f in ("id", "description", "regex"))
            size += sum(len(x) for f in ("keywords", "allow-regexes", "stopwords") for x in getattr(r, f))
        for f in ("allow-regexes", "stopwords", "path-roots", "lenient-tools", "scrub-tools", "readable-roots", "relax", "pii-tools"):
            size += sum(len(x) for x in getattr(rs, f))
        if size > RULE_SET_BYTES:
            live.failed_pack = role
            raise SanitizerError("rule set too large")
        live.rule_ids[role] = {getattr(r, "id") for r in rules}
        grant = self._packs[role].grant if role == "tenant" else None
        allowed = set(grant or [])
        setattr(rs, "relax", [x for x in getattr(rs, "relax") if x in allowed])
        return rs

    # --- calls ---------------------------------------------------------

    def _call(self, export: str, *args: Any) -> Any:
        with self._lock:
            lim = self.limits
            token = self._watchdog.arm(lim.timeout)
            live = self._live
            try:
                if live is None:
                    live = self._live = self._instantiate()
                # The epoch moves only when a deadline fires, and then the
                # stores are dropped: their deadline of one tick, set when
                # they were made, stands for every call.
                live.pipe_store.set_fuel(lim.fuel)
                live.failed_pack = None
                f = live.funcs[export]
                if export == "redact":
                    out = f(live.pipe_store, *args)
                else:
                    out = call_str(f, live.pipe_store, args[0])
            except SanitizeError:
                self._watchdog.disarm(token)
                self._live = None
                raise
            except (wasmtime.WasmtimeError, wasmtime.Trap, SanitizerError) as e:
                fired = self._watchdog.disarm(token)
                self._live = None
                raise self._classify(e, fired, live) from None
            if self._watchdog.disarm(token):
                # It fired as the call returned: not these stores again.
                self._live = None
            return out

    def _classify(self, e: BaseException, fired: bool, live: Optional[_Live]) -> SanitizerError:
        if fired:
            return TimeoutError(self.limits.timeout)
        guest = "pipeline"
        fuel = self.limits.fuel
        if live is not None and live.failed_pack is not None:
            guest = str(live.infos.get(live.failed_pack, {}).get("name") or live.failed_pack)
            fuel = self.limits.pack_fuel
        msg = _first_line(e)
        if "fuel" in msg:
            return OutOfFuelError(guest, fuel)
        if isinstance(e, SanitizerError):
            return TrapError(msg, guest)
        return TrapError(msg, guest)

    def _twin(self, export: str, request: str) -> dict[str, Any]:
        out = self._call(export, request)
        try:
            r: dict[str, Any] = json.loads(out)
        except ValueError:
            raise InvalidOutputError(f"{export} returned no JSON") from None
        if "Err" in r and isinstance(r["Err"], dict):
            raise _twin_error(r["Err"])
        if not isinstance(r.get("Ok"), dict):
            raise InvalidOutputError(f"{export} returned neither Ok nor Err")
        return r

    def sanitize_json(self, request: str) -> str:
        """The JSON twin: request string in, response string out (byte for
        byte what every host returns). Not validated: a twin's caller checks."""
        out: str = self._call("sanitize-json", request)
        return out

    def effective_budget(self, **options: Any) -> dict[str, Any]:
        """The budget the pipeline applies for these options (snake_case
        keys); `read_bytes` is how many bytes of an output to read,
        `head_bytes` and `tail_bytes` (non-zero for raw output) what to keep
        of its start and end."""
        opts = twin_options(options)
        opts.pop("gap", None)
        key = json.dumps(opts, sort_keys=True)
        b = self._budgets.get(key)
        if b is None:
            b = self._twin("effective-budget-json", json.dumps(opts))["Ok"]
            for k in ("max_bytes", "max_chars", "head_chars", "tail_chars", "max_tokens", "markup_bytes", "read_bytes", "head_bytes", "tail_bytes"):
                if not isinstance(b.get(k), int) or b[k] < 0:
                    raise InvalidOutputError("the budget lacks a field")
            if len(self._budgets) < 256:
                self._budgets[key] = b
        return dict(b)

    def sanitize(
        self,
        data: Union[str, bytes, bytearray, memoryview, BinaryIO, Iterable[bytes]],
        *,
        tool: str = "",
        format: str = "mcp",
        drain_limit: int = DEFAULT_DRAIN_LIMIT,
        **options: Any,
    ) -> Result:
        """Sanitizes one tool result: text, bytes, or a stream (a binary
        file object or an iterable of bytes), read as the other hosts read:
        raw output longer than the budget as head + tail with the middle
        drained (`read_head_tail`), documents and MCP input up to
        `read_bytes`. Options are the twin's, as keywords: `call_id`,
        `input` ("raw" | "mcp"), `max_bytes`, `max_chars`, `max_tokens`,
        `encoding`, `untrusted`, `content_type`, `lenient`, `tool_error`
        ({"code", "message"}), `source` ("tool" | "file" | "pipe"), ...
        Raises SanitizeError, TimeoutError, TrapError, InvalidOutputError."""
        options = dict(options, tool=tool, format=format)
        stream = not isinstance(data, (str, bytes, bytearray, memoryview))
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else None
        size = len(raw) if raw is not None else (len(data) if not stream else -1)  # type: ignore[arg-type]
        if stream or options.get("gap") is None:
            # As the commands read: raw output longer than head + tail as
            # head + tail, anything else up to read_bytes (budgets are
            # cached per options: one dict look-up after the first call).
            b = self.effective_budget(**options)
            h, t = b["head_bytes"], b["tail_bytes"]
            if stream or (size > h + t if h > 0 else size >= b["read_bytes"]):
                src: Any = data if stream else io.BytesIO(raw if raw is not None else bytes(data))  # type: ignore[arg-type]
                if b["head_bytes"] > 0:
                    ht = self.read_head_tail(src, b["head_bytes"], b["tail_bytes"], drain_limit)
                    data = ht.data
                    if ht.gap is not None:
                        options["gap"] = ht.gap
                else:
                    data = _read_up_to(src, b["read_bytes"])
                    if options.get("input") == "mcp" and len(data) >= b["read_bytes"]:
                        raise SanitizeError("invalid input", f"MCP input larger than {b['read_bytes'] - 1} bytes")
        request = twin_request(data, options)  # type: ignore[arg-type]
        r = self._twin("sanitize-json", request)["Ok"]
        res = Result(message=r.get("message"), record=r.get("record"), is_error=r.get("is_error"), format=format)
        self._validate(twin_options(options), res)
        return res

    def sanitize_mcp(self, result: Mapping[str, Any], *, tool: str = "", format: str = "mcp", **options: Any) -> Result:
        """Sanitizes an MCP tool result (the `CallToolResult` as a dict):
        text blocks, structured content, resources, media, `isError`. With
        the default format the message is the sanitized MCP result."""
        data = json.dumps(result, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
        return self.sanitize(data, tool=tool, format=format, input="mcp", **options)

    # --- head + tail -------------------------------------------------

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

    # --- streaming redaction -----------------------------------------

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

    # --- output checks -----------------------------------------------

    def _validate(self, opts: Mapping[str, Any], res: Result) -> None:
        """As the Rust host's validate.rs: the message is JSON of the asked
        shape carrying the record returned, names only the two packs, their
        rules and grants, and fits the budget asked for."""
        fmt = opts.get("format", "mcp")

        def bad(what: str) -> InvalidOutputError:
            return InvalidOutputError(what)

        if not isinstance(res.message, str) or not isinstance(res.record, dict) or not isinstance(res.is_error, bool):
            raise bad("the result lacks a field")
        try:
            v = json.loads(res.message)
        except ValueError:
            raise bad("message is not JSON") from None
        if not isinstance(v, dict):
            raise bad("message is not an object")
        if fmt == "mcp":
            content = v.get("content")
            if not isinstance(content, list):
                raise bad("no content array")
            if v.get("isError") is not res.is_error:
                raise bad("isError disagrees with the result")
            texts = [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
            rec = (v.get("_meta") or {}).get("result-sanitizer/record")
        else:
            m = v.get("message")
            c = m.get("content") if isinstance(m, dict) else None
            if fmt == "openai":
                if not isinstance(c, str):
                    raise bad("no message.content string")
                texts = [c]
            else:
                if not isinstance(c, list):
                    raise bad("no message.content array")
                texts = [b["text"] for b in c if isinstance(b, dict) and isinstance(b.get("text"), str)]
            rec = v.get("record")
        if rec is None:
            raise bad("no record in the message")
        r = res.record
        if rec != r:
            raise bad("the record in the message differs from the record returned")
        live = self._live
        if live is not None and live.infos:
            t, p = live.infos["tenant"], live.infos["platform"]
            if (r.get("pack_name"), r.get("pack_version"), r.get("platform_name"), r.get("platform_version")) != (
                t.get("name"),
                t.get("version"),
                p.get("name"),
                p.get("version"),
            ):
                raise bad("the record names another pack")
        relaxed = r.get("relaxed") or []
        grant = set(self._packs["tenant"].grant or [])
        platform_ids = live.rule_ids.get("platform") if live is not None else None
        if any(a >= b for a, b in zip(relaxed, relaxed[1:])) or any(
            x not in grant or (platform_ids is not None and x not in platform_ids) for x in relaxed
        ):
            raise bad("the record names a relaxation that was not granted")
        b = r.get("budget") or {}
        for ask, got in (("max_tokens", "max_tokens"), ("max_chars", "max_chars"), ("max_bytes", "max_bytes")):
            if opts.get(ask) is not None and b.get(got, 0) > opts[ask]:
                raise bad("the budget applied is larger than the budget asked for")
        max_tokens = int(b.get("max_tokens", 0))
        visible = sum(len(x.encode("utf-8", "surrogatepass")) for x in texts)
        if r.get("output_tokens") is not None and r["output_tokens"] > max_tokens:
            raise bad("output tokens exceed the budget")
        if visible > max_tokens * 64:
            raise bad("output is far larger than its token budget allows")
        known: set[str] = set()
        detect = False
        if live is not None:
            for ids in live.rule_ids.values():
                known |= ids
            detect = any(live.has_detect.values())
        for x in r.get("redactions") or []:
            rid = str(x.get("rule_id", ""))
            ok_chars = 0 < len(rid) <= 64 and all(c.isascii() and (c.isalnum() or c in "-_.") for c in rid)
            if not ok_chars or (known and not detect and rid not in known and rid not in BUILTIN_RULE_IDS):
                raise bad("the record names a rule the pack does not have")
        if r.get("sites") and opts.get("report_key") is None:
            raise bad("the record reports sites nobody asked for")

    def close(self) -> None:
        """Drops the instances and stops the watchdog thread."""
        with self._lock:
            self._live = None
            self._watchdog.close()

    def __enter__(self) -> "Sanitizer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class RedactStream:
    """Iterates the redacted bytes of a stream, one step at a time."""

    def __init__(
        self, s: Sanitizer, source: Source, content_type: Optional[str], untrusted: bool, chunk: int, pii: tuple[bool, bool] = (False, False)
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

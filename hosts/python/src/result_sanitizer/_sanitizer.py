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
pipeline returns is checked before it is passed on.

This module holds the class itself: verifying and loading the packs and the
pipeline (`__init__`, `_load_pack`), and the public calls (`sanitize`,
`sanitize_mcp`, `effective_budget`, `sanitize_json`, `close`). Its parts,
mixed in, live beside it, each one responsibility: `_model` (limits, results,
component paths), `_instances` (stores, limits, forwarders, one call under
the watchdog), `_headtail` (head + tail reading), `_redact` (streaming
redaction, `RedactStream`) and `_checks` (output checks). The names the
package and the adapters import from here are imported here again."""

from __future__ import annotations

import io
import json
import os
import threading
import weakref
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Mapping, Optional, Union

import wasmtime
from wasmtime.component import Component, Linker

from ._checks import _OutputChecks
from ._errors import InvalidOutputError, SanitizeError
from ._headtail import DEFAULT_DRAIN_LIMIT, _HeadTail, _read_up_to
from ._model import (
    PIPELINE,
    PLATFORM,
    RULE_PACK,
    Limits,
    PackSource,
    Result,
    _first_line,
    _Live,
    _Pack,
    _pipeline_path,
    component_path,
)
from ._options import twin_options, twin_request
from ._redact import _Redaction
from ._verify import Time, check_manifest, read_pack, verify_pack
from ._verify import _get as _verifier
from ._wasm import Watchdog, compile_component, engine_config

# Imported again from where they now live: the package (__init__.py), the
# adapters and _verify.py import these names from this module.
from ._headtail import DRAIN_CHUNK, SCAN_BOUND
from ._model import HeadTail, components_dir
from ._redact import REDACT_CHUNK, RedactStream

__all__ = [
    "DEFAULT_DRAIN_LIMIT",
    "DRAIN_CHUNK",
    "REDACT_CHUNK",
    "SCAN_BOUND",
    "HeadTail",
    "Limits",
    "RedactStream",
    "Result",
    "Sanitizer",
    "component_path",
    "components_dir",
]


class Sanitizer(_HeadTail, _Redaction, _OutputChecks):
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

    def close(self) -> None:
        """Drops the instances and stops the watchdog thread."""
        with self._lock:
            self._live = None
            self._watchdog.close()

    def __enter__(self) -> "Sanitizer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


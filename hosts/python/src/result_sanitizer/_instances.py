"""The live instances and every call into them.

The two stores with their memory caps, fuel and epoch deadline, the pack
instances and the pipeline instance (`_instantiate`); the host functions the
pipeline's `platform` and `rule-pack` imports call, forwarding to the pack
instances under the pack's fuel and checking what the packs return
(`_forwarder`, `_checked_rules`); and one call into the pipeline under the
watchdog, with the stores dropped after any trap or timeout and the failure
named (`_call`, `_classify`, `_twin`). A mixin of `Sanitizer`, which sets the
attributes declared here; kept apart from loading and the public calls."""

from __future__ import annotations

import json
import threading
import weakref
from typing import Any, Callable, Optional

import wasmtime
from wasmtime.component import Component, Linker, Record

from ._errors import InvalidOutputError, OutOfFuelError, SanitizeError, SanitizerError, TimeoutError, TrapError
from ._model import Limits, _first_line, _Live, _Pack, _twin_error
from ._wasm import Watchdog, call_str, to_python

#: Largest rule set a pack may return: strings + 64 bytes per rule.
RULE_SET_BYTES = 4 << 20
#: Most findings one `detect` call may return.
MAX_FINDINGS = 1_000_000


class _Instances:
    """The instances of a Sanitizer: made, fed by the forwarders, called."""

    # Set by Sanitizer.__init__.
    limits: Limits
    _engine: wasmtime.Engine
    _watchdog: Watchdog
    _lock: threading.RLock
    _pipeline: Component
    _pipe_index: dict[str, Any]
    _packs: dict[str, _Pack]
    _linker: Linker
    _live: Optional[_Live]

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
            if role == "tenant" and name != "info" and self._packs["tenant"] is self._packs["platform"]:
                return self._empty_tenant_layer(live, name)
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

    @staticmethod
    def _empty_tenant_layer(live: _Live, name: str) -> Any:
        """The tenant import's answer when the platform's pack serves it too
        (no tenant pack): an empty layer under the platform's identity, which
        is what the pipeline makes of one pack on both imports, without
        lifting the rule set into Python a second time (as the Rust host)."""
        if name == "has-detect":
            live.has_detect["tenant"] = False
            return False
        if name == "detect":
            return []
        generic = Record()
        for field, value in (("allow-regexes", []), ("code-min-length", 0), ("code-min-entropy", 0.0), ("code-min-classes", 0)):
            setattr(generic, field, value)
        rs = Record()
        for field in ("rules", "allow-regexes", "stopwords", "path-roots", "budgets", "lenient-tools", "scrub-tools", "readable-roots", "relax", "pii-tools"):
            setattr(rs, field, [])
        setattr(rs, "generic", generic)
        live.rule_ids["tenant"] = set()
        return rs

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
        # The pipeline never reads a rule's description; lowered, the
        # default rules' cost each instance ~65 KB (as in the Rust host).
        for r in rules:
            setattr(r, "description", "")
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

"""wasmtime plumbing: the engine configuration, compiling components
(with an optional cache of compiled code), converting component values,
and the wall-clock watchdog."""

from __future__ import annotations

import ctypes
import hashlib
import os
import stat
import tempfile
import threading
from pathlib import Path
from typing import Any, Optional

import wasmtime
from wasmtime import _ffi as ffi
from wasmtime.component import Component, ListType, Record, Variant

WIT_VERSION = "0.1.0"
#: Wasm stack (as the Rust host's MAX_WASM_STACK).
MAX_WASM_STACK = 1 << 20


def engine_config(cache: bool = False) -> wasmtime.Config:
    c = wasmtime.Config()
    c.wasm_component_model = True
    c.consume_fuel = True
    c.epoch_interruption = True
    c.max_wasm_stack = MAX_WASM_STACK
    c.parallel_compilation = True
    return c


_CONFIG_TAG = f"wasmtime-py {wasmtime.__dict__.get('__version__', '')} fuel epoch stack={MAX_WASM_STACK}"


def _wasmtime_version() -> str:
    try:
        from importlib.metadata import version

        return version("wasmtime")
    except Exception:  # pragma: no cover - metadata missing
        return "unknown"


def compile_component(engine: wasmtime.Engine, wasm: bytes, cache_dir: Optional[Path], config: str = "") -> Component:
    """Compiles `wasm`; with `cache_dir`, keeps the compiled code there
    (named by the sha256 of the bytes, the wasmtime version and the engine
    configuration) and loads it next time instead of compiling. A cache
    directory that others can write to is not used."""
    if cache_dir is None:
        return Component(engine, wasm)
    key = hashlib.sha256()
    key.update(f"{_wasmtime_version()}\0{_CONFIG_TAG}\0{config}\0".encode())
    key.update(wasm)
    cache_dir = Path(cache_dir)
    try:
        cache_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = cache_dir.stat()
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
            return Component(engine, wasm)
    except OSError:
        return Component(engine, wasm)
    path = cache_dir / f"{key.hexdigest()}.cwasm"
    if path.exists():
        try:
            return Component.deserialize_file(engine, str(path))
        except Exception:
            pass  # stale or damaged: compile again
    comp = Component(engine, wasm)
    try:
        fd, tmp = tempfile.mkstemp(dir=cache_dir, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(bytes(comp.serialize()))
        os.replace(tmp, path)
    except OSError:
        pass
    return comp


# --- list<u8> conversion -------------------------------------------------
#
# wasmtime-py converts a list<u8> one element at a time in Python (about a
# microsecond a byte). The pack bytes given to the verifier and the chunks
# of `redact` are megabytes, so list<u8> values are converted here in bulk:
# the same values, laid out as wasmtime's C API expects (an array of
# wasmtime_component_val_t, kind U8 at offset 0, the byte at the union's
# offset). Used only when the pinned wasmtime's layout is the expected one.

_VAL = ffi.wasmtime_component_val_t
_VAL_SIZE = ctypes.sizeof(_VAL)
_VAL_OFF = _VAL.of.offset
_U8_KIND = ffi.WASMTIME_COMPONENT_U8.value
_PIECE = 16384
_FAST = _VAL.kind.offset == 0 and _VAL_SIZE >= 16 and _VAL_OFF > 0

_orig_to_c = ListType.convert_to_c
_orig_from_c = ListType.convert_from_c


def _to_c(self: ListType, store: Any, val: Any, ptr: Any) -> None:
    if not (_FAST and isinstance(val, (bytes, bytearray, memoryview)) and self._is_bytes()):
        return _orig_to_c(self, store, val, ptr)
    data = bytes(val)
    n = len(data)
    raw = ffi.wasmtime_component_vallist_t()
    ffi.wasmtime_component_vallist_new_uninit(raw, n)
    # In pieces, so the temporary layout stays small (512 KiB) whatever n.
    base = ctypes.cast(raw.data, ctypes.c_void_p).value or 0
    for at in range(0, n, _PIECE):
        part = data[at : at + _PIECE]
        buf = bytearray(_VAL_SIZE * len(part))
        buf[0::_VAL_SIZE] = bytes((_U8_KIND,)) * len(part)
        buf[_VAL_OFF::_VAL_SIZE] = part
        ctypes.memmove(base + at * _VAL_SIZE, (ctypes.c_char * len(buf)).from_buffer(buf), len(buf))
    ptr.contents.kind = ffi.WASMTIME_COMPONENT_LIST
    ptr.contents.of.list = raw


def _from_c(self: ListType, c: Any) -> Any:
    if not (_FAST and self._is_bytes()):
        return _orig_from_c(self, c)
    n = c.of.list.size
    try:
        base = ctypes.cast(c.of.list.data, ctypes.c_void_p).value or 0
        out = bytearray()
        for at in range(0, n, _PIECE):
            k = min(_PIECE, n - at)
            out += ctypes.string_at(base + at * _VAL_SIZE, _VAL_SIZE * k)[_VAL_OFF::_VAL_SIZE]
        return bytes(out)
    finally:
        ffi.wasmtime_component_vallist_delete(ctypes.byref(c.of.list))


if not getattr(ListType, "_result_sanitizer_bulk_bytes", False):
    ListType.convert_to_c = _to_c  # type: ignore[method-assign]
    ListType.convert_from_c = _from_c  # type: ignore[method-assign]
    ListType._result_sanitizer_bulk_bytes = True  # type: ignore[attr-defined]


# --- string -> string calls ------------------------------------------------
#
# The JSON twins are `func(string) -> string`. wasmtime-py's Func.__call__
# looks the function's type up on every call (tens of microseconds); the
# type is known here, so the call goes to the C API directly, with the same
# error handling (enter_wasm: a trap or a host function's exception).


def call_str(func: Any, store: Any, arg: str) -> str:
    from wasmtime.component._enter import enter_wasm

    params = (ffi.wasmtime_component_val_t * 1)()
    params[0].kind = ffi.WASMTIME_COMPONENT_STRING
    params[0].of.string = ffi.str_to_capi(arg)
    result = ffi.wasmtime_component_val_t()
    try:

        def run() -> Any:
            return ffi.wasmtime_component_func_call(ctypes.byref(func._func), store._context(), params, 1, ctypes.byref(result), 1)

        enter_wasm(run)
    finally:
        ffi.wasmtime_component_val_delete(ctypes.byref(params[0]))
    if result.kind != ffi.WASMTIME_COMPONENT_STRING.value:
        ffi.wasmtime_component_val_delete(ctypes.byref(result))
        raise TypeError("the export did not return a string")
    try:
        return ffi.to_str(result.of.string)
    finally:
        ffi.wasm_byte_vec_delete(ctypes.byref(result.of.string))


# --- values ------------------------------------------------------------------


def record(**fields: Any) -> Record:
    """A component record; keyword `content_type` is the field `content-type`."""
    r = Record()
    for k, v in fields.items():
        setattr(r, k.replace("_", "-"), v)
    return r


def to_python(v: Any) -> Any:
    """A component value as plain data: records as dicts with snake_case
    keys, variants as {"case": payload}."""
    if isinstance(v, Record):
        return {k.replace("-", "_"): to_python(x) for k, x in vars(v).items()}
    if isinstance(v, Variant):
        return {v.tag.replace("-", "_"): to_python(v.payload)}
    if isinstance(v, list):
        return [to_python(x) for x in v]
    return v


# --- wall clock -------------------------------------------------------------


class Watchdog:
    """Advances an engine's epoch once when a call passes its deadline.

    Every store of the engine has an epoch deadline of one tick set at the
    start of a call, so one increment interrupts whatever wasm of that
    engine runs. One daemon thread per engine, asleep between calls."""

    def __init__(self, engine: wasmtime.Engine) -> None:
        self._engine = engine
        self._cv = threading.Condition()
        self._deadline: Optional[float] = None
        self._token = 0
        self._fired = 0
        self._thread: Optional[threading.Thread] = None
        self._closed = False
        self._idle = True

    def arm(self, seconds: float) -> int:
        import time

        with self._cv:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="result-sanitizer-epoch", daemon=True)
                self._thread.start()
            self._token += 1
            self._deadline = time.monotonic() + seconds
            # A thread in a timed wait wakes by itself at an earlier
            # deadline and waits on: it is woken only when idle (no
            # wake-up, no GIL hand-over, per call).
            if self._idle:
                self._cv.notify()
            return self._token

    def disarm(self, token: int) -> bool:
        """Ends the call `token`; True when its deadline had fired."""
        with self._cv:
            if self._token == token:
                self._deadline = None
            return self._fired == token

    def close(self) -> None:
        with self._cv:
            self._closed = True
            self._cv.notify()

    def _run(self) -> None:
        import time

        with self._cv:
            while not self._closed:
                if self._deadline is None:
                    self._idle = True
                    self._cv.wait()
                    self._idle = False
                    continue
                left = self._deadline - time.monotonic()
                if left > 0:
                    self._idle = False
                    self._cv.wait(left)
                    continue
                self._fired = self._token
                self._deadline = None
                self._engine.increment_epoch()

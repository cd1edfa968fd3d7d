"""Pack checks through the verifier component (wit/pack-verifier.wit):
the `pack-format` crate's checks, run as wasm, so a refusal is decided and
worded as in every other host. Nothing of the pack is compiled here."""

from __future__ import annotations

import os
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable, Optional, Union

import wasmtime
from wasmtime.component import Component, Linker, Variant

from ._errors import PackRefusedError, SanitizeError
from ._wasm import WIT_VERSION, compile_component, record, to_python

VERIFIER = f"result-sanitizer:core/pack-verifier@{WIT_VERSION}"
#: A pack file larger than this is refused before it is read further.
PACK_BYTES_LIMIT = 16 << 20
#: Fuel for one verifier call (hashing and checking a 16 MiB pack fits).
_VERIFY_FUEL = 20_000_000_000

Time = Union[datetime, int, float, None]


class _Verifier:
    def __init__(self, wasm_path: Path, cache_dir: Optional[Path]) -> None:
        cfg = wasmtime.Config()
        cfg.wasm_component_model = True
        cfg.consume_fuel = True
        self.engine = wasmtime.Engine(cfg)
        self.component = compile_component(self.engine, wasm_path.read_bytes(), cache_dir, "verifier")
        self.linker = Linker(self.engine)
        iface = self.component.get_export_index(VERIFIER)
        if iface is None:
            raise SanitizeError("invalid rule pack", "the verifier component exports no pack-verifier")
        self.index = {n: self.component.get_export_index(n, iface) for n in ("verify", "describe", "key-id", "check-manifest")}
        self.lock = threading.Lock()
        self.live: Optional[tuple[wasmtime.Store, Any]] = None
        self.calls = 0

    def call(self, name: str, *args: Any) -> Any:
        # One instance serves many calls; after any trap (and every 256
        # calls, so no allocator state grows for long) a fresh one.
        with self.lock:
            if self.live is None or self.calls >= 256:
                store = wasmtime.Store(self.engine)
                store.set_limits(memory_size=256 << 20)
                store.set_fuel(_VERIFY_FUEL)
                self.live = (store, self.linker.instantiate(store, self.component))
                self.calls = 0
            store, inst = self.live
            index = self.index[name]
            if index is None:
                raise SanitizeError("invalid rule pack", f"the verifier component has no export {name}")
            f = inst.get_func(store, index)
            assert f is not None
            store.set_fuel(_VERIFY_FUEL)
            self.calls += 1
            try:
                return f(store, *args)
            except Exception:
                self.live = None
                raise


_lock = threading.Lock()
_verifier: Optional[_Verifier] = None


def verifier_path() -> Path:
    from ._sanitizer import component_path

    return component_path("verifier.wasm")


def _get(cache_dir: Optional[Path] = None) -> _Verifier:
    """The verifier, compiled once per process (with `cache_dir`: its
    compiled code kept there, as the pipeline's)."""
    global _verifier
    with _lock:
        if _verifier is None:
            path = verifier_path()
            if not path.exists():
                raise FileNotFoundError(
                    f"{path} is missing: the pack verifier component (target/components/verifier.wasm, made by `make build`)"
                )
            _verifier = _Verifier(path, cache_dir)
        return _verifier


def _seconds(now: Time) -> int:
    if now is None:
        return int(time.time())
    if isinstance(now, datetime):
        if now.tzinfo is None:
            raise ValueError("now must be an aware datetime (with a time zone)")
        return int(now.timestamp())
    return int(now)


def _refused(refusal: Variant) -> PackRefusedError:
    sentence = _get().call("describe", refusal)
    code = refusal.tag.replace("-", "_")
    if not sentence.startswith("pack refused"):
        sentence = f"pack refused: {sentence}"
    index = refusal.payload if code == "invalid_trusted_key" else None
    return PackRefusedError(code, sentence, index)


def verify_pack(
    pack: Union[bytes, bytearray, memoryview, str, "os.PathLike[str]"],
    *,
    trusted_keys: Iterable[str] = (),
    allow_unsigned: bool = False,
    tenant: Optional[str] = None,
    now: Time = None,
) -> dict[str, Any]:
    """Runs the pack checks alone, in the Rust host's order: manifest,
    signature by one of `trusted_keys` (the text of `.pub` files), expiry at
    `now` (default: the current time), WIT version, scope (`tenant`; None:
    any scope). Returns `{"manifest": {...}, "signed": {...} or None}`;
    raises PackRefusedError."""
    data = read_pack(pack)
    policy = record(trusted_keys=[str(k) for k in trusted_keys], allow_unsigned=bool(allow_unsigned))
    out = _get().call("verify", data, policy, tenant, _seconds(now))
    if isinstance(out, Variant):
        raise _refused(out)
    result: dict[str, Any] = to_python(out)
    return result


def check_manifest(pack: Union[bytes, bytearray, memoryview, str, "os.PathLike[str]"]) -> dict[str, Any]:
    """The unverified path's checks, for the operator's own packs (the
    default pack, a platform pack): a readable manifest for this WIT
    version. No signature is read. Returns the manifest."""
    out = _get().call("check-manifest", read_pack(pack))
    if isinstance(out, Variant):
        raise _refused(out)
    result: dict[str, Any] = to_python(out)
    return result


def key_id(public_key: str) -> Optional[str]:
    """The key id of a public key file's text, or None when it is not one."""
    out = _get().call("key-id", public_key)
    return out if isinstance(out, str) else None


def read_public_key(path: Union[str, "os.PathLike[str]"]) -> str:
    """The text of a `.pub` file, checked. The error names the file, never
    its contents (a secret key file given by mistake stays unquoted)."""
    text = Path(path).read_text(encoding="utf-8", errors="replace").strip()
    if key_id(text) is None:
        raise ValueError(f"{os.fspath(path)} is not a public key file (result-sanitizer-ed25519-public <64 hex digits>)")
    return text


def read_pack(pack: Union[bytes, bytearray, memoryview, str, "os.PathLike[str]"]) -> bytes:
    """Pack bytes, refusing a file over 16 MiB before reading it whole."""
    if isinstance(pack, (bytes, bytearray, memoryview)):
        data = bytes(pack)
    else:
        size = os.path.getsize(pack)
        if size > PACK_BYTES_LIMIT:
            raise SanitizeError("invalid rule pack", f"a pack file of {size} bytes is over the limit of {PACK_BYTES_LIMIT}")
        data = Path(pack).read_bytes()
    if len(data) > PACK_BYTES_LIMIT:
        raise SanitizeError("invalid rule pack", f"a pack file of {len(data)} bytes is over the limit of {PACK_BYTES_LIMIT}")
    return data

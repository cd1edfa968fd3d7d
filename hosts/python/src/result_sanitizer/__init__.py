"""result-sanitizer for Python: the same wasm pipeline and rule packs as the
Rust, JavaScript and Go hosts, on wasmtime.

    from result_sanitizer import Sanitizer

    s = Sanitizer()                                   # the default pack
    out = s.sanitize(tool_output, tool="shell", format="openai", max_tokens=4000)
    send(out.tool_message)                            # out.record: the record
"""

from ._errors import (
    InvalidOutputError,
    OutOfFuelError,
    PackRefusedError,
    SanitizeError,
    SanitizerError,
    TimeoutError,
    TrapError,
)
from ._sanitizer import (
    DEFAULT_DRAIN_LIMIT,
    DRAIN_CHUNK,
    REDACT_CHUNK,
    SCAN_BOUND,
    HeadTail,
    Limits,
    RedactStream,
    Result,
    Sanitizer,
    components_dir,
)
from ._verify import PACK_BYTES_LIMIT, check_manifest, key_id, read_public_key, verify_pack
from ._wasm import WIT_VERSION

__all__ = [
    "DEFAULT_DRAIN_LIMIT",
    "DRAIN_CHUNK",
    "REDACT_CHUNK",
    "PACK_BYTES_LIMIT",
    "SCAN_BOUND",
    "WIT_VERSION",
    "HeadTail",
    "InvalidOutputError",
    "Limits",
    "OutOfFuelError",
    "PackRefusedError",
    "RedactStream",
    "Result",
    "SanitizeError",
    "Sanitizer",
    "SanitizerError",
    "TimeoutError",
    "TrapError",
    "check_manifest",
    "components_dir",
    "key_id",
    "read_public_key",
    "verify_pack",
]

"""The shared signature test packs (target/test-packs, `make test-packs`)
through the Python host and the verifier component: every case gets the
verdict the Rust, JS and Go hosts give, before anything of the pack is
compiled; the good pack loads and redacts; the platform floor and a grant
give what they give in every host; key files, expiry, scope, rotation, the
command's trust flags, the 16 MiB limit."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import pytest

from conftest import CACHE, TEST_PACKS, password, run_cli
from result_sanitizer import (
    PackRefusedError,
    SanitizeError,
    Sanitizer,
    check_manifest,
    key_id,
    read_public_key,
    verify_pack,
)

if not (TEST_PACKS / "cases.json").exists():
    raise RuntimeError(f"{TEST_PACKS}/cases.json is missing: run `make test-packs`")
DOC: dict[str, Any] = json.loads((TEST_PACKS / "cases.json").read_text())
KEYS = [read_public_key(TEST_PACKS / k) for k in DOC["trusted_keys"]]


def pack(name: str) -> bytes:
    return (TEST_PACKS / name).read_bytes()


def outcome(f: Callable[[], Any]) -> str:
    try:
        f()
        return "ok"
    except PackRefusedError as e:
        return e.code


def test_the_shared_cases_get_the_rust_hosts_verdict() -> None:
    assert len(DOC["cases"]) >= 10
    for c in DOC["cases"]:
        got = outcome(
            lambda: verify_pack(pack(c["file"]), trusted_keys=KEYS, allow_unsigned=bool(c.get("allow_unsigned")), tenant=DOC["tenant"])
        )
        assert got == c["expect"], f"{c['file']}{' (unsigned allowed)' if c.get('allow_unsigned') else ''}"


def test_refusals_are_worded_as_in_the_rust_host() -> None:
    with pytest.raises(PackRefusedError) as e:
        verify_pack(pack("unsigned.wasm"))
    assert str(e.value) == "pack refused: unsigned (pass --allow-unsigned for development only)"
    assert e.value.code == "unsigned"


def test_the_good_pack_loads_is_verified_for_its_tenant_and_redacts() -> None:
    v = verify_pack(pack("good.wasm"), trusted_keys=KEYS, tenant=DOC["tenant"])
    assert v["signed"]["key_id"] == key_id(KEYS[0]) and v["manifest"]["name"] == "acme"
    with Sanitizer(TEST_PACKS / "good.wasm", trusted_keys=KEYS, tenant=DOC["tenant"], cache_dir=CACHE) as s:
        out = s.sanitize(DOC["probe"]["input"], tool="t")
        assert out.tool_message["content"][0]["text"] == DOC["probe"]["output"]
        assert out.record["pack_name"] == "acme"


def test_the_platform_floor_and_a_grant_give_what_they_give_in_every_host() -> None:
    assert len(DOC["floor"]["packs"]) >= 2
    for c in DOC["floor"]["packs"]:
        with Sanitizer(TEST_PACKS / c["file"], trusted_keys=KEYS, tenant=DOC["tenant"], cache_dir=CACHE) as s:
            out = s.sanitize(DOC["floor"]["input"], tool="t")
            assert out.tool_message["content"][0]["text"] == c["output"], c["file"]
            assert out.record["relaxed"] == c["relaxed"], c["file"]
            assert out.record["platform_name"] == "default"


def test_a_refused_pack_is_never_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    from result_sanitizer import _sanitizer

    compiled: list[int] = []
    real = _sanitizer.compile_component
    monkeypatch.setattr(_sanitizer, "compile_component", lambda e, w, c, *a: compiled.append(len(w)) or real(e, w, c, *a))
    with pytest.raises(PackRefusedError) as e:
        Sanitizer(pack("tampered.wasm"), trusted_keys=KEYS, tenant=DOC["tenant"])
    assert e.value.code == "tampered" and compiled == []


def test_a_given_pack_is_refused_unsigned_by_default_the_built_in_needs_no_signature(sanitizer: Sanitizer) -> None:
    with pytest.raises(PackRefusedError) as e:
        Sanitizer(TEST_PACKS / "unsigned.wasm")
    assert e.value.code == "unsigned"
    with pytest.raises(PackRefusedError) as e:
        Sanitizer(TEST_PACKS / "good.wasm")
    assert e.value.code == "untrusted_key"
    assert "REDACTED" in sanitizer.sanitize("DB_PASSWORD=" + password(), tool="t").text
    assert check_manifest(pack("unsigned.wasm"))["name"]


def test_expiry_is_checked_at_the_given_time_scope_against_the_tenant_asked() -> None:
    exp = pack("expired.wasm")
    assert outcome(lambda: verify_pack(exp, trusted_keys=KEYS, tenant=DOC["tenant"])) == "expired"
    before = datetime(2019, 12, 31, 23, 59, 59, tzinfo=timezone.utc)
    assert outcome(lambda: verify_pack(exp, trusted_keys=KEYS, tenant=DOC["tenant"], now=before)) == "ok"
    assert outcome(lambda: verify_pack(exp, trusted_keys=KEYS, tenant=DOC["tenant"], now=int(before.timestamp()))) == "ok"
    other = pack("other-tenant.wasm")
    assert outcome(lambda: verify_pack(other, trusted_keys=KEYS)) == "ok", "no tenant asked: any scope"
    assert outcome(lambda: verify_pack(other, trusted_keys=KEYS, tenant="globex")) == "ok"
    assert outcome(lambda: verify_pack(other, trusted_keys=KEYS, tenant=DOC["tenant"])) == "wrong_tenant"
    # An empty tenant is not any tenant: only an unscoped pack passes.
    assert outcome(lambda: verify_pack(pack("good.wasm"), trusted_keys=KEYS, tenant="")) == "wrong_tenant"


def test_keys_rotate_by_listing_several() -> None:
    both = [*KEYS, read_public_key(TEST_PACKS / "untrusted.pub")]
    assert outcome(lambda: verify_pack(pack("untrusted-key.wasm"), trusted_keys=KEYS, tenant=DOC["tenant"])) == "untrusted_key"
    assert outcome(lambda: verify_pack(pack("untrusted-key.wasm"), trusted_keys=both, tenant=DOC["tenant"])) == "ok"


def test_key_files_and_errors_that_do_not_repeat_them() -> None:
    text = (TEST_PACKS / "trusted.pub").read_text()
    tag, hexkey = text.strip().split(" ")
    assert key_id(text) == key_id(KEYS[0]) and len(key_id(text) or "") == 16
    off_curve = f"{tag} 02{'00' * 31}"
    for bad in (hexkey, f"{tag} {hexkey.upper()}", f"{tag} {hexkey[2:]}", f"result-sanitizer-ed25519-secret {hexkey}", off_curve):
        assert key_id(bad) is None
    with pytest.raises(PackRefusedError) as e:
        verify_pack(pack("good.wasm"), trusted_keys=[KEYS[0], off_curve], tenant=DOC["tenant"])
    assert e.value.code == "invalid_trusted_key" and e.value.index == 1 and hexkey[:16] not in str(e.value)
    secret = (TEST_PACKS / "trusted.key").read_text().split()[1]
    with pytest.raises(ValueError) as v:
        read_public_key(TEST_PACKS / "trusted.key")
    assert "trusted.key is not a public key file" in str(v.value) and secret[:16] not in str(v.value)


def test_every_flipped_byte_of_a_signed_pack_is_refused() -> None:
    good = pack("good.wasm")
    for i in range(len(good)):
        b = bytearray(good)
        b[i] ^= 0x01
        assert outcome(lambda: verify_pack(bytes(b), trusted_keys=KEYS, tenant=DOC["tenant"])) != "ok", f"byte {i} flipped"
    for cut in (1, 10, 100, len(good) // 2):
        assert outcome(lambda: verify_pack(good[:-cut], trusted_keys=KEYS, tenant=DOC["tenant"])) != "ok", f"{cut} cut"


def test_the_command_takes_the_rust_clis_trust_flags() -> None:
    def p(f: str) -> str:
        return str(TEST_PACKS / f)

    probe = DOC["probe"]["input"].encode()
    r = run_cli(["--pack", p("good.wasm"), "--trusted-key", p("untrusted.pub"), "--trusted-key", p("trusted.pub"), "--tenant", DOC["tenant"]], probe)
    assert r.returncode == 0, r.stderr.decode()
    assert DOC["probe"]["output"] in r.stdout.decode()
    r = run_cli(["--pack", p("unsigned.wasm")], probe)
    assert r.returncode == 1 and b"pack refused: unsigned" in r.stderr
    r = run_cli(["--pack", p("unsigned.wasm"), "--allow-unsigned"], probe)
    assert r.returncode == 0 and DOC["probe"]["output"] in r.stdout.decode()
    r = run_cli(["--pack", p("other-tenant.wasm"), "--trusted-key", p("trusted.pub"), "--tenant", DOC["tenant"]], probe)
    assert r.returncode == 1 and b"pack refused: scoped to tenant" in r.stderr
    r = run_cli([], probe)
    assert r.returncode == 0 and b"content" in r.stdout


def test_a_pack_file_over_16_mib_is_refused_first(tmp_path: Path) -> None:
    big = b"\0" * ((16 << 20) + 1)
    for p in (big, tmp_path / "big.wasm"):
        if isinstance(p, Path):
            p.write_bytes(big)
        with pytest.raises(SanitizeError) as e:
            Sanitizer(p, allow_unsigned=True)
        assert e.value.code == "invalid rule pack" and "over the limit" in str(e.value)

"""Hostile packs (target/components/test-packs, written by xtask: `slow`
loops forever in `detect` on text starting with `L`, `greedy` grows its
memory until refused on text starting with `M`) and a starved pipeline
under the Python host's limits: fuel, memory caps and the wall clock. Each
is a typed error naming the guest, the input is never quoted, and the next
call on the same Sanitizer succeeds on fresh instances."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from conftest import CACHE, HOSTILE, check_record, password
from result_sanitizer import Limits, OutOfFuelError, SanitizeError, Sanitizer, TimeoutError, TrapError

SLOW = HOSTILE / "slow.wasm"
GREEDY = HOSTILE / "greedy.wasm"


def fine_afterwards(s: Sanitizer, validator: Any) -> None:
    out = s.sanitize("fine now", tool="x")
    assert "fine now" in out.text
    check_record(validator, out.record, "the next call")


@pytest.mark.parametrize("role", ["tenant", "platform"])
def test_a_pack_that_loops_is_stopped_by_the_wall_clock(record_validator: Any, role: str) -> None:
    # As a tenant's pack (unsigned, allowed for development) or as the
    # platform's own (not verified). Fuel enough for minutes: the wall
    # clock is what stops it.
    limits = Limits(timeout=1.5, pack_fuel=10**13)
    if role == "tenant":
        s = Sanitizer(SLOW, allow_unsigned=True, limits=limits, cache_dir=CACHE)
    else:
        s = Sanitizer(platform_pack=SLOW, limits=limits, cache_dir=CACHE)
    try:
        t0 = time.monotonic()
        with pytest.raises(TimeoutError) as e:
            s.sanitize("LOOP " + password(), tool="x")
        took = time.monotonic() - t0
        assert 1.4 < took < 10, took
        assert "1500 ms" in str(e.value) and password() not in str(e.value)
        assert isinstance(e.value, TimeoutError) and e.value.code == "timeout"
        fine_afterwards(s, record_validator)
    finally:
        s.close()


def test_a_pack_that_loops_runs_out_of_its_fuel(record_validator: Any) -> None:
    s = Sanitizer(platform_pack=SLOW, limits=Limits(pack_fuel=50_000_000, timeout=60), cache_dir=CACHE)
    try:
        with pytest.raises(OutOfFuelError) as e:
            s.sanitize("LOOP " + password(), tool="x")
        assert e.value.guest == "slow", str(e.value)
        assert "rule pack `slow` ran out of fuel (limit 50000000 units)" in str(e.value)
        assert password() not in str(e.value)
        fine_afterwards(s, record_validator)
    finally:
        s.close()


def test_a_pack_that_grows_its_memory_hits_the_cap(record_validator: Any) -> None:
    s = Sanitizer(GREEDY, allow_unsigned=True, limits=Limits(pack_memory_mib=16), cache_dir=CACHE)
    try:
        with pytest.raises(TrapError) as e:
            s.sanitize("MORE memory " + password(), tool="x")
        assert e.value.guest == "greedy", str(e.value)
        assert password() not in str(e.value)
        fine_afterwards(s, record_validator)
    finally:
        s.close()


def test_the_pipeline_runs_out_of_fuel(record_validator: Any) -> None:
    s = Sanitizer(limits=Limits(fuel=2_000_000), cache_dir=CACHE)
    try:
        big = ("line with " + password() + "\n") * 20000
        with pytest.raises(OutOfFuelError) as e:
            s.sanitize(big, tool="x")
        assert e.value.guest == "pipeline"
        assert "the pipeline ran out of fuel (limit 2000000 units)" in str(e.value)
        assert password() not in str(e.value)
    finally:
        s.close()


def test_the_pipeline_memory_cap(record_validator: Any) -> None:
    """A cap below what the pipeline needs for a large input: a trap, not
    a crash; a small input still fits on the fresh instance."""
    s = Sanitizer(limits=Limits(memory_mib=64), cache_dir=CACHE)
    try:
        huge = json.dumps({"content": [{"type": "text", "text": "x" * (60 << 20)}]})
        with pytest.raises((TrapError, SanitizeError)) as e:
            s.sanitize(huge, tool="x", input="mcp")
        assert "xxxx" not in str(e.value)
        fine_afterwards(s, record_validator)
    finally:
        s.close()


def test_typed_errors_from_the_pipeline(sanitizer: Sanitizer) -> None:
    with pytest.raises(SanitizeError) as e:
        sanitizer.sanitize("x " + password(), max_tokens=10)
    assert e.value.code == "invalid options" and password() not in str(e.value)
    with pytest.raises(ValueError):
        sanitizer.sanitize("x", format="xml")
    with pytest.raises(TypeError):
        sanitizer.sanitize("x", max_tokenz=10)
    with pytest.raises(SanitizeError) as e:
        sanitizer.sanitize("{not json " + password(), input="mcp")
    assert e.value.code == "invalid input" and password() not in str(e.value)

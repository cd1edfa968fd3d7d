"""Output checks: what the pipeline returns is checked before it is passed on.

`_validate` (a mixin of `Sanitizer`), as the Rust host's
host/src/engine/validate.rs: the message is JSON of the asked shape carrying
the record returned, names only the two packs, their rules and grants, and
fits the budget asked for. The drain and redact steps check their own output
where they are (`_headtail`, `_redact`)."""

from __future__ import annotations

import json
from typing import Any, Mapping, Optional

from ._errors import InvalidOutputError
from ._model import Result, _Live, _Pack

# Ids no pack rule has: tenant roots and the pipeline's personal-data
# detectors (rule-engine/src/stages/redact/pii/mod.rs, DETECTOR_IDS).
BUILTIN_RULE_IDS = frozenset({"tenant-path-root", "card", "iban", "phone", "ssn", "ip", "dob"})


class _OutputChecks:
    """The check of a sanitized result."""

    # Set by Sanitizer.__init__ and its calls.
    _packs: dict[str, _Pack]
    _live: Optional[_Live]

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

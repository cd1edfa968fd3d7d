#!/usr/bin/env python3
"""Writes the shared signature test packs that every host's tests load.

    generate.py BIN OUT_DIR

BIN is the Rust CLI: it builds, keys and signs every pack, so the packs are
what a real signer produces. Only the damage is done here, on the bytes:
a flipped byte, appended sections, a rewritten manifest (then signed by the
CLI, so its only fault is the WIT version). cases.json lists each file and
the refusal every host must give (kinds as docs/SECURITY.md spells them).
Generated at build time rather than committed: a WIT change would make
committed packs stale.
"""
import json
import os
import subprocess
import sys

SIG = b"result-sanitizer:signature"
MANIFEST = b"result-sanitizer:manifest"
TENANT = "acme"
ODD_NAME = 'acme <&> "q" \\ \t\x01\x7f \u2028 \u00fc/'
TOKEN = "acme_0123456789abcdef0123456789abcdef"
# Values the default rules find, made here rather than written out whole.
AWS = "AKIA" + "Z7QX4MBN2KT5WYHR"
PASSWORD = "Xk9mQ2vLp7" + "zzR4"


def uleb(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def padded_uleb(n):
    """`n` in five LEB128 bytes: what a reader takes, though not the shortest."""
    return bytes((n >> (7 * k)) & 0x7F | (0x80 if k < 4 else 0) for k in range(5))


def read_uleb(b, i):
    v = shift = 0
    while True:
        x = b[i]
        i += 1
        v |= (x & 0x7F) << shift
        shift += 7
        if not x & 0x80:
            return v, i


def sections(wasm):
    """Top-level sections: (start, end, custom name or None, data start)."""
    out, i = [], 8
    while i < len(wasm):
        start = i
        sid = wasm[i]
        size, i = read_uleb(wasm, i + 1)
        end = i + size
        name, data = None, i
        if sid == 0:
            n, j = read_uleb(wasm, i)
            name, data = wasm[j : j + n], j + n
        out.append((start, end, name, data))
        i = end
    return out


def custom(name, data):
    body = uleb(len(name)) + name + data
    return b"\x00" + uleb(len(body)) + body


def replace_custom_text(wasm, name, edit):
    """The component with custom section `name`'s bytes rewritten by `edit`."""
    for start, end, n, data in sections(wasm):
        if n == name:
            return wasm[:start] + custom(name, edit(wasm[data:end])) + wasm[end:]
    raise SystemExit(f"no {name.decode()} section")


def replace_custom(wasm, name, edit):
    """The component with custom section `name`'s JSON rewritten by `edit`."""
    for start, end, n, data in sections(wasm):
        if n == name:
            value = json.loads(wasm[data:end])
            edit(value)
            new = json.dumps(value, separators=(",", ":")).encode()
            return wasm[:start] + custom(name, new) + wasm[end:]
    raise SystemExit(f"no {name.decode()} section")


def main():
    bin_, out = sys.argv[1], sys.argv[2]
    here = os.path.dirname(os.path.abspath(__file__))
    os.makedirs(out, exist_ok=True)
    p = lambda f: os.path.join(out, f)

    def cli(*args):
        # Quiet unless it fails (it reports each file it writes).
        r = subprocess.run([bin_, *args], capture_output=True, text=True)
        if r.returncode:
            raise SystemExit(f"{bin_} {args[0]} {args[1]}: {r.stderr.strip()}")

    def sign(src, dst, key="trusted", *extra):
        cli("pack", "sign", p(src), "--key", p(key + ".key"), "-o", p(dst), *extra)

    def write(name, data):
        with open(p(name), "wb") as f:
            f.write(data)

    def read(name):
        with open(p(name), "rb") as f:
            return f.read()

    for k in ("trusted", "untrusted"):
        cli("keygen", "-o", p(k))
    rules = os.path.join(here, "acme.toml")
    cli("pack", "build", rules, "--no-defaults", "-o", p("unsigned.wasm"))
    cli("pack", "build", rules, "--no-defaults", "--tenant", "globex", "-o", p("globex-unsigned.wasm"))
    # Characters JSON writers escape differently (serde_json escapes only
    # ", \\ and controls; Go's encoding/json also <, >, &, U+2028): the
    # signed message must be byte-identical in every host.
    cli("pack", "build", rules, "--no-defaults", "--name", ODD_NAME, "-o", p("odd-unsigned.wasm"))
    sign("odd-unsigned.wasm", "odd-name.wasm")
    sign("unsigned.wasm", "good.wasm")
    sign("unsigned.wasm", "expired.wasm", "trusted", "--expires", "2020-01-01T00:00:00Z")
    sign("globex-unsigned.wasm", "other-tenant.wasm")
    sign("unsigned.wasm", "untrusted-key.wasm", "untrusted")

    good = read("good.wasm")
    secs = sections(good)
    sig = secs[-1]
    assert sig[2] == SIG, "the signature is the last section"
    # A byte of the rules data (the token regex), inside the signed range
    # and inside the data segment, so the file still parses.
    at = good.index(b"acme_[a-f0-9]")
    assert at < sig[0]
    write("tampered.wasm", good[: at + 6] + b"b" + good[at + 7 :])
    write("appended.wasm", good + custom(b"extra", b"x"))
    write("two-signatures.wasm", good + good[sig[0] : sig[1]])
    # The signed manifest edited (scope widened): the signature no longer
    # verifies.
    write("widened.wasm", replace_custom(good, SIG, lambda v: v["manifest"].update(tenant="*")))
    # JSON that serde_json refuses and a lenient reader would take (the
    # last of two fields, 1.0 as 1, a lone surrogate, an unknown field):
    # every host refuses it as the Rust host does.
    def sig_text(name, edit):
        write(name, replace_custom_text(good, SIG, edit))

    def twice(t):
        m = t[t.index(b'"manifest":') : t.index(b',"signature"')]
        return t.replace(m, m.replace(b'"tenant":"acme"', b'"tenant":"*"') + b"," + m, 1)

    sig_text("field-twice.wasm", twice)
    sig_text("float-version.wasm", lambda t: t.replace(b'"v":1', b'"v":1.0', 1))
    sig_text("lone-surrogate.wasm", lambda t: t.replace(b'"name":"acme"', b'"name":"acme\\ud800"', 1))
    sig_text("unknown-field.wasm", lambda t: t.replace(b'"v":1', b'"v":1,"w":0', 1))
    # One encoding only: the same manifest written another way (a space,
    # an escape in upper case) would otherwise still verify.
    sig_text("spaced.wasm", lambda t: t.replace(b'"v":1,', b'"v": 1,', 1))
    sig_text("escape-case.wasm", lambda t: t.replace(b'"tenant":"acme"', b'"tenant":"\\u0061cme"', 1))
    # The header too: the section's size, or its name's length, in five
    # LEB128 bytes where one or two do (the same number, other bytes).
    body = good[sig[0] :]
    size, at = read_uleb(body, 1)
    write("padded-size.wasm", good[: sig[0]] + b"\x00" + padded_uleb(size) + body[at:])
    name_len, name_at = read_uleb(body, at)
    rest = padded_uleb(name_len) + body[name_at:]
    write("padded-name.wasm", good[: sig[0]] + b"\x00" + uleb(len(rest)) + rest)
    # The format number is not signed: another one is a changed byte.
    sig_text("format-zero.wasm", lambda t: t.replace(b'"v":1', b'"v":0', 1))
    # A platform grant (`may_relax`) is part of the signed message.
    sign("unsigned.wasm", "may-relax.wasm", "trusted", "--may-relax", "aws-access-key-id,private-key-block")
    widen = lambda t: t.replace(b'"private-key-block"', b'"private-key-block","env-secret-assignment"', 1)  # noqa: E731
    write("grant-widened.wasm", replace_custom_text(read("may-relax.wasm"), SIG, widen))
    # Built for another WIT, then signed as it is.
    write("wit-unsigned.wasm", replace_custom(read("unsigned.wasm"), MANIFEST, lambda v: v.update(wit_version="9.9.9")))
    sign("wit-unsigned.wasm", "wrong-wit.wasm")
    # A manifest nested 128 deep is read; one level more is refused, by
    # every host alike (a bound of its own, not serde_json's or Go's).
    def nested(d):
        return lambda t: t[:-1] + b',"x":' + b"[" * (d - 1) + b"]" * (d - 1) + b"}"

    write("nested-128.wasm", replace_custom_text(read("unsigned.wasm"), MANIFEST, nested(128)))
    write("nested-129.wasm", replace_custom_text(read("unsigned.wasm"), MANIFEST, nested(129)))
    write("core-module.wasm", b"\x00asm\x01\x00\x00\x00")
    write("not-wasm.wasm", b"not wasm")
    for f in ("globex-unsigned.wasm", "wit-unsigned.wasm", "odd-unsigned.wasm"):
        os.remove(p(f))

    cases = [
        {"file": "good.wasm", "expect": "ok"},
        {"file": "odd-name.wasm", "expect": "ok"},
        {"file": "unsigned.wasm", "expect": "unsigned"},
        {"file": "unsigned.wasm", "allow_unsigned": True, "expect": "ok"},
        {"file": "tampered.wasm", "expect": "tampered"},
        {"file": "appended.wasm", "expect": "tampered"},
        {"file": "two-signatures.wasm", "expect": "tampered"},
        {"file": "widened.wasm", "expect": "tampered"},
        {"file": "field-twice.wasm", "expect": "tampered"},
        {"file": "float-version.wasm", "expect": "tampered"},
        {"file": "lone-surrogate.wasm", "expect": "tampered"},
        {"file": "unknown-field.wasm", "expect": "tampered"},
        {"file": "format-zero.wasm", "expect": "tampered"},
        {"file": "spaced.wasm", "expect": "tampered"},
        {"file": "escape-case.wasm", "expect": "tampered"},
        {"file": "padded-size.wasm", "expect": "tampered"},
        {"file": "padded-name.wasm", "expect": "tampered"},
        {"file": "may-relax.wasm", "expect": "ok"},
        {"file": "grant-widened.wasm", "expect": "tampered"},
        {"file": "expired.wasm", "expect": "expired"},
        {"file": "other-tenant.wasm", "expect": "wrong_tenant"},
        {"file": "untrusted-key.wasm", "expect": "untrusted_key"},
        {"file": "wrong-wit.wasm", "expect": "incompatible_wit"},
        {"file": "nested-128.wasm", "allow_unsigned": True, "expect": "ok"},
        {"file": "nested-129.wasm", "allow_unsigned": True, "expect": "malformed"},
        {"file": "core-module.wasm", "expect": "malformed"},
        {"file": "not-wasm.wasm", "expect": "malformed"},
    ]
    doc = {
        "tenant": TENANT,
        "trusted_keys": ["trusted.pub"],
        # What the good pack's one rule does to a line, in every host.
        # (Not `token=…`: the platform's generic rules take that whole value.)
        "probe": {"input": f"id {TOKEN} ok", "output": "id [REDACTED:acme-token] ok"},
        # The platform's floor under the tenant's pack: its rules apply (an
        # AWS key id, a password assignment) beside the pack's own; the pack
        # asks to relax `aws-access-key-id` (acme.toml), which only the
        # grant in may-relax.wasm's signature makes happen.
        "floor": {
            "input": f"aws {AWS} id {TOKEN}\nDB_PASSWORD={PASSWORD}\n",
            "packs": [
                {
                    "file": "good.wasm",
                    "output": "aws [REDACTED:aws-access-key-id] id [REDACTED:acme-token]\n"
                    "DB_PASSWORD=[REDACTED:env-secret-assignment]\n",
                    "relaxed": [],
                },
                {
                    "file": "may-relax.wasm",
                    "output": f"aws {AWS} id [REDACTED:acme-token]\nDB_PASSWORD=[REDACTED:env-secret-assignment]\n",
                    "relaxed": ["aws-access-key-id"],
                },
            ],
        },
        "cases": cases,
    }
    with open(p("cases.json"), "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()

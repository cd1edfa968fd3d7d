#!/usr/bin/env python3
"""How `sanitize` judges a file sent without its name: code or not.

Where code is not recognised as code, generic rules see all of it, and a
fixture such as `"token" => 'acme'` in a test is cut (docs/rule-packs.md,
"What a generic rule takes for a value"). This takes files nobody here wrote,
sends the first 16 KiB of each to `result-sanitizer sanitize` on stdin (no
name, no content type) and tallies the record's `class` by what the file's
name says it is: source code by language, or another kind of text.

Sources: the git repositories given (every file of HEAD), and what any machine
with the project's toolchains holds: Python's standard library, the cargo
registry's sources, Go's module cache, npm's own `node_modules` and its
Markdown, /etc's configuration files and shell scripts and rc files, and the
logs in target/bench/logs (slices of 16 KiB). At most --per files of each kind from each source, picked by a
seeded hash of their paths.

Usage: tools/sniff-check.py [--cli PATH] [--per N] [GIT_DIR...]
Example: tools/sniff-check.py /work/prec-repos/*
"""

import glob
import hashlib
import json
import os
import subprocess
import sys

CODE = {"rb": "ruby", "py": "python", "ts": "typescript", "tsx": "typescript", "js": "javascript",
        "mjs": "javascript", "go": "go", "rs": "rust", "java": "java", "c": "c", "h": "c"}
TEXT = {"md": "markdown", "rst": "rst", "yml": "yaml", "yaml": "yaml", "txt": "text", "toml": "toml",
        "cfg": "config", "conf": "config", "ini": "config", "log": "log", "sh": "shell", "bash": "shell",
        "zsh": "shell", "bashrc": "shell", "zshrc": "shell", "profile": "shell"}
HEAD = 16384


def kind(path):
    name = path.rsplit("/", 1)[-1]
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if ext in CODE:
        return "code", CODE[ext]
    if ext in TEXT:
        return "text", TEXT[ext]
    return None


def picked(paths, per):
    """At most `per` of each kind, by a seeded hash of the path."""
    by = {}
    for p in sorted(paths, key=lambda p: hashlib.sha256(b"33" + p.encode()).digest()):
        k = kind(p)
        if k and len(by.setdefault(k, [])) < per:
            by[k].append(p)
    return [(k, p) for k, ps in by.items() for p in ps]


def judged(cli, data):
    out = subprocess.run([cli, "sanitize", "--tool", "read_file"], input=data, capture_output=True, check=True)
    return json.loads(out.stdout)["_meta"]["result-sanitizer/record"]["class"]


def main():
    args = sys.argv[1:]
    cli, per = "target/release/result-sanitizer", 300
    while args and args[0].startswith("--"):
        flag, value, args = args[0], args[1], args[2:]
        if flag == "--cli":
            cli = value
        elif flag == "--per":
            per = int(value)
    samples = []  # (source, (class, kind), bytes)
    for repo in args:
        git = ["git", "--git-dir=" + repo]
        names = subprocess.run(git + ["ls-tree", "-r", "--name-only", "HEAD"], capture_output=True).stdout
        for k, name in picked(names.decode().split("\n"), per):
            data = subprocess.run(git + ["show", "HEAD:" + name], capture_output=True).stdout[:HEAD]
            samples.append(("repositories", k, data))
    home = os.path.expanduser("~")
    machine = [
        "/usr/lib/python3*/**/*.py",
        home + "/.cargo/registry/src/*/*/src/**/*.rs",
        home + "/go/pkg/mod/**/*.go",
        "/usr/lib/node_modules/npm/node_modules/**/*.js",
        "/usr/lib/node_modules/npm/**/*.md",
        "/etc/**/*.conf",
        "/etc/**/*.sh",
        "/usr/share/**/*.sh",
        "/etc/*bashrc",
        "/etc/skel/.*",
    ]
    for pattern in machine:
        for k, path in picked(glob.glob(pattern, recursive=True), per):
            try:
                with open(path, "rb") as f:
                    samples.append(("this machine", k, f.read(HEAD)))
            except OSError:
                pass
    for path in sorted(glob.glob("target/bench/logs/*.log")):
        with open(path, "rb") as f:
            data = f.read()
        for i in range(10):
            at = data.find(b"\n", len(data) * i // 10) + 1
            samples.append(("target/bench/logs", ("text", "log"), data[at:at + HEAD]))
    rows = {}
    for source, k, data in samples:
        if b"\0" in data or not data.strip():
            continue
        r = rows.setdefault((source, k), [0, 0])
        r[0] += 1
        r[1] += judged(cli, data) == "code"
    print(f"{'source':<18} {'file kind':<16} {'files':>6} {'judged code':>12}")
    for (source, (cls, name)), (n, code) in sorted(rows.items(), key=lambda r: (r[0][1][0], r[0][0], r[0][1][1])):
        print(f"{source:<18} {cls + ' ' + name:<16} {n:>6} {code:>6} ({code / n:.2f})")


if __name__ == "__main__":
    main()

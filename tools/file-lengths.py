#!/usr/bin/env python3
"""Source files over the length limit (600 lines), tests aside.

Usage:  python3 tools/file-lengths.py [--limit N]

Python 3 standard library only; reads the tree from the repository root,
builds nothing. Exit 1 when a file is over the limit.

What counts:
* Source files: `.rs`, `.go`, `.js`, `.mjs`, `.ts`, `.py` outside `target/`,
  `node_modules/`, `dist/`, `third_party/` (vendored code, not ours) and
  hidden directories.
* Tests aside: files under a `tests/` or `test/` directory, Go `_test.go`
  files, Python `test_*.py` / `conftest.py`, and in a Rust file everything
  from its first `#[cfg(test)]` at the start of a line (the unit tests at
  its end).
"""

import os
import sys

EXTS = (".rs", ".go", ".js", ".mjs", ".ts", ".py")
SKIP_DIRS = {"target", "node_modules", "dist", "third_party", "tests", "test", "__pycache__"}


def is_test_file(name):
    return name.endswith("_test.go") or (name.startswith("test_") and name.endswith(".py")) or name == "conftest.py"


def counted_lines(path):
    n = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if path.endswith(".rs") and line.startswith("#[cfg(test)]"):
                break
            n += 1
    return n


def main():
    limit = 600
    args = sys.argv[1:]
    if args[:1] == ["--limit"] and len(args) == 2:
        limit = int(args[1])
    elif args:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    over = []
    longest = []
    for root, dirs, files in os.walk("."):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in files:
            if not name.endswith(EXTS) or is_test_file(name):
                continue
            path = os.path.join(root, name)[2:]
            n = counted_lines(path)
            longest.append((n, path))
            if n > limit:
                over.append((n, path))
    longest.sort(reverse=True)
    print(f"source files over {limit} lines (tests aside): {len(over)}")
    for n, path in sorted(over, reverse=True):
        print(f"  {n:5} {path}")
    print("longest: " + ", ".join(f"{p} {n}" for n, p in longest[:3]))
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())

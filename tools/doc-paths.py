#!/usr/bin/env python3
"""Repository paths named in the docs that do not exist.

Usage:  python3 tools/doc-paths.py [--journal]

Reads README.md and docs/**/*.md (docs/journal/ only with --journal: a
journal names the code as it was then). Python 3 standard library only.

What counts as a path (outside fenced ``` blocks):

* Markdown link `[text](target)`: the target, without its #anchor, taken
  relative to the document. Skipped: targets with a scheme (`https:`,
  `mailto:`), anchors alone, links written inside `code`. A target that is
  a .md file with an #anchor must also have a heading with that anchor
  (GitHub's rule: lower case, punctuation dropped, spaces to hyphens).
* Backticked word: each whitespace-separated word of an inline `code` span
  that holds a `/` and whose first component is an entry at the repository
  root (`guest/src/pipeline.rs`, `hosts/js/src/`, `tests/vectors/`),
  relative to the root. A `::item` or `:line` suffix is dropped; one
  `{a,b}` group names each of its paths (`guest/src/{x,y}.rs`). Skipped:
  URLs, absolute and `~` paths, words with `* ? < > { } $` (globs and
  placeholders), MCP method names (`tools/call`: a group, a slash, a
  name without a dot), anything under `target/`, and a missing path that
  git ignores (a build output such as `hosts/js/dist/`).

Prints `FILE:LINE: PATH` for each miss and exits 1 if there is any.
"""

import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CODE = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
MCP_METHOD = re.compile(
    r"(tools|resources|prompts|tasks|sampling|completion|notifications|roots|logging|elicitation)/[A-Za-z_]+"
)
BRACES = re.compile(r"([^{}]*)\{([^{}]*)\}([^{}]*)")
HEADING = re.compile(r"#{1,6}\s+(.*?)\s*#*\s*$")


def lines_outside_fences(path):
    fenced = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.lstrip().startswith(("```", "~~~")):
                fenced = not fenced
                continue
            if not fenced:
                yield n, line


def slug(heading):
    heading = CODE.sub(lambda m: m.group(2), heading)
    heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


_anchors = {}


def anchors(path):
    if path not in _anchors:
        found, seen = set(), {}
        for _, line in lines_outside_fences(path):
            m = HEADING.match(line)
            if m:
                s = slug(m.group(1))
                k = seen.get(s, 0)
                seen[s] = k + 1
                found.add(s if k == 0 else f"{s}-{k}")
        _anchors[path] = found
    return _anchors[path]


def backticked(line, top):
    for m in CODE.finditer(line):
        for word in m.group(2).split():
            w = word.strip("'\"(),;.")
            if "/" not in w or "://" in w or w.startswith(("/", "~")):
                continue
            w = re.sub(r"(::.*|:\d.*)$", "", w)
            m2 = BRACES.fullmatch(w)
            if m2:  # one {a,b} group: the paths it names
                words = [m2.group(1) + x + m2.group(3) for x in m2.group(2).split(",")]
            else:
                words = [w]
            for w in words:
                if any(c in w for c in "*?<>{}$"):
                    continue
                first = w.split("/", 1)[0]
                if first == "target" or first not in top or MCP_METHOD.fullmatch(w):
                    continue
                yield w


def links(line):
    for m in LINK.finditer(CODE.sub("", line)):
        target = m.group(1)
        if re.match(r"[A-Za-z][A-Za-z0-9+.\-]*:", target) or target.startswith("#"):
            continue
        yield target


def ignored(paths):
    if not paths:
        return set()
    try:
        out = subprocess.run(
            ["git", "-C", ROOT, "check-ignore", "--no-index", "--stdin"],
            # "p/" too: a pattern with a trailing slash matches only a directory
            input="\n".join(q for p in paths for q in (p, p + "/")),
            capture_output=True, text=True, check=False,
        ).stdout
    except OSError:
        return set()
    return {p.rstrip("/") for p in out.split("\n") if p}


def main():
    journal = "--journal" in sys.argv[1:]
    docs = [os.path.join(ROOT, "README.md")]
    docs += sorted(glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))
    if not journal:
        docs = [d for d in docs if os.sep + os.path.join("docs", "journal") + os.sep not in d]
    top = {e for e in os.listdir(ROOT) if not e.startswith(".")}
    misses = []  # (doc, line, shown, path relative to the root, anchor)
    for doc in docs:
        rel_doc = os.path.relpath(doc, ROOT)
        for n, line in lines_outside_fences(doc):
            for w in backticked(line, top):
                if not os.path.exists(os.path.join(ROOT, w)):
                    misses.append((rel_doc, n, w, w.rstrip("/")))
            for target in links(line):
                path, _, anchor = target.partition("#")
                full = os.path.normpath(os.path.join(os.path.dirname(doc), path))
                shown = target
                if not os.path.exists(full):
                    misses.append((rel_doc, n, shown, os.path.relpath(full, ROOT)))
                elif anchor and full.endswith(".md") and anchor not in anchors(full):
                    misses.append((rel_doc, n, shown + " (no such heading)", None))
    skip = ignored([m[3] for m in misses if m[3]])
    misses = [m for m in misses if m[3] is None or m[3] not in skip]
    for doc, n, shown, _ in misses:
        print(f"{doc}:{n}: {shown}")
    print(f"{len(misses)} missing" if misses else "every path named exists", file=sys.stderr)
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())

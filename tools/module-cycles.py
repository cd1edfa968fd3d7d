#!/usr/bin/env python3
"""Import circles and upward imports among the modules of one Rust crate.

Usage:  python3 tools/module-cycles.py SRC_DIR [SRC_DIR ...] [--layers SPEC]
        python3 tools/module-cycles.py --pub SRC_DIR
e.g.    python3 tools/module-cycles.py guest/src host/src
        python3 tools/module-cycles.py --pub host/src   # the public surface

Python 3 standard library only; reads the sources, builds nothing.

Definitions (kept simple on purpose):

* Module: one source file. `a/b.rs` and `a/b/mod.rs` are the module `a::b`;
  inline modules (`mod x { ... }`) belong to their file. The crate root
  (`lib.rs`) and a binary root (`main.rs`, a crate of its own) are left out
  of the graph: their `mod` and `pub use` lines are the crate's surface, and
  what other modules take from the root (the generated WIT bindings, a few
  helpers) depends on nothing inside the crate.
* Edge A -> B: A's code (outside `#[cfg(test)]` items, comments and string
  literals) names something in B: a `use crate::..`, `use super::..`,
  `use self::..` or `use child::..` statement, or such a path written in the
  code. A path is resolved to the longest prefix that is a module; a name
  that module only re-exports (`pub use`) counts as the module it comes
  from, and `pub use` lines themselves are not edges. `mod x;` declares
  structure and is not an edge either.
* Cycle: a strongly connected component of more than one module. Any cycle
  makes the script exit 1.
* Upward import: the crate is cut into layers of top-level modules, highest
  first (the built-in table below, or --layers "a|b,c|d": layers split by
  `|`, peers by `,`). An edge is upward when A's top-level module sits in a
  lower layer than B's. Edges inside one top-level module, and modules in no
  layer, are not judged. Upward imports are reported, not failed on.

With --pub the script lists instead the library's public items: `pub`
items (fn, struct, enum, trait, type, const, static, mod, macro) declared at
the top of a module reachable from `lib.rs` through `pub mod`, or named by
a `pub use` of a reachable module (an item re-exported from a private
module counts once, where it is defined); `pub fn`s in inherent `impl`
blocks of such types ("methods"); `pub` fields of such structs are counted
apart. `pub(crate)` and `pub(super)` are not public. Re-exports of another
crate (`pub use other_crate::x`) and macro-generated modules count as one
item each. It always exits 0.
"""

import os
import re
import sys
from collections import defaultdict

# Highest layer first. guest: the README's diagram read top-down (entry
# points, the stage order, the stages, their strategies, the markup they
# render, the shared data, then helpers). host: CLI-facing services, then
# the engine and its I/O, then plain data and glue. rule-engine: redaction
# and the packs it compiles (peers: a pass holds a pack, a pack holds the
# compiled rules), the markup and defaults they use, then helpers.
LAYERS = {
    "rule-engine": "stages,pack|markup,options|support",
    "guest": "entry|pipeline|stages|strategies|markup|record,options|support",
    "host": "registry,recall|engine,io|report,limits,error,metrics,wit,embedded,componentize,naming",
}

KEYWORDS = {"crate", "super", "self"}


def strip_code(src):
    """Source with comments, string and char literals blanked (same length
    where it matters: newlines are kept)."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if src.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif src.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            out.append(" ")
        elif c == "r" and re.match(r'r#*"', src[i:i + 300]) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_") or (src[i - 1] == "b" and (i == 1 or not (src[i - 2].isalnum() or src[i - 2] == "_")))):
            m = re.match(r'r(#*)"', src[i:])
            end = src.find('"' + m.group(1), i + len(m.group(0)))
            i = n if end < 0 else end + 1 + len(m.group(1))
            out.append('""')
        elif c == "b" and src.startswith('b"', i) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            i += 1
        elif c == '"':
            i += 1
            while i < n and src[i] != '"':
                i += 2 if src[i] == "\\" else 1
            i += 1
            out.append('""')
        elif c == "'":
            m = re.match(r"'(\\.[^']*|[^\\'])'", src[i:i + 12])
            if m:
                i += len(m.group(0))
                out.append("' '")
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def matching_brace(s, i):
    """Index just past the brace block that opens at s[i] == '{'."""
    depth = 0
    for j in range(i, len(s)):
        if s[j] == "{":
            depth += 1
        elif s[j] == "}":
            depth -= 1
            if depth == 0:
                return j + 1
    return len(s)


def drop_test_items(s):
    """Removes every item under #[cfg(test)] (a `mod tests { .. }`, a fn)."""
    while True:
        m = re.search(r"#\[cfg\(test\)\]", s)
        if not m:
            return s
        j = m.end()
        k = s.find("{", j)
        semi = s.find(";", j)
        if k < 0 or (0 <= semi < k):
            end = len(s) if semi < 0 else semi + 1
        else:
            end = matching_brace(s, k)
        s = s[: m.start()] + s[end:]


def expand_use_tree(tree):
    """`a::{b, c::{d as e}, f::*}` -> [['a','b'], ['a','c','d'], ['a','f','*']]."""
    tree = re.sub(r"\s+as\s+\w+", "", tree)
    tree = re.sub(r"\s+", "", tree)
    out = []

    def walk(prefix, t):
        parts = []
        depth, cur = 0, ""
        for ch in t:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += ch
        if cur:
            parts.append(cur)
        for p in parts:
            if "{" in p:
                head, rest = p.split("{", 1)
                segs = [x for x in head.split("::") if x]
                walk(prefix + segs, rest[: rest.rfind("}")])
            else:
                segs = [x for x in p.split("::") if x]
                out.append(prefix + segs)

    walk([], tree)
    return out


class Crate:
    def __init__(self, src):
        self.src = src.rstrip("/")
        self.files = {}  # module path (tuple) -> file
        for dirpath, _, names in os.walk(self.src):
            for name in names:
                if not name.endswith(".rs"):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, name), self.src)
                parts = rel[:-3].split(os.sep)
                if parts in (["lib"], ["main"]) or parts[0] == "bin":
                    continue
                if parts[-1] == "mod":
                    parts = parts[:-1]
                self.files[tuple(parts)] = rel
        self.code = {}
        self.reexports = defaultdict(dict)  # module -> name -> path (absolute segs)
        self.uses = {}  # module -> list of absolute paths
        for mod, rel in self.files.items():
            with open(os.path.join(self.src, rel), encoding="utf-8") as f:
                self.code[mod] = drop_test_items(strip_code(f.read()))
        for mod in self.files:
            self.scan(mod)

    def children(self, mod):
        return {m[-1] for m in self.files if len(m) == len(mod) + 1 and m[: len(mod)] == mod}

    def absolute(self, mod, segs, aliases):
        """Absolute segments of a path written in `mod`, or None (extern)."""
        segs = list(segs)
        if not segs:
            return None
        base = None
        if segs[0] == "crate":
            base, segs = [], segs[1:]
        elif segs[0] in ("self", "super"):
            base = list(mod)
            while segs and segs[0] in ("self", "super"):
                if segs.pop(0) == "super":
                    base = base[:-1]
        elif segs[0] in self.children(mod):
            base = list(mod)
        elif segs[0] in aliases:
            return aliases[segs[0]] + segs[1:]
        else:
            return None
        return base + segs

    def scan(self, mod):
        code = self.code[mod]
        aliases, paths = {}, []
        for m in re.finditer(r"\b(pub(?:\([\w\s:]+\))?\s+)?use\s+([^;]+);", code):
            is_pub = bool(m.group(1))
            for segs in expand_use_tree(m.group(2)):
                if segs and segs[-1] == "self":
                    segs = segs[:-1]
                a = self.absolute(mod, segs, {})
                if a is None:
                    continue
                name = segs[-1]
                alias = re.search(r"\bas\s+(\w+)", m.group(2))
                if is_pub:
                    self.reexports[mod][name] = a
                    if name == "*":
                        self.reexports[mod]["*" + "::".join(a)] = a
                    continue
                if tuple(a) in self.files:
                    aliases[name] = a
                paths.append(a)
        body = re.sub(r"\b(pub(?:\([\w\s:]+\))?\s+)?use\s+[^;]+;", " ", code)
        for m in re.finditer(r"\b((?:[A-Za-z_]\w*::)+[A-Za-z_]\w*)", body):
            segs = m.group(1).split("::")
            if segs[0] not in KEYWORDS and segs[0] not in aliases and segs[0] not in self.children(mod):
                continue
            a = self.absolute(mod, segs, aliases)
            if a is not None:
                paths.append(a)
        self.uses[mod] = paths

    def resolve(self, segs, depth=0):
        """The module (tuple) a path's item lives in, or None (the root)."""
        best = None
        for k in range(len(segs), 0, -1):
            if tuple(segs[:k]) in self.files:
                best = k
                break
        if best is None:
            return None
        mod, rest = tuple(segs[:best]), segs[best:]
        if rest and depth < 8:
            target = self.reexports[mod].get(rest[0])
            if target is not None:
                r = self.resolve(target + rest[1:], depth + 1)
                return r if r is not None else mod
            for key, target in self.reexports[mod].items():
                if key.startswith("*"):
                    sub = tuple(target[:-1])
                    if sub in self.files and re.search(r"\b(fn|struct|enum|trait|type|const|static|mod)\s+" + re.escape(rest[0]) + r"\b", self.code[sub]):
                        return self.resolve(list(sub) + rest, depth + 1)
        return mod

    def edges(self):
        e = defaultdict(set)
        for mod, paths in self.uses.items():
            for p in paths:
                t = self.resolve(p)
                if t is not None and t != mod:
                    e[mod].add(t)
        return e


def sccs(nodes, edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


ITEM = re.compile(r"^pub\s+(?:(?:unsafe|async|const|extern\s+\S+)\s+)*(fn|struct|enum|trait|type|const|static|mod|macro_rules!?)\s+(\w+)")


def top_level(code):
    """(depth, text) of each statement start: the code split at ; { } with
    the brace depth at which each piece begins."""
    depth, start, out = 0, 0, []
    for i, ch in enumerate(code):
        if ch in "{};":
            out.append((depth, code[start:i].strip(), ch))
            start = i + 1
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
    return out


def public_items(src):
    crate = Crate(src)
    with open(os.path.join(crate.src, "lib.rs"), encoding="utf-8") as f:
        root_code = drop_test_items(strip_code(f.read()))
    codes = dict(crate.code)
    codes[()] = root_code
    decl = {}  # module -> list of (kind, name, depth-0 stmt)
    methods = defaultdict(list)  # (module, type) -> [fn]
    fields = defaultdict(int)
    pubmods, pubuses = defaultdict(set), defaultdict(list)
    for mod, code in codes.items():
        items, impl_of, struct_of = [], None, None
        for depth, stmt, ch in top_level(code):
            stmt = re.sub(r"#\[[^\]]*\]\s*", "", stmt).strip()
            if depth == 0:
                impl_of = struct_of = None
                m = re.match(r"impl(?:<[^{]*?>)?\s+([\w:]+)(?:<[^{]*>)?\s*(?:where\b.*)?$", stmt, re.S)
                if m and ch == "{" and " for " not in stmt:
                    impl_of = m.group(1).split("::")[-1]
                m = ITEM.match(stmt)
                if m:
                    kind, name = m.groups()
                    if kind == "mod":
                        pubmods[mod].add(name)
                    items.append((kind, name))
                    if kind == "struct" and ch == "{":
                        struct_of = name
            elif depth == 1 and impl_of and ch == "{":
                m = re.match(r"pub\s+(?:(?:const|async|unsafe)\s+)*fn\s+(\w+)", stmt)
                if m:
                    methods[impl_of].append(m.group(1))
            elif depth == 1 and struct_of:
                fields[(mod, struct_of)] += len(re.findall(r"(?:^|,)\s*pub\s+\w+\s*:", stmt))
        decl[mod] = items
        for m in re.finditer(r"\bpub\s+use\s+([^;]+);", code):
            if code[: m.start()].count("{") == code[: m.start()].count("}"):
                pubuses[mod].append(m.group(1))
    # modules reachable through pub mod
    reach = {()}
    frontier = [()]
    while frontier:
        m = frontier.pop()
        for name in pubmods[m]:
            child = m + (name,)
            if child in codes and child not in reach:
                reach.add(child)
                frontier.append(child)
    listed = {}  # (module, name) -> kind
    for m in reach:
        for kind, name in decl[m]:
            listed[(m, name)] = kind
    aliases, extern = [], []
    for m in sorted(reach):
        for tree in pubuses[m]:
            for segs in expand_use_tree(tree):
                a = crate.absolute(m, segs, {}) if m else (
                    segs if segs[0] in {x[0] for x in crate.files} else crate.absolute(m, segs, {}))
                if a is None:
                    extern.append((m, "::".join(segs)))
                    continue
                t = crate.resolve(a) if len(a) > 1 or tuple(a) not in crate.files else tuple(a)
                name = a[-1]
                if tuple(a) in crate.files:
                    aliases.append((m, "::".join(segs), "mod " + crate.files[tuple(a)]))
                    continue
                if t is None:
                    t = ()
                kind = next((k for k, n in decl.get(t, []) if n == name), None)
                if kind is None:
                    aliases.append((m, "::".join(segs), "?"))
                    continue
                if (t, name) not in listed:
                    listed[(t, name)] = kind
                aliases.append((m, "::".join(segs), "::".join(t) or "crate"))
    types = defaultdict(list)
    for (m, name), kind in listed.items():
        if kind in ("struct", "enum", "trait", "type"):
            types[name].append((m, name))
    meth = {types[k][0]: v for k, v in methods.items() if len(types.get(k, ())) == 1}
    nfields = sum(v for k, v in fields.items() if k in listed)
    return crate, listed, meth, nfields, aliases, extern


def print_public(src):
    crate, listed, meth, nfields, aliases, extern = public_items(src)
    nm = sum(len(v) for v in meth.values())
    print(f"{src}: {len(listed)} public items, {nm} public methods, {len(extern)} re-exports of other crates "
          f"= {len(listed) + nm + len(extern)}; plus {nfields} public fields and {len(aliases)} pub-use paths")
    bymod = defaultdict(list)
    for (m, name), kind in listed.items():
        bymod[m].append((kind, name))
    for m in sorted(bymod):
        where = crate.files.get(m, "lib.rs")
        parts = []
        for kind, name in sorted(bymod[m], key=lambda x: (x[0], x[1])):
            ms = meth.get((m, name))
            parts.append(f"{kind} {name}" + (f" [{', '.join(ms)}]" if ms else ""))
        print(f"  {where}: " + "; ".join(parts))
    for m, path in extern:
        print(f"  {crate.files.get(m, 'lib.rs')}: pub use {path} (another crate)")


def main(argv):
    layers_arg, dirs, pub = None, [], False
    it = iter(argv)
    for a in it:
        if a == "--layers":
            layers_arg = next(it)
        elif a == "--pub":
            pub = True
        else:
            dirs.append(a)
    if not dirs:
        print(__doc__)
        return 2
    if pub:
        for d in dirs:
            print_public(d)
        return 0
    failed = False
    for d in dirs:
        crate = Crate(d)
        name = os.path.basename(os.path.dirname(os.path.abspath(d)))
        rel = lambda m: crate.files[m]
        edges = crate.edges()
        n_edges = sum(len(v) for v in edges.values())
        print(f"{d}: {len(crate.files)} modules, {n_edges} edges between them")
        cycles = [c for c in sccs(crate.files, edges) if len(c) > 1]
        for c in sorted(cycles, key=lambda c: rel(c[0])):
            failed = True
            members = set(c)
            print(f"  cycle ({len(c)} modules): " + ", ".join(rel(m) for m in c))
            for m in c:
                for t in sorted(edges[m] & members, key=rel):
                    print(f"      {rel(m)} -> {rel(t)}")
        if not cycles:
            print("  no cycle")
        spec = layers_arg or LAYERS.get(name)
        if spec:
            rank = {}
            for i, layer in enumerate(spec.split("|")):
                for top in layer.split(","):
                    rank[top.strip()] = i
            up = [(a, b) for a in edges for b in edges[a]
                  if a[0] != b[0] and a[0] in rank and b[0] in rank and rank[a[0]] > rank[b[0]]]
            print(f"  layers (highest first): {spec}")
            print(f"  upward imports: {len(up)} of {sum(1 for a in edges for b in edges[a] if a[0] != b[0])} edges between top-level modules")
            for a, b in sorted(up, key=lambda e: (rel(e[0]), rel(e[1]))):
                print(f"      {rel(a)} -> {rel(b)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

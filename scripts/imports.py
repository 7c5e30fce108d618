#!/usr/bin/env python3
"""The import graph of the workspace's modules, and a check that it has no cycle.

    scripts/imports.py               check every crate; exit 1 naming each cycle
    scripts/imports.py --graph [C]   print the graph (of crate C: lang, stdlib,
                                     compiler, vk-runtime, accl), one arrow a line
    scripts/imports.py --why A B     the paths by which module A imports module B

A module is one source file (`foo.rs` or `foo/mod.rs`); an inline `mod x { .. }`
(a file's tests) belongs to its file. Module A imports module B when A names
an item of B through a path: a `use` (`crate::`, `super::`, `self::`, a child
module's name), or the same path written in code. A path through a `use`
re-export is followed to the module that defines the item, so a facade that
re-exports (`lib.rs`) is not itself a dependency of the modules it re-exports.
Declaring `mod child;` is not an import of the child; `super::X` is an import
of the parent when the parent defines X. Comments, strings and visibility
paths (`pub(in crate::x)`) are not paths.

Only each crate's `src/` counts: tests, examples and benches are not modules
of the crate. Written for this workspace's code, not all of Rust: `macro_rules!`
scoping and `#[macro_use]` are ignored (no module here imports a macro by
path).
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CRATES = [
    ("lang", "lang/src/lib.rs"),
    ("stdlib", "stdlib/src/lib.rs"),
    ("compiler", "compiler/src/lib.rs"),
    ("vk-runtime", "vk-runtime/src/lib.rs"),
    ("accl", "src/lib.rs"),
    ("accl-bin", "src/main.rs"),
    ("accl-lsp", "lsp/src/lib.rs"),
]

# Circles that exist and are not broken yet, each with why. The check fails
# on any other circle, and on one of these that changes (grows, shrinks or
# goes away: then this list is updated with it).
KNOWN = {}

ITEM_KEYWORDS = {"fn", "struct", "enum", "trait", "type", "const", "static", "union"}


def tokenize(src):
    """Identifiers, `::` and single punctuation; no comments, strings or chars."""
    toks = []
    i, n = 0, len(src)
    ident = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
    while i < n:
        c = src[i]
        if c.isspace():
            i += 1
        elif src.startswith("//", i):
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
        elif c == "r" and re.match(r'r#*"', src[i:i + 40]):
            m = re.match(r'r(#*)"', src[i:])
            end = '"' + m.group(1)
            j = src.find(end, i + len(m.group(0)))
            i = n if j < 0 else j + len(end)
        elif c == "b" and i + 1 < n and src[i + 1] in "\"'":
            i += 1
        elif c == '"':
            i += 1
            while i < n and src[i] != '"':
                i += 2 if src[i] == "\\" else 1
            i += 1
        elif c == "'":
            # A char literal ('a', '\n', '\u{..}') or a lifetime ('a).
            m = re.match(r"'(\\(u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'])'", src[i:i + 12])
            if m:
                i += len(m.group(0))
            else:
                m = ident.match(src, i + 1)
                i = m.end() if m else i + 1
        elif c.isalpha() or c == "_":
            m = ident.match(src, i)
            toks.append(m.group(0))
            i = m.end()
        elif c.isdigit():
            m = re.match(r"[0-9][0-9A-Za-z_.]*", src[i:])
            i += len(m.group(0))
        elif src.startswith("::", i):
            toks.append("::")
            i += 2
        else:
            toks.append(c)
            i += 1
    return toks


class Module:
    def __init__(self, crate, path, file):
        self.crate = crate
        self.path = path  # tuple of names below the crate root
        self.file = file
        self.children = {}  # name -> Module
        self.parent = None
        self.items = set()
        self.uses = {}  # name -> path segments, as `use` wrote them
        self.globs = []  # path segments of `use ..::*`
        self.paths = []  # path segments named in code or in a `use`
        self.reexports = []  # (alias, path segments) of `pub use`
        self.idents = {}  # identifier -> times named outside `use` declarations
        self.path_attrs = {}  # child name -> #[path = ".."]

    def name(self):
        return "::".join((self.crate,) + self.path)


def child_file(mod, name):
    base = os.path.dirname(mod.file)
    if name in mod.path_attrs:
        return os.path.join(base, mod.path_attrs[name])
    stem = os.path.basename(mod.file)
    if stem not in ("lib.rs", "main.rs", "mod.rs"):
        base = os.path.join(base, stem[:-3])
    for f in (os.path.join(base, name + ".rs"), os.path.join(base, name, "mod.rs")):
        if os.path.exists(f):
            return f
    return None


def parse_use_tree(toks, i, prefix, out):
    """Parse a use tree at toks[i]; append (segments, alias) to out; return next i."""
    segs = list(prefix)
    while True:
        t = toks[i]
        if t == "{":
            i += 1
            while toks[i] != "}":
                i = parse_use_tree(toks, i, segs, out)
                if toks[i] == ",":
                    i += 1
            return i + 1
        if t == "*":
            out.append((segs, "*"))
            return i + 1
        segs.append(t)
        i += 1
        if toks[i] == "::":
            i += 1
            continue
        alias = segs[-1]
        if toks[i] == "as":
            alias = toks[i + 1]
            i += 2
        if segs[-1] == "self":
            segs = segs[:-1]
            if alias == "self":
                alias = segs[-1] if segs else None
        out.append((segs, alias))
        return i


def load(crate, root_file):
    root = Module(crate, (), os.path.join(ROOT, root_file))
    mods = []
    pending = [root]
    while pending:
        m = pending.pop()
        mods.append(m)
        with open(m.file, encoding="utf-8") as f:
            src = f.read()
        for attr, name in re.findall(r'#\[path\s*=\s*"([^"]+)"\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;', src):
            m.path_attrs[name] = attr
        scan(m, tokenize(src), pending)
    return root, mods


def is_ident(t):
    return re.match(r"[A-Za-z_$]", t) is not None


def scan(m, toks, pending):
    # Inline modules (`mod tests { .. }`) belong to the file's module; a
    # `super` inside one is the file's module itself.
    inline = []  # brace depth inside each open inline module
    depth = 0
    after_vis = -1  # the token after the last `pub(..)`
    i, n = 0, len(toks)
    while i < n:
        t = toks[i]
        at_top = depth == (inline[-1] if inline else 0)
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
            if inline and depth < inline[-1]:
                inline.pop()
        elif t == "pub" and i + 1 < n and toks[i + 1] == "(":
            # pub(crate), pub(super), pub(in crate::x): visibility, not a path.
            j = i + 2
            while toks[j] != ")":
                j += 1
            i = after_vis = j + 1
            continue
        elif t == "mod" and at_top and i + 2 < n and is_ident(toks[i + 1]) and toks[i + 2] in (";", "{"):
            name = toks[i + 1]
            if toks[i + 2] == ";" and not inline:
                f = child_file(m, name)
                if f is None:
                    raise SystemExit(f"imports.py: no file for `mod {name};` in {m.file}")
                c = Module(m.crate, m.path + (name,), f)
                c.parent = m
                m.children[name] = c
                pending.append(c)
            elif toks[i + 2] == "{":
                depth += 1
                inline.append(depth)
            i += 3
            continue
        elif t == "use" and (i == 0 or toks[i - 1] != "::"):
            public = i > 0 and toks[i - 1] == "pub" or i == after_vis
            j = i + 1
            if toks[j] == "::":  # `use ::ext::..`: another crate
                while toks[j] != ";":
                    j += 1
                i = j + 1
                continue
            out = []
            j = parse_use_tree(toks, j, [], out)
            for segs, alias in out:
                segs = inline_super(segs, len(inline))
                if public and alias and alias != "*":
                    m.reexports.append((alias, segs))
                else:
                    m.paths.append(segs)
                if alias == "*":
                    m.globs.append(segs)
                elif alias and at_top:
                    m.uses[alias] = segs
            i = j
            continue
        elif at_top and t in ITEM_KEYWORDS and i + 1 < n and is_ident(toks[i + 1]):
            if toks[i + 1] not in ("fn", "mut", "unsafe", "extern"):
                m.items.add(toks[i + 1])
        elif at_top and t == "macro_rules" and i + 2 < n and toks[i + 1] == "!":
            m.items.add(toks[i + 2])
        if is_ident(t):
            m.idents[t] = m.idents.get(t, 0) + 1
        if is_ident(t) and i + 1 < n and toks[i + 1] == "::" and (i == 0 or toks[i - 1] not in ("::", ".")):
            segs = [t]
            j = i + 1
            while j + 1 < n and toks[j] == "::" and is_ident(toks[j + 1]):
                segs.append(toks[j + 1])
                j += 2
            m.paths.append(inline_super(segs, len(inline)))
            i = j
            continue
        i += 1


def inline_super(segs, inline):
    """Inside `inline` nested inline modules, their `super`s stay in the file."""
    k = 0
    while k < len(segs) and k < inline and segs[k] == "super":
        k += 1
    return segs if k == 0 else ["self"] + segs[k:]


def lookup(m, seg, seen):
    """What `seg` names in module m: ("mod", M), ("item", M) or None."""
    if seg in m.children:
        return ("mod", m.children[seg])
    if seg in m.items:
        return ("item", m)
    if seg in m.uses:
        return resolve(m, m.uses[seg], seen)
    for g in m.globs:
        base = resolve(m, g, seen)
        if base and base[0] == "mod" and base[1] is not m:
            r = lookup(base[1], seg, seen)
            if r:
                return r
    return None


def resolve(m, segs, seen=None):
    """What the path `segs` written in module m names, or None (another crate)."""
    seen = set() if seen is None else seen
    key = (m.name(), tuple(segs))
    if key in seen or not segs:
        return None
    seen.add(key)
    first, rest = segs[0], segs[1:]
    if first in ("crate", "$crate"):
        cur = m
        while cur.parent:
            cur = cur.parent
        r = ("mod", cur)
    elif first == "super":
        r = ("mod", m.parent)
    elif first == "self":
        r = ("mod", m)
    else:
        r = lookup(m, first, seen)
        if r is None:
            return None
    for seg in rest:
        if r[0] == "item":
            break  # an enum's variant, an associated item
        if seg == "super":
            r = ("mod", r[1].parent)
            continue
        r = lookup(r[1], seg, seen) or ("item", r[1])
    return r


def graph(root, mods, why=None):
    edges = set()
    for m in mods:
        # A `pub use` only passes a name on (lookups follow it to where the
        # item lives); it is an import when the module itself names it too.
        used = [segs for alias, segs in m.reexports if m.idents.get(alias, 0) > 0]
        for segs in m.paths + used:
            r = resolve(m, segs)
            if r is None or r[1] is m:
                continue
            edges.add((m.name(), r[1].name()))
            if why is not None:
                why.setdefault((m.name(), r[1].name()), set()).add("::".join(segs))
    return edges


def cycles(nodes, edges):
    """Strongly connected components with more than one module (Tarjan)."""
    adj = {v: [] for v in nodes}
    for a, b in sorted(edges):
        adj[a].append(b)
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in adj[v]:
            if w not in index:
                strong(w)
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
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            strong(v)
    return out, adj


def one_cycle(comp, adj):
    """A shortest cycle through the component's first module."""
    start = comp[0]
    members = set(comp)
    prev = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in adj[v]:
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w in members and w not in prev:
                prev[w] = v
                queue.append(w)
    return comp


def main(argv):
    want_graph = "--graph" in argv
    if "--why" in argv:
        # --why A B: the paths in module A that name items of module B.
        a, b = argv[argv.index("--why") + 1:][:2]
        for crate, root_file in CRATES:
            if a.split("::")[0] == crate:
                why = {}
                graph(*load(crate, root_file), why=why)
                for p in sorted(why.get((a, b), ())):
                    print(p)
        return 0
    only = [a for a in argv if not a.startswith("--")]
    failed = False
    seen_known = set()
    for crate, root_file in CRATES:
        if only and crate not in only:
            continue
        root, mods = load(crate, root_file)
        edges = graph(root, mods)
        if want_graph:
            for a, b in sorted(edges):
                print(f"{a} -> {b}")
            continue
        comps, adj = cycles([m.name() for m in mods], edges)
        for comp in comps:
            if frozenset(comp) in KNOWN:
                seen_known.add(frozenset(comp))
                continue
            failed = True
            print(f"import cycle in {crate}: " + " -> ".join(one_cycle(comp, adj)), file=sys.stderr)
            print(f"  (modules in one circle: {', '.join(comp)})", file=sys.stderr)
    for k in KNOWN:
        crate = next(iter(k)).split("::")[0]
        if k not in seen_known and (not only or crate in only) and not want_graph:
            failed = True
            print(
                f"a known circle is gone or changed: {', '.join(sorted(k))}; "
                "update KNOWN in scripts/imports.py",
                file=sys.stderr,
            )
    if failed:
        print(
            "a module imports a module that imports it back; move what both need "
            "down to a module both can import (scripts/imports.py --graph CRATE prints the arrows)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Finds circles of source files that import each other inside one crate
(ARCHITECTURE.md: "no two files import each other"; where two parts must talk both
ways, a small trait breaks the circle).

A file's imports are every `use crate::…`, `use super::…`, `use self::…` and `use
child::…` (a child module's path) statement,
grouped and nested ones included (`use crate::{a::{b, c}, d as e};`), and every path
written inline in code (`crate::a::f(..)`, `super::super::b::T`). Each path is resolved
to the deepest module *file* it names. Left out: comments, `#[cfg(test)] mod … { … }`
blocks (tests are not rooms of the house), and `pub use` re-exports (a facade names
what lives elsewhere; it does not use it). A circle is a strongly connected set of two
or more files; imports between a module and its own children count like any other.

Usage:
  python3 scripts/file-cycles.py [CRATE_DIR ...]   every crate under crates/ by default;
                                                   exit 1 when a circle is found
  python3 scripts/file-cycles.py --self-test       plants circles in a scratch crate and
                                                   checks that each is found
"""
import os
import re
import sys
import tempfile

USE = re.compile(r"\buse\s+((?:::)?[A-Za-z_][A-Za-z0-9_]*::[^;]*?)\s*;", re.S)
INLINE = re.compile(r"\b((?:crate|super)(?:::[A-Za-z_][A-Za-z0-9_]*)+)")
REEXPORT = re.compile(r"\bpub(?:\([^)]*\))?\s+use\s[^;]*;", re.S)
TEST_MOD = re.compile(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{")


def module_of(path, src):
    """The module path of a file: src/a/b.rs and src/a/b/mod.rs are ("a", "b")."""
    parts = os.path.relpath(path, src)[:-3].split(os.sep)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def expand(tree):
    """Expands a use tree: 'a::{b, c::{d, e as f}}' -> ['a::b', 'a::c::d', 'a::c::e']."""
    tree = tree.strip()
    brace = tree.find("{")
    if brace < 0:
        return [tree.split(" as ")[0].strip()]
    head, body = tree[:brace], tree[brace + 1 : tree.rindex("}")]
    parts, current, depth = [], "", 0
    for ch in body:
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        current += ch
    parts.append(current)
    out = []
    for part in parts:
        part = part.strip()
        if part == "self":
            out.append(head.rstrip(":"))
        elif part:
            out.extend(expand(head + part))
    return out


def without_test_blocks(text):
    out, i = [], 0
    for m in TEST_MOD.finditer(text):
        if m.start() < i:
            continue
        out.append(text[i : m.start()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += text[j] == "{"
            depth -= text[j] == "}"
            j += 1
        i = j
    out.append(text[i:])
    return "".join(out)


def code_of(text):
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = without_test_blocks(text)
    return REEXPORT.sub("", text)


def edges_of(crate_dir):
    src = os.path.join(crate_dir, "src")
    files = {}
    for d, _, names in os.walk(src):
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(d, name)
                files[module_of(path, src)] = path
    edges = {path: set() for path in files.values()}
    for module, path in files.items():
        with open(path, encoding="utf-8", errors="replace") as f:
            code = code_of(f.read())
        paths = [p for m in USE.finditer(code) for p in expand(m.group(1))]
        paths += [m.group(1) for m in INLINE.finditer(code)]
        for p in paths:
            if p.startswith("::"):
                continue
            segs = [s for s in p.split("::") if s]
            if segs[0] not in ("crate", "self", "super"):
                # A path relative to this module names a child module (2018 paths);
                # anything else is another crate.
                if tuple(list(module) + segs[:1]) not in files:
                    continue
                segs = ["self"] + segs
            if segs[0] == "crate":
                base, segs = [], segs[1:]
            elif segs[0] == "self":
                base, segs = list(module), segs[1:]
            else:
                base = list(module)
                while segs and segs[0] == "super":
                    base, segs = base[:-1], segs[1:]
            for k in range(len(segs), -1, -1):
                target = files.get(tuple(base + segs[:k]))
                if target:
                    if target != path:
                        edges[path].add(target)
                    break
    return edges


def circles_of(edges):
    """Tarjan's strongly connected components of two or more files."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(20000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def check(crate_dirs):
    circles = []
    for crate_dir in crate_dirs:
        if os.path.isdir(os.path.join(crate_dir, "src")):
            circles += circles_of(edges_of(crate_dir))
    for component in circles:
        print("circle: " + "  ".join(os.path.relpath(p) for p in component))
    return circles


def self_test():
    """Plants one circle per import form and checks each is found, and that a clean
    crate (a trait breaking the circle, a re-export facade, a test block) is not."""
    planted = {
        "grouped": {"a.rs": "use crate::{b::B, c};\npub struct A;", "b.rs": "use crate::a::A;\npub struct B;"},
        "nested": {"a.rs": "use crate::{x::{b::B, y}};\npub struct A;", "x/mod.rs": "pub mod b;", "x/b.rs": "use super::super::a::A;\npub struct B;"},
        "inline": {"a.rs": "pub fn f() { crate::b::g() }", "b.rs": "pub fn g() { crate::a::f() }"},
        "child_and_parent": {"p/mod.rs": "mod c;\nuse c::C;\npub struct P;", "p/c.rs": "use super::P;\npub struct C;"},
        "three_files": {"a.rs": "use crate::b::B;", "b.rs": "use crate::c::C;", "c.rs": "use self::super::a::A;"},
    }
    clean = {
        "a.rs": "use crate::listener::Listener;\npub struct A;",
        "b.rs": "use crate::a::A;\nuse crate::listener::Listener;\npub struct B;",
        "listener.rs": "pub trait Listener {}",
        "lib.rs": "pub use a::A;\npub use b::B;\npub mod a;\npub mod b;",
        "t.rs": "use crate::a::A;\n#[cfg(test)]\nmod tests {\n    use crate::t::*;\n    use crate::u::U;\n}",
        "u.rs": "use crate::t::T; // crate::a\npub struct U;",
    }
    failures = []
    with tempfile.TemporaryDirectory() as root:
        for name, layout in list(planted.items()) + [("clean", clean)]:
            crate = os.path.join(root, name)
            for rel, text in layout.items():
                path = os.path.join(crate, "src", rel)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
            found = circles_of(edges_of(crate))
            if name == "clean" and found:
                failures.append(f"clean crate reported {found}")
            if name != "clean" and not found:
                failures.append(f"planted circle '{name}' was not found")
    for failure in failures:
        print("self-test: " + failure)
    verdict = "ok" if not failures else f"{len(failures)} of {len(planted) + 1} cases wrong"
    print(f"file-cycles self-test of {len(planted) + 1} cases: {verdict}")
    return not failures


def main():
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(0 if self_test() else 1)
    crates = sys.argv[1:]
    if not crates:
        crates = [os.path.join("crates", c) for c in sorted(os.listdir("crates"))]
        if os.path.isdir("examples"):
            crates += [os.path.join("examples", e) for e in sorted(os.listdir("examples"))]
    circles = check(crates)
    print(f"{len(circles)} circle(s) of files importing each other")
    sys.exit(1 if circles else 0)


if __name__ == "__main__":
    main()

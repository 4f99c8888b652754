#!/usr/bin/env python3
"""Lists pairs of source files that import each other (ARCHITECTURE.md: "no two files
import each other"). A file's imports are the `crate::`, `super::` and `self::` paths in
its code (comment lines and an inline `#[cfg(test)] mod` are skipped), each resolved to the deepest module file it names;
imports between a module and its own ancestors or descendants do not count, nor do test
files. Usage: `python3 scripts/file-cycles.py [crates/X/src ...]` (default: every crate).
Exits 1 when a pair is found.
"""
import glob
import os
import re
import sys

PATH = re.compile(r"\b((?:crate|super|self)(?:::(?:[A-Za-z_][A-Za-z0-9_]*|\{))+)")


def module_path(root, path):
    parts = os.path.relpath(path, root)[:-3].split(os.sep)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def imports(root):
    files = {}
    for dirpath, _, names in os.walk(root):
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as f:
                    files[path] = f.read()
    modules = {module_path(root, p): p for p in files}
    edges = set()
    for path, text in files.items():
        me = module_path(root, path)
        text = re.split(r"#\[cfg\(test\)\]\s*mod \w+ \{", text)[0]
        code = "\n".join(l for l in text.split("\n") if not l.strip().startswith("//"))
        for m in PATH.finditer(code):
            segs = m.group(1).replace("::{", "").split("::")
            if segs[0] == "crate":
                cur, segs = [], segs[1:]
            elif segs[0] == "self":
                cur, segs = list(me), segs[1:]
            else:
                n = 0
                while n < len(segs) and segs[n] == "super":
                    n += 1
                cur, segs = list(me)[: len(me) - n], segs[n:]
            best = None
            for seg in segs:
                cur.append(seg)
                if tuple(cur) in modules:
                    best = tuple(cur)
            if best is None or me[: len(best)] == best or best[: len(me)] == me:
                continue
            edges.add((path, modules[best]))
    return edges


def main():
    roots = sys.argv[1:] or sorted(glob.glob("crates/*/src")) + sorted(glob.glob("examples/*/src"))
    found = 0
    for root in roots:
        edges = imports(root)
        for a, b in sorted(edges):
            if a < b and (b, a) in edges and "test" not in a and "test" not in b:
                print(f"{os.path.relpath(a)} <-> {os.path.relpath(b)}")
                found += 1
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()

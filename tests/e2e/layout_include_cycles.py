#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The house rule "no include cycles": every #include "..." of every header
in include/, src/ and src/*/ (and below) is resolved as the compiler does
(the including file's own folder first, then -Iinclude -Isrc, as the
Makefile passes them); a cycle among them fails, printing it. Include
guards let a cycle compile, so only this notices one.
  Usage: tests/e2e/layout_include_cycles.py [ROOT]   (default: this tree)
ROOT lets it run against another tree, e.g. one with a cycle made to see
it fail."""
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), "..", ".."))
SEARCH = [os.path.join(ROOT, "include"), os.path.join(ROOT, "src")]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def headers():
    out = []
    for top in SEARCH:
        for d, _, files in os.walk(top):
            out += [os.path.join(d, f) for f in files if f.endswith(".h")]
    return sorted(out)


def resolve(name, including):
    for d in [os.path.dirname(including)] + SEARCH:
        p = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(p):
            return p
    return None  # a generated header (build/*.skel.h) or a system one


def graph():
    g = {}
    for h in headers():
        with open(h, encoding="utf-8", errors="replace") as f:
            text = f.read()
        # comments may quote an #include line; they are not includes
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        text = re.sub(r"//[^\n]*", "", text)
        g[h] = sorted({p for n in INCLUDE.findall(text)
                       for p in [resolve(n, h)] if p and p.endswith(".h")})
    return g


def cycles(g):
    """Each cycle once, as a list of headers, by depth-first search."""
    found, seen, state = [], set(), {}
    for start in g:
        if state.get(start):
            continue
        stack = [(start, iter(g.get(start, ())))]
        path = [start]
        state[start] = 1  # on the current path
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                path.pop()
                state[node] = 2  # done
                continue
            if state.get(nxt) == 1:
                cyc = path[path.index(nxt):]
                i = cyc.index(min(cyc))
                key = tuple(cyc[i:] + cyc[:i])
                if key not in seen:
                    seen.add(key)
                    found.append(list(key))
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append((nxt, iter(g.get(nxt, ()))))
    return found


def main():
    g = graph()
    if not g:
        print("FAIL layout_include_cycles: no headers under %s" % ROOT)
        return 1
    found = cycles(g)
    rel = lambda p: os.path.relpath(p, ROOT)  # noqa: E731
    if found:
        for c in found:
            print("    cycle: " + " -> ".join(rel(p) for p in c + [c[0]]))
        print("FAIL layout_include_cycles: %d include cycle(s) among %d headers"
              % (len(found), len(g)))
        return 1
    edges = sum(len(v) for v in g.values())
    print("PASS layout_include_cycles (%d headers, %d includes between them, no cycle)"
          % (len(g), edges))
    return 0


if __name__ == "__main__":
    sys.exit(main())

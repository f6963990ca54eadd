#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The house rule "calls go down": doc/layers.md puts every file of src/ in
a row of a layer; no object may need (nm: U) a symbol that an object of a
higher layer, or of another row of its own layer, defines. The objects are
the build's (build/obj/**/*.o, BUILD=...), those of files that still exist
in src/. An upward reference fails, printing caller, symbol and callee; the
known exceptions below (each with the reason it remains) are the only ones
allowed, symbol by symbol, so they cannot grow, and one that no longer
happens is said, to be dropped.

The checker checks itself first: a planted upward call between two
objects compiled here (unwind/ calling into cli/) must fail it, and the
same call downward must pass.
  Usage: tests/e2e/layout_calls.py [ROOT]   (default: this tree)"""
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree

NAME = "layout_calls"
ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
TABLE = os.path.join(ROOT, "doc", "layers.md")

# (caller file, callee file, symbols): references against the layers that
# remain, and why. Each must stay exactly this or shrink.
EXCEPTIONS = []
# The runtime table's lines: runtimes/runtime.c refers to each runtime's ops
# table (data, called through pointers), the one reference up it is for.
TABLE_LINE = ("runtimes/runtime.c", re.compile(r"^[a-z0-9_]+_runtime_ops$"))


def read_table(path):
    """[(layer, row index, [paths])] from the markdown table"""
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^\|\s*(\d+)\s*\|([^|]*)\|", line)
            if m:
                paths = re.findall(r"`([^`]+)`", m.group(2))
                rows.append((int(m.group(1)), len(rows), paths))
    return rows


def row_of(rows, src):
    """(layer, row) of the longest path naming src (relative to src/)"""
    best = None
    for layer, i, paths in rows:
        for p in paths:
            if src == p or (p.endswith("/") and src.startswith(p)):
                if best is None or len(p) > best[0]:
                    best = (len(p), layer, i)
    return None if best is None else best[1:]


def symbols(objs):
    """({symbol: defining src}, {src: needed symbols}) by one nm run;
    objs maps src (relative to src/) to its object file"""
    by_obj = {o: s for s, o in objs.items()}
    r = subprocess.run(["nm", "-P", "-A"] + sorted(objs.values()), capture_output=True,
                       text=True, check=True)
    defs, need = {}, {s: set() for s in objs}
    for line in r.stdout.splitlines():
        # "FILE: NAME TYPE [VALUE SIZE]"
        f, _, rest = line.partition(": ")
        p = rest.split()
        if len(p) < 2 or f not in by_obj:
            continue
        name, t = p[0], p[1]
        if t == "U":
            need[by_obj[f]].add(name)
        elif t.isupper():  # defined, global (weak ones too: W, V)
            defs.setdefault(name, by_obj[f])
    return defs, need


def check(rows, objs, exceptions):
    """(violations, unplaced srcs, exceptions not seen): a violation is
    (caller, symbol, callee, why)"""
    defs, need = symbols(objs)
    bad, unplaced, seen = [], sorted(s for s in objs if row_of(rows, s) is None), set()
    for src, names in sorted(need.items()):
        me = row_of(rows, src)
        if me is None:
            continue
        for name in sorted(names):
            callee = defs.get(name)
            if callee is None or callee == src:
                continue
            them = row_of(rows, callee)
            if them is None:
                continue
            if them[0] < me[0] or them[1] == me[1]:
                continue  # lower layer, or the same row
            if src == TABLE_LINE[0] and TABLE_LINE[1].match(name):
                continue
            exc = [i for i, (a, b, syms, _) in enumerate(exceptions)
                   if a == src and b == callee and name in syms]
            if exc:
                seen.add((exc[0], name))
                continue
            why = "layer %d calls %s" % (me[0], "layer %d" % them[0] if them[0] > me[0]
                                         else "another row of its layer")
            bad.append((src, name, callee, why))
    stale = [(a, b, sorted(syms - {n for i2, n in seen if i2 == i}))
             for i, (a, b, syms, _) in enumerate(exceptions)
             if syms - {n for i2, n in seen if i2 == i}]
    return bad, unplaced, stale


def self_check(rows):
    """None when a planted upward call fails the check and the same call
    downward passes; else what went wrong"""
    cc = os.environ.get("CC", "cc")
    with tempfile.TemporaryDirectory(prefix="sfprof-layout.") as d:
        def obj(name, code):
            c, o = os.path.join(d, name + ".c"), os.path.join(d, name + ".o")
            with open(c, "w") as f:
                f.write(code)
            subprocess.run([cc, "-c", "-o", o, c], check=True, capture_output=True)
            return o
        lo_calls = obj("lo_calls", "int planted_hi(void);\nint planted_lo(void) "
                       "{ return planted_hi() + 1; }\n")
        hi_defs = obj("hi_defs", "int planted_hi(void) { return 41; }\n")
        hi_calls = obj("hi_calls", "int planted_lo2(void);\nint planted_hi2(void) "
                       "{ return planted_lo2() + 1; }\n")
        lo_defs = obj("lo_defs", "int planted_lo2(void) { return 41; }\n")
        up = {"unwind/planted_lo.c": lo_calls, "cli/planted_hi.c": hi_defs}
        bad, _, _ = check(rows, up, [])
        if [(b[0], b[1], b[2]) for b in bad] != [("unwind/planted_lo.c", "planted_hi",
                                                 "cli/planted_hi.c")]:
            return "a planted upward call (unwind/ -> cli/) gave %r" % (bad,)
        # across rows of one layer (capture/ -> capfile/) fails too
        bad, _, _ = check(rows, {"capture/planted_lo.c": lo_calls,
                                 "capfile/planted_hi.c": hi_defs}, [])
        if len(bad) != 1:
            return "a planted call between rows of a layer gave %r" % (bad,)
        # an exception for that very symbol lets it pass, another does not
        exc = [("unwind/planted_lo.c", "cli/planted_hi.c", {"planted_hi"}, "test")]
        if check(rows, up, exc)[0]:
            return "a listed exception did not pass"
        exc = [("unwind/planted_lo.c", "cli/planted_hi.c", {"other"}, "test")]
        if not check(rows, up, exc)[0]:
            return "an exception for another symbol let the call pass"
        down = {"cli/planted_hi.c": hi_calls, "unwind/planted_lo.c": lo_defs}
        bad, _, _ = check(rows, down, [])
        if bad:
            return "a planted downward call (cli/ -> unwind/) failed: %r" % (bad,)
    return None


def main():
    rows = read_table(TABLE)
    if not rows:
        print("FAIL %s: no layer table in %s" % (NAME, TABLE))
        return 1
    why = self_check(rows)
    if why:
        print("FAIL %s_self_check: %s" % (NAME, why))
        return 1
    print("PASS %s_self_check (a planted upward call fails, downward passes)" % NAME)

    objdir = os.path.join(BUILD, "obj")
    objs = {}
    for d, _, files in os.walk(objdir):
        for f in files:
            if not f.endswith(".o"):
                continue
            src = os.path.relpath(os.path.join(d, f), objdir)[:-2] + ".c"
            # (a file moved or removed leaves its old object behind)
            if os.path.isfile(os.path.join(ROOT, "src", src)):
                objs[src] = os.path.join(d, f)
    nsrc = sum(1 for d, _, fs in os.walk(os.path.join(ROOT, "src")) for f in fs if f.endswith(".c"))
    if len(objs) < nsrc:
        print("FAIL %s: %d objects in %s for %d sources: build first (make all)"
              % (NAME, len(objs), objdir, nsrc))
        return 1
    bad, unplaced, stale = check(rows, objs, EXCEPTIONS)
    for a, b, syms in stale:
        print("    note: the exception %s -> %s no longer needs %s: drop it from %s"
              % (a, b, " ".join(syms), os.path.relpath(__file__, ROOT)))
    if unplaced:
        print("FAIL %s: no row of doc/layers.md names %s" % (NAME, ", ".join(unplaced)))
        return 1
    if bad:
        for src, name, callee, why in bad:
            print("    %s -> %s (%s): %s" % (src, name, callee, why))
        print("FAIL %s: %d upward reference(s) against doc/layers.md, e.g. %s -> %s in %s"
              % (NAME, len(bad), bad[0][0], bad[0][1], bad[0][2]))
        return 1
    print("PASS %s (%d objects, %d rows of %d layers, %d known exception(s))"
          % (NAME, len(objs), len(rows), len({r[0] for r in rows}), len(EXCEPTIONS)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

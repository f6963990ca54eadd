#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The house rule "headers beside their code, includes that name the layer":
  - include/ holds only what the BPF programs share with the daemon (the
    headers bpf/ includes: the record layout), every other header sits in
    the src/ folder of its code;
  - every #include "..." in src/, tests/ and bench/ that reaches a header of
    a src/ folder names it by its path under src/ ("model/dso.h"), so the
    line says which layer it reaches (doc/layers.md), even from its own
    folder.
A planted bare include, and a header planted in include/, must fail
(self-check first).
  Usage: tests/e2e/layout_headers.py [ROOT]   (default: this tree)"""
import os
import re
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree

NAME = "layout_headers"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def src_headers(root):
    """basename -> [path under src/] of every header in a folder of src/."""
    out = {}
    for d, _, files in os.walk(os.path.join(root, "src")):
        for f in files:
            if f.endswith(".h"):
                rel = os.path.relpath(os.path.join(d, f), os.path.join(root, "src"))
                if "/" in rel:
                    out.setdefault(f, []).append(rel)
    return out


def problems(root):
    bad = []
    shared = set()
    for d, _, files in os.walk(os.path.join(root, "bpf")):
        for f in files:
            if f.endswith((".c", ".h")):
                with open(os.path.join(d, f), errors="replace") as fh:
                    shared.update(os.path.basename(n) for n in INCLUDE.findall(fh.read()))
    inc = os.path.join(root, "include")
    for f in sorted(os.listdir(inc)) if os.path.isdir(inc) else []:
        if f.endswith(".h") and f not in shared:
            bad.append("include/%s: not shared with bpf/, belongs beside its code in src/" % f)
    hs = src_headers(root)
    for top in ("src", "tests", "bench"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if not f.endswith((".c", ".h")):
                    continue
                p = os.path.join(d, f)
                with open(p, errors="replace") as fh:
                    text = fh.read()
                for n in INCLUDE.findall(text):
                    if "/" in n or n not in hs:
                        continue
                    bad.append("%s: #include \"%s\" should be \"%s\"" %
                               (os.path.relpath(p, root), n, hs[n][0]))
    return bad


def self_check(root):
    tmp = tempfile.mkdtemp()
    try:
        for sub in ("src", "bpf", "include"):
            shutil.copytree(os.path.join(root, sub), os.path.join(tmp, sub))
        ok = not problems(tmp)
        # a bare include of a moved header fails
        some = os.path.join(tmp, "src", "util.c")
        with open(some, "a") as fh:
            fh.write('\n#include "dso.h"\n')
        planted_include = any("util.c" in b for b in problems(tmp))
        with open(some) as fh:
            s = fh.read()
        with open(some, "w") as fh:
            fh.write(s.replace('\n#include "dso.h"\n', ""))
        # a header that is not the BPF's, in include/
        with open(os.path.join(tmp, "include", "planted.h"), "w") as fh:
            fh.write("/* planted */\n")
        planted_header = any("include/planted.h" in b for b in problems(tmp))
        return ok, planted_include, planted_header
    finally:
        shutil.rmtree(tmp)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    ok, pi, ph = self_check(root)
    if not (ok and pi and ph):
        print("FAIL %s_self_check: clean copy passes %s, planted include fails %s, "
              "planted header fails %s" % (NAME, ok, pi, ph))
        return 1
    print("PASS %s_self_check (a planted bare include and a planted include/ header fail)" % NAME)
    bad = problems(root)
    if bad:
        print("FAIL %s: %d problem(s), e.g. %s" % (NAME, len(bad), "; ".join(bad[:5])))
        return 1
    nh = sum(len(v) for v in src_headers(root).values())
    print("PASS %s (%d headers beside their code in src/, include/ holds %s)" %
          (NAME, nh, ", ".join(sorted(os.listdir(os.path.join(root, "include"))))))
    return 0


if __name__ == "__main__":
    sys.exit(main())

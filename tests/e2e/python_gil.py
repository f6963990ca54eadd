#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CPython frames while waiting: 4 threads of python3.11 spin in pure
Python and contend for the GIL. Profiled with -e futex, at least 80% of
the wait time spent in take_gil must name the Python function that
waited (the innermost Python frame under take_gil: a new thread's first
wait, before it runs any Python, has none), and most of it spin (gil.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from libpython import PY, TempDir, base, folded_counts, py_name, ready, run, script  # noqa: E402

NAME = "python_gil"


def main():
    if not ready(NAME):
        return 0
    errs = []
    with TempDir() as d:
        out = os.path.join(d, "gil.folded")
        rc, err, st = run(["-e", "futex", "--stats", "--quiet", "-o", out, "--",
                           PY, script("gil.py"), "3"])
        if rc != 0:
            print("FAIL %s: sfprof exited %d: %s" % (NAME, rc, err[-400:]))
            return 1
        stacks = folded_counts(out)
        gil = {s: n for s, n in stacks.items() if "take_gil" in map(base, s.split(";"))}
        total = sum(gil.values())
        named = spin = 0
        for s, n in gil.items():
            f = s.split(";")
            k = [base(x) for x in f].index("take_gil")
            below = [x for x in f[:k] if py_name(x)]
            # the innermost Python frame under take_gil is the function
            # that waited (none for a new thread's first wait, in
            # thread_run before it runs any Python)
            if below:
                named += n
            if below and below[-1].startswith("spin (gil.py:"):
                spin += n
        print("take_gil wait %.1f ms, %.1f%% of it names the Python function that waited, "
              "%.1f%% spin (gil.py); python_walks %d" % (
                  total / 1000.0, 100.0 * named / max(total, 1), 100.0 * spin / max(total, 1),
                  st.get("python_walks", 0)))
        if total < 10000:
            errs.append("only %d us of take_gil waits" % total)
        elif named < 0.8 * total:
            errs.append("%.1f%% of take_gil wait time names a Python function, want >= 80%%" %
                        (100.0 * named / total))
        elif spin < 0.6 * total:
            errs.append("only %.1f%% of take_gil wait time in spin" % (100.0 * spin / total))
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

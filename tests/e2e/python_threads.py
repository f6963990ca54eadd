#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CPython frames on CPU: a pure-Python chain outer -> middle -> leaf in 3
threads of Debian's python3.11. At least 80% of the worker threads'
samples must carry the chain in order, inside the native frames (native
thread start below, no _PyEval_EvalFrameDefault left between), each
frame as "qualname (chain.py:LINE)". With --no-python the same run keeps
the native eval frames and names no Python function."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from libpython import (EVAL, PY, TempDir, folded_counts, has_chain, py_name, ready,  # noqa: E402
                       run, script, worker_samples)

NAME = "python_threads"


def main():
    if not ready(NAME):
        return 0
    errs = []
    with TempDir() as d:
        out = os.path.join(d, "py.folded")
        rc, err, st = run(["-F", "199", "--per-thread", "--stats", "--quiet", "-o", out, "--",
                           PY, script("chain.py"), "4"])
        if rc != 0:
            print("FAIL %s: sfprof exited %d: %s" % (NAME, rc, err[-400:]))
            return 1
        w = worker_samples(folded_counts(out))
        total = sum(w.values())
        good = sum(n for s, n in w.items()
                   if has_chain(s.split(";"), ["outer", "middle", "leaf"], "chain.py") and
                   "start_thread" in s.split(";")[:4])
        left = sum(n for s, n in w.items()
                   if has_chain(s.split(";"), ["outer", "middle", "leaf"], "chain.py") and
                   EVAL in s.split(";")[s.split(";").index(next(
                       f for f in s.split(";") if f.startswith("outer ("))):])
        print("%d worker samples, %d (%.1f%%) carry outer;middle;leaf in order; "
              "python_walks %d, python_frames_read %d, python_frames_failed %d" % (
                  total, good, 100.0 * good / max(total, 1), st.get("python_walks", 0),
                  st.get("python_frames_read", 0), st.get("python_frames_failed", 0)))
        if total < 80:
            errs.append("only %d worker samples" % total)
        elif good < 0.8 * total:
            errs.append("chain in %.1f%% of worker samples, want >= 80%%" % (100.0 * good / total))
        if left:
            errs.append("%d samples keep %s inside the Python chain" % (left, EVAL))
        if st.get("python_processes", 0) < 1:
            errs.append("--stats python_processes is %d" % st.get("python_processes", 0))

        out2 = os.path.join(d, "native.folded")
        rc, err, st = run(["-F", "99", "--no-python", "--quiet", "-o", out2, "--",
                           PY, script("chain.py"), "2"])
        nat = folded_counts(out2)
        pyf = sum(n for s, n in nat.items() if any(py_name(f) for f in s.split(";")))
        ev = sum(n for s, n in nat.items() if EVAL in s.split(";"))
        print("--no-python: %d samples, %d with %s, %d naming a Python function" % (
            sum(nat.values()), ev, EVAL, pyf))
        if rc != 0 or pyf or ev < 0.5 * max(sum(nat.values()), 1):
            errs.append("--no-python: exit %d, %d Python frames, %d eval frames" % (rc, pyf, ev))
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

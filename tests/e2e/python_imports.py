#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Python frames from the interpreter's first instruction: a python3.11
run of tests/workloads/python/imports.py, whose imported module does CPU
work at its top level, live and through record/report. The process is
classified right after its exec (its image read before it), not at its
first event handled (25 ms and more later, when start-up imports and the
script's first import had run with native eval frames only: 4-5% of the
samples kept _PyEval_EvalFrameDefault). So: at most 0.5% of the samples
keep an eval frame; the module's top-level code is named in at least
20%; and the interpreter's start-up imports (under
Py_InitializeFromConfig) carry their frozen importlib frames."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from libpython import EVAL, PY, SFPROF, TempDir, folded_counts, py_name, ready, \
    script  # noqa: E402

NAME = "python_imports"


def check(how, st):
    total = sum(st.values())
    ev = sum(n for s, n in st.items() if EVAL in s.split(";"))
    module = sum(n for s, n in st.items() if any(f.startswith("<module> (heavy.py:")
                                                 for f in s.split(";")))
    startup = sum(n for s, n in st.items() if "Py_InitializeFromConfig" in s.split(";") and
                  any(py_name(f) and "<frozen importlib" in f for f in s.split(";")))
    print("%s: %d samples, %d with %s, %d in heavy.py's top level, %d named in start-up "
          "imports" % (how, total, ev, EVAL, module, startup))
    if total < 150:
        return "%s: only %d samples" % (how, total)
    if ev > max(2, total // 200):
        return "%s: %d of %d samples keep %s" % (how, ev, total, EVAL)
    if module < 0.2 * total:
        return "%s: heavy.py's top-level code named in %d of %d samples" % (how, module, total)
    if not startup:
        return "%s: no start-up import sample (Py_InitializeFromConfig) has its Python frames" \
            % how
    return None


def main():
    if not ready(NAME):
        return 0
    errs = []
    with TempDir() as d:
        live = os.path.join(d, "live.folded")
        r = subprocess.run([SFPROF, "-F", "999", "--quiet", "-o", live, "--", PY,
                            script("imports.py"), "300"], capture_output=True, text=True,
                           timeout=180)
        if r.returncode != 0:
            print("FAIL %s: sfprof exited %d: %s" % (NAME, r.returncode, r.stderr[-400:]))
            return 1
        why = check("live", folded_counts(live))
        if why:
            errs.append(why)
        cap, rep = os.path.join(d, "imp.sfcap"), os.path.join(d, "report.folded")
        r = subprocess.run([SFPROF, "record", "-F", "999", "--quiet", "-o", cap, "--", PY,
                            script("imports.py"), "300"], capture_output=True, text=True,
                           timeout=180)
        r2 = subprocess.run([SFPROF, "report", "-o", rep, cap], capture_output=True, text=True,
                            timeout=180) if r.returncode == 0 else r
        if r.returncode or r2.returncode:
            errs.append("record/report exited %d/%d: %s" % (r.returncode, r2.returncode,
                                                            (r.stderr + r2.stderr)[-300:]))
        else:
            why = check("record", folded_counts(rep))
            if why:
                errs.append(why)
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Real CPython 3.12 and 3.13 `-X perf` (pyenv's, under /root/.pyenv):
CPython copies its trampoline template (Python/asm_trampoline.S:
sub $8,%rsp; call *%rcx; add $8,%rsp; ret: no frame pointer, no unwind
rows) into anonymous memory for every code object and names each copy
"py::QUALNAME:FILE" in /tmp/perf-PID.map. sfprof recognises the template
in libpython and gives the copies its rows (src/stacks/stacks_pytramp.c),
so the stacks of a Python loop outer -> middle -> leaf must be rooted at
the interpreter's _start/main, with the three Python functions in order,
never [truncated]: live, and recorded then reported after the map is
deleted (the capture carries the template and the entries). Without the
interpreters the test says SKIP, loudly."""
import glob
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libunwind import ROOT, SFPROF  # noqa: E402

NAME = "names_pyperf"
PYTHONS = [("3.12", "/root/.pyenv/versions/3.12.1/bin/python3.12"),
           ("3.13", "/root/.pyenv/versions/3.13.0/bin/python3.13")]
SCRIPT = os.path.join(ROOT, "tests", "workloads", "python", "chain.py")
ROOTS = ("_start", "main")


def in_order(frames, names):
    i = 0
    for f in frames:
        if i < len(names) and f.startswith(names[i]):
            i += 1
    return i == len(names)


def check(path, script, what, errs):
    total = trunc = ordered = rooted = 0
    want = ["py::outer:" + script, "py::middle:" + script, "py::leaf:" + script]
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        frames, n = stack.split(";")[1:], int(n)
        total += n
        if "[truncated]" in frames:
            trunc += n
            continue
        if frames and frames[0] in ROOTS:
            rooted += n
            if in_order(frames, want):
                ordered += n
    print("%s: %d samples, %d [truncated], %d rooted at _start/main, "
          "%d through py::outer;py::middle;py::leaf" % (what, total, trunc, rooted, ordered))
    if total < 100:
        errs.append("%s: only %d samples" % (what, total))
    elif trunc > 0.1 * total or rooted < 0.9 * total or ordered < 0.8 * total:
        errs.append("%s: %d of %d samples truncated, %d rooted, %d with outer;middle;leaf"
                    % (what, trunc, total, rooted, ordered))


def main():
    if os.geteuid() != 0:
        print("SKIP %s: needs root to load BPF programs" % NAME)
        return 0
    errs = []
    ran = 0
    with tempfile.TemporaryDirectory() as d:
        script = SCRIPT
        for ver, py in PYTHONS:
            if not os.access(py, os.X_OK):
                print("SKIP %s: %s (no CPython %s at %s)" % (NAME, ver, ver, py))
                continue
            ran += 1
            cmd = [py, "-X", "perf", script, "3", "0"]  # 3 s in the main thread
            out = os.path.join(d, ver + ".folded")
            before = set(glob.glob("/tmp/perf-*.map"))
            r = subprocess.run([SFPROF, "-F", "199", "--quiet", "--stats", "-o", out, "--"] + cmd,
                               capture_output=True, text=True, timeout=120)
            for m in set(glob.glob("/tmp/perf-*.map")) - before:
                os.unlink(m)
            if r.returncode != 0:
                errs.append("%s: sfprof exited %d: %s" % (ver, r.returncode, r.stderr[-300:]))
                continue
            check(out, script, ver + " live", errs)
            if "stacks_pytramp_rows: " not in r.stderr:
                errs.append("%s: --stats counts no trampoline rows" % ver)

            cap = os.path.join(d, ver + ".sfcap")
            before = set(glob.glob("/tmp/perf-*.map"))
            r = subprocess.run([SFPROF, "record", "-F", "199", "--quiet", "-o", cap, "--"] + cmd,
                               capture_output=True, text=True, timeout=120)
            # report must not read the map: CPython leaves it behind
            for m in set(glob.glob("/tmp/perf-*.map")) - before:
                os.unlink(m)
            if r.returncode != 0:
                errs.append("%s: record exited %d: %s" % (ver, r.returncode, r.stderr[-300:]))
                continue
            out = os.path.join(d, ver + "-report.folded")
            r = subprocess.run([SFPROF, "report", "--stats", "-o", out, cap],
                               capture_output=True, text=True, timeout=120)
            if r.returncode != 0:
                errs.append("%s: report exited %d: %s" % (ver, r.returncode, r.stderr[-300:]))
                continue
            check(out, script, ver + " record+report, map gone", errs)
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    if not ran:
        print("SKIP %s: no CPython 3.12 or 3.13 under /root/.pyenv/versions" % NAME)
        return 0
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A JIT like Python 3.12 `-X perf` but with frame pointers
(tests/workloads/pytramp.c; real CPython is names_pyperf.py): the
evaluator (C without frame pointers, unwound by its SFrame or .eh_frame
rows) calls each level through its own trampoline in anonymous
executable memory, which has no unwind rows, only a frame pointer; the
trampolines are named in /tmp/perf-PID.map. The stacks must be rooted
through all five trampolines, each named from the map, never
[truncated]: profiled live, and recorded then reported after the map is
deleted (the capture carries the names, and they vouch for the
trampolines' return addresses in the frame-pointer fallback)."""
import glob
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libunwind import SFPROF, WL  # noqa: E402

NAME = "names_pytramp"
CHAIN = ["_start", "__libc_start_main", "__libc_start_call_main", "main", "run"]
for lv in range(5):
    CHAIN += ["py::level%d:/srv/app.py" % lv, "py_eval"]


def check(path, what, errs):
    total = full = trunc = unnamed = fp = at_tramp = lazy = 0
    cut = []
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        frames, n = stack.split(";")[1:], int(n)
        total += n
        if frames[:len(CHAIN)] == CHAIN and frames[len(CHAIN):] in ([], ["burn"]):
            full += n
        if "[truncated]" in frames:
            # a sample inside a trampoline's push/mov or pop/ret (a few
            # bytes against burn's loop) has no frame pointer of its own
            # yet, or none any more: the walk may stop there, as perf's
            # would; anywhere else a cut is a fault
            if frames[-1].startswith("py::level"):
                at_tramp += n
            elif any(f.startswith("_dl_runtime_resolve") for f in frames):
                # a first call's lazy binding: ld.so's resolver takes
                # its CFA from %rbx (CFA = rbx + 32, to realign the stack
                # for xsave); the walk finds %rbx by replaying the frames
                # below through their CFI (unwind_lazy_binding), so a cut
                # here is a fault too
                lazy += n
                cut.append(line.rstrip("\n"))
            else:
                trunc += n
                cut.append(line.rstrip("\n"))
        if any("+0x" in f for f in frames):
            unnamed += n
    print("%s: %d samples, %d through all 5 named trampolines to py_eval[;burn], "
          "%d [truncated] (%d more with the trampoline as leaf, %d in lazy binding), "
          "%d with an unnamed frame" % (what, total, full, trunc, at_tramp, lazy, unnamed))
    if total < 50:
        errs.append("%s: only %d samples" % (what, total))
    elif full < 0.9 * total or trunc or at_tramp > 0.01 * total or lazy or \
            unnamed > 0.02 * total:
        errs.append("%s: %d of %d samples through the trampolines, %d truncated "
                    "(%d at a trampoline, %d in lazy binding), %d unnamed; cut: %s" % (
                        what, full, total, trunc, at_tramp, lazy, unnamed, cut[:3]))


def main():
    if os.geteuid() != 0:
        print("SKIP %s: needs root to load BPF programs" % NAME)
        return 0
    errs = []
    before = set(glob.glob("/tmp/perf-*.map"))
    with tempfile.TemporaryDirectory() as d:
        for build in ("sframe", "ehframe"):
            exe = os.path.join(WL, "pytramp-" + build)
            out = os.path.join(d, build + ".folded")
            r = subprocess.run([SFPROF, "-F", "199", "--quiet", "--stats", "-o", out, "--",
                                exe, "3"], capture_output=True, text=True, timeout=120)
            if r.returncode != 0:
                errs.append("%s: sfprof exited %d: %s" % (build, r.returncode, r.stderr[-300:]))
                continue
            check(out, build + " live", errs)
            if "unwind_fp_fallback_frames: 0\n" in r.stderr:
                errs.append("%s: --stats counts no frame-pointer fallback" % build)

            cap = os.path.join(d, build + ".sfcap")
            # the workload removes its map at exit; a map left by a crash too
            r = subprocess.run([SFPROF, "record", "-F", "199", "--quiet", "-o", cap, "--",
                                exe, "3"], capture_output=True, text=True, timeout=120)
            for m in set(glob.glob("/tmp/perf-*.map")) - before:
                os.unlink(m)
            if r.returncode != 0:
                errs.append("%s: record exited %d: %s" % (build, r.returncode, r.stderr[-300:]))
                continue
            out = os.path.join(d, build + "-report.folded")
            r = subprocess.run([SFPROF, "report", "-o", out, cap], capture_output=True,
                               text=True, timeout=120)
            if r.returncode != 0:
                errs.append("%s: report exited %d: %s" % (build, r.returncode, r.stderr[-300:]))
                continue
            check(out, build + " record+report, map gone", errs)
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

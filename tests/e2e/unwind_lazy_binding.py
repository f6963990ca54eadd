#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Lazy binding: tests/workloads/lazybind.c dlopens liblazy.so (RTLD_LAZY)
over and over and calls its 500 functions, each first call through the
PLT into ld.so's _dl_runtime_resolve_xsavec, whose CFA is rbx + N (it
realigns the stack for xsave). Rows describe only SP, FP and RA, so below
the top frame rbx is found by replaying the walk through each frame's CFI
rule for it: no sample in lazy binding may end [truncated], live and
recorded then reported, for the workload built with .sframe and with
.eh_frame only."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libunwind import SFPROF, WL  # noqa: E402

NAME = "unwind_lazy_binding"


def check(path, what, errs):
    total = lazy = cut = 0
    examples = []
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        frames, n = stack.split(";"), int(n)
        total += n
        if any(f.startswith("_dl_runtime_resolve") for f in frames):
            lazy += n
            if "[truncated]" in frames:
                cut += n
                examples.append(stack)
    print("%s: %d samples, %d in lazy binding, %d of those [truncated] %s" % (
        what, total, lazy, cut, examples[:2]))
    if total < 200 or lazy < 0.1 * total:
        errs.append("%s: expected >= 200 samples, >= 10%% in lazy binding, got %d, %d" % (
            what, total, lazy))
    elif cut:
        errs.append("%s: expected no lazy-binding sample [truncated], got %d of %d" % (
            what, cut, lazy))


def main():
    if os.geteuid() != 0:
        print("SKIP %s: needs root to load BPF programs" % NAME)
        return 0
    errs = []
    with tempfile.TemporaryDirectory() as d:
        for kind, lib in (("sframe", "liblazy.so"), ("ehframe", "liblazy-ehframe.so")):
            cmd = [os.path.join(WL, "lazybind-" + kind), os.path.join(WL, lib), "2"]
            out = os.path.join(d, kind + ".folded")
            r = subprocess.run([SFPROF, "-F", "999", "--quiet", "-o", out, "--"] + cmd,
                               capture_output=True, text=True, timeout=120)
            if r.returncode != 0:
                print("FAIL %s: sfprof exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
                return 1
            check(out, kind + " live", errs)
        cap = os.path.join(d, "run.sfcap")
        cmd = [os.path.join(WL, "lazybind-sframe"), os.path.join(WL, "liblazy.so"), "2"]
        r = subprocess.run([SFPROF, "record", "-F", "999", "--quiet", "-o", cap, "--"] + cmd,
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            print("FAIL %s: record exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        rep = os.path.join(d, "report.folded")
        r = subprocess.run([SFPROF, "report", "-o", rep, cap], capture_output=True, text=True,
                           timeout=120)
        if r.returncode != 0:
            print("FAIL %s: report exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        check(rep, "record+report", errs)
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

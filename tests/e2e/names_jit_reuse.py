#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""JIT code memory reused: tests/workloads/jitreuse.c writes jit_alpha at
an address X and runs it for 1 s (from phase_one), then writes jit_beta
at the same X, appends its perf-map line and runs it for 3 s (from
phase_two). The newer line wins from the time it appears: >= 95% of
phase_two's samples are named jit_beta, and >= 95% of phase_one's
jit_alpha, profiled live, and recorded then reported with the map
deleted (the capture keeps both entries, in their order). In pprof (from
the report) the JIT frames keep their runtime addresses, each in the
anonymous mapping that holds it."""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libunwind import SFPROF, WL  # noqa: E402
from libsurface import pprof_raw, pprof_mappings  # noqa: E402

NAME = "names_jit_reuse"


def check(path, what, errs):
    count = {}
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        frames = stack.split(";")
        for phase in ("phase_one", "phase_two"):
            if phase in frames:
                leaf = frames[frames.index(phase) + 1:]
                key = (phase, leaf[0] if leaf else "")
                count[key] = count.get(key, 0) + int(n)
    one = sum(v for (p, _), v in count.items() if p == "phase_one")
    two = sum(v for (p, _), v in count.items() if p == "phase_two")
    alpha = count.get(("phase_one", "jit_alpha"), 0)
    beta = count.get(("phase_two", "jit_beta"), 0)
    print("%s: phase_one %d samples, %d jit_alpha; phase_two %d samples, %d jit_beta "
          "(%s)" % (what, one, alpha, two, beta, sorted(count.items())))
    if two < 100 or one < 20:
        errs.append("%s: too few samples (%d, %d)" % (what, one, two))
        return
    if beta < 0.95 * two:
        errs.append("%s: expected >= 95%% of phase_two's samples named jit_beta, got "
                    "%d of %d" % (what, beta, two))
    if alpha < 0.95 * one:
        errs.append("%s: expected >= 95%% of phase_one's samples named jit_alpha, got "
                    "%d of %d" % (what, alpha, one))


def check_pprof(pb, errs):
    _, text = pprof_raw(pb)
    maps = {m[0]: m for m in pprof_mappings(text)}
    locs = re.findall(r"^\s+\d+: 0x([0-9a-f]+) (?:M=(\d+) )?(jit_alpha|jit_beta) ", text, re.M)
    bad = [(a, m, n) for a, m, n in locs
           if int(a, 16) == 0 or not m or int(m) not in maps or
           not maps[int(m)][1] <= int(a, 16) < maps[int(m)][2]]
    print("pprof: %d JIT locations, %d without an address in their mapping" % (
        len(locs), len(bad)))
    if not locs or bad:
        errs.append("pprof: expected every JIT location at its address in its mapping, "
                    "got %d of %d not (%s)" % (len(bad), len(locs), bad[:3]))


def main():
    if os.geteuid() != 0:
        print("SKIP %s: needs root to load BPF programs" % NAME)
        return 0
    exe = os.path.join(WL, "jitreuse-sframe")
    before = set(glob.glob("/tmp/perf-*.map"))
    errs = []
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "live.folded")
        r = subprocess.run([SFPROF, "-F", "199", "--quiet", "-o", out, "--", exe, "4"],
                           capture_output=True, text=True, timeout=120)
        for m in set(glob.glob("/tmp/perf-*.map")) - before:
            os.unlink(m)
        if r.returncode != 0:
            print("FAIL %s: sfprof exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        check(out, "live", errs)

        cap = os.path.join(d, "run.sfcap")
        r = subprocess.run([SFPROF, "record", "-F", "199", "--quiet", "-o", cap, "--",
                            exe, "4"], capture_output=True, text=True, timeout=120)
        maps = set(glob.glob("/tmp/perf-*.map")) - before
        for m in maps:
            os.unlink(m)  # report must not need it
        if r.returncode != 0:
            print("FAIL %s: record exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        if not maps:
            errs.append("record: the workload wrote no /tmp/perf-PID.map")
        out = os.path.join(d, "report.folded")
        r = subprocess.run([SFPROF, "report", "-o", out, cap], capture_output=True,
                           text=True, timeout=120)
        if r.returncode != 0:
            print("FAIL %s: report exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        check(out, "record+report, map deleted", errs)
        if shutil.which("go"):
            pb = os.path.join(d, "report.pb.gz")
            r = subprocess.run([SFPROF, "report", "-o", pb, cap], capture_output=True,
                               text=True, timeout=120)
            if r.returncode != 0:
                errs.append("report -o pprof exited %d: %s" % (r.returncode, r.stderr[-200:]))
            else:
                check_pprof(pb, errs)
        else:
            print("(no go on this machine: the pprof part is skipped)")
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

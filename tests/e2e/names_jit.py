#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""JIT code named from perf maps: node --perf-basic-prof writes
/tmp/perf-PID.map as it compiles; sfprof, profiling it live, names the
samples in its JIT code from that map (re-read as it grows). The hot JS
function must be named in at least 80% of the samples, and those stacks
must stay rooted at _start (never [truncated]). Then the same run
recorded, its map deleted, and reported: the capture carries the JIT
names its stacks used, so the report names them as the live run did."""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libunwind import ROOT, SFPROF  # noqa: E402

NAME = "names_jit"

HOT_JS = os.path.join(ROOT, "tests", "workloads", "js", "hot.js")


def check(out, what, errs):
    total = named = rooted = anon = 0
    for line in open(out):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        frames, n = stack.split(";"), int(n)
        total += n
        if any(f.startswith("JS:") and "sfprofHot" in f for f in frames):
            named += n
            if len(frames) > 1 and frames[1] == "_start":
                rooted += n
        if frames[-1] == "[jit]" or frames[-1].startswith(("[anon]+0x", "[unknown]+0x")):
            anon += n
    print("%s: %d samples: hot JS function named in %d (%.1f%%), %d of those rooted at "
          "_start; %d samples end in an unnamed frame" % (
              what, total, named, 100.0 * named / max(total, 1), rooted, anon))
    if total < 200:
        errs.append("%s: only %d samples" % (what, total))
    elif named < 0.8 * total:
        errs.append("%s: hot JS function named in %.1f%% of samples, want >= 80%%" %
                    (what, 100.0 * named / total))
    if named and rooted < 0.95 * named:
        errs.append("%s: only %d of %d JS stacks rooted at _start" % (what, rooted, named))


def main():
    if os.geteuid() != 0:
        print("SKIP %s: needs root to load BPF programs" % NAME)
        return 0
    node = shutil.which("node")
    if not node:
        print("SKIP %s: no node on this machine" % NAME)
        return 0
    before = set(glob.glob("/tmp/perf-*.map"))
    errs = []
    with tempfile.TemporaryDirectory() as d:
        js = HOT_JS
        out = os.path.join(d, "out.folded")
        r = subprocess.run([SFPROF, "-F", "199", "--quiet", "-o", out, "--",
                            node, "--perf-basic-prof", js, "4"],
                           capture_output=True, text=True, timeout=120,
                           cwd=d)  # (node writes isolate-*.log files there)
        for m in set(glob.glob("/tmp/perf-*.map")) - before:
            os.unlink(m)  # node leaves its map behind
        if r.returncode != 0:
            print("FAIL %s: sfprof exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        check(out, "live", errs)

        cap = os.path.join(d, "run.sfcap")
        r = subprocess.run([SFPROF, "record", "-F", "199", "--quiet", "-o", cap, "--",
                            node, "--perf-basic-prof", js, "4"],
                           capture_output=True, text=True, timeout=120, cwd=d)
        maps = set(glob.glob("/tmp/perf-*.map")) - before
        for m in maps:
            os.unlink(m)  # report must not need it
        if r.returncode != 0:
            print("FAIL %s: record exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        if not maps:
            errs.append("record: node wrote no /tmp/perf-PID.map")
        out = os.path.join(d, "report.folded")
        r = subprocess.run([SFPROF, "report", "-o", out, cap],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            print("FAIL %s: report exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        check(out, "record+report, map deleted", errs)
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

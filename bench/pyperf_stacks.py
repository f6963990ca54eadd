#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CPython 3.12 / 3.13 `-X perf` (pyenv's): the share of stacks that end
[truncated] and that go through py::outer;py::middle;py::leaf, for this
build's sfprof and, with BASE=<older sfprof>, that one side by side; then
`sfprof report` CPU time per sample on a recording (medians of RUNS, the
trampoline rows are looked up uncached: runtimes/python/pytramp_ops.c), recorded at
REC_HZ. The perf maps CPython leaves in /tmp are removed.
  python3 bench/pyperf_stacks.py   (BUILD=build BASE= RUNS=3 HZ=199 REC_HZ=999 SECS=3)
Needs root (BPF)."""
import glob
import os
import resource
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
BASE = os.environ.get("BASE", "")
RUNS = int(os.environ.get("RUNS", "3"))
HZ = os.environ.get("HZ", "199")
REC_HZ = os.environ.get("REC_HZ", "999")
SECS = os.environ.get("SECS", "3")
PYTHONS = [("3.12", "/root/.pyenv/versions/3.12.1/bin/python3.12"),
           ("3.13", "/root/.pyenv/versions/3.13.0/bin/python3.13")]
SCRIPT = os.path.join(ROOT, "tests", "workloads", "python", "chain.py")


def shares(path):
    total = trunc = chain = 0
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        n = int(n)
        total += n
        if "[truncated]" in stack:
            trunc += n
        elif "py::outer:" in stack and "py::middle:" in stack and "py::leaf:" in stack:
            chain += n
    return total, trunc, chain


def cpu_of(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    if os.geteuid() != 0:
        print("pyperf_stacks: needs root")
        return 0
    tools = [("this", os.path.join(BUILD, "sfprof"))] + ([("base", BASE)] if BASE else [])
    maps = set(glob.glob("/tmp/perf-*.map"))
    try:
        run(tools)
    finally:
        for m in set(glob.glob("/tmp/perf-*.map")) - maps:
            os.unlink(m)
    return 0


def run(tools):
    with tempfile.TemporaryDirectory() as d:
        script = SCRIPT
        for ver, py in PYTHONS:
            if not os.access(py, os.X_OK):
                print("SKIP %s (no CPython %s at %s)" % (ver, ver, py))
                continue
            for name, sf in tools:
                tr, ch, ns = [], [], []
                for i in range(RUNS):
                    out = os.path.join(d, "o.folded")
                    subprocess.run([sf, "-F", HZ, "--quiet", "-o", out, "--", py, "-X", "perf",
                                    script, SECS, "0"], check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
                    total, trunc, chain = shares(out)
                    ns.append(total)
                    tr.append(100.0 * trunc / max(total, 1))
                    ch.append(100.0 * chain / max(total, 1))
                print("%s %s: samples %d, [truncated] %.1f%%, outer;middle;leaf %.1f%% "
                      "(medians of %d)" % (ver, name, statistics.median(ns),
                                           statistics.median(tr), statistics.median(ch), RUNS))
            cap = os.path.join(d, "c.sfcap")
            sf = tools[0][1]
            subprocess.run([sf, "record", "-F", REC_HZ, "--quiet", "-o", cap, "--", py, "-X", "perf",
                            script, SECS, "0"], check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            out = os.path.join(d, "r.folded")
            subprocess.run([sf, "report", "-o", out, cap], check=True, stderr=subprocess.DEVNULL)
            total = shares(out)[0]
            for name, s in tools:
                t = statistics.median(cpu_of([s, "report", "-o", "/dev/null", cap])
                                      for _ in range(RUNS))
                print("%s %s report: %.1f ms CPU for %d samples, %.1f us/sample"
                      % (ver, name, t * 1e3, total, t * 1e6 / max(total, 1)))


if __name__ == "__main__":
    sys.exit(main())

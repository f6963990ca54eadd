#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Whole-machine profiling cost: sfprof -a against perf record -a -g and
perf record -a --call-graph dwarf (plus perf report, which perf needs to
give the same answer), at 99 Hz and 999 Hz, in three conditions:
  cpu      two CPU-bound processes (spin)
  storm    a storm of about 100 short processes a second (shortlived)
  idle     500 idle processes of 10 threads each (idlethreads)
For each: the profiler's own CPU time (user + system, from wait4) as a
share of one core over the run, its peak RSS, and for perf the CPU time
of perf report on the recording. Runs of the three tools interleave.
  Usage: bench/scope_bench.py [SECONDS] [REPEATS]   (default 20, 1)
"""
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
SFPROF = os.path.join(BUILD, "sfprof")
WL = os.path.join(BUILD, "workloads")


def timed(argv, **kw):
    """Run argv to its end: (cpu seconds, peak RSS MiB, returncode)."""
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    _, status, ru = os.wait4(p.pid, 0)
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0, os.waitstatus_to_exitcode(status)


def start_condition(name, secs):
    procs = []
    if name == "cpu":
        for _ in range(2):
            procs.append(subprocess.Popen([os.path.join(WL, "spin-sframe"), str(secs + 3)],
                                          stdout=subprocess.DEVNULL))
    elif name == "storm":
        n = int((secs + 3) * 100)
        procs.append(subprocess.Popen([os.path.join(WL, "shortlived-sframe"), "-s", str(n), "9"],
                                      stdout=subprocess.DEVNULL))
    elif name == "idle":
        for _ in range(500):
            procs.append(subprocess.Popen([os.path.join(WL, "idlethreads-sframe"), "10",
                                           str(secs + 30)], stdout=subprocess.PIPE))
        for p in procs:
            p.stdout.readline()
    time.sleep(1)
    return procs


def stop_condition(procs):
    for p in procs:
        try:
            p.kill()
        except OSError:
            pass
    for p in procs:
        p.wait()


def one(tool, cond, hz, secs, d):
    procs = start_condition(cond, secs)
    try:
        if tool == "sfprof":
            cpu, rss, rc = timed([SFPROF, "-a", "-F", str(hz), "-d", str(secs), "--quiet",
                                  "-o", os.path.join(d, "a.folded")])
            rep = 0.0
        else:
            data = os.path.join(d, "perf.data")
            cg = ["-g"] if tool == "perf -g" else ["--call-graph", "dwarf"]
            cpu, rss, rc = timed(["perf", "record", "-q", "-B", "-N", "-a", "-F", str(hz),
                                  "-m", "1024", "-o", data] + cg + ["--", "sleep", str(secs)])
            rep, _, _ = timed(["perf", "report", "-i", data, "--stdio", "--no-children"])
            os.unlink(data)
    finally:
        stop_condition(procs)
    return cpu, rss, rep, rc


def main():
    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 20
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    tools = ["sfprof", "perf -g", "perf dwarf"] if shutil.which("perf") else ["sfprof"]
    res = {}
    with tempfile.TemporaryDirectory() as d:
        for _ in range(reps):
            for cond in ("cpu", "storm", "idle"):
                for hz in (99, 999):
                    for tool in tools:
                        cpu, rss, rep, rc = one(tool, cond, hz, secs, d)
                        res.setdefault((cond, hz, tool), []).append((cpu, rss, rep, rc))
    print("%g s each; CPU as %% of one core over the run; medians of %d" % (secs, reps))
    print("| condition | Hz | tool | CPU % of a core | peak RSS MiB | report CPU s | exit |")
    print("|---|---|---|---|---|---|---|")
    for cond in ("cpu", "storm", "idle"):
        for hz in (99, 999):
            for tool in tools:
                v = res[(cond, hz, tool)]
                cpu = statistics.median(x[0] for x in v)
                rss = statistics.median(x[1] for x in v)
                rep = statistics.median(x[2] for x in v)
                print("| %s | %d | %s | %.2f | %.0f | %s | %s |" % (
                    cond, hz, tool, 100 * cpu / secs, rss,
                    "%.2f" % rep if tool != "sfprof" else "(none needed)",
                    ",".join(str(x[3]) for x in v)))


if __name__ == "__main__":
    main()

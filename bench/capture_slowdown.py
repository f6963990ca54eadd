#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Target slowdown under sfprof and under `perf record --call-graph dwarf`
at the same rate, side by side: a fixed amount of single-threaded CPU
work (build/workloads/cpuwork-sframe UNITS), timed by the workload itself
around the work only, so profiler start-up is not counted. Runs are
interleaved (baseline, sfprof, perf, ... in turn) and medians compared.

Three figures per run:
  target CPU   the workload's own CPU time (CLOCK_PROCESS_CPUTIME_ID). The
               sampling interrupt and the BPF program / perf's copy run on
               the target's CPU and, without IRQ time accounting (this
               kernel), are charged to it: this is the slowdown the target
               pays, and it stays meaningful on a busy machine.
  wall         the work's elapsed time: the slowdown a user sees, but only
               meaningful when the machine is otherwise idle (load shown).
  profiler CPU the profiler process's own CPU (sfprof's drain, perf's
               writer), from rusage of the finished run minus the target.

The workload runs SCHED_FIFO on CPU 1 (chrt -f 10 taskset -c 1, exec'd
by the profiler, so the profiled process is the workload) so that other
processes on a shared machine cannot take its CPU; the profilers
themselves run normally. Slowdowns are medians of per-round ratios to the
baseline run of the same round, which cancels slow drifts in machine load.

A third profiler run per rate, `perf record -F HZ` without a call graph
(the IP only), shows what the sampling interrupt itself costs the target,
whatever the handler does; the rest of a profiler's slowdown is its
handler. For each rate the script also compares sfprof with perf round by
round (same round, adjacent runs): the median per-round difference of
target CPU and in how many rounds sfprof cost less, with a two-sided sign
test, since a difference of medians alone does not say whether it is noise.

  Usage: bench/capture_slowdown.py [REPEATS [UNITS]]   (default 101, 100)
  HZ="99 999" (default) selects the rates.
"""
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
SFPROF = os.path.join(BUILD, "sfprof")
WORK = os.path.join(BUILD, "workloads", "cpuwork-sframe")


def measure(cmd):
    """(wall s, target cpu s, profiler cpu s) of one run."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit("%s failed (%d): %s" % (cmd[0], r.returncode, r.stderr[-500:]))
    v = dict(l.split() for l in r.stdout.splitlines() if l.startswith(("elapsed_ns ", "cpu_ns ")))
    if len(v) != 2:
        sys.exit("no elapsed_ns/cpu_ns from %s: %r" % (cmd, r.stdout))
    total = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    cpu = int(v["cpu_ns"]) / 1e9
    return int(v["elapsed_ns"]) / 1e9, cpu, max(0.0, total - cpu)


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 101
    units = sys.argv[2] if len(sys.argv) > 2 else "100"
    if os.geteuid() != 0:
        print("capture_slowdown: SKIP: needs root")
        return 0
    have_perf = subprocess.run(["perf", "--version"], capture_output=True).returncode == 0
    with tempfile.TemporaryDirectory() as d:
        pdata = os.path.join(d, "perf.data")
        pin = []
        if subprocess.run(["chrt", "-f", "10", "true"], capture_output=True).returncode == 0 \
                and (os.cpu_count() or 1) > 1:
            pin = ["chrt", "-f", "10", "taskset", "-c", "1"]
        work = pin + [WORK, units]
        modes = [("baseline", work)]
        rates = [int(h) for h in os.environ.get("HZ", "99 999").split()]
        for hz in rates:
            modes.append(("sfprof -F %d" % hz, [SFPROF, "-F", str(hz), "-o", os.path.join(d, "out"),
                                                "--"] + work))
            if have_perf:
                modes.append(("perf record -F %d --call-graph dwarf" % hz,
                              ["perf", "record", "-q", "-F", str(hz), "--call-graph", "dwarf",
                               "-o", pdata, "--"] + work))
                modes.append(("perf record -F %d (IP only)" % hz,
                              ["perf", "record", "-q", "-F", str(hz), "-o", pdata, "--"] + work))
        res = {m: [] for m, _ in modes}
        load0 = os.getloadavg()[0]
        for _ in range(reps):
            for m, cmd in modes:
                res[m].append(measure(cmd))
        load1 = os.getloadavg()[0]
    med = {m: [statistics.median(x[i] for x in res[m]) for i in range(3)] for m in res}
    base = res["baseline"]

    def paired(m, i):
        return statistics.median(x[i] / b[i] - 1 for x, b in zip(res[m], base)) * 100

    print("| run | target CPU (median) | target CPU slowdown | wall (median) | wall slowdown "
          "| profiler CPU |")
    print("|---|---|---|---|---|---|")
    for m, _ in modes:
        w, c, p = med[m]
        print("| %s | %.3f s | %+.2f%% | %.3f s | %+.2f%% | %.3f s |" % (
            m, c, paired(m, 1), w, paired(m, 0), p))
    bc = [x[1] for x in base]
    print("(cpuwork-sframe %s%s, %d interleaved rounds; slowdowns are medians of per-round "
          "ratios to that round's baseline; baseline target CPU %.3f-%.3f s; load average "
          "%.1f before, %.1f after, %d CPUs)" % (
              units, " on CPU 1, SCHED_FIFO" if pin else "", reps, min(bc), max(bc),
              load0, load1, os.cpu_count()))
    if have_perf:
        for hz in rates:
            a, b = res["sfprof -F %d" % hz], res["perf record -F %d --call-graph dwarf" % hz]
            d = [(x[1] - y[1]) / z[1] * 100 for x, y, z in zip(a, b, base)]
            lower = sum(1 for v in d if v < 0)
            n = sum(1 for v in d if v != 0)
            k = min(lower, n - lower)
            p = min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n) if n else 1.0
            print("%d Hz: sfprof minus perf, target CPU per round (%% of baseline): median %+.2f%%, "
                  "sfprof lower in %d of %d rounds (sign test p = %.3g)" % (
                      hz, statistics.median(d), lower, len(d), p))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Wall time of `sfprof -d 1 -p PID` against 2000 runnable threads in
sfprof's scheduling group (issue 23), by default (SCHED_RR 1) and with
--no-realtime (the caller's priority, as before), interleaved:

  bench/many_threads.py [RUNS [NTHREADS]]     (defaults 3, 2000; root)

Each run starts a fresh workload (tests/workloads/manythreads.c), its
threads held, starts sfprof, and releases them 20 ms after sfprof's exec
(as tests/e2e/reliability_many_threads.py does: what runs before main()
is at the caller's priority whatever sfprof does). This script runs
SCHED_RR 2 itself, so its clock is not starved; the workload and sfprof
start through `chrt -o 0`. Prints each run, then the medians and their
ratio."""
import os
import statistics
import subprocess
import sys
import time

from libbench import SFPROF, WL, need_root

WORKLOAD = os.path.join(WL, "manythreads-sframe")


def ordinary(argv):
    return ["chrt", "-o", "0"] + argv


def one(extra, n):
    """(wall seconds, samples) of one -d 1 run."""
    wl = subprocess.Popen(ordinary([WORKLOAD, str(n), "300", "stdin"]), stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True)
    try:
        pid = int(wl.stdout.readline().split()[1])
        wl.stdout.readline()  # ready N
        t0 = time.monotonic()
        p = subprocess.Popen(ordinary([SFPROF, "-d", "1", "-o", "/dev/null", "--stats"] + extra +
                                      ["-p", str(pid)]),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        while os.path.realpath("/proc/%d/exe" % p.pid) != os.path.realpath(SFPROF):
            if p.poll() is not None or time.monotonic() - t0 > 5:
                break
            time.sleep(0.002)
        time.sleep(0.02)
        wl.stdin.write("go\n")
        wl.stdin.flush()
        _, err = p.communicate(timeout=600)
        wall = time.monotonic() - t0
    finally:
        wl.kill()
        wl.wait()
    ev = [int(l.split(": ")[1]) for l in err.splitlines() if l.startswith("events_cpu: ")]
    return wall, ev[0] if ev else -1


def main():
    if not need_root("many_threads"):
        return
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    os.sched_setscheduler(0, os.SCHED_RR, os.sched_param(2))
    modes = (("default (SCHED_RR 1)", []), ("--no-realtime", ["--no-realtime"]))
    walls = {m: [] for m, _ in modes}
    for i in range(runs):
        for m, extra in modes:
            wall, samples = one(extra, n)
            walls[m].append(wall)
            print("run %d %-22s %7.2f s wall, %d samples" % (i + 1, m, wall, samples), flush=True)
    med = {m: statistics.median(w) for m, w in walls.items()}
    for m, _ in modes:
        print("median %-22s %7.2f s (of %d)" % (m, med[m], runs))
    print("ratio --no-realtime / default: %.1fx" % (med["--no-realtime"] / med[modes[0][0]]))


if __name__ == "__main__":
    main()

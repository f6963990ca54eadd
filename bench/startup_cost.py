#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What a run's start costs the user, this build against BASE (other sfprof
binaries), RUNS runs of each alternated (the machine is shared): medians
of the wall time and of the CPU time (user + system, from wait4: the
kernel's verifier runs in the loading process's system time) of
  sfprof -e EVENTS -o FILE -- true      for EVENTS cpu and cpu,offcpu
Most of it is the verifier (bench/verifier_cost.sh). On a loaded machine
the wall time mostly waits for a CPU; the CPU time does not.

  Usage: bench/startup_cost.py [-n RUNS] BASE_SFPROF...   (RUNS 11; BUILD=DIR)
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

from libbench import SFPROF, need_root


def run(binary, events, out):
    t0 = time.monotonic()
    p = subprocess.Popen([binary, "-e", events, "-o", out, "--", "true"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        return None  # an older build without these events
    return wall * 1e3, (ru.ru_utime + ru.ru_stime) * 1e3


def main():
    argv = sys.argv[1:]
    runs = 11
    if len(argv) > 1 and argv[0] == "-n":
        runs = int(argv[1])
        argv = argv[2:]
    if not argv:
        print("startup_cost: SKIP: no BASE sfprof given")
        return 0
    if not need_root("startup_cost"):
        return 0
    builds = [SFPROF] + [os.path.abspath(b) for b in argv]
    print("| events | build | wall | CPU (user + sys) |")
    print("|---|---|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.cap")
        for events in ("cpu", "cpu,offcpu"):
            res = {b: [] for b in builds}
            for _ in range(runs):
                for b in builds:
                    res[b].append(run(b, events, out))
            for b in builds:
                ok = [r for r in res[b] if r]
                if not ok:
                    print("| %s | %s | (fails) | |" % (events, b))
                    continue
                print("| %s | %s | %.0f ms | %.0f ms |" % (
                    events, b, statistics.median(w for w, _ in ok),
                    statistics.median(c for _, c in ok)))
    print("(medians of %d runs each, alternated; load average %s)" % (
        runs, " ".join("%.1f" % x for x in os.getloadavg())))
    return 0


if __name__ == "__main__":
    sys.exit(main())

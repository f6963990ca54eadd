#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Memory under process churn: sfprof -a at 99 Hz while about 100 short
processes a second come and go, for MINUTES (default 10). Prints sfprof's
RSS (VmRSS) every 30 s and its process-model counters at the end: a flat
curve means each process's state is freed after its last event.
  Usage: bench/churn_soak.py [MINUTES]
"""
import os
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
SFPROF = os.path.join(BUILD, "sfprof")
SHORT = os.path.join(BUILD, "workloads", "shortlived-sframe")


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    mins = float(sys.argv[1]) if len(sys.argv) > 1 else 10
    secs = mins * 60
    s = subprocess.Popen([SFPROF, "-a", "-F", "99", "-d", str(secs), "--quiet", "--stats",
                          "-o", "/dev/null"], stderr=subprocess.PIPE, text=True)
    time.sleep(1)
    storm = subprocess.Popen([SHORT, "-s", str(int(secs * 100)), "9"])
    t0 = time.monotonic()
    print("| minute | sfprof RSS MiB |")
    print("|---|---|")
    while s.poll() is None:
        try:
            print("| %.1f | %.1f |" % ((time.monotonic() - t0) / 60, rss_kib(s.pid) / 1024.0))
            sys.stdout.flush()
        except OSError:
            break
        time.sleep(30)
    storm.kill()
    storm.wait()
    _, err = s.communicate()
    for line in err.splitlines():
        if line.split(":")[0] in ("procs", "procs_reaped", "changes_forks", "changes_exits",
                                  "events_cpu", "lost_total", "processes_followed"):
            print("    " + line)


if __name__ == "__main__":
    main()

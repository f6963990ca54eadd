#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Lock waits through glibc: on tests/workloads/uwlock.c (two workers
taking turns on one mutex, 20 ms holds), `sfprof -e futex` stacks read
...;worker;...;pthread_mutex_lock;... and their microseconds match the
time the workers measured inside pthread_mutex_lock within 5%, for the
.sframe and the .eh_frame build."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libunwind import SFPROF, WL, read_folded  # noqa: E402


def run(flavor):
    errs = []
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "lock.folded")
        r = subprocess.run([SFPROF, "-e", "futex", "--min-wait", "10", "-o", out,
                            "--", os.path.join(WL, "uwlock-" + flavor), "3", "2", "20"],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            return ["%s: sfprof exited %d: %s" % (flavor, r.returncode, r.stderr[-300:])]
        real_ns = None
        for line in r.stdout.splitlines():
            if line.startswith("lock_wait_ns "):
                real_ns = int(line.split()[1])
        s = read_folded(out)
    worker_us = sum(n for k, n in s.items() if "worker" in k)
    lock_us = sum(n for k, n in s.items()
                  if "worker" in k and "pthread_mutex_lock" in k
                  and k.index("worker") < k.index("pthread_mutex_lock"))
    print("%s: measured in pthread_mutex_lock %.0f us, sfprof worker;...;"
          "pthread_mutex_lock %d us (%.2f%%), all worker waits %d us" % (
              flavor, real_ns / 1e3 if real_ns else -1, lock_us,
              100.0 * (lock_us - real_ns / 1e3) / (real_ns / 1e3) if real_ns else 0,
              worker_us))
    if not real_ns:
        return ["%s: workload printed no lock_wait_ns" % flavor]
    if lock_us != worker_us:
        bad = [";".join(k) for k in s if "worker" in k and "pthread_mutex_lock" not in k]
        errs.append("%s: worker waits outside pthread_mutex_lock: %s" % (flavor, bad[:2]))
    if abs(lock_us - real_ns / 1e3) > 0.05 * real_ns / 1e3:
        errs.append("%s: %d us vs measured %.0f us (more than 5%% apart)" % (
            flavor, lock_us, real_ns / 1e3))
    return errs


def main():
    name = "unwind_lock"
    if os.geteuid() != 0:
        print("SKIP %s: needs root to load BPF programs" % name)
        return 0
    errs = run("sframe") + run("ehframe")
    if errs:
        print("FAIL %s: %s" % (name, "; ".join(errs)))
        return 1
    print("PASS %s" % name)
    return 0


if __name__ == "__main__":
    sys.exit(main())

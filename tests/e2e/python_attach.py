#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CPython frames with -p: attach to a running python3.11 that starts its
threads only after sfprof attached (tests/workloads/python/
late_threads.py). The threads started after attach must carry
outer -> middle -> leaf in at least 80% of their samples."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from libpython import (PY, SFPROF, TempDir, chain_samples, folded_counts, ready,  # noqa: E402
                       script, worker_samples)

NAME = "python_attach"


def main():
    if not ready(NAME):
        return 0
    errs = []
    with TempDir() as d:
        target = subprocess.Popen([PY, script("late_threads.py"), "3"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        try:
            if target.stdout.readline().strip() != "ready":
                print("FAIL %s: the workload did not start" % NAME)
                return 1
            out = os.path.join(d, "attach.folded")
            prof = subprocess.Popen([SFPROF, "-p", str(target.pid), "-F", "199", "-d", "8",
                                     "--per-thread", "--stats", "--quiet", "-o", out],
                                    stderr=subprocess.PIPE, text=True)
            time.sleep(1.5)  # attached by now (it loads in well under a second)
            target.stdin.write("go\n")
            target.stdin.flush()
            target.wait(timeout=60)
            _, err = prof.communicate(timeout=60)
        finally:
            if target.poll() is None:
                target.kill()
        if prof.returncode != 0:
            print("FAIL %s: sfprof exited %d: %s" % (NAME, prof.returncode, err[-400:]))
            return 1
        st = folded_counts(out)
        total, good = chain_samples(worker_samples(st), "late_threads.py")
        print("-p: %d samples of threads started after attach, %d (%.1f%%) carry the chain" % (
            total, good, 100.0 * good / max(total, 1)))
        if total < 60:
            errs.append("only %d samples of the new threads" % total)
        elif good < 0.8 * total:
            errs.append("chain in %.1f%% of their samples" % (100.0 * good / total))
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""-e futex --kernel: each lock wait carries the kernel stack where it
slept (futex_wait..., schedule, __schedule as the leaf, on top of
pthread_mutex_lock); --kernel used to be ignored for futex. Without
--kernel, no kernel frame."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libcapture import SFPROF, WL, Checker, privileged  # noqa: E402


def run(d, extra):
    out = os.path.join(d, "f.folded")
    r = subprocess.run([SFPROF, "-e", "futex", "-o", out] + extra +
                       ["--", os.path.join(WL, "mutex-sframe"), "10", "50"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=60)
    lines = [l.rsplit(" ", 1) for l in open(out).read().splitlines()] if r.returncode == 0 else []
    return r, [(s.split(";"), int(w)) for s, w in lines]


def main():
    name = "offcpu_futex_kernel_stacks"
    if not privileged(name):
        return 0
    c = Checker(name)
    with tempfile.TemporaryDirectory() as d:
        r, lines = run(d, ["--kernel"])
        c.check(r.returncode == 0, "sfprof exited %d: %s" % (r.returncode, r.stderr[-300:]))
        lock = [(f, w) for f, w in lines if "pthread_mutex_lock" in f]
        withk = sum(w for f, w in lock if f[-1] == "__schedule_[k]" and
                    any(x.startswith("futex_wait") for x in f))
        total = sum(w for f, w in lock)
        print("# --kernel: %d of %d us of mutex waits end in futex_wait...;__schedule_[k]" % (
            withk, total))
        c.check(total > 0 and withk >= 0.95 * total,
                "%d of %d us of lock waits carry the kernel wait stack" % (withk, total))
        r, lines = run(d, [])
        c.check(lines and not any(x.endswith("_[k]") for f, w in lines for x in f),
                "kernel frames without --kernel")
    return 0 if c.done() else 1


if __name__ == "__main__":
    sys.exit(main())

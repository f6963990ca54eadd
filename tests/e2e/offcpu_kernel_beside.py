#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Kernel stacks beside another tracer: while a second sfprof -e offcpu
--wakers is attached to sched_switch and sched_waking, the kernel calls
through __traceiter_sched_switch (and _waking), and a fixed BPF skip left
that frame as the leaf: 0% of -e futex --kernel waits ended at __schedule
(100% alone), and every waker stack began at __traceiter_sched_waking.
The tracing frames are now left out by what they are: >= 95% of waits end
in futex_wait...;__schedule, >= 95% of waker stacks begin at
try_to_wake_up, and no frame is the tracing machinery's."""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from libcapture import SFPROF, WL, Checker, privileged  # noqa: E402

TRACING = ("__traceiter_", "bpf_trace_run", "__bpf_trace_", "bpf_prog_")


def folded(path):
    out = []
    for line in open(path).read().splitlines():
        s, w = line.rsplit(" ", 1)
        out.append((s.split(";"), int(w)))
    return out


def tracing_frames(lines):
    return sum(w for f, w in lines if any(x.startswith(TRACING) for x in f))


def main():
    name = "offcpu_kernel_beside_another_tracer"
    if not privileged(name):
        return 0
    c = Checker(name)
    with tempfile.TemporaryDirectory() as d:
        sleeper = subprocess.Popen(["sleep", "60"])
        other = subprocess.Popen([SFPROF, "-e", "offcpu", "--wakers", "-p", str(sleeper.pid),
                                  "-d", "50", "-o", os.path.join(d, "other.folded")],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(3)  # (attached well within it, even on a loaded machine)
            c.check(other.poll() is None, "the other sfprof exited %s" % other.poll())

            out = os.path.join(d, "f.folded")
            r = subprocess.run([SFPROF, "-e", "futex", "--kernel", "-o", out, "--",
                                os.path.join(WL, "mutex-sframe"), "10", "50"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               timeout=60)
            c.check(r.returncode == 0, "-e futex exited %d: %s" % (r.returncode, r.stderr[-300:]))
            lines = folded(out) if r.returncode == 0 else []
            lock = [(f, w) for f, w in lines if "pthread_mutex_lock" in f]
            at = sum(w for f, w in lock if f[-1] == "__schedule_[k]" and
                     any(x.startswith("futex_wait") for x in f))
            total = sum(w for f, w in lock)
            print("# beside another tracer: %d of %d us of mutex waits end in "
                  "futex_wait...;__schedule_[k]; %d us through a tracing frame"
                  % (at, total, tracing_frames(lines)))
            c.check(total > 0 and at >= 0.95 * total,
                    "expected >= 95%% of lock waits to end at __schedule, got %d of %d us"
                    % (at, total))
            c.check(not tracing_frames(lines), "a futex stack holds a tracing frame")

            out = os.path.join(d, "w.folded")
            r = subprocess.run([SFPROF, "-e", "offcpu", "--wakers", "-o", out, "--",
                                os.path.join(WL, "offcpu-sframe"), "2"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               timeout=60)
            c.check(r.returncode == 0, "--wakers exited %d: %s" % (r.returncode, r.stderr[-300:]))
            lines = folded(out) if r.returncode == 0 else []
            wk = [(f[f.index("--") + 1:], w) for f, w in lines if "--" in f]
            ttwu = sum(w for f, w in wk if f and f[0] == "try_to_wake_up_[k]")
            total = sum(w for f, w in wk)
            print("# beside another tracer: %d of %d ns of waker stacks begin at "
                  "try_to_wake_up_[k]; %d through a tracing frame"
                  % (ttwu, total, tracing_frames(lines)))
            c.check(total > 0 and ttwu >= 0.95 * total,
                    "expected >= 95%% of waker stacks to begin at try_to_wake_up, got %d of %d"
                    % (ttwu, total))
            c.check(not tracing_frames(lines), "a waker stack holds a tracing frame")
        finally:
            other.terminate()
            other.wait(timeout=30)
            sleeper.kill()
            sleeper.wait()
    return 0 if c.done() else 1


if __name__ == "__main__":
    sys.exit(main())

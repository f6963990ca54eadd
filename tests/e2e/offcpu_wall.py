#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""-e wall: one profile of time per thread, on CPU (cpu-clock samples x
period) and off CPU (blocks), under a first frame that says which:
[running] or the block's state. Each thread of the mixed workload sums to
its 2 s within 10%; the burner's [running] is its own CPU time within
10%; the sleeper's time is [sleep], the vfork waiter's [uninterruptible];
`record -e wall` then `report` equals live."""
import collections
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libcapture import SFPROF, WL, Checker, privileged  # noqa: E402

WORKLOAD = [os.path.join(WL, "offcpu-sframe"), "2", "mixed"]


def main():
    name = "offcpu_wall_per_thread"
    if not privileged(name):
        return 0
    c = Checker(name)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "w.folded")
        r = subprocess.run([SFPROF, "-e", "wall", "-F", "499", "-o", out, "--"] + WORKLOAD,
                           capture_output=True, text=True, timeout=120)
        if not c.check(r.returncode == 0, "sfprof exited %d: %s" % (r.returncode, r.stderr[-300:])):
            return 0 if c.done() else 1
        tids, ran, cpu = {}, {}, 0.0
        for l in r.stdout.splitlines():
            f = l.split()
            if f[0] == "tid":
                tids[f[1]] = f[2]
            elif f[0] == "ran":
                ran[f[1]] = float(f[2])
            elif f[0] == "cpu":
                cpu = float(f[2])
        total, state = collections.Counter(), collections.Counter()
        for l in open(out):
            stack, w = l.rsplit(" ", 1)
            f = stack.split(";")
            tid = f[0].rsplit("/", 1)[-1]  # root: comm-pid/tid by default
            total[tid] += int(w)
            state[(tid, f[1])] += int(w)
        for t, want in (("oc-burn", None), ("oc-sleep", "[sleep]"), ("oc-pipe", "[sleep]"),
                        ("oc-cond", "[sleep]"), ("oc-vfork", "[uninterruptible]")):
            tid = tids.get(t)
            got = total[tid] / 1e6
            print("# %s: %.3f s in all (ran %.3f s): %s" % (
                t, got, ran.get(t, 0), {k[1]: round(v / 1e6, 3) for k, v in state.items()
                                        if k[0] == tid}))
            c.check(abs(got - ran.get(t, 0)) <= 0.1 * ran.get(t, 1),
                    "%s: %.3f s of wall time, ran %.3f s" % (t, got, ran.get(t, 0)))
            if want:
                c.check(state[(tid, want)] >= 0.9 * total[tid], "%s: %s only %.3f of %.3f s" % (
                    t, want, state[(tid, want)] / 1e6, got))
        run = state[(tids.get("oc-burn"), "[running]")] / 1e6
        c.check(abs(run - cpu) <= 0.1 * cpu, "burner [running] %.3f s, its CPU time %.3f s" % (
            run, cpu))

        cap, live, rep = (os.path.join(d, n) for n in ("w.cap", "w.live", "w.rep"))
        rr = subprocess.run([SFPROF, "record", "-e", "wall", "-o", cap, "--"] + WORKLOAD,
                            capture_output=True, text=True, timeout=120,
                            env=dict(os.environ, SFPROF_RECORD_PROFILE=live))
        c.check(rr.returncode == 0, "record exited %d: %s" % (rr.returncode, rr.stderr[-300:]))
        rp = subprocess.run([SFPROF, "report", "-o", rep, cap], capture_output=True, text=True,
                            timeout=120)
        a = open(live).read() if os.path.exists(live) else ""
        b = open(rep).read() if os.path.exists(rep) else ""
        c.check(rp.returncode == 0 and a and a == b and "[running]" in b,
                "report of a wall capture differs from live (exit %d)" % rp.returncode)
    return 0 if c.done() else 1


if __name__ == "__main__":
    sys.exit(main())

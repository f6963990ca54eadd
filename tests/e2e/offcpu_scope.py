#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""-e offcpu --cgroup honours the scope as it changes: the blocking
workload runs in a cgroup, then moves out of it mid-run. Its blocks while
inside are recorded; no block that began after the move is (the switch-out
program remembers a target thread in its task storage, and must not trust
that memory under --cgroup, which a live thread can leave)."""
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from libcapture import SFPROF, WL, Checker, privileged, read_events  # noqa: E402
from liboffcpu import EV_OFFCPU  # noqa: E402


def cgroup_root():
    with open("/proc/mounts") as f:
        for line in f:
            p = line.split()
            if len(p) > 2 and p[2] == "cgroup2":
                return p[1]
    return None


def move(cg, pid):
    with open(os.path.join(cg, "cgroup.procs"), "w") as f:
        f.write(str(pid))


def main():
    name = "offcpu_scope_cgroup_left_mid_run"
    if not privileged(name):
        return 0
    root = cgroup_root()
    if not root:
        print("SKIP %s: no cgroup2 mount in /proc/mounts" % name)
        return 0
    cg = os.path.join(root, "sfprof-offcpu-%d" % os.getpid())
    try:
        os.makedirs(cg)
    except OSError as e:
        print("SKIP %s: cannot make a cgroup under %s: %s" % (name, root, e))
        return 0
    c = Checker(name)
    wl = subprocess.Popen([os.path.join(WL, "offcpu-sframe"), "5"], stdout=subprocess.PIPE,
                          text=True)
    try:
        pid = int(wl.stdout.readline().split()[1])
        move(cg, pid)
        with tempfile.TemporaryDirectory() as d:
            raw = os.path.join(d, "s.raw")
            prof = subprocess.Popen([SFPROF, "-e", "offcpu", "--cgroup", cg, "-d", "3.5",
                                     "--stats", "--dump-events", raw, "-o",
                                     os.path.join(d, "s.folded")],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            time.sleep(2)
            t_move = time.monotonic_ns()
            move(root, pid)
            # (the migration of every thread is done when the write returns)
            t_moved = time.monotonic_ns()
            err = prof.communicate(timeout=60)[1]
            if not c.check(prof.returncode == 0, "sfprof exited %d: %s" % (prof.returncode,
                                                                         err[-300:])):
                return 0 if c.done() else 1
            evs = [e for e in read_events(raw) if e.kind == EV_OFFCPU and e.pid == pid]
    finally:
        wl.kill()
        wl.wait()
        os.rmdir(cg)
    before = [e for e in evs if e.ts < t_move]
    # a block that began inside and ended after the move is the inside's
    after = [e for e in evs if e.ts - e.weight > t_moved]
    print("# %d blocks recorded before the move, %d begun after it (of %d); the move took "
          "%.1f ms" % (len(before), len(after), len(evs), (t_moved - t_move) / 1e6))
    c.check(len(before) >= 20, "only %d blocks recorded while inside the cgroup" % len(before))
    c.check(not after, "%d blocks begun after the process left the cgroup recorded, the "
            "first %.3f s after the move" % (
                len(after), min((e.ts - e.weight - t_moved) / 1e9 for e in after) if after else 0))
    return 0 if c.done() else 1


if __name__ == "__main__":
    sys.exit(main())

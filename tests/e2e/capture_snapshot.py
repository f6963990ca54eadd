#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Stack snapshots of the largest size: with --stack-size 65528 and 100 KiB
of live stack above the sampled frames, every cpu sample and every futex
wait carries exactly 65528 bytes, flagged as cut by --stack-size, and the
bytes are the thread's real stack: the workloads fill their 100 KiB pad
with byte i = i mod 256 at every 64th byte, and that pattern is found in
the snapshot."""
import os
import subprocess
import tempfile

from libcapture import (EV_CPU, EV_FUTEX, EVF_STACK_FULL, SFPROF, WL, Checker,
                        privileged, read_events)

MAX = 65528
PATTERNS = [bytes((p + 64 * k) & 0xff for k in range(400)) for p in (0, 64, 128, 192)]


def has_pad_pattern(stack):
    """Some 400 bytes 64 apart read 0, 64, 128, 192, 0, ... (in some phase)."""
    for a in range(64):
        col = stack[a::64]
        if len(col) >= 1000 and col[500:900] in PATTERNS:
            return True
    return False


def run(name, args, cmd, kind):
    if not privileged(name):
        return
    c = Checker(name)
    with tempfile.TemporaryDirectory() as d:
        raw = os.path.join(d, "ev.raw")
        r = subprocess.run([SFPROF, "--stack-size", str(MAX), "--dump-events", raw, "-o",
                            os.path.join(d, "out")] + args + ["--"] + cmd,
                           capture_output=True, text=True, timeout=120)
        if not c.check(r.returncode == 0, "exit %d: %s" % (r.returncode, r.stderr.strip()[-300:])):
            return c.done()
        evs = [e for e in read_events(raw) if e.kind == kind]
    # the sampled thread's events below the 100 KiB pad: the most common tid
    tids = {}
    for e in evs:
        tids[e.tid] = tids.get(e.tid, 0) + 1
    main = max(tids, key=tids.get) if tids else None
    mine = [e for e in evs if e.tid == main]
    full = [e for e in mine if e.stack_len == MAX and e.flags & EVF_STACK_FULL]
    real = sum(1 for e in full if has_pad_pattern(e.stack))
    print("# %s: %d events of tid %s, %d carry %d bytes flagged full, %d hold the workload's "
          "stack pattern" % (name, len(mine), main, len(full), MAX, real))
    c.check(len(mine) >= 10, "only %d events" % len(mine))
    c.check(len(full) >= 0.95 * len(mine), "%d of %d events have a full %d-byte snapshot" % (
        len(full), len(mine), MAX))
    c.check(real >= 0.95 * len(full), "only %d of %d snapshots hold the workload's stack pattern" % (real, len(full)))
    c.done()


if __name__ == "__main__":
    run("capture_snapshot_cpu_64k", ["-F", "499"],
        [os.path.join(WL, "cpuwork-sframe"), "200", "100"], EV_CPU)
    run("capture_snapshot_futex_64k", ["-e", "futex", "--min-wait", "0"],
        [os.path.join(WL, "pingpong-sframe"), "1", "2000", "100"], EV_FUTEX)

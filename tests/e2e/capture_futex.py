#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Lock waits: thread A holds a mutex 100 ms, ten times, while B waits.
B's futex waits sum to what B's own clock measured (at least 1 s) within 2%, and each carries a non-empty stack
snapshot and a user IP inside libc (where the futex syscall is)."""
import os
import subprocess
import tempfile

from libcapture import (EV_FUTEX, SFPROF, WL, Checker, parse_stats, privileged,
                        read_events)

FUTEX_CMD_MASK = ~(128 | 256) & 0xffffffff
WAIT_OPS = {0, 6, 9, 11, 13}


def run(variant):
    name = "capture_futex_lock_waits_" + variant
    if not privileged(name):
        return
    c = Checker(name)
    with tempfile.TemporaryDirectory() as d:
        raw = os.path.join(d, "ev.raw")
        out = os.path.join(d, "out")
        wl_out = os.path.join(d, "wl.out")
        with open(wl_out, "w") as wo:
            r = subprocess.run([SFPROF, "-e", "futex", "--stats", "--dump-events", raw, "-o", out,
                                "--", os.path.join(WL, "mutex-" + variant), "10", "100"],
                               stdout=wo, stderr=subprocess.PIPE, text=True, timeout=60)
        if not c.check(r.returncode == 0, "sfprof exited %d: %s" % (r.returncode, r.stderr.strip())):
            return c.done()
        lines = [l.split() for l in open(wl_out)]
        waiter = int([l[1] for l in lines if l[0] == "waiter_tid"][0])
        libc = [(int(l[1]), int(l[2])) for l in lines if l[0] == "libc"]
        own = int([l[1] for l in lines if l[0] == "waited_ns"][0])
        delayed = int([l[1] for l in lines if l[0] == "delayed_ns"][0])
        evs = read_events(raw)
        st = parse_stats(r.stderr)
        folded = open(out).read()
    b = [e for e in evs if e.tid == waiter]
    total = sum(e.weight for e in b)
    print("# %s: waiter %d: %d waits, %.1f ms recorded (its own clock: %.1f ms, %.1f ms of it "
          "runnable, not running); all events %d, futex_wait_ns %s"
          % (name, waiter, len(b), total / 1e6, own / 1e6, delayed / 1e6, len(evs),
             st.get("futex_wait_ns")))
    c.check(libc, "workload printed no libc text mapping")
    # The workload's nominal 10 x 100 ms is a floor, not a truth: under load (ASan
    # on CI) the holder runs late and B waits longer, or B sees a round late and
    # waits less (921.9 ms once). B's own clock is the truth.
    c.check(own >= 0.85e9, "the waiter's own clock says it waited %.1f ms, want >= 850" % (own / 1e6))
    # B's clock runs from before its lock call to after it: also the time B was
    # runnable but not running on either side of the syscall (schedstat), which
    # a loaded machine makes tens of ms (a CI run: 999.7 recorded, 1,069.0 by
    # B's clock). The waits can be no longer than B's clock, and no shorter
    # than it less that time.
    tol = max(0.02 * own, 5e6)
    c.check(own - delayed - tol <= total <= own + tol,
            "waiter's futex waits sum to %.1f ms, its own clock %.1f ms (%.1f ms runnable): "
            "want within 2%%" % (total / 1e6, own / 1e6, delayed / 1e6))
    c.check(len(b) >= 10, "only %d waits of the waiter recorded, want >= 10" % len(b))
    c.check(st.get("futex_wait_ns") == sum(e.weight for e in evs),
            "--stats futex_wait_ns %s != sum of event weights %d" % (st.get("futex_wait_ns"),
                                                                     sum(e.weight for e in evs)))
    c.check(st.get("events_futex") == len(evs), "events_futex %s != %d records" % (st.get("events_futex"), len(evs)))
    for e in b:
        if not c.check(e.kind == EV_FUTEX, "record kind %d" % e.kind):
            break
        if not c.check(e.stack_len > 0, "a wait of the waiter has an empty stack snapshot"):
            break
        if not c.check(any(lo <= e.regs["ip"] < hi for lo, hi in libc),
                       "waiter's IP %#x is not in libc %s" % (e.regs["ip"], libc)):
            break
        if not c.check(e.futex_addr != 0 and (e.syscall_nr != 202 or (e.futex_op & FUTEX_CMD_MASK) in WAIT_OPS),
                       "futex addr/op %#x/%#x nr %d" % (e.futex_addr, e.futex_op, e.syscall_nr)):
            break
    # live output until the unwinder lands: comm;0xADDR MICROSECONDS
    c.check(any(l.split()[-1].isdigit() for l in folded.splitlines()), "no output lines: %r" % folded[:200])
    c.done()


if __name__ == "__main__":
    run("sframe")

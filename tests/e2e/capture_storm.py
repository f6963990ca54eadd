#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Futex storm: hundreds of thousands of short futex waits a second, with
--min-wait 1000. sfprof keeps running, reports its counters, and records
every wait of 1 ms or more (the workload logs its own long waits)."""
import os
import subprocess
import tempfile

from libcapture import SFPROF, WL, Checker, parse_stats, privileged, read_events

MS = 1000000


def run(variant):
    name = "capture_storm_records_every_long_wait_" + variant
    if not privileged(name):
        return
    c = Checker(name)
    with tempfile.TemporaryDirectory() as d:
        raw = os.path.join(d, "ev.raw")
        wl_out = os.path.join(d, "wl.out")
        with open(wl_out, "w") as wo:
            r = subprocess.run([SFPROF, "-e", "futex", "--min-wait", "1000", "--stats",
                                "--dump-events", raw, "-o", os.path.join(d, "out"), "--",
                                os.path.join(WL, "futexstorm-" + variant), "3", "2"],
                               stdout=wo, stderr=subprocess.PIPE, text=True, timeout=120)
        if not c.check(r.returncode == 0, "sfprof exited %d: %s" % (r.returncode, r.stderr.strip())):
            return c.done()
        lines = [l.split() for l in open(wl_out)]
        rate = float([l[1] for l in lines if l[0] == "futex_rate"][0])
        waiter = int([l[1] for l in lines if l[0] == "waiter_tid"][0])
        waits = [(int(l[2]), int(l[3])) for l in lines if l[0] == "wait"]
        evs = read_events(raw)
        st = parse_stats(r.stderr)
    mine = sorted((e.ts, e.weight) for e in evs if e.tid == waiter)
    # a wait the workload measured at >= 1.5 ms spent >= 1 ms in the kernel
    # (the margin covers the mutex fast path and being scheduled out)
    must = [(s, t) for s, t in waits if t - s >= 1.5 * MS]
    missed = [(s, t) for s, t in must
              if not any(s <= ts <= t and w >= 1 * MS for ts, w in mine)]
    print("# %s: workload futex rate %.0f/s; %d long waits logged, %d of them >= 1.5 ms, "
          "%d missed; waiter events %d; futex_waits_seen %s futex_short %s events_futex %s "
          "lost_total %s lost_entry_map %s" % (
              name, rate, len(waits), len(must), len(missed), len(mine),
              st.get("futex_waits_seen"), st.get("futex_short"), st.get("events_futex"),
              st.get("lost_total"), st.get("lost_entry_map")))
    c.check(rate >= 100000, "workload made only %.0f futex calls/s under sfprof, want >= 100k" % rate)
    for k in ("events_futex", "futex_wait_ns", "futex_short", "lost_ringbuf", "lost_total"):
        c.check(k in st, "--stats lacks %s" % k)
    c.check(st.get("futex_short", 0) > 100000, "futex_short %s: the storm was not seen" % st.get("futex_short"))
    c.check(len(must) >= 50, "only %d long waits in the workload" % len(must))
    c.check(not missed, "%d of %d waits >= 1.5 ms not recorded, first %s" % (len(missed), len(must), missed[:3]))
    c.check(all(w >= 1 * MS for _, w in mine) and all(e.weight >= MS for e in evs),
            "an event below --min-wait 1000 us was sent")
    c.check(st.get("lost_total") == 0, "lost_total %s" % st.get("lost_total"))
    c.done()


if __name__ == "__main__":
    run("sframe")

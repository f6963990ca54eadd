#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""-e offcpu: four threads block for 4 s, each in one known way (sleep,
pipe read, condvar wait, vfork wait in D state). Each one's off-CPU time
under its own blocking function is its 4 s within 10%; --kernel shows
where in the kernel each one slept (pipe_read under the reader); every
record is a kept block (kind, state, weight >= --min-block) and the
counters add up: offcpu_seen = events + short + losses."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libcapture import Checker, privileged  # noqa: E402
from liboffcpu import (BLOCKERS, EV_OFFCPU, ST_D, ST_S, run_offcpu,  # noqa: E402
                       under)

KERNEL_WHERE = {"oc-sleep": "do_nanosleep", "oc-pipe": "pipe_read",
                "oc-cond": "futex_wait", "oc-vfork": "wait_for_completion"}


def main():
    name = "offcpu_blocking_threads_4s"
    if not privileged(name):
        return 0
    c = Checker(name)
    with tempfile.TemporaryDirectory() as d:
        r = run_offcpu(d, "k", ["--kernel"])
    if not c.check(r.rc == 0, "sfprof exited %d: %s" % (r.rc, r.stderr[-400:])):
        return 0 if c.done() else 1
    st = r.stats
    for t in BLOCKERS:
        if not c.check(t in r.tids and t in r.ran, "workload did not report thread %s" % t):
            continue
        got = under(r, t)
        print("# %s (tid %d): %.3f s off CPU under %s, ran %.3f s, %.3f s in all" % (
            t, r.tids[t], got, BLOCKERS[t], r.ran[t], r.by_tid[r.tids[t]] / 1e6))
        c.check(abs(got - 4.0) <= 0.4, "%s: %.3f s off CPU under %s, want 4 +- 0.4" % (
            t, got, BLOCKERS[t]))
        # --kernel: where in the kernel it slept, on top of its user stack
        where = [fr for tid, frames, w in r.lines if tid == r.tids[t]
                 for fr in frames if KERNEL_WHERE[t] in fr and fr.endswith("_[k]")]
        c.check(where, "%s: no kernel frame matching %s in its stacks" % (t, KERNEL_WHERE[t]))
    evs = r.events
    c.check(evs and all(e.kind == EV_OFFCPU for e in evs),
            "records of other kinds: %s" % sorted({e.kind for e in evs}))
    c.check(all(e.weight >= 10000 for e in evs),
            "a record below --min-block 10 us: %d ns" % min(e.weight for e in evs))
    c.check(st.get("events_offcpu") == len(evs),
            "events_offcpu %s != %d records" % (st.get("events_offcpu"), len(evs)))
    c.check(st.get("offcpu_ns") == sum(e.weight for e in evs),
            "offcpu_ns %s != sum of weights %d" % (st.get("offcpu_ns"), sum(e.weight for e in evs)))
    seen, short = st.get("offcpu_seen", 0), st.get("offcpu_short", 0)
    lost = st.get("lost_ringbuf", 0) + st.get("lost_busy", 0)
    c.check(seen == len(evs) + short + lost, "offcpu_seen %d != events %d + short %d + lost %d" % (
        seen, len(evs), short, lost))
    # nothing lost, but now and then a stack page that is not resident
    lost = {k: v for k, v in st.items() if k.startswith("lost_") and v and
            k not in ("lost_total", "lost_stack_read")}
    c.check(not lost and st.get("lost_stack_read", 0) <= len(evs) // 100,
            "losses: %s, lost_stack_read %s" % (lost, st.get("lost_stack_read")))
    # the state each thread blocked in
    # (its 100 ms sleeps; a preemption now and then is R)
    sleeper = [e for e in evs if e.tid == r.tids.get("oc-sleep") and e.weight > 50e6]
    vfork = [e for e in evs if e.tid == r.tids.get("oc-vfork") and e.weight > 20e6]
    c.check(sleeper and all(e.futex_op == ST_S for e in sleeper),
            "sleeper's blocks not all S: %s" % sorted({e.futex_op for e in sleeper}))
    c.check(len(vfork) >= 100 and all(e.futex_op == ST_D for e in vfork),
            "vfork waits (30 ms): %d, states %s, want >= 100 all D" % (
                len(vfork), sorted({e.futex_op for e in vfork})))
    bad = [(e.stack_len, e.kstack_id, e.flags) for e in sleeper
           if e.stack_len == 0 or e.kstack_id < 0]
    c.check(len(sleeper) >= 35 and not bad,
            "%d sleeps; records without user or kernel stack (len, kstack_id, flags): %s" % (
                len(sleeper), bad[:5]))
    print("# %d records, offcpu_seen %d, short %d, %d bytes" % (len(evs), seen, short,
                                                               st.get("record_bytes", 0)))
    return 0 if c.done() else 1


if __name__ == "__main__":
    sys.exit(main())

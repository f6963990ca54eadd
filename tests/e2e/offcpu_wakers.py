#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""-e offcpu --wakers: each block is joined to the stack of the thread that
woke it, in bcc offwaketime's layout (blocked stack root to leaf, "--",
the waker's stack leaf to root, the waker's name last). At least 90% of
the condvar waiter's time goes through the signalling function, of the
pipe reader's through the writer's, and of the sleeper's through the
timer interrupt; `record --wakers` then `report` equals live. With -e
futex, a mutex waiter's waits are joined to the holder's FUTEX_WAKE in
pthread_mutex_unlock, under the holder's own function."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libcapture import SFPROF, WL, Checker, privileged  # noqa: E402
from liboffcpu import run_offcpu  # noqa: E402

# blocked thread -> (its function, a frame the waker side must hold)
JOINS = {"oc-cond": ("cond_block", "cond_signaller"),
         "oc-pipe": ("pipe_block", "pipe_feeder"),
         "oc-sleep": ("sleep_block", "hrtimer_wakeup_[k]")}


def main():
    name = "offcpu_wakers_joined"
    if not privileged(name):
        return 0
    c = Checker(name)
    with tempfile.TemporaryDirectory() as d:
        r = run_offcpu(d, "w", ["--wakers"], secs="3")
        if not c.check(r.rc == 0, "sfprof exited %d: %s" % (r.rc, r.stderr[-400:])):
            return 0 if c.done() else 1
        for t, (fn, waker) in JOINS.items():
            tid = r.tids.get(t)
            mine = [(f, w) for tid_, f, w in r.lines if tid_ == tid and fn in f]
            total = sum(w for f, w in mine)
            joined = sum(w for f, w in mine if "--" in f and waker in f[f.index("--"):]
                         and f.index(fn) < f.index("--"))
            print("# %s: %.3f of %.3f s joined to a waker through %s" % (
                t, joined / 1e6, total / 1e6, waker))
            c.check(total > 2.5e6 and joined >= 0.9 * total,
                    "%s: %.3f of %.3f s joined through %s, want >= 90%%" % (
                        t, joined / 1e6, total / 1e6, waker))
        # the layout: the waker's name last, its stack leaf to root before
        # it (for the wakeups by the signalling thread: on a loaded machine
        # another wakeup, a timer's or the exit's, may end a wait too)
        cond = [f for tid_, f, w in r.lines if tid_ == r.tids.get("oc-cond") and "--" in f
                and "cond_signaller" in f[f.index("--"):]]
        bad = [f[-3:] for f in cond if not f[-1].startswith("oc-signal-")]
        c.check(cond and not bad,
                "condvar waker lines do not end with the waker oc-signal-PID/TID: %s" % bad[:3])
        c.check(any(f.index("cond_signaller") < f.index("start_thread", f.index("--"))
                    for f in cond if "cond_signaller" in f),
                "waker stack not leaf to root (cond_signaller before start_thread)")
        st = r.stats
        c.check(st.get("events_waker", 0) > 0 and
                st.get("wakers_seen") == st.get("events_waker", 0) + st.get("lost_ringbuf", 0) +
                st.get("lost_busy", 0), "wakers_seen %s != events_waker %s + losses" % (
                    st.get("wakers_seen"), st.get("events_waker")))

        # record then report joins the same way
        cap, live, rep = (os.path.join(d, n) for n in ("w.cap", "w.live", "w.folded"))
        rr = subprocess.run([SFPROF, "record", "-e", "offcpu", "--wakers", "-o", cap, "--",
                             os.path.join(WL, "offcpu-sframe"), "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            timeout=120, env=dict(os.environ, SFPROF_RECORD_PROFILE=live))
        c.check(rr.returncode == 0, "record exited %d: %s" % (rr.returncode, rr.stderr[-300:]))
        rp = subprocess.run([SFPROF, "report", "-o", rep, cap], capture_output=True, text=True,
                            timeout=120)
        c.check(rp.returncode == 0, "report exited %d" % rp.returncode)
        a = open(live).read() if os.path.exists(live) else ""
        b = open(rep).read() if os.path.exists(rep) else ""
        print("# record/report: %d lines, identical: %s, joined lines: %d" % (
            len(b.splitlines()), a == b, b.count(";--;")))
        c.check(a and a == b and ";--;" in b, "report differs from live, or nothing joined")

        # futex: who released the lock
        out = os.path.join(d, "f.folded")
        rf = subprocess.run([SFPROF, "-e", "futex", "--wakers", "-o", out, "--",
                             os.path.join(WL, "mutex-sframe"), "10", "50"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            timeout=60)
        c.check(rf.returncode == 0, "-e futex --wakers exited %d: %s" % (rf.returncode,
                                                                       rf.stderr[-300:]))
        lines = [(l.rsplit(" ", 1)[0].split(";"), int(l.rsplit(" ", 1)[1]))
                 for l in open(out).read().splitlines()] if rf.returncode == 0 else []
        lock = [(f, w) for f, w in lines if "pthread_mutex_lock" in f]
        total = sum(w for f, w in lock)
        joined = sum(w for f, w in lock if "--" in f and "holder" in f[f.index("--"):] and
                     any("mutex_unlock" in x for x in f[f.index("--"):]))
        print("# futex: %d of %d us of mutex waits joined to holder's pthread_mutex_unlock" % (
            joined, total))
        c.check(total > 0 and joined >= 0.9 * total,
                "futex: %d of %d us joined through the holder's unlock" % (joined, total))
    return 0 if c.done() else 1


if __name__ == "__main__":
    sys.exit(main())

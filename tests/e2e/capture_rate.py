#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""On-CPU sample rate: a single spinning thread profiled 3 s at 99 Hz must
give 297 samples within 10%, and at 999 Hz 2997 within 10%, every one from
the target's thread, with user registers and a stack snapshot.

The expectation is stated twice: against the issue's numbers (asserted)
and against the target's measured CPU time x Hz (printed), so that a run
on a busy machine, where the spinner does not get a whole core, can be
told apart from lost samples."""
import os
import struct
import subprocess
import tempfile
import threading
import time

from libcapture import (EV_CPU, EVF_NO_USER_REGS, EVF_STACK_TOP, SFPROF, WL, Checker,
                        parse_stats, privileged, read_events, start_workload,
                        task_cpu_ns, text_ranges)

SECONDS = 3


def cpu_at(trace, t):
    """Target CPU ns at monotonic time t, interpolated in the trace."""
    for (ta, ca), (tb, cb) in zip(trace, trace[1:]):
        if ta <= t <= tb:
            return ca + (cb - ca) * (t - ta) / max(1, tb - ta)
    return trace[-1][1] if trace and t > trace[-1][0] else (trace[0][1] if trace else 0)


def run(hz, variant):
    name = "capture_rate_%dhz_%s" % (hz, variant)
    if not privileged(name):
        return
    c = Checker(name)
    wl, pid = start_workload([os.path.join(WL, "spin-" + variant), str(SECONDS + 3)])
    try:
        # on a shared machine, help the spinner get its whole core; the
        # CPU-time expectation printed below tells contention from loss
        try:
            os.setpriority(os.PRIO_PROCESS, pid, -10)
        except OSError:
            pass
        with tempfile.TemporaryDirectory() as d:
            raw = os.path.join(d, "ev.raw")
            text = text_ranges(pid, "spin-" + variant)
            stack = text_ranges(pid, "[stack]", perm="")
            with open("/proc/%d/stat" % pid) as f:
                startstack = int(f.read().rsplit(")", 1)[1].split()[25])
            # the target's CPU time, sampled every 10 ms on CLOCK_MONOTONIC
            # (the clock of the events), to know how much CPU it got while
            # sfprof was attached: from its first to its last sample
            trace, done = [], threading.Event()

            def sample_cpu():
                while not done.is_set():
                    trace.append((time.monotonic_ns(), task_cpu_ns(pid)))
                    time.sleep(0.01)
            th = threading.Thread(target=sample_cpu)
            th.start()
            try:
                r = subprocess.run([SFPROF, "-p", str(pid), "-F", str(hz), "-d", str(SECONDS),
                                    "--stats", "--dump-events", raw, "-o", os.path.join(d, "out")],
                                   capture_output=True, text=True, timeout=60)
            finally:
                done.set()
                th.join()
            if not c.check(r.returncode == 0, "sfprof exited %d: %s" % (r.returncode, r.stderr.strip())):
                return c.done()
            st = parse_stats(r.stderr)
            evs = read_events(raw)
            if evs:
                t0, t1 = min(e.ts for e in evs), max(e.ts for e in evs)
                cpu = (cpu_at(trace, t1) - cpu_at(trace, t0)) / 1e9 + 1.0 / hz
            else:  # nothing sampled: the CPU it got during the whole run
                cpu = (trace[-1][1] - trace[0][1]) / 1e9 if trace else 0.0
    finally:
        wl.kill()
        wl.wait()
    want = SECONDS * hz
    n = st.get("events_cpu", -1)
    print("# %s: events_cpu %d, expected %d (issue) or %.0f (target on-CPU %.3f s while attached x %d Hz); "
          "lost %d, kernel-mode %d" % (name, n, want, cpu * hz, cpu, hz,
                                      st.get("lost_total", -1), st.get("kernel_mode_samples", -1)))
    # sampling correctness independent of contention: one sample per
    # 1/Hz of CPU the target actually got while attached. When the target
    # only runs part of the time, whether it is on the CPU at each tick is
    # a coin toss: allow 3 standard deviations where that exceeds 10%.
    c2 = Checker(name + "_matches_target_cpu_time")
    exp = cpu * hz
    tol = max(exp * 0.10, 3 * exp ** 0.5)
    c2.check(abs(n - exp) <= tol,
             "events_cpu %d not within %.0f of target CPU time x Hz = %.0f" % (n, tol, exp))
    c2.done()
    c.check(abs(n - want) <= want * 0.10,
            "events_cpu %d not within 10%% of %d (target CPU time x Hz = %.0f)" % (n, want, cpu * hz))
    c.check(len(evs) == n, "dump holds %d events, --stats says %d" % (len(evs), n))
    c.check(st.get("lost_total", -1) == 0, "lost_total = %s" % st.get("lost_total"))
    bad_tid = [e.tid for e in evs if e.tid != pid or e.pid != pid]
    c.check(not bad_tid, "events from tids other than the target's %d: %s" % (pid, sorted(set(bad_tid))[:5]))
    c.check(all(e.kind == EV_CPU and e.weight == 1 for e in evs), "a record is not a cpu sample of weight 1")
    regs = [e for e in evs if not e.flags & EVF_NO_USER_REGS]
    c.check(len(regs) == len(evs), "%d events without user registers" % (len(evs) - len(regs)))
    c.check(all(e.stack_len > 0 and e.regs["sp"] for e in regs), "an event has an empty stack snapshot")
    # the copy ends at the main stack's frame top, argc's address (the
    # initial SP, /proc/PID/stat field 28) + 64 bytes, when that lies
    # within 64 KiB of SP (it does for a spinner), else at SP + 65528 or
    # the end of [stack]; argc (2) is the word at the frame top
    def want_len(e):
        sp = e.regs["sp"]
        return min(65528, startstack + 64 - sp if sp < startstack + 64 else 65528,
                   *[hi - sp for lo, hi in stack if lo <= sp < hi])
    short = [e for e in regs if e.stack_len != want_len(e)]
    c.check(stack and not short, "%d snapshots do not end at min(SP + 65528, startstack + 64, "
            "end of [stack]) %s" % (len(short), [(hex(e.regs["sp"]), e.stack_len, want_len(e))
                                                  for e in short[:3]]))
    at_top = [e for e in regs if e.regs["sp"] + e.stack_len == startstack + 64]
    c.check(all(e.flags & EVF_STACK_TOP for e in at_top) and at_top,
            "%d of %d snapshots ending at the frame top are flagged STACK_TOP" % (
                sum(1 for e in at_top if e.flags & EVF_STACK_TOP), len(at_top)))
    argc = [struct.unpack_from("<Q", e.stack, startstack - e.regs["sp"])[0] for e in at_top]
    c.check(argc and all(a == 2 for a in argc), "the word at startstack is not argc=2: %s" % (
        sorted(set(argc))[:5]))
    in_text = sum(1 for e in regs if any(lo <= e.regs["ip"] < hi for lo, hi in text))
    c.check(in_text >= 0.9 * max(1, len(regs)),
            "only %d of %d user IPs in the spinner's text" % (in_text, len(regs)))
    c.done()


if __name__ == "__main__":
    for hz in (99, 999):
        run(hz, "sframe")

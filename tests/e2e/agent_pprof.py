#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""sfprof agent's pprof routes, fetched by real clients: upstream pprof
(built from Debian's golang-github-google-pprof-dev) and `go tool pprof`
fetch /debug/pprof/profile?seconds=3&pid=P from a running whole-machine
agent while P spins; P's samples are 99 Hz x its CPU time in the window
the profile says it covers (+-15%), each labelled with pid, tid, thread,
process, exe and cgroup. /debug/pprof/block shows a sleeper's time off CPU
and /debug/pprof/mutex a lock waiter's futex waits (count and ns). A
window past --retention waits for the slices that complete it."""
import os
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import libagent as la  # noqa: E402
import libcapture as lc  # noqa: E402
import libsurface as ls  # noqa: E402

WL = os.path.join(la.BUILD, "workloads")


def cpu_check(c, name, text, pid, clock, exe):
    t0, dur = la.raw_header(text)
    if not c.check(t0 is not None, "%s: no Time/Duration in -raw output: %s" % (name, text[:300])):
        return
    c.check(abs(dur - 3) < 0.01, "%s: Duration: expected 3 s, got %s" % (name, dur))
    samples = la.raw_samples(text)
    mine = [(v, lab) for v, lab in samples if lab.get("pid") == str(pid)]
    others = [v for v, lab in samples if lab.get("pid") != str(pid)]
    c.check(not others, "%s: pid=%d kept other processes' samples (%d)" % (name, pid, len(others)))
    got = sum(v[0] for v, _ in mine)
    a, b = clock.at(t0), clock.at(t0 + int(dur * 1e9))
    if not c.check(a is not None and b is not None,
                   "%s: window [%d, +%g s] outside the CPU clock's samples" % (name, t0, dur)):
        return
    want = (b - a) / 1e9 * 99
    c.check(want > 30 and abs(got - want) <= 0.15 * want,
            "%s: samples of pid %d: expected 99 Hz x %.2f s CPU = %.0f +-15%%, got %d"
            % (name, pid, (b - a) / 1e9, want, got))
    for _, lab in mine[:50]:
        for k in ("tid", "thread", "process", "exe", "cgroup"):
            c.check(k in lab, "%s: a sample without label %s: %s" % (name, k, lab))
        c.check(lab.get("exe") == exe, "%s: exe label %r, expected %r" % (name, lab.get("exe"), exe))
        c.check(lab.get("process") == "spin-sframe", "%s: process label %r" % (name, lab.get("process")))
        if c.errors:
            break


def test_profile_of_a_pid_should_be_99hz_times_its_cpu_time_with_labels():
    name = "profile_of_a_pid_should_be_99hz_times_its_cpu_time_with_labels"
    if not lc.privileged(name):
        return True
    upprof = ls.upprof()
    if not upprof:
        return la.skip(name, "upstream pprof cannot be built (golang-github-google-pprof-dev)")
    c = lc.Checker(name)
    exe = os.path.join(WL, "spin-sframe")
    spin, pid = lc.start_workload([exe, "40"])
    clock = la.CpuClock(pid)
    stop = threading.Event()

    def sampler():
        while not stop.is_set():
            clock.sample()
            time.sleep(0.05)

    th = threading.Thread(target=sampler)
    th.start()
    ag = None
    try:
        ag = la.Agent(["-e", "cpu"])
        time.sleep(4.5)  # three whole slices inside the clock's samples
        url = "%s/debug/pprof/profile?seconds=3&pid=%d" % (ag.base, pid)
        rc, text = la.pprof_fetch([upprof], url)
        if c.check(rc == 0, "upstream pprof failed: %s" % text[-400:]):
            cpu_check(c, "upstream pprof", text, pid, clock, exe)
        # as a user runs it: pprof also posts to /debug/pprof/symbol
        rc, text = la.pprof_fetch(["go", "tool", "pprof"], url, symbolize=True)
        if c.check(rc == 0, "go tool pprof failed: %s" % text[-400:]):
            cpu_check(c, "go tool pprof", text, pid, clock, exe)
        time.sleep(0.2)
    finally:
        stop.set()
        th.join()
        if ag:
            rc, secs = ag.stop()
            c.check(rc == 0, "agent exit status %d: %s" % (rc, ag.stderr()[-300:]))
        spin.kill()
        spin.wait()
    return c.done()


def value_of(text, pid, leaf_fn, index):
    """Sum of value `index` of pid's samples; of those whose stack holds
    leaf_fn (by -raw's Locations); all of pid's."""
    samples = la.raw_samples(text)
    return sum(v[index] for v, lab in samples if lab.get("pid") == str(pid))


def test_block_and_mutex_should_show_the_sleeper_and_the_lock_waits():
    name = "block_and_mutex_should_show_the_sleeper_and_the_lock_waits"
    if not lc.privileged(name):
        return True
    c = lc.Checker(name)
    off = subprocess.Popen([os.path.join(WL, "offcpu-sframe"), "30"], stdout=subprocess.PIPE,
                           text=True)
    mtx = subprocess.Popen([os.path.join(WL, "mutex-sframe"), "300", "50"],
                           stdout=subprocess.DEVNULL)
    ag = None
    try:
        ag = la.Agent(["-e", "offcpu,futex"])
        time.sleep(4)
        st, body = ag.get("/debug/pprof/block?seconds=3&pid=%d" % off.pid)
        c.check(st == 200, "block: status %d" % st)
        pb = os.path.join(ls.tmpdir("sfprof-agent-block-"), "block.pb.gz")
        open(pb, "wb").write(body)
        samples, raw = ls.pprof_raw(pb, 1)
        c.check("nanoseconds" in raw, "block: no nanoseconds sample type: %s" % raw[:300])
        # the sleeper (clock_nanosleep 100 ms at a time) is off CPU the whole window
        sleep_ns = sum(v for v, names in samples if any("sleep_block" in n for n in names))
        c.check(2.4e9 <= sleep_ns <= 3.6e9,
                "block: sleep_block off CPU %.2f s of a 3 s window, expected ~3" % (sleep_ns / 1e9))
        st, body = ag.get("/debug/pprof/mutex?seconds=3&pid=%d" % mtx.pid)
        c.check(st == 200, "mutex: status %d" % st)
        pm = os.path.join(ls.tmpdir("sfprof-agent-mutex-"), "mutex.pb.gz")
        open(pm, "wb").write(body)
        counts, raw = ls.pprof_raw(pm, 0)
        waits, _ = ls.pprof_raw(pm, 1)
        n = sum(v for v, names in counts if any("waiter" in x for x in names))
        ns = sum(v for v, names in waits if any("waiter" in x for x in names))
        # the waiter waits ~50 ms per round, one round every ~50 ms + naps
        c.check(n >= 10, "mutex: %d waits in waiter() in 3 s, expected >= 10" % n)
        c.check(0.5e9 <= ns <= 3.1e9, "mutex: waiter() waited %.2f s in 3 s" % (ns / 1e9))
        c.check("count" in raw and "nanoseconds" in raw, "mutex: sample types: %s" % raw[:200])
        st, body = ag.get("/debug/pprof/profile?seconds=1")
        c.check(st == 404 and b"-e cpu" in body, "profile without -e cpu: %d %r" % (st, body))
    finally:
        if ag:
            ag.stop()
        for p in (off, mtx):
            p.kill()
            p.wait()
    return c.done()


def test_seconds_past_the_retention_should_wait_for_the_data():
    name = "seconds_past_the_retention_should_wait_for_the_data"
    if not lc.privileged(name):
        return True
    c = lc.Checker(name)
    ag = la.Agent(["-e", "cpu", "--retention", "2"])
    try:
        time.sleep(2.5)
        t = time.time()
        st, body = ag.get("/debug/pprof/profile?seconds=2")
        fast = time.time() - t
        c.check(st == 200 and fast < 1, "seconds=2 of 2 held: %d in %.2f s" % (st, fast))
        t = time.time()
        st, body = ag.get("/debug/pprof/profile?seconds=5")
        slow = time.time() - t
        pb = os.path.join(ls.tmpdir("sfprof-agent-wait-"), "p.pb.gz")
        open(pb, "wb").write(body)
        ls.pprof_raw(pb, 0)  # (raises unless pprof reads it)
        dur = la.pprof_times(body)[1] / 1e9
        c.check(st == 200, "seconds=5: status %d" % st)
        # 2 s held (the newest slice ends up to 1.1 s ago), 3 more to come
        c.check(1.8 <= slow <= 6, "seconds=5 with --retention 2 answered in %.2f s" % slow)
        c.check(abs(dur - 5) < 1e-6, "seconds=5 covers %s s" % dur)
    finally:
        rc, secs = ag.stop()
    c.check(rc == 0, "agent exit %d" % rc)
    return c.done()


if __name__ == "__main__":
    sys.exit(la.run_tests(globals()))

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""sfprof agent ends at SIGTERM and SIGINT: exit 0 within 3 s, with the
last, partial --interval profile written beside the whole ones (each a
pprof whose duration is its interval's), also while a profile request is
still waiting for its data; without --interval, -o gets the retention
held at the exit."""
import os
import signal
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


def durations(files):
    """Each file's duration in seconds (after upstream pprof parses it)."""
    out = []
    for f in files:
        ls.pprof_raw(f, 0)  # (raises unless pprof reads it)
        out.append(la.pprof_times(open(f, "rb").read())[1] / 1e9)
    return out


def run_until(sig, name):
    if not lc.privileged(name):
        return True
    c = lc.Checker(name)
    tmp = ls.tmpdir("sfprof-agent-sig-")
    spin = subprocess.Popen([os.path.join(WL, "spin-sframe"), "20"], stdout=subprocess.DEVNULL)
    ag = la.Agent(["-e", "cpu", "--interval", "2", "-o", os.path.join(tmp, "p-%t.pb.gz")])
    try:
        # two whole intervals (written at their ends), then half of the third
        end = time.time() + 15
        while time.time() < end and len([f for f in os.listdir(tmp) if f.endswith(".gz")]) < 2:
            time.sleep(0.05)
        time.sleep(0.7)
        # a request that waits (seconds past what is held) while the agent ends
        waiting = []
        th = threading.Thread(target=lambda: waiting.append(
            ag.get("/debug/pprof/profile?seconds=60", timeout=20)))
        th.start()
        time.sleep(0.3)
        rc, secs = ag.stop(sig)
        th.join(timeout=10)
    finally:
        spin.kill()
        spin.wait()
    c.check(rc == 0, "exit status %d after %s: %s" % (rc, sig.name, ag.stderr()[-300:]))
    c.check(secs < 3, "%s: exited after %.2f s, expected < 3" % (sig.name, secs))
    c.check(waiting and waiting[0][0] in (200, 503), "the waiting request got %s" % waiting[:1])
    files = sorted(os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith(".pb.gz"))
    c.check(len(files) >= 3, "%d interval files, expected >= 3: %s" % (len(files), files))
    if len(files) >= 3:
        d = durations(files)
        c.check(all(abs(x - 2) < 1e-6 for x in d[:-1]), "whole intervals last %s" % d)
        c.check(0 < d[-1] < 2, "the last, partial interval lasts %s s" % d[-1])
    return c.done()


def test_sigterm_should_exit_0_and_write_the_last_interval():
    return run_until(signal.SIGTERM, "sigterm_should_exit_0_and_write_the_last_interval")


def test_sigint_should_exit_0_and_write_the_last_interval():
    return run_until(signal.SIGINT, "sigint_should_exit_0_and_write_the_last_interval")


def test_output_without_interval_should_get_the_retention_at_exit():
    name = "output_without_interval_should_get_the_retention_at_exit"
    if not lc.privileged(name):
        return True
    c = lc.Checker(name)
    out = os.path.join(ls.tmpdir("sfprof-agent-ret-"), "last.pb.gz")
    ag = la.Agent(["-e", "cpu", "--retention", "3", "-o", out])
    time.sleep(4.5)
    rc, secs = ag.stop()
    c.check(rc == 0 and secs < 3, "exit %d after %.2f s" % (rc, secs))
    if c.check(os.path.exists(out), "no %s" % out):
        d = durations([out])[0]
        c.check(3 <= d <= 4.2, "the retention written covers %s s, expected 3-4" % d)
    return c.done()


if __name__ == "__main__":
    sys.exit(la.run_tests(globals()))

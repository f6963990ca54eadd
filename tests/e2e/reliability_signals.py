#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Signals (issue 12): SIGHUP (a dropped ssh session) ends a live run like
SIGINT, writes the profile and exits 0; a SIGKILLed sfprof leaves no
-- COMMAND running (PR_SET_PDEATHSIG)."""
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from libunwind import SFPROF as BUILT, WL  # noqa: E402

SFPROF = os.environ.get("SFPROF", BUILT)
SPIN = os.path.join(WL, "spin-sframe")


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def alive(pid):
    """Running (not gone, not a zombie)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_for_child(p, timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        c = children(p.pid)
        if c:
            return c[0]
        time.sleep(0.05)
    return None


def sighup_writes_profile(d):
    name = "reliability_signals_sighup_writes_profile"
    out = os.path.join(d, "hup.folded")
    p = subprocess.Popen([SFPROF, "-F", "199", "-o", out, "--", SPIN, "30"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    child = wait_for_child(p)
    time.sleep(1.5)
    p.send_signal(signal.SIGHUP)
    try:
        _, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        print("FAIL %s: sfprof still running 30 s after SIGHUP" % name)
        return
    if child and alive(child):
        os.kill(child, signal.SIGKILL)
    lines = []
    if os.path.exists(out):
        lines = [ln for ln in open(out) if ln.strip()]
    ok_lines = all(ln.rsplit(" ", 1)[-1].strip().isdigit() for ln in lines)
    if p.returncode != 0 or not lines or not ok_lines or \
            not any("spin_leaf" in ln for ln in lines):
        print("FAIL %s: exit %d, %d lines in %s: %s"
              % (name, p.returncode, len(lines), out, err.decode()[-300:]))
    else:
        print("PASS %s (%d stacks)" % (name, len(lines)))


def sigkill_leaves_no_command():
    name = "reliability_signals_sigkill_leaves_no_command"
    p = subprocess.Popen([SFPROF, "-F", "99", "-o", "/dev/null", "--", "sleep", "30"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    child = wait_for_child(p)
    if not child:
        p.kill()
        p.wait()
        print("FAIL %s: no child of sfprof seen" % name)
        return
    time.sleep(1.0)  # past exec: the child is `sleep` now
    p.kill()
    p.wait()
    end = time.time() + 5
    while alive(child) and time.time() < end:
        time.sleep(0.05)
    if alive(child):
        os.kill(child, signal.SIGKILL)
        print("FAIL %s: the command (pid %d) outlived a SIGKILLed sfprof" % (name, child))
    else:
        print("PASS %s" % name)


def main():
    if os.geteuid() != 0:
        print("SKIP reliability_signals: needs root (BPF)")
        return
    with tempfile.TemporaryDirectory(prefix="sfprof-signals-") as d:
        sighup_writes_profile(d)
        sigkill_leaves_no_command()


if __name__ == "__main__":
    main()

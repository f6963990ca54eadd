#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Scopes and short lives: -a sees every process (a spinner at its rate,
a storm of 20 ms processes symbolized), --cgroup only its subtree, a
reused PID never mixes two processes' mappings, and a capture of an -a
run reports what the live run showed."""
import os
import shutil
import subprocess
import tempfile
import time

from libcapture import (SFPROF, WL, Checker, by_root, folded_counts, parse_stats, privileged,
                        task_cpu_ns)

SPIN = os.path.join(WL, "spin-sframe")
SPIN_EH = os.path.join(WL, "spin-ehframe")
SHORT = os.path.join(WL, "shortlived-sframe")


def all_sees_spinner_and_short_processes():
    name = "targets_scope_all_sees_a_spinner_and_a_storm_of_20ms_processes"
    if not privileged(name):
        return
    c = Checker(name)
    spin = subprocess.Popen([SPIN, "6"], stdout=subprocess.PIPE, text=True)
    spid = int(spin.stdout.readline().split()[1])
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "all.folded")
        s = subprocess.Popen([SFPROF, "-a", "-d", "4", "--per-process", "--stats", "-o", out],
                             stderr=subprocess.PIPE, text=True)
        # attached by then: the BPF programs' load takes about 0.7 s, more
        # under ASan (make check)
        time.sleep(2)
        cpu0 = task_cpu_ns(spid)
        # 40 processes of 20 ms each, one after another: ~80 samples
        storm = subprocess.run([SHORT, "-s", "40", "20"], timeout=60)
        cpu1 = task_cpu_ns(spid)
        _, err = s.communicate(timeout=60)
        st = parse_stats(err)
        c.check(s.returncode == 0, "exit %d: %s" % (s.returncode, err.strip()[-300:]))
        c.check(storm.returncode == 0, "storm exit %d" % storm.returncode)
        if not os.path.exists(out):
            c.check(False, "no profile written: %s" % err.strip()[-600:])
            spin.wait()
            return c.done()
        stacks = folded_counts(out)
        roots = by_root(stacks)
        # the spinner at 99 Hz of its CPU time while sfprof ran (measured
        # from after attach: the samples before it count, so a floor)
        spun = roots.get("spin-sframe-%d" % spid, 0)
        want = (cpu1 - cpu0) / 1e9 * 99
        c.check(spun >= 0.9 * want and want > 10,
                "spinner has %d samples for %.0f expected from its CPU time at 99 Hz" %
                (spun, want))
        # (a sample may fall in its start or its exit: 95%)
        leaf = sum(n for k, n in stacks.items()
                   if k.startswith("spin-sframe-%d;" % spid) and "spin_leaf" in k)
        c.check(spun and leaf >= 0.95 * spun, "%d of %d spinner samples in spin_leaf" %
                (leaf, spun))
        # the short processes run as "exe" (exec of /proc/self/exe)
        short = {k: n for k, n in stacks.items() if k.startswith("exe-")}
        tot = sum(short.values())
        named = sum(n for k, n in short.items() if "short_work" in k or "burn" in k or "_dl_" in k
                    or "_start" in k.split(";")[1:2])
        c.check(tot >= 20, "only %d samples of 40 x 20 ms processes" % tot)
        c.check(tot and named >= 0.9 * tot,
                "%d of %d samples of short processes symbolized" % (named, tot))
        # a frame in no mapping of a complete stack: a process whose
        # mappings were missed (a truncated stack may end in a bad address)
        unknown = [k for k in stacks if "[unknown]" in k and "[truncated]" not in k]
        c.check(not unknown, "an [unknown] frame: %s" % unknown[:2])
        c.check(str(os.getpid()) and not any(r.startswith("sfprof-%d" % s.pid) for r in roots),
                "sfprof profiled itself")
        c.check(st.get("processes_followed", 0) >= 40,
                "processes_followed %s" % st.get("processes_followed"))
    spin.wait()
    c.done()


def cgroup_root():
    with open("/proc/mounts") as f:
        for line in f:
            p = line.split()
            if len(p) > 2 and p[2] == "cgroup2":
                return p[1]
    return None


def cgroup_in_and_out():
    name = "targets_scope_cgroup_profiles_inside_not_outside"
    if not privileged(name):
        return
    root = cgroup_root()
    if not root:
        print("SKIP %s: no cgroup2 mount in /proc/mounts" % name)
        return
    c = Checker(name)
    cg = os.path.join(root, "sfprof-test-%d" % os.getpid())
    child = os.path.join(cg, "child")
    try:
        os.makedirs(child)
    except OSError as e:
        print("SKIP %s: cannot make a cgroup under %s: %s" % (name, root, e))
        return
    inside = subprocess.Popen([SPIN, "3"], stdout=subprocess.PIPE, text=True)
    outside = subprocess.Popen([SPIN_EH, "3"], stdout=subprocess.PIPE, text=True)
    pin = int(inside.stdout.readline().split()[1])
    pout = int(outside.stdout.readline().split()[1])
    try:
        # a child cgroup: the subtree counts
        with open(os.path.join(child, "cgroup.procs"), "w") as f:
            f.write(str(pin))
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "cg.folded")
            r = subprocess.run([SFPROF, "--cgroup", cg, "-d", "1.5", "--per-process", "-o", out],
                               capture_output=True, text=True, timeout=60)
            c.check(r.returncode == 0, "exit %d: %s" % (r.returncode, r.stderr.strip()))
            roots = by_root(folded_counts(out))
            c.check(roots.get("spin-sframe-%d" % pin, 0) >= 30,
                    "inside: %s samples (roots %s)" % (roots.get("spin-sframe-%d" % pin), roots))
            c.check(not any(k.startswith("spin-ehframe") for k in roots),
                    "the process outside was profiled: %s" % roots)
            c.check(set(roots) == {"spin-sframe-%d" % pin}, "other roots: %s" % sorted(roots))
    finally:
        for p in (inside, outside):
            p.kill()
            p.wait()
        try:
            with open(os.path.join(root, "cgroup.procs"), "w") as f:
                pass
        except OSError:
            pass
        for dd in (child, cg):
            for _ in range(50):
                try:
                    os.rmdir(dd)
                    break
                except OSError:
                    time.sleep(0.05)
    c.done()


def start_with_pid(argv, want):
    """Start argv as process `want` (a reused PID), through ns_last_pid."""
    for _ in range(20):
        try:
            with open("/proc/sys/kernel/ns_last_pid", "w") as f:
                f.write(str(want - 1))
        except OSError:
            return None
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        if p.pid == want:
            return p
        p.kill()
        p.wait()
    return None


def reused_pid_never_mixes():
    name = "targets_scope_a_reused_pid_never_mixes_two_processes"
    if not privileged(name):
        return
    c = Checker(name)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "reuse.folded")
        s = subprocess.Popen([SFPROF, "-a", "-d", "3", "--per-process", "-o", out],
                             stderr=subprocess.PIPE, text=True)
        time.sleep(0.8)
        first = subprocess.Popen([SPIN, "0.6"], stdout=subprocess.PIPE, text=True)
        pid = first.pid
        first.wait()
        second = start_with_pid([SHORT, "600"], pid)
        if not second:
            s.kill()
            s.wait()
            print("SKIP %s: could not make PID %d come back (ns_last_pid)" % (name, pid))
            return
        second.wait()
        _, err = s.communicate(timeout=60)
        c.check(s.returncode == 0, "exit %d: %s" % (s.returncode, err.strip()[-300:]))
        stacks = folded_counts(out)
        a = {k: n for k, n in stacks.items() if k.startswith("spin-sframe-%d;" % pid)}
        b = {k: n for k, n in stacks.items() if k.startswith("shortlived-sfra-%d;" % pid)}
        c.check(sum(a.values()) >= 10 and sum(b.values()) >= 10,
                "samples of the two processes of PID %d: %d and %d" %
                (pid, sum(a.values()), sum(b.values())))
        # each one's frames come from its own binary: never the other's
        # functions, never an unnamed address in its own executable
        for what, st, own, other in (("first", a, "spin-sframe+0x", ("short_work", "burn")),
                                     ("second", b, "shortlived-sframe+0x", ("spin_leaf", "spin_mid"))):
            bad = [k for k in st if any(f in k.split(";") for f in other) or own in k]
            c.check(not bad, "%s process has frames of another binary: %s" % (what, bad[:2]))
        c.check(sum(n for k, n in a.items() if "spin_leaf" in k) >= 0.8 * sum(a.values()),
                "first process: spin_leaf in too few samples: %s" % list(a)[:3])
        c.check(sum(n for k, n in b.items() if "short_work" in k) >= 0.8 * sum(b.values()),
                "second process: short_work in too few samples: %s" % list(b)[:3])
    c.done()


def all_record_reports_as_live():
    name = "targets_scope_all_record_then_report_equals_live"
    if not privileged(name):
        return
    c = Checker(name)
    with tempfile.TemporaryDirectory() as d:
        cap, live, rep = (os.path.join(d, x) for x in ("a.sfcap", "live.folded", "rep.folded"))
        env = dict(os.environ, SFPROF_RECORD_PROFILE=live)
        s = subprocess.Popen([SFPROF, "record", "-a", "-d", "2", "-o", cap],
                             stderr=subprocess.PIPE, text=True, env=env)
        time.sleep(0.8)
        subprocess.run([SHORT, "-s", "20", "20"], timeout=60)
        _, err = s.communicate(timeout=60)
        c.check(s.returncode == 0, "record exit %d: %s" % (s.returncode, err.strip()[-300:]))
        r = subprocess.run([SFPROF, "report", "-o", rep, cap],
                           capture_output=True, text=True, timeout=120)
        c.check(r.returncode == 0, "report exit %d: %s" % (r.returncode, r.stderr.strip()[-300:]))
        a = open(live).read() if os.path.exists(live) else ""
        b = open(rep).read() if os.path.exists(rep) else ""
        c.check(a and a == b, "report differs from live (%d vs %d lines)" %
                (len(a.splitlines()), len(b.splitlines())))
        short = sum(n for k, n in (folded_counts(rep) if b else {}).items()
                    if k.startswith("exe;") and ("short_work" in k or "burn" in k))
        c.check(short >= 5, "only %d samples of the short processes in the report" % short)
    c.done()


if __name__ == "__main__":
    all_sees_spinner_and_short_processes()
    cgroup_in_and_out()
    reused_pid_never_mixes()
    all_record_reports_as_live()

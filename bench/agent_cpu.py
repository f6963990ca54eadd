#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CPU of the always-on whole-machine mode, side by side with perf:
`sfprof -a -e cpu,offcpu -F 99 -d SECONDS -o DIR/x.pb.gz` and
`perf record -a -g -F 99 -o DIR/perf.data -- sleep SECONDS` run at the
same time, each round once on the machine as it is ("quiet": nothing
started by this script) and once while it churns (RATE short processes
a second, default 10, each burning 2 ms in shortlived-sframe, and a new
binary every second: bench/agent_mem.py's Churn). CPU is each tool's
own user + system time (wait4's rusage, its exit and output included),
as a share of one core over the run; medians of ROUNDS rounds, and
sfprof's ratio to perf in the same round. "steady" is sfprof's CPU
from 5 s into the run to 2 s before its end (/proc/PID/stat, all its
threads), the always-on rate without the start (BPF load and verifier)
and the output written at the end; "us/event" is the whole run's CPU
per event handled (off-CPU events + samples).
  Usage: bench/agent_cpu.py [ROUNDS [SECONDS [RATE]]]   (default 3 30 10)
The machine is shared: report its load (printed) beside the figures.
SFPROF=/path measures another build; SFPROF_BASE=/path also runs that
build in each round, right before SFPROF, in the same phase and churn
(before and after side by side).
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True
from agent_mem import Churn  # noqa: E402
from soaklib import SFPROF  # noqa: E402


def proc_cpu(pid):
    """User + system seconds of pid's threads so far (/proc/PID/stat)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            v = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(v[11]) + int(v[12])) / os.sysconf("SC_CLK_TCK")


def steady_cpu(pid, secs, out):
    """sfprof's share of a core from 5 s in to 2 s before the end."""
    if secs < 10:
        return
    time.sleep(5)
    a, t0 = proc_cpu(pid), time.monotonic()
    time.sleep(secs - 7)
    b, t1 = proc_cpu(pid), time.monotonic()
    if a is not None and b is not None:
        out["steady"] = (b - a) / (t1 - t0) * 100


def run_pair(tmp, secs, sfprof=SFPROF):
    """sfprof and perf over the same secs; their CPU seconds and sfprof's stats."""
    sf = subprocess.Popen([sfprof, "-a", "-e", "cpu,offcpu", "-F", "99", "-d", str(secs),
                           "--quiet", "--stats", "-o", os.path.join(tmp, "x.pb.gz")],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    pf = subprocess.Popen(["perf", "record", "-a", "-g", "-F", "99", "-q",
                           "-o", os.path.join(tmp, "perf.data"), "--", "sleep", str(secs)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = {}
    th = threading.Thread(target=steady_cpu, args=(sf.pid, secs, out))
    th.start()
    err = sf.stderr.read()
    th.join()
    for name, p in (("sfprof", sf), ("perf", pf)):
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        out[name] = ru.ru_utime + ru.ru_stime
    if sf.returncode != 0 or pf.returncode != 0:
        # the shared machine's other tests cut files short under -a's
        # feet (a SIGBUS until the reliability work lands): say so, retry
        print("# sfprof exited %d, perf %d: round retried (%s)" % (
            sf.returncode, pf.returncode, err.strip()[-200:]))
        return None, None
    st = {}
    for line in err.splitlines():
        k, sep, v = line.partition(": ")
        if sep and v.strip().isdigit():
            st[k] = int(v)
    return out, st


def main():
    a = sys.argv[1:]
    rounds = int(a[0]) if len(a) > 0 else 3
    secs = float(a[1]) if len(a) > 1 else 30
    rate = int(a[2]) if len(a) > 2 else 10
    if os.geteuid() != 0:
        print("agent_cpu: SKIP: needs root")
        return 0
    if not shutil.which("perf"):
        print("agent_cpu: SKIP: no perf")
        return 0
    print("# %s -a -e cpu,offcpu -F 99 -d %g beside perf record -a -g -F 99; churn: %d "
          "processes/s (2 ms each), a new binary every second; %d rounds" % (
              SFPROF, secs, rate, rounds))
    if os.environ.get("SFPROF_BASE"):
        print("# before: %s, run right before it in each round" % os.environ["SFPROF_BASE"])
    base = os.environ.get("SFPROF_BASE")
    builds = ([("before", base)] if base else []) + [("after" if base else "sfprof", SFPROF)]
    res = {(b, ph): [] for b, _ in builds for ph in ("quiet", "churn")}
    tmp = tempfile.mkdtemp(prefix="agent_cpu.")
    try:
        for r in range(rounds):
            for phase in ("quiet", "churn"):
                churn = None
                if phase == "churn":
                    churn = Churn(tmp, rate, 2)
                    churn.start()
                for label, path in builds:
                    load0 = os.getloadavg()[0]
                    for _ in range(3):
                        cpu, st = run_pair(tmp, secs, path)
                        if cpu:
                            break
                    if not cpu:
                        sys.exit("agent_cpu: three failed runs in a row")
                    ev = st.get("events_offcpu", 0) + st.get("events_cpu", 0)
                    res[(label, phase)].append((
                        cpu["sfprof"] / secs * 100, cpu["perf"] / secs * 100,
                        st.get("samples_seen", 0), st.get("events_offcpu", 0),
                        st.get("lost_total", 0), load0, churn.started if churn else 0,
                        cpu.get("steady", 0.0), 1e6 * cpu["sfprof"] / ev if ev else 0.0))
                    v = res[(label, phase)][-1]
                    print("round %d %s %s: sfprof %.2f%% (steady %.2f%%, %.1f us/event), perf "
                          "%.2f%% of a core; samples %d, offcpu events %d, lost %d; load %.1f; "
                          "%d processes started" % (r + 1, phase, label, v[0], v[7], v[8], v[1],
                                                    v[2], v[3], v[4], v[5], v[6]))
                    sys.stdout.flush()
                if churn:
                    churn.stop.set()
                    churn.join()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("| build | machine | sfprof CPU | steady | us/event | perf record CPU | "
          "sfprof / perf | lost / samples | load avg |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, _ in builds:
        for phase in ("quiet", "churn"):
            v = res[(label, phase)]
            med = lambda k: statistics.median(x[k] for x in v)  # noqa: E731
            print("| %s | %s | %.2f%% | %.2f%% | %.1f | %.2f%% | %.2f | %d / %d | %.1f |" % (
                label, phase, med(0), med(7), med(8), med(1),
                statistics.median(x[0] / x[1] if x[1] else 0 for x in v),
                med(4), med(2), med(5)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cost of -e offcpu (BENCHMARKS.md, offcpu).

A. BPF cost per context switch, from the kernel's own accounting
   (kernel.bpf_stats_enabled=1; sfprof --stats prints bpf_run_ns_* and
   bpf_run_cnt_* per program):
   - filtered out: the target sleeps while another process's ping-pong
     switches ~1e6 times, every call returns at the filter (ns per call);
   - recorded: the offcpu workload's pipe ping-pong (both threads on one
     CPU), --min-block 0 (every block copied and sent) and --min-block
     1000 (every block timed, none copied); --wakers --min-block 0 (a
     WAKER record, the waker's user and kernel stacks, per wakeup). The filtered calls are
     subtracted: cost/block = (run_ns - filtered * (run_cnt - blocks)) / blocks.
B. Slowdown of the same ping-pong (round trips a second, each one two
   switches) under sfprof -e offcpu --min-block 1000, sfprof -e offcpu
   (default --min-block 10), and libbpf-tools' offcputime (-m 1, its
   default, and -m 1000), side by side: each attached with -p to a
   running 7 s ping-pong, the median of its per-second rates from second
   3 to 6; rounds interleaved, medians of ROUNDS. With the rate, the
   workload's own CPU time per round trip (both threads, user + kernel:
   the BPF programs run in their context), which the neighbours on a
   shared machine disturb much less than the rate.

Usage: bench/offcpu_cost.py [ROUNDS]   (default 3; root)
"""
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
SFPROF = os.path.join(BUILD, "sfprof")
WL = os.path.join(BUILD, "workloads", "offcpu-sframe")
CPU = "1"


def stats_of(text):
    st = {}
    for line in text.splitlines():
        k, sep, v = line.partition(": ")
        if sep and v.strip().isdigit():
            st[k] = int(v)
    return st


def sfprof(args, cmd):
    r = subprocess.run([SFPROF, "-e", "offcpu", "--stats", "-o", "/dev/null"] + args +
                       ["--"] + cmd, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        sys.exit("sfprof failed (%d): %s" % (r.returncode, r.stderr[-500:]))
    return stats_of(r.stderr)


def per_call(st, prog):
    n = st.get("bpf_run_cnt_" + prog, 0)
    return st.get("bpf_run_ns_" + prog, 0) / n if n else 0.0


def cost(st, prog, filtered, n):
    return (st["bpf_run_ns_" + prog] - filtered * (st["bpf_run_cnt_" + prog] - n)) / n


def bpf_costs(reps):
    # a ping-pong that is not the target: ~1e6 filtered calls, warm
    other = subprocess.Popen(["taskset", "-c", CPU, WL, "4", "storm"], stdout=subprocess.DEVNULL)
    base = sfprof(["--wakers"], ["sleep", "3"])
    other.wait()
    f_out, f_in = per_call(base, "switch_out"), per_call(base, "switch_in")
    f_wake = per_call(base, "waking")
    print("filtered out (other processes' switches): switch_out %.0f ns, switch_in %.0f ns "
          "per call (%d calls); --wakers: sched_waking %.0f ns per call (%d calls)" % (
              f_out, f_in, base.get("bpf_run_cnt_switch_out", 0), f_wake,
              base.get("bpf_run_cnt_waking", 0)))
    for mb in ("0", "1000"):
        outs, ins, bytes_ = [], [], []
        for _ in range(reps):
            st = sfprof(["--min-block", mb], ["taskset", "-c", CPU, WL, "3", "storm"])
            n = st["offcpu_seen"]
            outs.append(cost(st, "switch_out", f_out, n))
            ins.append(cost(st, "switch_in", f_in, n))
            bytes_.append(st["stack_bytes"] / max(1, st["events_offcpu"]))
        print("--min-block %s: switch_out %.0f ns, switch_in %.0f ns per target block "
              "(%d blocks/run, %.0f stack bytes/record, lost %d)" % (
                  mb, statistics.median(outs), statistics.median(ins), n,
                  statistics.median(bytes_), st.get("lost_total", 0)))
    wakes = []
    for _ in range(reps):
        st = sfprof(["--min-block", "0", "--wakers"], ["taskset", "-c", CPU, WL, "3", "storm"])
        n = st["wakers_seen"]
        wakes.append(cost(st, "waking", f_wake, n))
    print("--wakers --min-block 0: sched_waking %.0f ns per waker record (%d a run, "
          "lost %d)" % (statistics.median(wakes), n, st.get("lost_total", 0)))


def rate_under(tool):
    wl = subprocess.Popen(["taskset", "-c", CPU, WL, "7", "storm"], stdout=subprocess.PIPE,
                          text=True)
    pid = int(wl.stdout.readline().split()[1])
    prof = None
    if tool:
        argv = [a.replace("PID", str(pid)) for a in tool]
        prof = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    lines = [l.split() for l in wl.stdout if l.startswith("rate ")]
    wl.wait()
    if prof:
        prof.wait()
    return (statistics.median(float(l[1]) for l in lines[2:6]),
            statistics.median(float(l[3]) for l in lines[2:6]))


def slowdown(rounds):
    tools = [("none", None),
             ("sfprof --min-block 1000", [SFPROF, "-e", "offcpu", "--min-block", "1000", "-p",
                                          "PID", "-d", "6", "-o", "/dev/null", "--quiet"]),
             ("sfprof (--min-block 10)", [SFPROF, "-e", "offcpu", "-p", "PID", "-d", "6", "-o",
                                          "/dev/null", "--quiet"])]
    if shutil.which("offcputime"):
        tools += [("offcputime -m 1000", ["offcputime", "-m", "1000", "-p", "PID", "6"]),
                  ("offcputime (-m 1)", ["offcputime", "-p", "PID", "6"])]
    else:
        print("offcputime: not installed (apt-get install libbpf-tools)")
    res = {name: [] for name, _ in tools}
    for _ in range(rounds):
        for name, argv in tools:
            res[name].append(rate_under(argv))
            time.sleep(0.5)
    base = statistics.median(r[0] for r in res["none"])
    base_cpu = statistics.median(r[1] for r in res["none"])
    print("| profiler | round trips/s | slowdown | CPU ns per round trip | CPU cost |")
    print("|---|---|---|---|---|")
    for name, _ in tools:
        m = statistics.median(r[0] for r in res[name])
        cpu = statistics.median(r[1] for r in res[name])
        print("| %s | %.0f | %+.1f%% | %.0f | %+.1f%% |" % (
            name, m, 100 * (base / m - 1), cpu, 100 * (cpu / base_cpu - 1)))
        print("  (rounds: %s)" % ", ".join("%.0f/%.0f" % r for r in res[name]))


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    if os.geteuid() != 0:
        print("offcpu_cost: SKIP: needs root")
        return 0
    with open("/proc/sys/kernel/bpf_stats_enabled") as f:
        old = f.read().strip()
    with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
        f.write("1")
    try:
        bpf_costs(reps)
    finally:
        with open("/proc/sys/kernel/bpf_stats_enabled", "w") as f:
            f.write(old)
    slowdown(reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cost of -e offcpu (BENCHMARKS.md, offcpu).

A. BPF cost per context switch, from the kernel's own accounting
   (bench/libbench.py: kernel.bpf_stats_enabled=1, run_time_ns/run_cnt):
   - filtered out: the target sleeps while another process's ping-pong
     switches ~1e6 times, every call returns at the filter (ns per call);
   - a target's: the offcpu workload's pipe ping-pong (both threads on
     one CPU), --min-block 0 (every block copied and sent) and
     --min-block 1000 (every block timed, none copied); --wakers
     --min-block 0 (a WAKER record per wakeup). The filtered calls are
     subtracted: cost/block = (run_ns - filtered * (run_cnt - blocks)) / blocks.
B. Slowdown of a pipe ping-pong at 100k context switches a second (the
   issue's workload): `offcpu-sframe 8 storm 0 WORK`, two threads pinned
   to one CPU, each running WORK steps of a multiply-add chain between
   its read and its write. WORK is calibrated first, unprofiled, so that
   a round trip (two switches) costs 20 us of CPU: 50k round trips and
   100k switches a second when the CPU is free. Side by side, each
   attached to a running ping-pong for 7 s: none; sfprof -e offcpu
   --min-block 1000; sfprof -e offcpu (defaults: --min-block 10);
   offcputime -m 1000 and offcputime (its default -m 1) from
   libbpf-tools; perf sched record (whole machine, as it always is).
   Per run, the medians of the workload's per-second figures from second
   3 to 7: round trips a second, and its own CPU time per round trip
   (both threads, user + kernel: the BPF programs and perf's tracepoint
   handlers run in their context), which the neighbours on a shared
   machine disturb much less than the rate. Rounds interleaved (the
   order rotated each round), medians of ROUNDS.
C. The same at the maximum rate (WORK 0): the worst case, where nothing
   but switches happens.

perf sched record needs tracefs: mounted at /sys/kernel/tracing for the
run when it is not, and unmounted after. perf runs with a HOME of its own
(its build-id cache), its perf.data in a temporary directory.

Usage: bench/offcpu_cost.py [ROUNDS]   (default 3; root)
       PARTS=costs,paced,max (the default) selects the parts.
"""
import datetime
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from libbench import SFPROF, WL, bpf_stats, cost, need_root, per_call, sfprof, stats_of

OFFCPU_WL = os.path.join(WL, "offcpu-sframe")
CPU = "1"
TRACEFS = "/sys/kernel/tracing"
RT_NS = 20000          # a round trip's CPU at 100k switches a second
WL_SECS, PROF_SECS = 8, 7
WINDOW = slice(2, 7)   # the per-second lines of seconds 3..7


def offcpu(args, cmd):
    return sfprof(["-e", "offcpu"] + args, cmd, err_tail=500)


def bpf_costs(reps):
    # a ping-pong that is not the target: ~1e6 filtered calls, warm
    other = subprocess.Popen(["taskset", "-c", CPU, OFFCPU_WL, "4", "storm"],
                             stdout=subprocess.DEVNULL)
    base = offcpu(["--wakers"], ["sleep", "3"])
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
            st = offcpu(["--min-block", mb], ["taskset", "-c", CPU, OFFCPU_WL, "3", "storm"])
            n = st["offcpu_seen"]
            outs.append(cost(st, "switch_out", f_out, n))
            ins.append(cost(st, "switch_in", f_in, n))
            bytes_.append(st["stack_bytes"] / max(1, st["events_offcpu"]))
        print("--min-block %s: switch_out %.0f ns, switch_in %.0f ns per target block "
              "(%d blocks/run, %.0f stack bytes/record, lost %d; runs: out %s, in %s)" % (
                  mb, statistics.median(outs), statistics.median(ins), n,
                  statistics.median(bytes_), st.get("lost_total", 0),
                  "/".join("%.0f" % v for v in outs), "/".join("%.0f" % v for v in ins)))
    wakes = []
    for _ in range(reps):
        st = offcpu(["--min-block", "0", "--wakers"],
                    ["taskset", "-c", CPU, OFFCPU_WL, "3", "storm"])
        n = st["wakers_seen"]
        wakes.append(cost(st, "waking", f_wake, n))
    print("--wakers --min-block 0: sched_waking %.0f ns per waker record (%d a run, "
          "lost %d)" % (statistics.median(wakes), n, st.get("lost_total", 0)))


def storm_lines(secs, work, tool=None, env=None):
    """Runs the ping-pong for SECS (with TOOL attached, PID replaced by its
    pid): its per-second [rate, cpu_ns_per_rt, csw_per_s] lines and, for
    a tool run with --stats, the tool's stats."""
    wl = subprocess.Popen(["taskset", "-c", CPU, OFFCPU_WL, str(secs), "storm", "0", str(work)],
                          stdout=subprocess.PIPE, text=True)
    pid = int(wl.stdout.readline().split()[1])
    prof = None
    if tool:
        argv = [a.replace("PID", str(pid)) for a in tool]
        prof = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True, env=env)
    lines = [[float(v) for v in l.split()[1::2]] for l in wl.stdout if l.startswith("rate ")]
    wl.wait()
    st = {}
    if prof:
        err = prof.communicate()[1]
        if prof.returncode != 0:
            sys.exit("%s failed (%d): %s" % (" ".join(tool), prof.returncode, err[-500:]))
        st = stats_of(err)
    return lines, st


def window(lines, w=WINDOW):
    """Medians of (rate, CPU ns per round trip, switches a second)."""
    return tuple(statistics.median(l[i] for l in lines[w]) for i in range(3))


def calibrate():
    """WORK for a round trip of RT_NS of CPU, from two unprofiled runs
    (CPU per round trip is linear in WORK), checked by a third."""
    def at(work):
        return window(storm_lines(3, work)[0], slice(1, None))
    w1 = 4000
    c0, c1 = at(0)[1], at(w1)[1]
    work = max(1, round((RT_NS - c0) * w1 / (c1 - c0)))
    rate, cpu, csw = at(work)
    print("calibration: %.0f ns per round trip at WORK 0, %.0f at %d: WORK %d; "
          "unprofiled check: %.0f round trips/s, %.0f switches/s, %.0f CPU ns per round trip" % (
              c0, c1, w1, work, rate, csw, cpu))
    return work


class Tracefs:
    """tracefs mounted for the block (perf sched record), unmounted after
    if it was mounted here."""
    def __enter__(self):
        self.mounted = False
        if not os.path.ismount(TRACEFS):
            subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS], check=True)
            self.mounted = True
        return self

    def __exit__(self, *exc):
        if self.mounted:
            subprocess.run(["umount", TRACEFS], check=True)


def tools(tmp):
    sf = [SFPROF, "-e", "offcpu", "-p", "PID", "-d", str(PROF_SECS), "-o", "/dev/null",
          "--stats"]
    t = [("none", None, None),
         ("sfprof -e offcpu --min-block 1000", sf + ["--min-block", "1000"], None),
         ("sfprof -e offcpu (defaults: --min-block 10)", sf, None)]
    if shutil.which("offcputime"):
        t += [("offcputime -m 1000", ["offcputime", "-m", "1000", "-p", "PID",
                                      str(PROF_SECS)], None),
              ("offcputime (defaults: -m 1)", ["offcputime", "-p", "PID", str(PROF_SECS)],
               None)]
    else:
        print("offcputime: not installed (apt-get install libbpf-tools)")
    if shutil.which("perf"):
        home = os.path.join(tmp, "home")
        os.makedirs(home, exist_ok=True)
        t += [("perf sched record", ["perf", "sched", "record", "-o",
                                     os.path.join(tmp, "perf.data"), "--", "sleep",
                                     str(PROF_SECS)], dict(os.environ, HOME=home))]
    else:
        print("perf: not installed (apt-get install linux-perf)")
    return t


def slowdown(rounds, work, title):
    print("\n### %s (WORK %d), %d rounds, %s UTC, load average %.1f %.1f %.1f" % (
        title, work, rounds, datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M"),
        *os.getloadavg()))
    with tempfile.TemporaryDirectory(prefix="offcpu-bench.") as tmp, Tracefs():
        ts = tools(tmp)
        res = {name: [] for name, _, _ in ts}
        extra = {name: [] for name, _, _ in ts}
        for r in range(rounds):
            for name, argv, env in ts[r % len(ts):] + ts[:r % len(ts)]:
                lines, st = storm_lines(WL_SECS, work, argv, env)
                res[name].append(window(lines))
                if "offcpu_seen" in st:
                    extra[name].append("%d%% of %d blocks recorded, lost %d" % (
                        100 * st.get("events_offcpu", 0) / max(1, st["offcpu_seen"]),
                        st["offcpu_seen"], st.get("lost_total", 0)))
                data = os.path.join(tmp, "perf.data")
                if os.path.exists(data):
                    extra[name].append("perf.data %.0f MB" % (os.path.getsize(data) / 1e6))
                    os.unlink(data)
                time.sleep(0.5)
    base = statistics.median(v[0] for v in res["none"])
    base_cpu = statistics.median(v[1] for v in res["none"])
    print("load average after: %.1f %.1f %.1f" % os.getloadavg())
    print("| profiler | round trips/s | switches/s | slowdown (rate) | CPU ns per round trip "
          "| CPU cost |")
    print("|---|---|---|---|---|---|")
    for name, _, _ in ts:
        rate = statistics.median(v[0] for v in res[name])
        cpu = statistics.median(v[1] for v in res[name])
        csw = statistics.median(v[2] for v in res[name])
        print("| %s | %.0f | %.0f | %+.1f%% | %.0f | %+.1f%% |" % (
            name, rate, csw, 100 * (base / rate - 1), cpu, 100 * (cpu / base_cpu - 1)))
    for name, _, _ in ts:
        print("  %s rounds (rate/cpu): %s%s" % (
            name, ", ".join("%.0f/%.0f" % v[:2] for v in res[name]),
            ("; " + "; ".join(extra[name][:1])) if extra[name] else ""))


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    parts = os.environ.get("PARTS", "costs,paced,max").split(",")
    if not need_root("offcpu_cost"):
        return 0
    print("offcpu_cost: %s UTC, load average %.1f %.1f %.1f" % (
        datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M"), *os.getloadavg()))
    if "costs" in parts:
        with bpf_stats():
            bpf_costs(rounds)
    if "paced" in parts:
        slowdown(rounds, calibrate(), "ping-pong at 100k switches/s")
    if "max" in parts:
        slowdown(rounds, 0, "ping-pong at the maximum rate")
    return 0


if __name__ == "__main__":
    sys.exit(main())

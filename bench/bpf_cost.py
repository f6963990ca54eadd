#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""BPF cost per event of sfprof's capture programs, from the kernel's own
accounting (sysctl kernel.bpf_stats_enabled=1: run_time_ns / run_cnt per
program, which sfprof --stats prints as bpf_run_ns_* / bpf_run_cnt_*).

Every program also runs for other processes (the cpu-clock program on
every tick of every CPU, sys_enter/sys_exit on every syscall of the
machine) and returns at the tgid filter. Those cheap invocations are
measured on an idle target first (ns per filtered call) and subtracted:
  cost/event = (run_ns - filtered_ns * (run_cnt - target_calls)) / target_calls
(bench/libbench.py)

  cpu sample: cpuwork at 999 Hz, running below 100 KiB of extra stack
              so the snapshot really copies --stack-size bytes
  futex event: pingpong (a wait every 500 us, below 100 KiB of stack),
              --min-wait 0 so every wait is an event; sys_exit cost
  shallow:    both again without the extra stack: the copy stops at the
              thread's frame top (main stack's start, thread descriptor)
  Usage: bench/bpf_cost.py [REPEATS]   (default 3; medians printed)
"""
import os
import statistics
import sys

from libbench import WL, bpf_stats, need_root, per_call, sfprof


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    if not need_root("bpf_cost"):
        return 0
    with bpf_stats():
        # filtered invocations: the target sleeps, nothing passes the filter
        base_cpu = sfprof(["-F", "999"], ["sleep", "3"])
        base_fx = sfprof(["-e", "futex", "--min-wait", "0"], ["sleep", "3"])
        f_cpu, f_enter, f_exit = (per_call(base_cpu, "cpu"), per_call(base_fx, "sys_enter"),
                                  per_call(base_fx, "sys_exit"))
        print("filtered invocation (other processes): cpu %.0f ns, sys_enter %.0f ns, "
              "sys_exit %.0f ns" % (f_cpu, f_enter, f_exit))
        rows = []
        for label, size, pad in (("16384", 16384, "100"), ("65528", 65528, "100"),
                                 ("16384, shallow", 16384, "0")):
            cpu, fx, fx_enter, cpu_b, fx_b = [], [], [], [], []
            for _ in range(reps):
                st = sfprof(["-F", "999", "--stack-size", str(size)],
                            [os.path.join(WL, "cpuwork-sframe"), "300", pad])
                n = st["samples_seen"]
                cpu.append((st["bpf_run_ns_cpu"] - f_cpu * (st["bpf_run_cnt_cpu"] - n)) / n)
                cpu_b.append(st["stack_bytes"] / max(1, st["events_cpu"]))
                st = sfprof(["-e", "futex", "--min-wait", "0", "--stack-size", str(size)],
                            [os.path.join(WL, "pingpong-sframe"), "2", "500", pad])
                n, ev = st["futex_waits_seen"], st["events_futex"]
                fx.append((st["bpf_run_ns_sys_exit"] -
                           f_exit * (st["bpf_run_cnt_sys_exit"] - n)) / ev)
                fx_enter.append((st["bpf_run_ns_sys_enter"] -
                                 f_enter * (st["bpf_run_cnt_sys_enter"] - n)) / n)
                fx_b.append(st["stack_bytes"] / max(1, ev))
            rows.append((label, statistics.median(cpu), statistics.median(cpu_b),
                         statistics.median(fx), statistics.median(fx_enter),
                         statistics.median(fx_b)))
        print("| --stack-size | cpu sample | bytes copied | futex event (sys_exit) | "
              "futex sys_enter | bytes copied |")
        print("|---|---|---|---|---|---|")
        for size, c, cb, f, fe, fb in rows:
            print("| %s | %.2f us | %.0f | %.2f us | %.2f us | %.0f |" % (
                size, c / 1e3, cb, f / 1e3, fe / 1e3, fb))
        print("(medians of %d runs; stack_copy_direct: %s)" % (reps, base_cpu.get("stack_copy_direct")))
    return 0


if __name__ == "__main__":
    sys.exit(main())

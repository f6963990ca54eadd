#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What the PHP frame walk costs, on Debian's php8.2 CLI (NTS).

1. BPF cost per on-CPU sample at 999 Hz, with the PHP walk and without
   (--no-php), from the kernel's accounting (kernel.bpf_stats_enabled=1,
   bpf_run_ns_cpu / bpf_run_cnt_cpu of --stats) on bench/php_work.php
   (Chain::outer -> middle -> array_map -> a closure -> leafWork: 6 frames
   a walk with {main}). The calls other processes cause are measured on an idle
   target first and subtracted, as bench/python_cost.py does.
2. Slowdown of php_work.php at 99 Hz under sfprof (walk on) and sfprof
   --no-php: the workload's own CPU and wall time around its work,
   medians of per-round ratios to the unprofiled run of the same round
   (runs interleaved), SCHED_FIFO on CPU 1 (chrt -f 10 taskset -c 1).

  Usage: bench/php_cost.py [ROUNDS [REPEATS]]   (defaults 7 rounds of
  slowdown runs, 3 repeats of the BPF cost runs; REPEATS 0: no BPF cost)
"""
import os
import statistics
import subprocess
import sys
import tempfile

from libbench import ROOT, SFPROF, bpf_stats, cost, need_root, per_call, stats_of

PHP = "/usr/bin/php8.2"
WORK = os.path.join(ROOT, "bench", "php_work.php")


def sfprof_stats(args, cmd):
    r = subprocess.run([SFPROF, "--stats", "--quiet", "-o", "/dev/null"] + args + ["--"] + cmd,
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        sys.exit("sfprof failed (%d): %s" % (r.returncode, r.stderr[-500:]))
    return stats_of(r.stderr)


def bpf_cost(reps):
    f_cpu = per_call(sfprof_stats(["-F", "999"], ["sleep", "3"]), "cpu")
    print("filtered invocation (other processes): cpu %.0f ns" % f_cpu)
    cmd = [PHP, WORK, "300"]
    res = {}
    for mode in ("php", "nophp"):
        vals, frames = [], []
        for _ in range(reps):
            st = sfprof_stats(["-F", "999"] + ([] if mode == "php" else ["--no-php"]), cmd)
            vals.append(cost(st, "cpu", f_cpu, st["samples_seen"]))
            if st.get("php_walks"):
                frames.append(st["php_frames_read"] / st["php_walks"])
        res[mode] = (statistics.median(vals), statistics.median(frames) if frames else 0)
    print("| event | with the PHP walk | --no-php | walk | frames per walk |")
    print("|---|---|---|---|---|")
    print("| cpu sample, php_work.php | %.2f us | %.2f us | %+.2f us | %.1f |" % (
        res["php"][0] / 1e3, res["nophp"][0] / 1e3, (res["php"][0] - res["nophp"][0]) / 1e3,
        res["php"][1]))
    print("(medians of %d runs)" % reps)


def run_timed(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        sys.exit("%s failed: %s" % (cmd[0], r.stderr[-300:]))
    return dict((k, int(n)) for k, n in (l.split() for l in r.stdout.splitlines()
                                       if l.split()[0] in ("elapsed_ns", "cpu_ns")))


def slowdown(rounds):
    work = ["chrt", "-f", "10", "taskset", "-c", "1", PHP, WORK, "150"]
    with tempfile.TemporaryDirectory() as d:
        cfgs = [("sfprof (PHP walk)", [SFPROF, "-F", "99", "--quiet", "-o",
                                        os.path.join(d, "s.folded"), "--"] + work),
                ("sfprof --no-php", [SFPROF, "-F", "99", "--no-php", "--quiet", "-o",
                                      os.path.join(d, "n.folded"), "--"] + work)]
        ratios = {n: ([], []) for n, _ in cfgs}
        for _ in range(rounds):
            base = run_timed(work)
            for name, cmd in cfgs:
                v = run_timed(cmd)
                ratios[name][0].append(v["cpu_ns"] / base["cpu_ns"])
                ratios[name][1].append(v["elapsed_ns"] / base["elapsed_ns"])
    print("| 99 Hz | target CPU | wall |")
    print("|---|---|---|")
    for name, _ in cfgs:
        c, w = ratios[name]
        print("| %s | %+.1f%% | %+.1f%% |" % (name, 100 * (statistics.median(c) - 1),
                                            100 * (statistics.median(w) - 1)))
    print("(medians of %d per-round ratios to the unprofiled run)" % rounds)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    if not need_root("php_cost"):
        return 0
    if reps:
        with bpf_stats():
            bpf_cost(reps)
    slowdown(rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())

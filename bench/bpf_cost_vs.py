#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""BPF cost of a shallow cpu sample, this build side by side with others
(BASE: build directories, e.g. of older commits in git worktrees), the
runs interleaved so all see the same machine load.

Per round and build (the order alternating between rounds):
  filtered: sfprof -F 999 -- sleep 2, ns per call of the cpu program for
            other processes (it returns at the scope test)
  shallow:  sfprof -F 999 --stack-size 16384 -- cpuwork-sframe 300 0, ns
            per target sample with the filtered calls subtracted
            (bench/libbench.py), and the bytes copied per sample
All builds run the same workload binary (this build's). Medians of the
rounds; the ratio is this build's median over each BASE's.

  Usage: bench/bpf_cost_vs.py [-n ROUNDS] BASE_BUILD_DIR... [-- EXTRA SFPROF ARGS]
         (ROUNDS default 5; BUILD=DIR for this build; no BASE: SKIP)
"""
import os
import statistics
import sys

from libbench import SFPROF, WL, bpf_stats, need_root, per_call, sfprof


def measure(binary, extra):
    base = sfprof(["-F", "999"] + extra, ["sleep", "2"], binary=binary)
    filt = per_call(base, "cpu")
    st = sfprof(["-F", "999", "--stack-size", "16384"] + extra,
                [os.path.join(WL, "cpuwork-sframe"), "300", "0"], binary=binary)
    n = st["samples_seen"]
    cost = (st["bpf_run_ns_cpu"] - filt * (st["bpf_run_cnt_cpu"] - n)) / n
    return filt, cost, st["stack_bytes"] / max(1, st["events_cpu"])


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    rounds = 5
    if len(argv) > 1 and argv[0] == "-n":
        rounds = int(argv[1])
        argv = argv[2:]
    if not argv:
        print("bpf_cost_vs: SKIP: no BASE build given")
        return 0
    if not need_root("bpf_cost_vs"):
        return 0
    builds = [("this", SFPROF)] + [("base%d" % i, os.path.join(os.path.abspath(d), "sfprof"))
                                   for i, d in enumerate(argv)]
    res = {name: [] for name, _ in builds}
    with bpf_stats():
        for r in range(rounds):
            order = builds[r % len(builds):] + builds[:r % len(builds)]
            for name, binary in order:
                f, c, b = measure(binary, extra)
                res[name].append((f, c, b))
                print("round %d %s: filtered %.0f ns, shallow sample %.0f ns, %.0f bytes"
                      % (r, name, f, c, b), flush=True)
    print("| build | shallow cpu sample | filtered call (other processes) | bytes copied |")
    print("|---|---:|---:|---:|")
    med = {}
    for name, binary in builds:
        rows = res[name]
        med[name] = statistics.median(x[1] for x in rows)
        print("| %s (%s) | %.2f us | %.0f ns | %.0f |" % (
            name, os.path.dirname(binary), med[name] / 1e3,
            statistics.median(x[0] for x in rows), statistics.median(x[2] for x in rows)))
    print("(medians of %d rounds; this / each base: %s)" % (rounds, ", ".join(
        "%s %.2f" % (name, med["this"] / med[name]) for name, _ in builds[1:])))
    return 0


if __name__ == "__main__":
    sys.exit(main())

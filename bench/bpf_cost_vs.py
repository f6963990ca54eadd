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

--together: every build at the same time instead, so each round's load is
the same for all (on a machine whose load swings within seconds, runs one
after another differ by more than the builds do): per round one spinner
(spin-sframe, main thread, shallow) and one `sleep`, and per build two
sfprof -F 999 -d SECONDS, one with -p SPINNER (the samples), one with -p
SLEEPER (the filtered calls, in the same seconds), all started together.

  Usage: bench/bpf_cost_vs.py [-n ROUNDS] [--together [SECONDS]] BASE_BUILD_DIR...
                              [-- EXTRA SFPROF ARGS]
         (ROUNDS default 5, SECONDS 5; BUILD=DIR for this build; no BASE: SKIP)
"""
import os
import statistics
import subprocess
import sys

from libbench import SFPROF, WL, bpf_stats, need_root, per_call, sfprof, stats_of


def measure(binary, extra):
    base = sfprof(["-F", "999"] + extra, ["sleep", "2"], binary=binary)
    filt = per_call(base, "cpu")
    st = sfprof(["-F", "999", "--stack-size", "16384"] + extra,
                [os.path.join(WL, "cpuwork-sframe"), "300", "0"], binary=binary)
    n = st["samples_seen"]
    cost = (st["bpf_run_ns_cpu"] - filt * (st["bpf_run_cnt_cpu"] - n)) / n
    return filt, cost, st["stack_bytes"] / max(1, st["events_cpu"])


def measure_together(builds, extra, secs):
    """One round of --together: {name: (filtered ns, sample ns, bytes)}."""
    spin = subprocess.Popen([os.path.join(WL, "spin-sframe"), str(secs + 4)],
                            stdout=subprocess.DEVNULL)
    sleeper = subprocess.Popen(["sleep", str(secs + 4)])
    runs = {}
    for name, binary in builds:
        for role, pid in (("spin", spin.pid), ("sleep", sleeper.pid)):
            runs[name, role] = subprocess.Popen(
                [binary, "--stats", "-o", "/dev/null", "-F", "999", "--stack-size", "16384",
                 "-d", str(secs), "-p", str(pid)] + extra,
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    st = {}
    for key, p in runs.items():
        err = p.stderr.read()
        if p.wait() != 0:
            sys.exit("sfprof failed: %s" % err[-400:])
        st[key] = stats_of(err)
    spin.kill()
    sleeper.kill()
    spin.wait()
    sleeper.wait()
    out = {}
    for name, _ in builds:
        filt = per_call(st[name, "sleep"], "cpu")
        s = st[name, "spin"]
        n = s["samples_seen"]
        out[name] = (filt, (s["bpf_run_ns_cpu"] - filt * (s["bpf_run_cnt_cpu"] - n)) / max(1, n),
                     s["stack_bytes"] / max(1, s["events_cpu"]))
    return out


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    rounds = 5
    together = 0
    if len(argv) > 1 and argv[0] == "-n":
        rounds = int(argv[1])
        argv = argv[2:]
    if argv and argv[0] == "--together":
        together = 5
        argv = argv[1:]
        if argv and argv[0].isdigit():
            together = int(argv[0])
            argv = argv[1:]
    if not argv:
        print("bpf_cost_vs: SKIP: no BASE build given")
        return 0
    if not need_root("bpf_cost_vs"):
        return 0
    builds = [("this", SFPROF)] + [("base%d" % i, os.path.join(os.path.abspath(d), "sfprof"))
                                   for i, d in enumerate(argv)]
    res = {name: [] for name, _ in builds}
    with bpf_stats():
        for r in range(rounds if together else 0):
            got = measure_together(builds, extra, together)
            for name, _ in builds:
                res[name].append(got[name])
                print("round %d %s: filtered %.0f ns, shallow sample %.0f ns, %.0f bytes"
                      % ((r, name) + got[name]), flush=True)
        for r in range(0 if together else rounds):
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
    print("(medians of %d rounds%s; this / each base: %s)" % (
        rounds, ", all builds together for %d s a round" % together if together else "", ", ".join(
        "%s %.2f" % (name, med["this"] / med[name]) for name, _ in builds[1:])))
    return 0


if __name__ == "__main__":
    sys.exit(main())

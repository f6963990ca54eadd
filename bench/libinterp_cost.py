# SPDX-License-Identifier: MIT
"""What an interpreter's frame walk costs (bench/ruby_cost.py,
bench/php_cost.py; not a benchmark itself): the BPF cost per on-CPU
sample at 999 Hz with the walk and without (--no-NAME), from the
kernel's accounting, the calls other processes cause measured on an idle
target first and subtracted; and the workload's slowdown at 99 Hz under
sfprof with the walk and without, medians of per-round ratios to the
unprofiled run of the same round (runs interleaved), SCHED_FIFO on CPU 1.

An interpreter is an Interp: its name (the --stats prefix and --no-NAME),
its label in the tables, the command that runs its workload for SECONDS
and the workload's file name."""
import collections
import statistics
import subprocess
import sys
import tempfile
import os

from libbench import SFPROF, bpf_stats, cost, need_root, per_call, stats_of

Interp = collections.namedtuple("Interp", "name label argv work")


def sfprof_stats(args, cmd):
    r = subprocess.run([SFPROF, "--stats", "--quiet", "-o", "/dev/null"] + args + ["--"] + cmd,
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        sys.exit("sfprof failed (%d): %s" % (r.returncode, r.stderr[-500:]))
    return stats_of(r.stderr)


def bpf_cost(it, reps):
    f_cpu = per_call(sfprof_stats(["-F", "999"], ["sleep", "3"]), "cpu")
    print("filtered invocation (other processes): cpu %.0f ns" % f_cpu)
    cmd = it.argv + ["300"]
    res = {}
    for mode in ("on", "off"):
        vals, frames = [], []
        for _ in range(reps):
            st = sfprof_stats(["-F", "999"] + ([] if mode == "on" else ["--no-" + it.name]), cmd)
            vals.append(cost(st, "cpu", f_cpu, st["samples_seen"]))
            if st.get(it.name + "_walks"):
                frames.append(st[it.name + "_frames_read"] / st[it.name + "_walks"])
        res[mode] = (statistics.median(vals), statistics.median(frames) if frames else 0)
    print("| event | with the %s walk | --no-%s | walk | frames per walk |" % (it.label, it.name))
    print("|---|---|---|---|---|")
    print("| cpu sample, %s | %.2f us | %.2f us | %+.2f us | %.1f |" % (
        it.work, res["on"][0] / 1e3, res["off"][0] / 1e3, (res["on"][0] - res["off"][0]) / 1e3,
        res["on"][1]))
    print("(medians of %d runs)" % reps)


def run_timed(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        sys.exit("%s failed: %s" % (cmd[0], r.stderr[-300:]))
    return dict((k, int(n)) for k, n in (l.split() for l in r.stdout.splitlines()
                                       if l.split()[0] in ("elapsed_ns", "cpu_ns")))


def slowdown(it, rounds):
    work = ["chrt", "-f", "10", "taskset", "-c", "1"] + it.argv + ["150"]
    with tempfile.TemporaryDirectory() as d:
        cfgs = [("sfprof (%s walk)" % it.label, [SFPROF, "-F", "99", "--quiet", "-o",
                                                os.path.join(d, "s.folded"), "--"] + work),
                ("sfprof --no-" + it.name, [SFPROF, "-F", "99", "--no-" + it.name, "--quiet",
                                            "-o", os.path.join(d, "n.folded"), "--"] + work)]
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


def main(it):
    """bench/NAME_cost.py [ROUNDS [REPEATS]]: the exit status."""
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    if not need_root(it.name + "_cost"):
        return 0
    if reps:
        with bpf_stats():
            bpf_cost(it, reps)
    slowdown(it, rounds)
    return 0

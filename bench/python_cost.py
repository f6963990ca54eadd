#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What the CPython frame walk costs, on Debian's python3.11.

1. BPF cost per event, with the Python walk and without (--no-python),
   from the kernel's accounting (sysctl kernel.bpf_stats_enabled=1,
   bpf_run_ns_* / bpf_run_cnt_* of --stats): the on-CPU program at 999 Hz
   on tests/workloads/python/cpubound.py (a walk of ~4 frames), on a
   500-deep recursion (the walk reads its bound, 128 frames, and is cut),
   and the futex program's sys_exit on GIL waits (gil.py, 4 threads).
   The calls other processes cause (returning at the tgid filter) are
   measured on an idle target first and subtracted, as bench/bpf_cost.py
   does.
2. Slowdown of cpubound.py at 99 Hz and 999 Hz under sfprof (Python walk
   on), sfprof --no-python, `perf record --call-graph dwarf` (with a HOME
   of its own, tests/e2e/libcapture.py perf_env()) and austin (Debian's
   1.0.1, when it can read the interpreter), side by side: the target's
   own CPU time and wall time around its work, medians of per-round ratios
   to the unprofiled run of the same round (runs interleaved). The target
   runs SCHED_FIFO on CPU 1 (chrt -f 10 taskset -c 1, as
   bench/capture_slowdown.py), so other processes of a shared machine do
   not take its CPU.
3. Python stacks compared: the share of work_a and work_b among sfprof's
   samples against the workload's own thread CPU time per function (and
   austin's, when it runs).

  Usage: bench/python_cost.py [ROUNDS [REPEATS]]   (defaults 5 rounds of
  slowdown runs, 3 repeats of the BPF cost runs; REPEATS 0: no BPF cost)
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from libbench import ROOT, SFPROF, bpf_stats, cost, need_root, per_call, stats_of

PYW = os.path.join(ROOT, "tests", "workloads", "python")
PY = "/usr/bin/python3.11"
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
from libcapture import perf_env  # noqa: E402


def sfprof_stats(args, cmd):
    r = subprocess.run([SFPROF, "--stats", "--quiet", "-o", "/dev/null"] + args + ["--"] + cmd,
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        sys.exit("sfprof failed (%d): %s" % (r.returncode, r.stderr[-500:]))
    return stats_of(r.stderr)


def bpf_cost(reps):
    f_cpu = per_call(sfprof_stats(["-F", "999"], ["sleep", "3"]), "cpu")
    f_exit = per_call(sfprof_stats(["-e", "futex", "--min-wait", "0"], ["sleep", "3"]),
                      "sys_exit")
    print("filtered invocation (other processes): cpu %.0f ns, sys_exit %.0f ns" %
          (f_cpu, f_exit))
    cases = (
        ("cpu sample, cpubound.py (4 frames)", ["-F", "999"],
         [PY, os.path.join(PYW, "cpubound.py"), "40"], "cpu"),
        ("cpu sample, 500-deep recursion (128 read, cut)", ["-F", "999"],
         [PY, os.path.join(PYW, "shapes.py"), "recursion", "2"], "cpu"),
        ("futex event, GIL waits (gil.py)", ["-e", "futex", "--min-wait", "0"],
         [PY, os.path.join(PYW, "gil.py"), "2"], "sys_exit"),
    )
    print("| event | with the Python walk | --no-python | walk | frames per walk |")
    print("|---|---|---|---|---|")
    for label, args, cmd, prog in cases:
        res = {}
        for mode in ("py", "nopy"):
            vals, frames = [], []
            for _ in range(reps):
                st = sfprof_stats(args + ([] if mode == "py" else ["--no-python"]), cmd)
                if prog == "cpu":
                    n = st["samples_seen"]
                    vals.append(cost(st, "cpu", f_cpu, n))
                else:
                    n, ev = st["futex_waits_seen"], st["events_futex"]
                    vals.append((st["bpf_run_ns_sys_exit"] -
                                 f_exit * (st["bpf_run_cnt_sys_exit"] - n)) / max(ev, 1))
                if st.get("python_walks"):
                    frames.append(st["python_frames_read"] / st["python_walks"])
            res[mode] = (statistics.median(vals), statistics.median(frames) if frames else 0)
        print("| %s | %.2f us | %.2f us | %+.2f us | %.1f |" % (
            label, res["py"][0] / 1e3, res["nopy"][0] / 1e3,
            (res["py"][0] - res["nopy"][0]) / 1e3, res["py"][1]))
    print("(medians of %d runs)" % reps)


def run_timed(cmd, env=None):
    """The workload's own figures (elapsed_ns, cpu_ns, a_ns, b_ns) of one run."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    if r.returncode != 0:
        return None, r
    v = dict((k, int(n)) for k, n in (l.split() for l in r.stdout.splitlines()
                                       if l.split()[0] in ("elapsed_ns", "cpu_ns", "a_ns", "b_ns")))
    return v, r


def austin_works():
    r = subprocess.run(["austin", "-i", "1000", "-o", "/dev/null", PY, "-c", "sum(range(10**7))"],
                       capture_output=True, text=True, timeout=60)
    return r.returncode == 0, (r.stderr.strip().splitlines() or ["?"])[-1], r.returncode


def slowdown(rounds):
    work = ["chrt", "-f", "10", "taskset", "-c", "1", PY, os.path.join(PYW, "cpubound.py"),
            "30"]
    ok, why, rc = austin_works()
    if not ok:
        print("austin %s cannot read python3.11: exit %d, \"%s\" (Austin 1.0.1 predates "
              "CPython 3.11): left out" % (
                  subprocess.run(["austin", "-V"], capture_output=True, text=True)
                  .stdout.split()[-1], rc, why))
    tmp = tempfile.mkdtemp(prefix="sfprof-pybench.")
    perf_data = os.path.join(tmp, "perf.data")
    for hz in (99, 999):
        cfgs = [("sfprof", [SFPROF, "-F", str(hz), "--quiet", "-o", os.path.join(tmp, "s.folded"),
                            "--"] + work, None),
                ("sfprof --no-python", [SFPROF, "-F", str(hz), "--no-python", "--quiet", "-o",
                                        os.path.join(tmp, "n.folded"), "--"] + work, None),
                ("perf --call-graph dwarf", ["perf", "record", "-q", "-F", str(hz), "-g",
                                             "--call-graph", "dwarf", "-o", perf_data, "--"] + work,
                 perf_env())]
        if ok:
            cfgs.append(("austin", ["austin", "-i", str(1000000 // hz), "-o",
                                    os.path.join(tmp, "a.out"), "--"] + work[6:], None))
        ratios = {n: ([], []) for n, _, _ in cfgs}
        for _ in range(rounds):
            base, _ = run_timed(work)
            for name, cmd, env in cfgs:
                v, r = run_timed(cmd, env)
                if v is None or base is None:
                    sys.exit("%s failed: %s" % (name, r.stderr[-300:]))
                ratios[name][0].append(v["cpu_ns"] / base["cpu_ns"])
                ratios[name][1].append(v["elapsed_ns"] / base["elapsed_ns"])
        print("| %d Hz | target CPU | wall |" % hz)
        print("|---|---|---|")
        for name, _, _ in cfgs:
            c, w = ratios[name]
            print("| %s | %+.1f%% | %+.1f%% |" % (name, 100 * (statistics.median(c) - 1),
                                                100 * (statistics.median(w) - 1)))
        print("(medians of %d per-round ratios to the unprofiled run)" % rounds)
    return tmp


def shares(rounds_unused):
    """sfprof's work_a/work_b shares against the workload's own."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "s.folded")
        cmd = [SFPROF, "-F", "999", "--quiet", "-o", out, "--", PY,
               os.path.join(PYW, "cpubound.py"), "40"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        v = dict((k, int(n)) for k, n in (l.split() for l in r.stdout.splitlines()))
        a = b = other = 0
        for line in open(out):
            stack, _, n = line.rstrip("\n").rpartition(" ")
            f = stack.split(";")
            n = int(n)
            if any(x.startswith("outer (cpubound.py:") for x in f):
                if any(x.startswith("work_a (cpubound.py:") for x in f):
                    a += n
                elif any(x.startswith("work_b (cpubound.py:") for x in f):
                    b += n
                else:
                    other += n
        ref = v["a_ns"] / (v["a_ns"] + v["b_ns"])
        print("work_a's share of work_a+work_b: workload's own thread CPU time %.1f%%, "
              "sfprof %.1f%% of %d samples (%d more in outer itself)" % (
                  100 * ref, 100 * a / max(a + b, 1), a + b, other))


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    if not need_root("python_cost"):
        return 0
    if reps:
        with bpf_stats():
            bpf_cost(reps)
    shutil.rmtree(slowdown(rounds), True)
    shares(rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What the default --stack-size costs and buys: the share of truncated
stacks and the copy's cost on a deep target (cc1, gcc compiling sfprof's
own sources) and a shallow one (spin), at 16384 and 65528 bytes, runs
interleaved, medians of REPEATS (default 3).

The copy stops at the thread's outermost frame whatever the size, so a
larger ceiling costs only the stacks that are deeper than the smaller
one. BPF cost per sample comes from kernel.bpf_stats_enabled (the
cpu-clock program's run_time_ns / run_cnt; every call counts, idle
ticks of other processes included, so compare the columns, not the
absolute value).
  Usage: bench/stack_default.py [REPEATS]
"""
import os
import statistics
import subprocess
import sys

from libbench import stats_of

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
SFPROF = os.path.join(BUILD, "sfprof")
SPIN = os.path.join(BUILD, "workloads", "spin-sframe")
SRCS = ["src/stacks/stacks.c", "src/capture/capture.c", "src/model/proc.c", "src/model/dso.c",
        "src/unwind/cfi_parse.c"]
CC1 = ["sh", "-c", "for f in %s; do gcc -O2 -D_GNU_SOURCE -Iinclude -Isrc -I%s -c $f -o /dev/null; done"
       % (" ".join(SRCS), BUILD)]


def run(size, cmd):
    r = subprocess.run([SFPROF, "--stats", "-F", "999", "--stack-size", str(size), "-o",
                        "/dev/null", "--"] + cmd, capture_output=True, text=True, cwd=ROOT)
    st = stats_of(r.stderr)
    ev = max(1, st.get("stacks_events", 0))
    return {
        "truncated %": 100.0 * st.get("stacks_truncated", 0) / ev,
        "bytes/sample": st.get("stack_bytes", 0) / ev,
        "bpf ns/call": st.get("bpf_run_ns_cpu", 0) / max(1, st.get("bpf_run_cnt_cpu", 0)),
        "samples": ev,
    }


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    subprocess.run(["sysctl", "-q", "kernel.bpf_stats_enabled=1"], check=False)
    res = {}
    for _ in range(reps):
        for name, cmd in (("deep (cc1)", CC1), ("shallow (spin)", [SPIN, "2"])):
            for size in (16384, 65528):
                for k, v in run(size, cmd).items():
                    res.setdefault((name, size, k), []).append(v)
    subprocess.run(["sysctl", "-q", "kernel.bpf_stats_enabled=0"], check=False)
    keys = ("truncated %", "bytes/sample", "bpf ns/call", "samples")
    print("| target | --stack-size | " + " | ".join(keys) + " |")
    print("|---|---|" + "---|" * len(keys))
    for name in ("deep (cc1)", "shallow (spin)"):
        for size in (16384, 65528):
            vals = [statistics.median(res[(name, size, k)]) for k in keys]
            print("| %s | %d | %.2f | %.0f | %.0f | %.0f |" % ((name, size) + tuple(vals)))


if __name__ == "__main__":
    main()

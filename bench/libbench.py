# SPDX-License-Identifier: MIT
"""What the BPF cost benchmarks share (not a benchmark: bench/run.sh skips
lib*): the build's paths, running sfprof with --stats, and the kernel's
own per-program accounting (kernel.bpf_stats_enabled=1, which sfprof
--stats prints as bpf_run_ns_PROG / bpf_run_cnt_PROG).

Every program also runs for other processes and returns at its filter;
those filtered calls are measured on an idle target first and
subtracted from a target's runs:
  cost/event = (run_ns - filtered_ns * (run_cnt - target_calls)) / target_calls
"""
import contextlib
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
SFPROF = os.path.join(BUILD, "sfprof")
WL = os.path.join(BUILD, "workloads")
BPF_STATS = "/proc/sys/kernel/bpf_stats_enabled"


def stats_of(text):
    """sfprof --stats output (stderr) as {name: int}."""
    st = {}
    for line in text.splitlines():
        k, sep, v = line.partition(": ")
        if sep and v.strip().isdigit():
            st[k] = int(v)
    return st


def sfprof(args, cmd, err_tail=None, binary=None):
    """sfprof --stats -o /dev/null ARGS -- CMD; its stats, or exit on failure.
    `binary`: another build's sfprof (a side-by-side run), default this one's."""
    r = subprocess.run([binary or SFPROF, "--stats", "-o", "/dev/null"] + args + ["--"] + cmd,
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        err = r.stderr if err_tail is None else r.stderr[-err_tail:]
        sys.exit("sfprof failed (%d): %s" % (r.returncode, err))
    return stats_of(r.stderr)


def per_call(st, prog):
    """Mean ns per call of program PROG in a run's stats (0 if never run)."""
    n = st.get("bpf_run_cnt_" + prog, 0)
    return st.get("bpf_run_ns_" + prog, 0) / n if n else 0.0


def cost(st, prog, filtered, n):
    """ns per target call of PROG: its run time less `filtered` ns for each
    of the run_cnt - n calls that were not the target's."""
    return (st["bpf_run_ns_" + prog] - filtered * (st["bpf_run_cnt_" + prog] - n)) / n


def need_root(name):
    """False (after a SKIP line) when not root."""
    if os.geteuid() != 0:
        print("%s: SKIP: needs root" % name)
        return False
    return True


@contextlib.contextmanager
def bpf_stats():
    """kernel.bpf_stats_enabled=1 for the block, then its old value."""
    with open(BPF_STATS) as f:
        old = f.read().strip()
    with open(BPF_STATS, "w") as f:
        f.write("1")
    try:
        yield
    finally:
        with open(BPF_STATS, "w") as f:
            f.write(old)

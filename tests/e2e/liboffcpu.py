# SPDX-License-Identifier: MIT
"""Helpers for the off-CPU end-to-end tests (not a test: lib* is skipped).

Runs the offcpu workload (tests/workloads/offcpu.c) under `sfprof -e
offcpu --per-thread`, and sums the folded profile (microseconds) by
thread and by the function each thread blocks in."""
import collections
import os
import subprocess

from libcapture import SFPROF, WL, parse_stats, read_events

EV_OFFCPU = 5
ST_R, ST_S, ST_D, ST_OTHER = 1, 2, 4, 8
# thread name -> the function it blocks in
BLOCKERS = {"oc-sleep": "sleep_block", "oc-pipe": "pipe_block",
            "oc-cond": "cond_block", "oc-vfork": "vfork_block"}


class Run:
    pass


def run_offcpu(d, tag, extra, secs="4", wl_args=(), dump=True, env=None, wrap=()):
    """WRAP sfprof -e offcpu --per-thread EXTRA -- offcpu-sframe SECS WL_ARGS
    (WRAP: e.g. taskset -c 0, which sfprof and the workload inherit)."""
    r = Run()
    r.folded = os.path.join(d, tag + ".folded")
    raw = os.path.join(d, tag + ".raw")
    wl_out = os.path.join(d, tag + ".wl")
    cmd = list(wrap) + [SFPROF, "-e", "offcpu", "--per-thread", "--stats", "-o", r.folded] + \
        list(extra)
    if dump:
        cmd += ["--dump-events", raw]
    cmd += ["--", os.path.join(WL, "offcpu-sframe"), secs] + list(wl_args)
    with open(wl_out, "w") as wo:
        p = subprocess.run(cmd, stdout=wo, stderr=subprocess.PIPE, text=True, timeout=120,
                           env=env)
    r.rc, r.stderr = p.returncode, p.stderr
    r.stats = parse_stats(p.stderr)
    r.tids, r.ran, r.out = {}, {}, {}
    for line in open(wl_out):
        f = line.split()
        if len(f) == 3 and f[0] == "tid":
            r.tids[f[1]] = int(f[2])
        elif len(f) == 3 and f[0] == "ran":
            r.ran[f[1]] = float(f[2])
        elif len(f) == 2:
            r.out[f[0]] = f[1]
    r.events = read_events(raw) if dump and os.path.exists(raw) else []
    # folded: root "comm-pid/tid"; weights in microseconds
    r.by_tid = collections.Counter()
    r.by_tid_fn = collections.Counter()
    r.lines = []
    if os.path.exists(r.folded):
        for line in open(r.folded):
            stack, _, w = line.rstrip("\n").rpartition(" ")
            frames = stack.split(";")
            tid = int(frames[0].rsplit("/", 1)[1]) if "/" in frames[0] else 0
            r.lines.append((tid, frames, int(w)))
            r.by_tid[tid] += int(w)
            for fn in set(BLOCKERS.values()):
                # gcc may clone the function (vfork_block.constprop.0)
                if any(f == fn or f.startswith(fn + ".") for f in frames[1:]):
                    r.by_tid_fn[(tid, fn)] += int(w)
    return r


def under(r, name):
    """Seconds thread `name` spent off CPU under its own blocking function."""
    return r.by_tid_fn[(r.tids.get(name, -1), BLOCKERS[name])] / 1e6

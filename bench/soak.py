#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Soaks: sfprof's memory over a long run, MINUTES (default 10), one of
  storm      99 Hz on a storm of about 100 short processes a second
             (shortlived -s), followed as a process tree
  storm-all  the same storm seen with -a (whatever else runs is profiled too)
  dlswap     999 Hz on a process that dlopen()s and dlclose()s two libraries
             in turn at one address, twice a second
Prints sfprof's RSS (VmRSS) every 30 s and its counters at the end: a flat
curve means each process's state is freed after its last event and each
mapping change replaces what it changed.
  Usage: bench/soak.py [MINUTES] [storm|storm-all|dlswap]
"""
import os
import subprocess
import sys
import time

sys.dont_write_bytecode = True
from soaklib import SFPROF, WL, print_stats, watch_rss  # noqa: E402

SHORT = os.path.join(WL, "shortlived-sframe")


def main():
    mins = float(sys.argv[1]) if len(sys.argv) > 1 else 10
    mode = sys.argv[2] if len(sys.argv) > 2 else "storm"
    secs = mins * 60
    storm_cmd = [SHORT, "-s", str(int(secs * 100)), "9"]
    storm = None
    if mode == "storm-all":
        s = subprocess.Popen([SFPROF, "-a", "-F", "99", "-d", str(secs), "--quiet", "--stats",
                              "-o", "/dev/null"], stderr=subprocess.PIPE, text=True)
        time.sleep(1)
        storm = subprocess.Popen(storm_cmd)
    elif mode == "dlswap":
        swap = [os.path.join(WL, "dlswap-sframe"), "swap", os.path.join(WL, "libswapa.so"),
                os.path.join(WL, "libswapb.so"), str(int(secs) + 1), "0.25"]
        storm = subprocess.Popen(swap, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                 text=True)
        s = subprocess.Popen([SFPROF, "-F", "999", "-d", str(secs), "--quiet", "--stats",
                              "-o", "/dev/null", "-p", str(storm.pid)],
                             stderr=subprocess.PIPE, text=True)
        time.sleep(1)
        storm.stdin.write("go\n")
        storm.stdin.flush()
    else:
        s = subprocess.Popen([SFPROF, "-F", "99", "-d", str(secs), "--quiet", "--stats",
                              "-o", "/dev/null", "--"] + storm_cmd,
                             stderr=subprocess.PIPE, text=True)
    watch_rss(s, 30, "%.1f")
    if storm:
        storm.kill()
        storm.wait()
    _, err = s.communicate()
    print_stats(err, ("procs", "procs_reaped", "changes_forks", "changes_exits",
                      "changes_mappings", "events_cpu", "lost_total",
                      "processes_followed", "stacks_frames_unnamed"))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`sfprof report` CPU time (user+sys from wait4) of several sfprof binaries
on several captures, interleaved, medians of RUNS:
    bench/report_sidebyside.py BIN1,BIN2 CAP1,CAP2 RUNS
(captures: e.g. the ones CAPS=/tmp/caps bench/report_speed.sh keeps)."""
import os, sys, subprocess, statistics, resource
bins = sys.argv[1].split(','); caps = sys.argv[2].split(','); runs = int(sys.argv[3])
res = {(b, c): [] for b in bins for c in caps}
for _ in range(runs):
    for c in caps:
        for b in bins:
            pid = os.fork()
            if pid == 0:
                fd = os.open('/dev/null', os.O_WRONLY); os.dup2(fd, 1); os.dup2(fd, 2)
                os.execv(b, [b, 'report', c])
            _, st, ru = os.wait4(pid, 0)
            res[(b, c)].append((ru.ru_utime + ru.ru_stime) * 1000)
for c in caps:
    for b in bins:
        v = res[(b, c)]
        print(f"{os.path.basename(c):12} {b:40} median {statistics.median(v):6.1f} ms CPU ({min(v):.1f}..{max(v):.1f})")

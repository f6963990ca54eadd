# SPDX-License-Identifier: MIT
"""What bench/soak.py and bench/interval_soak.py share: where sfprof and
the workloads are, sfprof's VmRSS, the RSS table printed while a run lasts,
and the --stats counters picked out of its stderr at the end.
SFPROF=/path runs another sfprof binary (e.g. a private copy for a long
soak, so rebuilds do not change it mid-run)."""
import os
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
SFPROF = os.environ.get("SFPROF", os.path.join(BUILD, "sfprof"))
WL = os.path.join(BUILD, "workloads")


def rss_kib(pid):
    """VmRSS of pid in KiB (0 when /proc has none, e.g. a zombie)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def watch_rss(proc, every_s, minute_fmt):
    """Print a markdown table of proc's RSS every every_s seconds until it
    exits; minute_fmt formats the minutes since the start (e.g. "%.0f")."""
    t0 = time.monotonic()
    print("| minute | sfprof RSS MiB |")
    print("|---|---|")
    row = "| " + minute_fmt + " | %.1f |"
    while proc.poll() is None:
        try:
            print(row % ((time.monotonic() - t0) / 60, rss_kib(proc.pid) / 1024.0))
            sys.stdout.flush()
        except OSError:
            break
        time.sleep(every_s)


def print_stats(err, keys):
    """The --stats lines of err (sfprof's stderr) whose name is in keys."""
    for line in err.splitlines():
        if line.split(":")[0] in keys:
            print("    " + line)

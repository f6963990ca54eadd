#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What the retention costs in memory: two whole-machine agents side by
side (`-a -e cpu,offcpu -F 99`), --retention 60 and --retention 2, for
SECONDS (default 75), then each one's /metrics: Pss and private bytes
(smaps_rollup), slices and distinct stacks held. The difference is the
slices' memory (the rest, model and ring, is the same in both).
  Usage: bench/agent_retention.py [SECONDS]"""
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SFPROF = os.path.join(ROOT, os.environ.get("BUILD", "build"), "sfprof")
SERIES = ["sfprof_memory_bytes{kind=\"private\"}", "sfprof_memory_bytes{kind=\"pss\"}",
          "process_resident_memory_bytes", "sfprof_slices", "sfprof_slice_stacks",
          "process_cpu_seconds_total"]


def start(retention):
    err = tempfile.TemporaryFile(mode="w+")
    p = subprocess.Popen([SFPROF, "agent", "-a", "-e", "cpu,offcpu", "-F", "99", "--listen",
                          "127.0.0.1:0", "--retention", str(retention)],
                         stderr=err, stdout=subprocess.DEVNULL)
    return p, err


def base_of(err):
    for _ in range(200):
        err.seek(0)
        m = re.search(r"listening on (http://\S+?)/?$", err.read(), re.M)
        if m:
            return m.group(1)
        time.sleep(0.05)
    return None


def main():
    secs = int(sys.argv[1]) if len(sys.argv) > 1 else 75
    if os.geteuid() != 0:
        print("SKIP agent_retention: needs root")
        return 0
    agents = {r: start(r) for r in (60, 2)}
    try:
        time.sleep(secs)
        vals = {}
        for r, (p, err) in agents.items():
            if p.poll() is not None:
                err.seek(0)
                print("agent --retention %d exited %d: %s" % (r, p.returncode, err.read()[-300:]))
                return 1
            with urllib.request.urlopen(base_of(err) + "/metrics", timeout=10) as f:
                text = f.read().decode()
            vals[r] = {s: float(re.search("^" + re.escape(s) + r" (\S+)", text, re.M).group(1))
                       for s in SERIES}
    finally:
        for p, _ in agents.values():
            p.terminate()
            p.wait(timeout=20)
    print("after %d s, -a -e cpu,offcpu -F 99   --retention 60   --retention 2   difference" % secs)
    for s in SERIES:
        a, b = vals[60][s], vals[2][s]
        if s.endswith("bytes") or "bytes{" in s:
            print("  %-40s %9.1f MiB %9.1f MiB %9.1f MiB" % (s, a / 2**20, b / 2**20, (a - b) / 2**20))
        else:
            print("  %-40s %13.1f %13.1f %13.1f" % (s, a, b, a - b))
    return 0


if __name__ == "__main__":
    sys.exit(main())

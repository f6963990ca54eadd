#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Scrape cost of sfprof agent: a whole-machine agent (`-a -e cpu,offcpu
-F 99`, the systemd unit's events) runs until it holds SECONDS (default
10) of slices, then /debug/pprof/profile?seconds=SECONDS is fetched ROUNDS
times (default 7), one every 3 s. For each: the latency (request to last
byte), the answer's size, and the agent's CPU time during it (utime+stime
of /proc/PID/stat over the request, minus what the agent spends in the
same time without one, measured over the 1.5 s before it). The agent's
CPU is also read over BURST (30) scrapes back to back, since one takes
less than a clock tick: (CPU over the burst - idle rate x its time) / 30.
Also /metrics latency. Prints the medians.
  Usage: bench/agent_scrape.py [SECONDS [ROUNDS]]"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SFPROF = os.path.join(ROOT, os.environ.get("BUILD", "build"), "sfprof")
TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        p = f.read().rsplit(")", 1)[1].split()
    return (int(p[11]) + int(p[12])) / TICK


def main():
    secs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    if os.geteuid() != 0:
        print("SKIP agent_scrape: needs root")
        return 0
    err = tempfile.TemporaryFile(mode="w+")
    ag = subprocess.Popen([SFPROF, "agent", "-a", "-e", "cpu,offcpu", "-F", "99",
                           "--listen", "127.0.0.1:0"], stderr=err, stdout=subprocess.DEVNULL)
    base = None
    for _ in range(200):
        err.seek(0)
        m = re.search(r"listening on (http://\S+?)/?$", err.read(), re.M)
        if m:
            base = m.group(1)
            break
        time.sleep(0.05)
    if not base:
        ag.kill()
        print("agent did not start")
        return 1
    time.sleep(secs + 3)
    lat, size, cpu, mlat, nstacks = [], [], [], [], []
    try:
        for _ in range(rounds):
            c0 = cpu_s(ag.pid)
            time.sleep(1.5)
            idle_rate = (cpu_s(ag.pid) - c0) / 1.5
            c1, t1 = cpu_s(ag.pid), time.time()
            with urllib.request.urlopen("%s/debug/pprof/profile?seconds=%d" % (base, secs),
                                        timeout=120) as r:
                body = r.read()
            t2 = time.time()
            c2 = cpu_s(ag.pid)
            lat.append(t2 - t1)
            size.append(len(body))
            cpu.append(max(0.0, (c2 - c1) - idle_rate * (t2 - t1)))
            t3 = time.time()
            with urllib.request.urlopen(base + "/metrics", timeout=10) as r:
                text = r.read().decode()
            mlat.append(time.time() - t3)
            m = re.search(r"^sfprof_slice_stacks (\d+)", text, re.M)
            nstacks.append(int(m.group(1)) if m else 0)
            time.sleep(1.5)
        c0 = cpu_s(ag.pid)
        time.sleep(5)
        idle_rate = (cpu_s(ag.pid) - c0) / 5
        c1, t1 = cpu_s(ag.pid), time.time()
        for _ in range(30):
            with urllib.request.urlopen("%s/debug/pprof/profile?seconds=%d" % (base, secs),
                                        timeout=120) as r:
                r.read()
        burst_t = time.time() - t1
        burst = ((cpu_s(ag.pid) - c1) - idle_rate * burst_t) / 30
        idle = cpu_s(ag.pid)
    finally:
        ag.terminate()
        ag.wait(timeout=20)
    med = statistics.median
    print("agent -a -e cpu,offcpu -F 99: /debug/pprof/profile?seconds=%d, %d rounds (medians)"
          % (secs, rounds))
    print("  latency           %.1f ms (min %.1f, max %.1f)" % (med(lat) * 1e3, min(lat) * 1e3,
                                                              max(lat) * 1e3))
    print("  agent CPU         %.1f ms per scrape (over its idle rate; ticks of %d ms)"
          % (med(cpu) * 1e3, 1000 // TICK))
    print("  agent CPU, burst  %.2f ms per scrape (30 back to back in %.2f s; idle rate %.1f%%)"
          % (burst * 1e3, burst_t, idle_rate * 100))
    print("  answer            %.0f KiB gzipped pprof" % (med(size) / 1024))
    print("  stacks held       %d in the slices (60 s retention, 2 events)" % med(nstacks))
    print("  /metrics latency  %.2f ms" % (med(mlat) * 1e3))
    print("  agent CPU total   %.2f s in the run" % idle)
    return 0


if __name__ == "__main__":
    sys.exit(main())

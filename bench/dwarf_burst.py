#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The agent's memory when big binaries with DWARF start all at once.

Generates a program with much DWARF (160 CUs of 16 functions, each
statement an inlined call: an 80 MB binary with a 38 MB .debug_line,
about what a big C++ service carries), links it NVAR times under fresh
build-ids (each a new binary to the agent), and runs `sfprof agent -a -e
cpu,offcpu -F 99` for each build named, side by side. Every ROUND_S
seconds all NVAR binaries start at once and run BURST_S seconds, each at
a random function in a random CU per call (each sample in a new CU: its
line table decoded). The agents' Rss (statm: the ring counted twice)
is sampled every 100 ms, their Pss once a second; a collector fetches
/debug/pprof/profile?seconds=10 from each every 10 s. Printed: per agent,
the peak Rss, the Rss and Pss before the first burst, at the end, and
each round's peak, and the agent's memory counters (/metrics).

  usage: bench/dwarf_burst.py [ROUNDS [NVAR [BURST_S [ROUND_S]]]]
         (default 4 6 4 30)
  SFPROFS="build/sfprof /tmp/base/build/sfprof" the builds to compare
  (default: build/sfprof). The program is built once into
  $DWARF_BURST_DIR (default /tmp/sfprof-dwarf-burst; 2-3 min at -j2).
"""
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NCU, NF, NS = 160, 16, 60


def generate(d):
    """The program's sources into d (deterministic)."""
    rnd = random.Random(7)
    hdr = []
    for h in range(8):
        hdr.append("static inline __attribute__((always_inline)) unsigned long h%d(unsigned long x)\n{\n" % h +
                   "".join("  x = (x ^ (x >> %d)) * %dul;\n" % (rnd.randint(3, 29), rnd.randint(3, 99991) | 1)
                           for _ in range(6)) + "  return x;\n}\n")
    with open(os.path.join(d, "inl.h"), "w") as f:
        f.write("".join(hdr))
    for c in range(NCU):
        src = ['#include "inl.h"\n']
        for fn in range(NF):
            body = "".join("    x = h%d(x + %d) ^ (x << %d);\n" % (rnd.randint(0, 7), rnd.randint(1, 999),
                                                               rnd.randint(1, 30)) for _ in range(NS))
            src.append("__attribute__((noinline)) unsigned long f%d_%d(unsigned long x, int n)\n{\n"
                       "  for (int i = 0; i < n; i++) {\n%s  }\n  return x;\n}\n" % (c, fn, body))
        with open(os.path.join(d, "cu%d.c" % c), "w") as f:
            f.write("".join(src))
    names = ["f%d_%d" % (c, fn) for c in range(NCU) for fn in range(NF)]
    with open(os.path.join(d, "main.c"), "w") as f:
        f.write("".join("unsigned long %s(unsigned long, int);\n" % n for n in names))
        f.write("static unsigned long (*const fns[])(unsigned long, int) = {\n")
        f.write("".join("  %s,\n" % n for n in names))
        f.write("};\n" + r'''
#include <stdlib.h>
#include <time.h>
int main(int argc, char **argv)
{
  double secs = argc > 1 ? atof(argv[1]) : 3;
  struct timespec t0, t;
  unsigned long x = 1, r;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  r = 88172645463325252ul ^ (unsigned long)t0.tv_nsec;
  do {
    for (int k = 0; k < 64; k++) {
      r ^= r << 13; r ^= r >> 7; r ^= r << 17;
      x += fns[r % (sizeof(fns) / sizeof(fns[0]))](x, 200);
    }
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
  return (int)(x & 1);
}
''')


def build(d, nvar):
    """d/big0..big{nvar-1}: the objects built once, linked per build-id."""
    if not os.path.exists(os.path.join(d, "main.o")):
        generate(d)
        cus = ["cu%d.c" % c for c in range(NCU)] + ["main.c"]
        jobs = []
        for i in range(0, len(cus), 8):
            jobs.append(subprocess.Popen(["gcc", "-O2", "-g", "-c"] + cus[i:i + 8], cwd=d))
            if len(jobs) >= 2:
                if jobs.pop(0).wait():
                    sys.exit("dwarf_burst: compiling failed")
        for j in jobs:
            if j.wait():
                sys.exit("dwarf_burst: compiling failed")
    objs = ["cu%d.o" % c for c in range(NCU)] + ["main.o"]
    for v in range(nvar):
        out = os.path.join(d, "big%d" % v)
        if not os.path.exists(out):
            subprocess.check_call(["gcc", "-o", out] + objs +
                                  ["-Wl,--build-id=0x0d%038x" % (v + 1)], cwd=d)


def statm_rss(pid):
    with open("/proc/%d/statm" % pid) as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def pss(pid):
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    return 0


class Agent:
    def __init__(self, exe, tmp, i):
        self.exe = exe
        self.cache = os.path.join(tmp, "cache%d" % i)
        os.makedirs(self.cache)
        self.log = os.path.join(tmp, "agent%d.log" % i)
        env = dict(os.environ, SFPROF_DWARF_CACHE=self.cache)
        self.p = subprocess.Popen([exe, "agent", "-a", "-e", "cpu,offcpu", "-F", "99",
                                   "--listen", "127.0.0.1:0", "--quiet"],
                                  stdout=subprocess.DEVNULL, stderr=open(self.log, "w"), env=env)
        self.url = None
        for _ in range(300):
            with open(self.log) as f:
                m = re.search(r"listening on (http://\S+?)/?$", f.read(), re.M)
            if m:
                self.url = m.group(1)
                break
            time.sleep(0.1)
        if not self.url:
            self.p.kill()
            sys.exit("dwarf_burst: %s agent did not listen (%s)" % (exe, self.log))
        self.rss = []  # (t, rss)
        self.pss = []
        self.scrapes = self.failed = 0

    def metrics(self):
        with urllib.request.urlopen(self.url + "/metrics", timeout=30) as r:
            text = r.read().decode()
        out = {}
        for line in text.splitlines():
            m = re.match(r"(sfprof_(?:binaries_shed|binaries_shed_hot|dwarf_trims|dwarf_closes|"
                         r"lost_events)_total)(?:\{[^}]*\})? (\S+)", line)
            if m:
                out[m.group(1)] = out.get(m.group(1), 0) + float(m.group(2))
        return out


def main():
    a = sys.argv[1:]
    rounds = int(a[0]) if len(a) > 0 else 4
    nvar = int(a[1]) if len(a) > 1 else 6
    burst = float(a[2]) if len(a) > 2 else 4
    period = float(a[3]) if len(a) > 3 else 30
    exes = os.environ.get("SFPROFS", os.path.join(ROOT, "build", "sfprof")).split()
    d = os.environ.get("DWARF_BURST_DIR", "/tmp/sfprof-dwarf-burst")
    os.makedirs(d, exist_ok=True)
    build(d, nvar)
    tmp = tempfile.mkdtemp(prefix="sfprof-burst-")
    agents = [Agent(e, tmp, i) for i, e in enumerate(exes)]
    stop = threading.Event()

    def sample():
        n = 0
        while not stop.is_set():
            t = time.monotonic()
            for ag in agents:
                try:
                    ag.rss.append((t, statm_rss(ag.p.pid)))
                    if n % 10 == 0:
                        ag.pss.append((t, pss(ag.p.pid)))
                except OSError:
                    pass
            n += 1
            stop.wait(0.1)

    def collect():
        while not stop.wait(10):
            for ag in agents:
                try:
                    with urllib.request.urlopen(ag.url + "/debug/pprof/profile?seconds=10",
                                                timeout=60) as r:
                        r.read()
                    ag.scrapes += 1
                except OSError:
                    ag.failed += 1

    ths = [threading.Thread(target=sample, daemon=True), threading.Thread(target=collect, daemon=True)]
    for t in ths:
        t.start()
    try:
        time.sleep(15)  # the agents' start, then a quiet baseline
        t_quiet = time.monotonic()
        marks = []
        for r in range(rounds):
            t0 = time.monotonic()
            ps = [subprocess.Popen([os.path.join(d, "big%d" % v), str(burst)]) for v in range(nvar)]
            for p in ps:
                p.wait()
            marks.append(t0)
            time.sleep(max(0.0, period - (time.monotonic() - t0)))
        t_end = time.monotonic()
        mets = [ag.metrics() for ag in agents]
    finally:
        stop.set()
        for ag in agents:
            ag.p.send_signal(signal.SIGTERM)
        for ag in agents:
            try:
                ag.p.wait(10)
            except subprocess.TimeoutExpired:
                ag.p.kill()
    mib = 1 << 20
    print("dwarf_burst: %d rounds of %d new %0.f MB binaries with DWARF started at once, %.0f s each, "
          "every %.0f s" % (rounds, nvar, os.path.getsize(os.path.join(d, "big0")) / 1e6, burst, period))
    for ag, met in zip(agents, mets):
        def at(series, t):
            v = [x for (ts, x) in series if ts <= t]
            return v[-1] if v else 0
        peaks = []
        for i, t0 in enumerate(marks):
            t1 = marks[i + 1] if i + 1 < len(marks) else t_end
            peaks.append(max([x for (ts, x) in ag.rss if t0 <= ts < t1] or [0]))
        print("%s" % ag.exe)
        print("  Rss peak %.1f MiB; before the bursts %.1f (Pss %.1f); at the end %.1f (Pss %.1f)" % (
            max(x for _, x in ag.rss) / mib, at(ag.rss, t_quiet) / mib, at(ag.pss, t_quiet) / mib,
            at(ag.rss, t_end) / mib, at(ag.pss, t_end) / mib))
        print("  each round's Rss peak (MiB): " + " ".join("%.1f" % (p / mib) for p in peaks))
        print("  scrapes %d (failed %d); %s" % (ag.scrapes, ag.failed, " ".join(
            "%s=%d" % (k.replace("sfprof_", "").replace("_total", ""), v) for k, v in sorted(met.items()))))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""C++ names as perf script prints them: sfprof and perf record the same
seconds of tests/workloads/cxxwork.cc (a template, a const method, an
operator, an anonymous-namespace function, a lambda, GCC clones); every
function of the workload perf script names in at least 2% of the samples
is a frame of sfprof's, spelled the same, and every C++ frame sfprof
shows that often is one perf names. --full-names gives the signatures."""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libunwind import SFPROF, WL, have_perf, start_ready  # noqa: E402

NAME = "names_cxx"
SECS = 3


def perf_names(data, env):
    r = subprocess.run(["perf", "script", "--no-inline", "-i", data, "-F", "ip,sym,dso"],
                       capture_output=True, text=True, timeout=300, env=env)
    counts, total = {}, 0
    for block in r.stdout.split("\n\n"):
        names = set()
        for l in block.split("\n"):
            m = re.match(r"\s*[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$", l)
            if m and os.path.basename(m.group(2)) == "cxxwork-ehframe":
                names.add(re.sub(r"\+0x[0-9a-f]+$", "", m.group(1)))
        if block.strip():
            total += 1
        for n in names:
            counts[n] = counts.get(n, 0) + 1
    return counts, total


def folded_names(path):
    counts, total = {}, 0
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        total += int(n)
        for f in set(stack.split(";")[1:]):
            counts[f] = counts.get(f, 0) + int(n)
    return counts, total


def main():
    if os.geteuid() != 0:
        print("SKIP %s: needs root to load BPF programs" % NAME)
        return 0
    if not have_perf():
        print("SKIP %s: no perf" % NAME)
        return 0
    errs = []
    with tempfile.TemporaryDirectory() as d:
        # perf's own build-id cache under a fresh HOME: a damaged
        # ~/.debug makes perf record abort
        env = dict(os.environ, HOME=d)
        # runs until killed below: a loaded machine can take seconds to attach twice
        wl = start_ready([os.path.join(WL, "cxxwork-ehframe"), str(SECS + 120)])
        data, out, full = (os.path.join(d, x) for x in ("p.data", "s.folded", "f.folded"))
        try:
            perf = subprocess.Popen(["perf", "record", "-q", "-F", "499", "--call-graph",
                                     "dwarf", "-p", str(wl.pid), "-o", data, "--", "sleep",
                                     str(SECS)], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, env=env)
            sf = subprocess.run([SFPROF, "-F", "499", "-d", str(SECS), "--no-inline", "--quiet",
                                 "-o", out, "-p", str(wl.pid)], capture_output=True, text=True,
                                timeout=120)
            perf.wait(timeout=120)
            sf2 = subprocess.run([SFPROF, "-F", "199", "-d", "1", "--full-names", "--quiet",
                                  "-o", full, "-p", str(wl.pid)], capture_output=True, text=True,
                                 timeout=120)
        finally:
            wl.kill()
            wl.wait()
        if sf.returncode or sf2.returncode:
            print("FAIL %s: sfprof exited %d/%d: %s" % (NAME, sf.returncode, sf2.returncode,
                                                       (sf.stderr + sf2.stderr)[-300:]))
            return 1
        pc, pt = perf_names(data, env)
        sc, st = folded_names(out)
        if pt < 100 or st < 100:
            print("FAIL %s: too few samples (perf %d, sfprof %d)" % (NAME, pt, st))
            return 1
        pbig = {n for n, c in pc.items() if c >= 0.02 * pt}
        sbig = {n for n, c in sc.items() if c >= 0.02 * st and ("::" in n or "<" in n)}
        print("perf %d samples, %d workload functions >= 2%%: %s" % (pt, len(pbig), sorted(pbig)))
        print("sfprof %d samples, C++ frames >= 2%%: %s" % (st, sorted(sbig)))
        missing = sorted(n for n in pbig if n not in sc)
        extra = sorted(n for n in sbig if n not in pc)
        if len(pbig) < 5:
            errs.append("perf named only %d workload functions" % len(pbig))
        if missing:
            errs.append("perf's names missing from sfprof: %s" % missing)
        if extra:
            errs.append("sfprof C++ names perf does not print: %s" % extra)
        fulls = open(full).read()
        for want in ("sfprof::Acc<unsigned long>::step(unsigned long) const",
                     "(anonymous namespace)::hidden(unsigned long)"):
            if want not in fulls:
                errs.append("--full-names lacks %s" % want)
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

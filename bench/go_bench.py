#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Go binaries (BENCHMARKS.md "## go"):
1. the cost of loading a .gopclntab (bench/go_pclntab.c) for the names_go
   workload, its -ldflags=-s build, and Debian's `go` (10,851 functions);
2. the unwind + symbolization cost per sample on the Go workload:
   `sfprof report -o /dev/null` CPU time (children's rusage; median of
   RUNS) over samples, for captures of the unstripped (.debug_frame rows)
   and stripped (pcsp rows) builds. BASE=/path/to/older/sfprof times it
   too, interleaved, on the same captures. Also the in-process passes
   (SFPROF_REPORT_REPEAT=6, no profile): pass 1 cold, passes 2-6 warm.
   bench/go_bench.py        (BUILD=build SECS=4 HZ=499 RUNS=7 BASE=)
Needs root (BPF) and Debian's golang-go."""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
SF = os.path.join(BUILD, "sfprof")
SECS = float(os.environ.get("SECS", "4"))
HZ = os.environ.get("HZ", "499")
RUNS = int(os.environ.get("RUNS", "7"))
BASE = os.environ.get("BASE", "")
GO_BIN = "/usr/lib/go-1.19/bin/go"


def cpu_of(argv):
    """CPU seconds (user + sys) of argv, run to completion"""
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if status:
        raise RuntimeError("%s exited %#x" % (argv, status))
    return ru.ru_utime + ru.ru_stime


def passes(sf, cap):
    """(cold, warm) ns per event inside one report process: pass 1, and
    the median of passes 2-6 (SFPROF_REPORT_REPEAT, no profile built:
    read + unwind + symbolize)"""
    env = dict(os.environ, SFPROF_REPORT_REPEAT="6", SFPROF_REPORT_NO_PROFILE="1")
    err = subprocess.run([sf, "report", "-o", "/dev/null", cap], env=env, capture_output=True,
                         text=True).stderr
    v = [float(x) for x in re.findall(r"report_pass_\d+_ns_per_event: (\d+)", err)]
    return v[0], statistics.median(v[1:])


def main():
    if os.geteuid() != 0:
        print("go_bench: needs root")
        return 0
    with tempfile.TemporaryDirectory(prefix="sfprof-gobench.") as d:
        env = dict(os.environ, GOCACHE=os.path.join(d, "cache"), GOPATH=os.path.join(d, "gp"),
                   GOFLAGS="", GO111MODULE="off", GOPROXY="off", CGO_ENABLED="0")
        src = os.path.join(ROOT, "tests", "workloads", "gowork.go")
        full, strip = os.path.join(d, "gowork"), os.path.join(d, "gowork-s")
        subprocess.run(["go", "build", "-o", full, src], env=env, check=True)
        subprocess.run(["go", "build", "-ldflags=-s", "-o", strip, src], env=env, check=True)
        subprocess.run(["make", "-s", "BUILD=" + BUILD, os.path.join(BUILD, "libsfprof.a")],
                       cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        tool = os.path.join(d, "go_pclntab")
        subprocess.run(["gcc", "-std=gnu11", "-O2", "-g", "-D_GNU_SOURCE", "-Iinclude", "-Isrc", "-o",
                        tool, "bench/go_pclntab.c", os.path.join(BUILD, "libsfprof.a")] +
                       subprocess.run(["make", "-s", "--no-print-directory", "print-ldlibs"],
                                      cwd=ROOT, capture_output=True, text=True,
                                      check=True).stdout.split(), cwd=ROOT,
                       check=True)
        bins = [full, strip] + ([GO_BIN] if os.path.exists(GO_BIN) else [])
        print("$ %s %s -n 11" % (os.path.relpath(tool, d), " ".join(bins)))
        sys.stdout.flush()
        subprocess.run([tool] + bins + ["-n", "11"], check=True)
        print()
        print("report CPU per sample, median of %d (%s s at %s Hz, cpu)" % (RUNS, SECS, HZ))
        print("%-10s %8s %8s %10s %12s %s" % ("build", "samples", "frames", "us/sample",
                                                "--no-inline", "BASE us/sample" if BASE else ""))
        for b in (full, strip):
            wl = subprocess.Popen([b, str(int(SECS * 1000) + 3000)], stdout=subprocess.DEVNULL)
            time.sleep(0.3)
            cap = b + ".sfcap"
            subprocess.run([SF, "record", "-F", HZ, "--quiet", "-d", str(SECS), "-p",
                            str(wl.pid), "-o", cap], check=True)
            wl.kill()
            wl.wait()
            st = subprocess.run([SF, "report", "--stats", "-o", "/dev/null", cap],
                                capture_output=True, text=True).stderr
            n = int(re.search(r"unwind_stacks: (\d+)", st).group(1))
            fr = int(re.search(r"unwind_frames: (\d+)", st).group(1))
            ours, base, noinl = [], [], []
            for _ in range(RUNS):
                ours.append(cpu_of([SF, "report", "-o", "/dev/null", cap]))
                noinl.append(cpu_of([SF, "report", "--no-inline", "-o", "/dev/null", cap]))
                if BASE:
                    base.append(cpu_of([BASE, "report", "-o", "/dev/null", cap]))
            pc, pw, bc, bw = [], [], [], []
            for _ in range(5):
                c, w = passes(SF, cap)
                pc.append(c)
                pw.append(w)
                if BASE:
                    c, w = passes(BASE, cap)
                    bc.append(c)
                    bw.append(w)
            o = 1e6 * statistics.median(ours) / n
            line = "%-10s %8d %8.1f %10.1f %12.1f" % (os.path.basename(b), n, fr / n, o,
                                                      1e6 * statistics.median(noinl) / n)
            if BASE:
                bb = 1e6 * statistics.median(base) / n
                line += " %14.1f (ratio %.2f)" % (bb, o / bb)
            print(line)
            line = "%-10s in-process ns/event: cold %.0f, warm %.0f" % (
                "", statistics.median(pc), statistics.median(pw))
            if BASE:
                line += "; BASE cold %.0f, warm %.0f" % (statistics.median(bc),
                                                        statistics.median(bw))
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What naming HotSpot frames from the VM's metadata costs sfprof, live,
on OpenJDK 17 and the HsChain workload (tests/workloads/java).

For each JVM mode (-Xint: every frame interpreted; -XX:-Inline: every
frame compiled, a caller's line from its PcDesc; isPrime not inlined:
outerLoop a compiled caller with three methods inlined at its call;
default: C2 with inlining, after warm-up), sfprof -p at 199 Hz for 4 s with --stats,
with the VM reads (frame_name: interpreted frames, compiled callers'
lines) and with --no-jvm (no VM read at all; the rows below measured
before --no-jvm used --no-v8, which then kept the nmethods' JIT
entries and now leaves a JVM alone). Reported: the runtime's user-space
time per sample and per frame it named (stacks_runtime_name_ns less its largest, the process's first
call, which reads libjvm.so's symbols and the vmstructs tables: given
apart), medians of REPEATS runs. (sfprof's whole CPU time is not given:
its start, the BPF load, outweighs 4 s of samples.)

  Usage: bench/hotspot_cost.py [REPEATS]   (default 3)
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from libbench import ROOT, SFPROF, need_root, stats_of

SRC = os.path.join(ROOT, "tests", "workloads", "java", "HsChain.java")


def one(d, jvm_args, extra):
    jvm = subprocess.Popen(["java"] + jvm_args + ["-cp", d, "HsChain", "60"],
                           stdout=subprocess.PIPE, text=True, cwd=d)
    try:
        jvm.stdout.readline()
        time.sleep(2.0)
        p = subprocess.Popen([SFPROF, "-p", str(jvm.pid), "-d", "4", "-F", "199", "--stats",
                              "--quiet", "-o", "/dev/null"] + extra,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _, err = p.communicate(timeout=120)
    finally:
        jvm.kill()
        jvm.wait()
    if p.returncode != 0:
        sys.exit("sfprof failed (%d): %s" % (p.returncode, err[-300:]))
    return stats_of(err)


def main():
    if not need_root("hotspot_cost") or not shutil.which("javac"):
        return 0
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    print("| JVM | mode | samples | VM-named frames / sample | naming us / sample | "
          "us / named frame | first call ms |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(["javac", "-d", d, SRC], check=True, timeout=120)
        for jvm, args in (("-Xint", ["-Xint"]), ("-XX:-Inline", ["-XX:-Inline"]),
                          ("dontinline isPrime", ["-XX:CompileCommand=quiet",
                                                  "-XX:CompileCommand=dontinline,HsChain::isPrime"]),
                          ("default (C2)", [])):
            for mode, extra in (("VM reads", []), ("--no-jvm", ["--no-jvm"])):
                rows = []
                for _ in range(reps):
                    st = one(d, args, extra)
                    n = max(st.get("samples_seen", 0), 1)
                    named = st.get("stacks_runtime_named", 0)
                    first = st.get("stacks_runtime_name_ns_max", 0)
                    ns = max(st.get("stacks_runtime_name_ns", 0) - first, 0)
                    rows.append((n, named / n, ns / n / 1e3, ns / max(named - 1, 1) / 1e3,
                                 first / 1e6))
                med = [statistics.median(r[i] for r in rows) for i in range(5)]
                print("| %s | %s | %d | %.2f | %.1f | %.1f | %.1f |" % (jvm, mode, med[0], med[1],
                                                                       med[2], med[3], med[4]))
    print("(medians of %d runs; the JVM's samples and the machine's others alike)" % reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())

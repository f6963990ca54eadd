#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Java named with no flags: a JVM (OpenJDK 17) started plainly, its
HsChain workload (tests/workloads/java: static, instance and lambda
methods) profiled by -p after warm-up. sfprof reads HotSpot's layout from
libjvm's vmstructs tables and names each compiled frame from its nmethod's
Method (src/runtimes/hotspot/): at least 90% of the main thread's samples
must carry an HsChain method, every HsChain name must be one `jcmd PID
Thread.print` shows for the main thread, those stacks must be rooted (the
compiled frames stepped by their frame size, down to JavaMain), and the
JVM's own threads (GC, compilers) carry no Java name. Then record of the
same program started by sfprof, and report after the JVM has exited: the
capture carries the names, so the report names the same methods."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from libunwind import ROOT, SFPROF  # noqa: E402

NAME = "hotspot_names"
SRC = os.path.join(ROOT, "tests", "workloads", "java", "HsChain.java")
JAVA_NAME = re.compile(r"^HsChain[\w$/.]*\.[\w$<>]+$")
VM_THREADS = ("GC Thread", "G1 ", "C1 CompilerThre", "C2 CompilerThre", "VM Thread")


def stacks(path):
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        yield stack.split(";"), int(n)


def jcmd_names(pid, errs):
    """The main thread's method names over a few Thread.print dumps."""
    names = set()
    dumps, why = 0, ""
    for _ in range(4):
        # (jcmd's attach times out on a loaded machine: a dump that
        # failed is asked again; one is needed)
        r = subprocess.run(["jcmd", str(pid), "Thread.print"], capture_output=True,
                           text=True, timeout=60)
        main = r.stdout.split('"main"', 1)
        if r.returncode or len(main) < 2:
            why = (r.stderr or r.stdout)[-200:]
            continue
        dumps += 1
        for m in re.finditer(r"^\tat ([^(]+)\(", main[1].split("\n\n", 1)[0], re.M):
            names.add(m.group(1))
        time.sleep(0.3)
    if not dumps:
        errs.append("jcmd Thread.print failed: %s" % why)
    return names


def check(path, what, errs, want_rooted, jnames=None):
    main = named = rooted = 0
    seen = set()
    for frames, n in stacks(path):
        java = [f for f in frames if JAVA_NAME.match(f)]
        if frames[0].startswith(VM_THREADS) and (java or "[interpreter]" in frames):
            errs.append("%s: a JVM thread has Java frames: %s" % (what, ";".join(frames)[:200]))
        # (the main Java thread is named "java"; the launcher's too, in
        # JLI_Launch, waiting for it)
        if frames[0] != "java" or "JLI_Launch" in frames:
            continue
        main += n
        if java:
            named += n
            seen.update(java)
            if "JavaMain" in frames:
                rooted += n
    share = 100.0 * named / max(main, 1)
    print("%s: main thread %d samples, %d (%.1f%%) carry an HsChain method, %d of those "
          "rooted at JavaMain; names: %s" % (what, main, named, share, rooted, sorted(seen)))
    if main < 100:  # (199 Hz for 4 s, on a loaded machine)
        errs.append("%s: only %d main-thread samples" % (what, main))
    elif share < 90.0:
        errs.append("%s: HsChain named in %.1f%% of the main thread's samples, want >= 90%%"
                    % (what, share))
    if want_rooted and named and rooted < 0.9 * named:
        errs.append("%s: only %d of %d named stacks rooted at JavaMain" % (what, rooted, named))
    if jnames is not None:
        bad = sorted(x for x in seen if x not in jnames)
        if bad:
            errs.append("%s: names jcmd does not show: %s (jcmd: %s)" % (what, bad, sorted(jnames)))
    return seen


def main():
    if os.geteuid() != 0:
        print("SKIP %s: needs root to load BPF programs" % NAME)
        return 0
    if not (shutil.which("java") and shutil.which("javac") and shutil.which("jcmd")):
        print("SKIP %s: no JDK (openjdk-17-jdk-headless) on this machine" % NAME)
        return 0
    errs = []
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(["javac", "-d", d, SRC], check=True, timeout=120)
        java = ["java", "-cp", d, "HsChain"]
        # live, by -p after warm-up, with no flag for the JVM
        jvm = subprocess.Popen(java + ["40"], stdout=subprocess.PIPE, text=True, cwd=d)
        try:
            jvm.stdout.readline()  # "ready"
            time.sleep(2.0)  # C2 has compiled the chain
            out = os.path.join(d, "live.folded")
            prof = subprocess.Popen([SFPROF, "-p", str(jvm.pid), "-d", "5", "-F", "199",
                                     "--quiet", "-o", out],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(1.0)
            jnames = jcmd_names(jvm.pid, errs)
            _, err = prof.communicate(timeout=60)
            if prof.returncode != 0:
                print("FAIL %s: sfprof exited %d: %s" % (NAME, prof.returncode, err[-300:]))
                return 1
        finally:
            jvm.kill()
            jvm.wait()
        live = check(out, "live", errs, True, jnames)

        # record, the JVM gone, then report
        cap = os.path.join(d, "run.sfcap")
        r = subprocess.run([SFPROF, "record", "-F", "199", "--quiet", "-o", cap, "--"] +
                           java + ["5"], capture_output=True, text=True, timeout=120, cwd=d)
        if r.returncode != 0:
            print("FAIL %s: record exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        rep = os.path.join(d, "report.folded")
        r = subprocess.run([SFPROF, "report", "--quiet", "-o", rep, cap],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            print("FAIL %s: report exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        # (the report's samples include the warm-up: 80% there;
        # hotspot_record_report checks its chains and roots against live)
        seen = set()
        main_n = named = 0
        for frames, n in stacks(rep):
            if frames[0] != "java" or "JLI_Launch" in frames:
                continue
            main_n += n
            java_f = [f for f in frames if JAVA_NAME.match(f)]
            if java_f:
                named += n
                seen.update(java_f)
        share = 100.0 * named / max(main_n, 1)
        print("report: main thread %d samples, %d (%.1f%%) carry an HsChain method; names: %s"
              % (main_n, named, share, sorted(seen)))
        if main_n < 100 or share < 80.0:
            errs.append("report: HsChain named in %.1f%% of %d main-thread samples, want >= 80%%"
                        % (share, main_n))
        if live and not (seen & live):
            errs.append("report names %s, live named %s" % (sorted(seen), sorted(live)))
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

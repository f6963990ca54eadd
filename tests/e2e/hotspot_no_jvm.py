#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""--no-jvm turns HotSpot's VM reads off, and only those: one plain JVM
(OpenJDK 17, HsChain, no flags, no perf map) profiled by two sfprof -p at
once after warm-up. With --no-jvm none of the main thread's samples
carries a Java method (its compiled and interpreted code is anonymous:
[jit]); with --no-v8, which is node's, at least 90% carry an HsChain
method, as hotspot_names.py wants with no option. (v8_names.py checks the
other half: --no-jvm leaves node's names alone.)"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from libunwind import SFPROF  # noqa: E402
from hotspot_names import JAVA_NAME, SRC, check, stacks  # noqa: E402

NAME = "hotspot_no_jvm"


def main():
    if os.geteuid() != 0:
        print("SKIP %s: needs root to load BPF programs" % NAME)
        return 0
    if not (shutil.which("java") and shutil.which("javac")):
        print("SKIP %s: no JDK (openjdk-17-jdk-headless) on this machine" % NAME)
        return 0
    errs = []
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(["javac", "-d", d, SRC], check=True, timeout=120)
        jvm = subprocess.Popen(["java", "-cp", d, "HsChain", "30"], stdout=subprocess.PIPE,
                               text=True, cwd=d)
        outs, profs = {}, {}
        try:
            jvm.stdout.readline()  # "ready"
            time.sleep(2.0)  # C2 has compiled the chain
            for opt in ("--no-jvm", "--no-v8"):
                outs[opt] = os.path.join(d, opt[2:] + ".folded")
                profs[opt] = subprocess.Popen(
                    [SFPROF, "-p", str(jvm.pid), "-d", "5", "-F", "199", "--quiet", opt,
                     "-o", outs[opt]], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for opt, prof in profs.items():
                _, err = prof.communicate(timeout=60)
                if prof.returncode != 0:
                    print("FAIL %s: sfprof %s exited %d: %s" % (NAME, opt, prof.returncode,
                                                               err[-300:]))
                    return 1
        finally:
            for prof in profs.values():
                if prof.poll() is None:
                    prof.kill()
            jvm.kill()
            jvm.wait()
        # --no-v8: the JVM's frames named from its metadata all the same
        check(outs["--no-v8"], "--no-v8", errs, True)
        # --no-jvm: no Java name, the JIT code anonymous
        main_n = java_n = anon = 0
        for frames, n in stacks(outs["--no-jvm"]):
            if frames[0] != "java" or "JLI_Launch" in frames:
                continue
            main_n += n
            if [f for f in frames if JAVA_NAME.match(f)] or "[interpreter]" in frames:
                java_n += n
            if "[jit]" in frames:
                anon += n
        print("--no-jvm: main thread %d samples, %d with a Java method, %d with [jit]"
              % (main_n, java_n, anon))
        if main_n < 100:
            errs.append("--no-jvm: only %d main-thread samples" % main_n)
        if java_n:
            errs.append("--no-jvm: %d of %d main-thread samples named from the VM all the same"
                        % (java_n, main_n))
        if anon < 0.5 * main_n:
            errs.append("--no-jvm: [jit] in only %d of %d main-thread samples" % (anon, main_n))
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

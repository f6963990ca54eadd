#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Interpreted Java named with no flags: the HsChain workload
(tests/workloads/java) run by the template interpreter. sfprof takes each
interpreted frame's Method* and bcp from the frame's fixed slots below its
frame pointer (the layout from libjvm's vmstructs and int constants,
src/runtimes/hotspot/hsmethod.c) and walks on by that frame pointer.

 - `-Xint` (every method interpreted), by -p after start: at least 90% of
   the main thread's samples carry main -> outerLoop -> countPrimes, in
   that order (measured 97-99% on a loaded 2-core VM; the rest are the
   interpreter's entry code and runtime calls).
 - a default JVM early in its life (main still interpreted, the loop just
   compiled): main -> outerLoop in at least 90% (measured 100%).
 - methods C2 inlined into a compiled caller (isPrime not inlined, so
   outerLoop with countPrimes and the lambda inlined calls it): each its
   own frame from the PcDesc's scopes, main -> outerLoop -> countPrimes ->
   the lambda -> isPrime in at least 90% (measured 95-97%); the same with
   C1 only (-XX:TieredStopAtLevel=1, measured 99%); the same where the
   lambda's test() is a compiled caller of its own (its hidden class has
   no source or lines: the lambda body inlined into it still a frame;
   measured 98%).
 - never a wrong name: every stack's HsChain frames follow the program's
   calls (a Method* misread would put a method under one it is not called
   from), and the JVM's own threads carry no Java frame.
 - pprof of an -Xint run: the callers' frames carry their call's line
   (the bcp the interpreter saved at the call, through the ConstMethod's
   line-number table) as Line.line in HsChain.java: each the line of a
   call the method makes to the next (found in the source), none other.
   The same for compiled callers (-XX:-Inline: each a frame of its own),
   their bci from the scope of the PcDesc at the return address.
 - off-CPU (-e offcpu) of HsSleep under -Xint: at least 90% of the main
   thread's off-CPU time under main -> loop -> nap -> Thread.sleep (a
   native method's interpreted frame: no bytecodes, bcp 0); measured 98%.
 - record of an -Xint run, report after the JVM has exited: the capture
   carries the interpreted frames' names.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from libunwind import ROOT, SFPROF  # noqa: E402

NAME = "hotspot_interp"
SRC = os.path.join(ROOT, "tests", "workloads", "java", "HsChain.java")
SLEEP_SRC = os.path.join(ROOT, "tests", "workloads", "java", "HsSleep.java")
VM_THREADS = ("GC Thread", "G1 ", "C1 CompilerThre", "C2 CompilerThre", "VM Thread")
LAMBDA = re.compile(r"^HsChain\$\$Lambda\$\d+/0x[0-9a-f]+\.test$")
# callee -> the HsChain frames it may be called from (directly, or with
# frames of the JDK's between: the lambda's linkage)
CALLERS = {
    "HsChain.main": set(),
    "HsChain.outerLoop": {"HsChain.main"},
    "HsChain.countPrimes": {"HsChain.outerLoop"},
    "lambda": {"HsChain.countPrimes", "HsChain.outerLoop"},
    "HsChain.lambda$outerLoop$0": {"lambda"},
    "HsChain.isPrime": {"HsChain.lambda$outerLoop$0"},
}


def stacks(path):
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        yield stack.split(";"), int(n)


def key(f):
    return "lambda" if LAMBDA.match(f) else f


def check_order(frames, what, errs):
    """The HsChain frames of a stack, each under one it may be called from."""
    prev = None
    for f in frames:
        k = key(f)
        if f == "[interpreter]":
            prev = "?"  # (a frame left unnamed: any method may be under it)
            continue
        if not (k.startswith("HsChain") or k == "lambda"):
            continue
        if k not in CALLERS:
            errs.append("%s: a frame HsChain has not: %s" % (what, f))
            return
        if prev not in (None, "?") and prev not in CALLERS[k]:
            # (a walk cut short may lose the root: then only the order)
            errs.append("%s: %s under %s: %s" % (what, f, prev, ";".join(frames)[-300:]))
            return
        prev = k


def chain_in(frames, chain, lenient):
    """The chain's frames, in order (lenient: "[interpreter]" standing for
    any but the last)."""
    wild = ("[interpreter]",) if lenient else ()
    names = [key(f) for f in frames
             if key(f).startswith("HsChain") or key(f) == "lambda" or f in wild]
    return len(names) >= len(chain) and names[len(chain) - 1] == chain[-1] and all(
        n == c or n in wild for n, c in zip(names, chain))


def measure(path, what, chain, want, errs, lenient=False):
    main = hit = interp = 0
    for frames, n in stacks(path):
        if frames[0].startswith(VM_THREADS) and any(
                key(f).startswith("HsChain") or f == "[interpreter]" for f in frames):
            errs.append("%s: a JVM thread has Java frames: %s" % (what, ";".join(frames)[:200]))
        check_order(frames, what, errs)
        if frames[0] != "java" or "JLI_Launch" in frames:
            continue
        main += n
        hit += n if chain_in(frames, chain, lenient) else 0
        interp += n if "[interpreter]" in frames else 0
    share = 100.0 * hit / max(main, 1)
    print("%s: main thread %d samples, %d (%.1f%%) carry %s, %d an unnamed [interpreter]"
          % (what, main, hit, share, " -> ".join(chain), interp))
    if main < 50:  # enough to judge a 90% share; under load the JVM gets part of a core
        errs.append("%s: only %d main-thread samples" % (what, main))
    elif share < want:
        errs.append("%s: %s in %.1f%% of the main thread's samples, want >= %.0f%%"
                    % (what, " -> ".join(chain), share, want))


def call_lines():
    """Each HsChain method's lines that make a call (a caller's frame is
    at one): in its body, found by its declaration and braces."""
    decl = {"HsChain.main": "public static void main(", "HsChain.outerLoop": "static long outerLoop(",
            "HsChain.countPrimes": "long countPrimes(", "HsChain.isPrime": "static boolean isPrime("}
    src = open(SRC).read().splitlines()
    call = re.compile(r"[\w>]\s*\((?!\s*long\))")
    out = {}
    for m, text in decl.items():
        first = next(i for i, line in enumerate(src) if text in line)
        depth, lines = 0, set()
        for i in range(first, len(src)):
            code = src[i].split("//")[0]
            if i > first and call.search(re.sub(r"\b(if|for|while)\s*\(", "", code)):
                lines.add(i + 1)
            depth += code.count("{") - code.count("}")
            if depth == 0 and "}" in code:
                break
        out[m] = lines
    # (the lambda's body: the line of `n -> isPrime(n)`)
    out["HsChain.lambda$outerLoop$0"] = {i + 1 for i, line in enumerate(src)
                                         if "n -> isPrime(" in line}
    return out


def pprof_lines(d, what, args, errs, warm=0.0):
    if not shutil.which("go"):
        print("(pprof lines not checked: no go tool; tests/install-deps.sh installs golang-go)")
        return
    out = os.path.join(d, "lines.pb.gz")
    r = live(d, args, 3, out, warm)
    if r.returncode != 0:
        errs.append("pprof run: sfprof exited %d: %s" % (r.returncode, r.stderr[-300:]))
        return
    p = subprocess.run(["go", "tool", "pprof", "-raw", out], capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, PPROF_TMPDIR=d, HOME=d))
    if p.returncode != 0:
        errs.append("go tool pprof -raw failed: %s" % p.stderr[-300:])
        return
    want, seen = call_lines(), {}
    for m in re.finditer(r"\s(HsChain[\w$/.]*) (\S*):(\d+) s=\d+", p.stdout):
        if m.group(3) != "0":
            seen.setdefault(m.group(1), set()).add((m.group(2), int(m.group(3))))
    print("pprof %s lines: %s (calls in the source: %s)" % (what, seen, want))
    for fn, lines in seen.items():
        bad = [x for x in lines if x[0] != "HsChain.java" or x[1] not in want.get(fn, ())]
        if bad:
            errs.append("pprof %s: %s at %s, not a line of its calls %s"
                        % (what, fn, bad, sorted(want.get(fn, ()))))
    for fn in ("HsChain.main", "HsChain.outerLoop", "HsChain.countPrimes"):
        if fn not in seen:
            errs.append("pprof %s: no Line for %s" % (what, fn))


def live(d, jvm_args, secs, out, warm=0.0):
    jvm = subprocess.Popen(["java"] + jvm_args + ["-cp", d, "HsChain", "40"],
                           stdout=subprocess.PIPE, text=True, cwd=d)
    try:
        jvm.stdout.readline()  # "ready"
        time.sleep(warm)
        prof = subprocess.run([SFPROF, "-p", str(jvm.pid), "-d", str(secs), "-F", "199",
                               "--quiet", "-o", out], capture_output=True, text=True, timeout=120)
    finally:
        jvm.kill()
        jvm.wait()
    return prof


def offcpu(d, errs):
    subprocess.run(["javac", "-d", d, SLEEP_SRC], check=True, timeout=120)
    jvm = subprocess.Popen(["java", "-Xint", "-cp", d, "HsSleep", "40"],
                           stdout=subprocess.PIPE, text=True, cwd=d)
    out = os.path.join(d, "off.folded")
    try:
        jvm.stdout.readline()
        r = subprocess.run([SFPROF, "-e", "offcpu", "-p", str(jvm.pid), "-d", "3", "--quiet",
                            "-o", out], capture_output=True, text=True, timeout=120)
    finally:
        jvm.kill()
        jvm.wait()
    if r.returncode != 0:
        errs.append("offcpu: sfprof exited %d: %s" % (r.returncode, r.stderr[-300:]))
        return
    chain = ";HsSleep.main;HsSleep.loop;HsSleep.nap;java.lang.Thread.sleep;"
    total = hit = 0
    for frames, n in stacks(out):
        if frames[0] != "java" or "JLI_Launch" in frames:
            continue
        total += n
        hit += n if chain in ";".join(frames) + ";" else 0
    share = 100.0 * hit / max(total, 1)
    print("offcpu: main thread %d us off-CPU, %.1f%% under %s" % (total, share, chain[1:-1]))
    if total == 0 or share < 90.0:
        errs.append("offcpu: %.1f%% of the main thread's off-CPU time under %s, want >= 90%%"
                    % (share, chain))


def main():
    if os.geteuid() != 0:
        print("SKIP %s: needs root to load BPF programs" % NAME)
        return 0
    if not (shutil.which("java") and shutil.which("javac")):
        print("SKIP %s: no JDK (openjdk-17-jdk-headless) on this machine" % NAME)
        return 0
    errs = []
    deep = ["HsChain.main", "HsChain.outerLoop", "HsChain.countPrimes"]
    with tempfile.TemporaryDirectory() as d:
        subprocess.run(["javac", "-d", d, SRC], check=True, timeout=120)
        for what, args, secs, chain in (("-Xint", ["-Xint"], 4, deep),
                                        ("default, early", [], 2, deep[:2])):
            out = os.path.join(d, "live.folded")
            r = live(d, args, secs, out)
            if r.returncode != 0:
                print("FAIL %s: sfprof exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
                return 1
            measure(out, what, chain, 90.0, errs)
        # methods C2 inlined into a compiled caller (isPrime kept out of
        # line, so outerLoop, with countPrimes and the lambda inlined, is a
        # caller): each a frame of its own from the scopes at its return
        # address (measured 97%)
        out = os.path.join(d, "inl.folded")
        r = live(d, ["-XX:CompileCommand=quiet", "-XX:CompileCommand=dontinline,HsChain::isPrime"],
                 3, out, warm=2.0)
        if r.returncode != 0:
            print("FAIL %s: sfprof exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        measure(out, "inlined into a caller", deep + ["lambda", "HsChain.lambda$outerLoop$0",
                                                      "HsChain.isPrime"], 90.0, errs)
        # C1 only (-XX:TieredStopAtLevel=1): its nmethods' scopes alike
        # (measured 99%)
        r = live(d, ["-XX:TieredStopAtLevel=1"], 3, out, warm=2.0)
        if r.returncode != 0:
            print("FAIL %s: sfprof exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        measure(out, "C1", deep + ["lambda", "HsChain.lambda$outerLoop$0", "HsChain.isPrime"],
                90.0, errs)
        # the lambda's own nmethod a caller (C1, the lambda's test() not
        # inlined into countPrimes, isPrime not into it): its hidden class
        # has no source file or lines, the lambda body inlined into it is
        # still its own frame between it and isPrime (measured 98%; it
        # was missing in every sample, as in a default JVM's first
        # milliseconds, C1's first code)
        r = live(d, ["-XX:TieredStopAtLevel=1", "-XX:CompileCommand=quiet",
                     "-XX:CompileCommand=dontinline,*Lambda*::test",
                     "-XX:CompileCommand=dontinline,HsChain::isPrime"], 3, out, warm=2.0)
        if r.returncode != 0:
            print("FAIL %s: sfprof exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        measure(out, "a lambda's nmethod as a caller",
                deep + ["lambda", "HsChain.lambda$outerLoop$0", "HsChain.isPrime"], 90.0, errs)
        pprof_lines(d, "-Xint", ["-Xint"], errs)
        # compiled callers (C2 without inlining, the chain warm): the line
        # of the PcDesc at each return address (time to compile first)
        pprof_lines(d, "compiled", ["-XX:-Inline"], errs, warm=2.0)
        offcpu(d, errs)

        cap = os.path.join(d, "run.sfcap")
        r = subprocess.run([SFPROF, "record", "-F", "199", "--quiet", "-o", cap, "--", "java",
                            "-Xint", "-cp", d, "HsChain", "4"],
                           capture_output=True, text=True, timeout=120, cwd=d)
        if r.returncode != 0:
            print("FAIL %s: record exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        rep = os.path.join(d, "report.folded")
        r = subprocess.run([SFPROF, "report", "--quiet", "-o", rep, cap],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            print("FAIL %s: report exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        # (its samples include the JVM's start, before HsChain runs; a
        # frame at an interpreter PC another frame of its stack has is
        # [interpreter] in a capture, which names frames by PC)
        measure(rep, "record/report -Xint", deep, 70.0, errs, lenient=True)
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs[:6])))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""JIT code named from jitdump files (jit-PID.dump), found by the
executable mapping of the file that announces it.

1. tests/workloads/jitdump.c, a tiny JIT that writes its own dump: every
   sample is in its two JIT functions (one of them moved halfway, a MOVE
   record), so the stacks are known exactly: _start ... main;drive;
   sfjit_outer[;sfjit_inner]. Profiled live, and recorded then reported
   after its dump file is deleted (the capture carries the names). The
   loop's source line (sfjit.js:11, in the SVG) comes from the dump's
   DEBUG_INFO.
2. node --perf-prof --interpreted-frames-native-stack (V8 writes a jitdump,
   no perf map): the hot JS function named in >= 80% of the samples, and
   those stacks rooted at _start."""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libunwind import ROOT, SFPROF, WL  # noqa: E402

NAME = "names_jitdump"

HOT_JS = os.path.join(ROOT, "tests", "workloads", "js", "hot.js")

WANT = "_start;__libc_start_main;__libc_start_call_main;main;drive;sfjit_outer"


def folded(path):
    out = []
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        out.append((stack.split(";"), int(n)))
    return out


def check_workload(stacks, what, errs):
    """Every sample of the JIT: named, exact, rooted."""
    total = exact = inner = anon = 0
    for frames, n in stacks:
        total += n
        s = ";".join(frames[1:])
        if s == WANT or s == WANT + ";sfjit_inner":
            exact += n
            inner += n if frames[-1] == "sfjit_inner" else 0
        if any(f.startswith("[anon]") or f in ("[jit]", "[truncated]") for f in frames):
            anon += n
    print("%s: %d samples, %d exactly %s[;sfjit_inner] (%d in sfjit_inner), "
          "%d with an [anon], [jit] or [truncated] frame" % (what, total, exact, WANT, inner, anon))
    if total < 50:
        errs.append("%s: only %d samples" % (what, total))
    elif exact < 0.97 * total or inner < 0.8 * total or anon > 0.01 * total:
        errs.append("%s: %d of %d samples exact (%d in sfjit_inner, %d unnamed)" % (
            what, exact, total, inner, anon))


def workload(d, errs):
    exe = os.path.join(WL, "jitdump-sframe")
    out = os.path.join(d, "live.folded")
    r = subprocess.run([SFPROF, "-F", "199", "--quiet", "-o", out, "--", exe, "3"],
                       capture_output=True, text=True, timeout=120, cwd=d)
    if r.returncode != 0:
        errs.append("live: sfprof exited %d: %s" % (r.returncode, r.stderr[-300:]))
        return
    check_workload(folded(out), "live", errs)
    for f in glob.glob(os.path.join(d, "jit-*.dump")):
        os.unlink(f)

    # the dump's DEBUG_INFO gives sfjit_inner's loop its line: the SVG's
    # tooltip shows it (file:line of the hottest PC)
    svg = os.path.join(d, "live.svg")
    r = subprocess.run([SFPROF, "-F", "199", "--quiet", "-o", svg, "--", exe, "1.5"],
                       capture_output=True, text=True, timeout=120, cwd=d)
    if r.returncode != 0:
        errs.append("svg: sfprof exited %d: %s" % (r.returncode, r.stderr[-300:]))
    elif "sfjit.js:11" not in open(svg).read():
        errs.append("svg: no sfjit.js:11 (the jitdump's debug info) for sfjit_inner")
    else:
        print("svg: sfjit_inner at sfjit.js:11, from the dump's debug info")
    for f in glob.glob(os.path.join(d, "jit-*.dump")):
        os.unlink(f)

    cap = os.path.join(d, "run.sfcap")
    r = subprocess.run([SFPROF, "record", "-F", "199", "--quiet", "-o", cap, "--", exe, "3"],
                       capture_output=True, text=True, timeout=120, cwd=d)
    if r.returncode != 0:
        errs.append("record: sfprof exited %d: %s" % (r.returncode, r.stderr[-300:]))
        return
    dumps = glob.glob(os.path.join(d, "jit-*.dump"))
    if not dumps:
        errs.append("the workload wrote no jit-PID.dump")
    for f in dumps:
        os.unlink(f)  # report must not need it
    out = os.path.join(d, "report.folded")
    r = subprocess.run([SFPROF, "report", "-o", out, cap], capture_output=True, text=True,
                       timeout=120)
    if r.returncode != 0:
        errs.append("report: sfprof exited %d: %s" % (r.returncode, r.stderr[-300:]))
        return
    check_workload(folded(out), "record+report, dump deleted", errs)


def node(d, errs):
    node = shutil.which("node")
    if not node:
        print("(no node on this machine: the V8 part is skipped)")
        return
    js = HOT_JS
    maps_before = set(glob.glob("/tmp/perf-*.map"))
    # 6 s of JS: node's start-up (OpenSSL, snapshot) is a fixed CPU cost
    # that a loaded machine stretches into more of a shorter run
    out = os.path.join(d, "node.folded")
    r = subprocess.run([SFPROF, "-F", "199", "--quiet", "-o", out, "--",
                        node, "--perf-prof", "--interpreted-frames-native-stack", js, "6"],
                       capture_output=True, text=True, timeout=120, cwd=d)
    new_maps = set(glob.glob("/tmp/perf-*.map")) - maps_before
    for m in new_maps:
        os.unlink(m)
    if r.returncode != 0:
        errs.append("node: sfprof exited %d: %s" % (r.returncode, r.stderr[-300:]))
        return
    if new_maps:
        errs.append("node --perf-prof wrote a perf map too: the test would not "
                    "test the jitdump")
    if not glob.glob(os.path.join(d, "jit-*.dump")):
        errs.append("node --perf-prof wrote no jit-PID.dump in its cwd")
    total = named = rooted = 0
    for frames, n in folded(out):
        total += n
        if any(f.startswith("JS:") and "sfprofHot" in f for f in frames):
            named += n
            if len(frames) > 1 and frames[1] == "_start":
                rooted += n
    print("node: %d samples, hot JS function named in %d (%.1f%%), %d of those rooted "
          "at _start" % (total, named, 100.0 * named / max(total, 1), rooted))
    if total < 100:
        errs.append("node: only %d samples" % total)
    elif named < 0.8 * total:
        errs.append("node: hot JS function named in %.1f%% of samples, want >= 80%%" %
                    (100.0 * named / total))
    if named and rooted < 0.95 * named:
        errs.append("node: only %d of %d JS stacks rooted at _start" % (rooted, named))


def main():
    if os.geteuid() != 0:
        print("SKIP %s: needs root to load BPF programs" % NAME)
        return 0
    errs = []
    with tempfile.TemporaryDirectory() as d:
        workload(d, errs)
        node(d, errs)
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Go past the stack switch: at most 1% of a GC-heavy Go program's
on-CPU samples end [truncated], with perf's frame-pointer walk beside it
as the yardstick.

tests/workloads/gowork.go (six goroutines hashing, allocating and
recursing with growing stacks, so the GC's mark workers, assists,
morestack and the scheduler all run) is built with Debian's go and
recorded by sfprof at 999 Hz for 10 s while `perf record -g` (frame
pointers, which Go keeps) records the same process at the same time.
  - sfprof: >= 3000 samples (so that 1% is 30 samples or more), <= 1%
    [truncated]; the [truncated] stacks are printed by their last frames
    (which switch or handler they stopped at);
  - every other stack ends at a root of a Go thread (runtime.goexit,
    mstart, rt0_go) or is [no user stack];
  - sfprof reaches a root in no fewer of its samples than perf's
    frame-pointer walk does in its own, less 0.5%.
Before the walk went past the switch, 16-20% were [truncated]; with the
goroutine's context 0.28-0.72% (5 runs), most of the rest at
morestack;newstack;gopreempt_m (no goroutine left on the M), which now
goes on on g0 itself to mstart: 0.19-0.53% (6 runs).
"""
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from libunwind import SFPROF, have_perf  # noqa: E402
from libcapture import perf_env  # noqa: E402
import names_go  # noqa: E402

NAME = "unwind_go_truncated"
FREQ = 999
SECS = 10
MIN_SAMPLES = 3000
ROOTS = names_go.ROOTS


def folded(path):
    out = {}
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        if stack:
            k = tuple(names_go.fn(f) for f in stack.split(";"))
            out[k] = out.get(k, 0) + int(n)
    return out


def perf_stacks(data):
    """perf script's user frames, root first, one entry a sample"""
    r = subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym,dso"],
                       capture_output=True, text=True, timeout=300, env=perf_env())
    out = []
    for block in r.stdout.split("\n\n"):
        fr = []
        for ln in block.split("\n"):
            m = re.match(r"\s*([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$", ln)
            if not m or int(m.group(1), 16) >= 0xffff800000000000 or "kernel" in m.group(3):
                continue
            fr.append(names_go.fn(re.sub(r"\+0x[0-9a-f]+$", "", m.group(2))))
        if fr:
            out.append(list(reversed(fr)))
    return out


def main():
    if os.geteuid() != 0:
        print("SKIP %s: needs root to load BPF programs" % NAME)
        return 0
    if subprocess.run(["sh", "-c", "command -v go"], capture_output=True).returncode:
        print("FAIL %s: go not installed (tests/install-deps.sh installs golang-go)" % NAME)
        return 1
    errs = []
    with tempfile.TemporaryDirectory(prefix="sfprof-gotrunc.") as d:
        binp = os.path.join(d, "gowork")
        names_go.go_build(d, binp)
        wl = subprocess.Popen([binp, str(SECS * 1000 + 6000)], stdout=subprocess.DEVNULL)
        perf = None
        try:
            time.sleep(0.5)
            pdata = os.path.join(d, "fp.data")
            if have_perf():
                perf = subprocess.Popen(["perf", "record", "-q", "-g", "-F", str(FREQ), "-p",
                                         str(wl.pid), "-o", pdata, "--", "sleep", str(SECS)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        env=perf_env())
            cap = os.path.join(d, "go.sfcap")
            r = subprocess.run([SFPROF, "record", "-F", str(FREQ), "--quiet", "--stats", "-d",
                                str(SECS), "-p", str(wl.pid), "-o", cap],
                               capture_output=True, text=True, timeout=180)
            if perf:
                perf.wait(timeout=120)
        finally:
            if perf and perf.poll() is None:
                perf.kill()
                perf.wait()
            wl.kill()
            wl.wait()
        if r.returncode != 0:
            print("FAIL %s: record exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        st = dict((k, int(v)) for k, v in re.findall(r"^(\w+): (\d+)$", r.stderr, re.M))
        out = os.path.join(d, "cpu.folded")
        r = subprocess.run([SFPROF, "report", "-e", "cpu", "--no-inline", "-o", out, cap],
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            print("FAIL %s: report exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        stacks = folded(out)
        pstacks = perf_stacks(pdata) if perf else []
    total = sum(stacks.values())
    trunc, rooted, gone, cut, bad = 0, 0, 0, {}, []
    for k, n in stacks.items():
        frames = k[1:]  # no comm
        if frames and frames[0] == "[truncated]":
            trunc += n
            last = ";".join(frames[1:4])
            cut[last] = cut.get(last, 0) + n
        elif frames and frames[0] in ROOTS:
            rooted += n
        elif frames == ("[no user stack]",):
            gone += n
        else:
            bad.append((n, ";".join(frames)[:200]))
    share = trunc / max(total, 1)
    classes = sorted(cut.items(), key=lambda x: -x[1])
    print("sfprof: %d samples, %d rooted, %d [truncated] (%.2f%%), %d [no user stack]; "
          "walks at a switch continued %d (on g0's base %d, parked %d), stopped %d" % (
              total, rooted, trunc, 100 * share, gone, st.get("stacks_go_switch_continued", 0),
              st.get("stacks_go_switch_g0", 0), st.get("stacks_go_switch_parked", 0),
              st.get("stacks_go_switch_stopped", 0)))
    print("[truncated] at: %s" % classes[:10])
    if total < MIN_SAMPLES:
        errs.append("only %d samples in %d s at %d Hz (want >= %d for a 1%% bound)" % (
            total, SECS, FREQ, MIN_SAMPLES))
    if share > 0.01:
        errs.append("%d of %d samples [truncated] (%.2f%%), more than 1%%; at %s" % (
            trunc, total, 100 * share, classes[:5]))
    if bad:
        errs.append("%d stacks neither rooted nor [truncated], e.g. %s" % (len(bad), bad[0]))
    if pstacks:
        prooted = sum(1 for s in pstacks if s and s[0] in ROOTS)
        pshare, sshare = prooted / len(pstacks), rooted / max(total, 1)
        print("perf -g (frame pointers): %d samples, %d rooted (%.2f%%); sfprof rooted %.2f%%"
              % (len(pstacks), prooted, 100 * pshare, 100 * sshare))
        if sshare < pshare - 0.005:
            errs.append("sfprof rooted %.2f%% of %d samples, perf's frame-pointer walk %.2f%% "
                        "of %d" % (100 * sshare, total, 100 * pshare, len(pstacks)))
    else:
        print("perf: not installed or no samples; the yardstick is skipped")
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Go: stacks that cross the scheduler's stack switches stay true, and
stripped Go binaries are named from .gopclntab.

tests/workloads/gowork.go (goroutines doing CPU work and allocating
enough to run the GC, so stacks pass runtime.systemstack, mcall,
morestack and gcBgMarkWorker) is built with Debian's go into a scratch
directory as is, with -ldflags=-s (no .symtab, no DWARF, no CFI) and
linked externally by gcc then stripped (CFI for the C start files only),
and as a stripped PIE.

1. Rows: sfprof's rows from .gopclntab's SP deltas equal the rows from the
   binary's .debug_frame at every PC (tests/e2e/go_rows.c).
2. On-CPU and futex profiles of the unstripped build (sfprof record -p,
   the process's /proc/PID/maps read while it runs): every pprof location
   lies in an executable mapping of the process; no frame is [unknown] or
   an unnamed address of the binary; every stack is rooted at
   runtime.goexit, mstart or rt0_go or marked [truncated]; a stack-switch
   function (systemstack, mcall, morestack, asmcgocall) is either the
   outermost frame of a [truncated] stack (before the first fix, made-up
   frames followed it: "[unknown]+0x538bbf;runtime.newproc;runtime.mcall")
   or, on g0, followed by the user goroutine's frames (bpf/go.bpf.h): the
   workload's functions among them, outermost first, are the start of a
   call chain that runtime.Callers gave the workload (it prints them), and
   systemstack's is runtime.systemstack_switch (past runtime.asyncPreempt
   too, whose return address is the PC a signal interrupted). At most 4%
   of the on-CPU samples are [truncated] (the issue's goal is 1%: 0.2-3.0%
   measured; 16-20% before the walk went past the switch), and
   --stats counts the walks continued and stopped at a switch.
3. The stripped builds: the same checks, their top functions (by self
   samples) are the unstripped build's, and as many stacks are rooted
   (no DWARF: the offsets come from the table for the version in
   .go.buildinfo, which must equal the unstripped build's DWARF offsets,
   tests/e2e/go_offsets.c)."""
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from libunwind import BUILD, ROOT, SFPROF  # noqa: E402
import libsurface as ls  # noqa: E402

NAME = "names_go"
SRC = os.path.join(ROOT, "tests", "workloads", "gowork.go")
# Go's entry frames, and glibc's for the threads an externally linked
# (cgo) binary makes with pthread_create: a sample in the new thread
# before clone3/clone calls its start routine has that one frame, which
# glibc's CFI marks outermost (its return address undefined)
ROOTS = {"runtime.goexit", "runtime.mstart", "runtime.rt0_go", "clone3", "clone"}
# the workload's call edges: a skipped or made-up frame breaks one
CALLERS = {"main.hash": {"main.worker"}, "main.churn": {"main.worker"},
           "main.deep": {"main.deep", "main.worker"}, "main.worker": {"main.main.func1"}}
SWITCH = {"runtime.systemstack", "runtime.mcall", "runtime.morestack",
          "runtime.asmcgocall"}



def ldlibs():
    """The libraries a program linking libsfprof.a needs, as the Makefile says."""
    return subprocess.run(["make", "-s", "--no-print-directory", "print-ldlibs"], cwd=ROOT,
                          capture_output=True, text=True, check=True).stdout.split()

def fn(name):
    """Go's ABI0 wrappers carry .abi0 in .symtab, not in .gopclntab"""
    return name[:-5] if name.endswith(".abi0") else name


def go_build(d, out, *flags, cgo="0"):
    env = dict(os.environ, GOCACHE=os.path.join(d, "cache"), GOPATH=os.path.join(d, "gopath"),
               GOFLAGS="", GO111MODULE="off", GOPROXY="off", CGO_ENABLED=cgo,
               GOTOOLCHAIN="local")
    subprocess.run(["go", "build"] + list(flags) + ["-o", out, SRC], env=env, check=True,
                   capture_output=True, timeout=300)


def rx_maps(pid):
    """[(lo, hi)] of pid's executable mappings"""
    out = []
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            p = line.split()
            if len(p) >= 2 and "x" in p[1]:
                lo, hi = (int(x, 16) for x in p[0].split("-"))
                out.append((lo, hi))
    return out


def record(d, binp, secs):
    """Run binp, record cpu+futex of it for secs: (capture, exec maps, the
    call chains it printed, record's --stats)"""
    log = os.path.join(d, os.path.basename(binp) + ".log")
    with open(log, "w") as out:
        wl = subprocess.Popen([binp, str(int(secs * 1000) + 3000)], stdout=out)
    try:
        time.sleep(0.5)
        maps = rx_maps(wl.pid)
        cap = os.path.join(d, os.path.basename(binp) + ".sfcap")
        r = subprocess.run([SFPROF, "record", "-e", "cpu,futex", "-F", "499", "--quiet",
                            "--stats", "-d", str(secs), "-p", str(wl.pid), "-o", cap],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise RuntimeError("record exited %d: %s" % (r.returncode, r.stderr[-300:]))
        # (the maps again: the heap grows while it runs)
        maps += rx_maps(wl.pid)
    finally:
        wl.kill()
        wl.wait()
    chains = [ln.split()[1:] for ln in open(log) if ln.startswith("callers: ")]
    stats = dict((k, int(v)) for k, v in re.findall(r"^(\w+): (\d+)$", r.stderr, re.M))
    return cap, maps, chains, stats


def collapse(names):
    """a recursion (main.deep;main.deep...) as one frame"""
    out = []
    for n in names:
        if not out or out[-1] != n:
            out.append(n)
    return out


def goroutine_ok(part, chains):
    """the frames past a switch (outermost first): the workload's among
    them begin a chain runtime.Callers printed"""
    vocab = {n for ch in chains for n in ch}
    seq = collapse([f for f in part if f in vocab])
    return any(collapse(ch)[:len(seq)] == seq for ch in chains)


def report(cap, out, event):
    r = subprocess.run([SFPROF, "report", "-e", event, "--no-inline", "-o", out, cap],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError("report %s exited %d: %s" % (out, r.returncode, r.stderr[-300:]))
    return out


def pprof_addresses(pb):
    """every location address of the pprof file (go tool pprof -raw)"""
    _, raw = ls.pprof_raw(pb)
    addrs, section = [], None
    for line in raw.splitlines():
        if line.startswith("Locations"):
            section = "locs"
        elif line.startswith("Mappings"):
            section = None
        elif section == "locs":
            m = re.match(r"^\s+\d+: (0x[0-9a-f]+)(?: M=\d+)?(.*)$", line)
            if m:
                addrs.append((int(m.group(1), 16), m.group(2).strip()))
    return addrs


def check_stacks(tag, folded, binname, errs, stats, chains):
    """The folded checks of a profile; fills stats (names -> self count,
    rooted, truncated, switch stacks, those continued, frames seen)"""
    unnamed = re.compile(r"^(\[unknown\]|%s\+0x[0-9a-f]+)" % re.escape(binname))
    selfc, seen = {}, set()
    rooted = trunc = switched = continued = total = 0
    bad_root, bad_switch, bad_name, bad_edge, bad_cont = [], [], [], [], []
    for stack, c in folded.items():
        frames = [fn(f) for f in stack[1:]]  # no comm
        total += c
        seen.update(frames)
        for f in frames:
            if unnamed.match(f) or f.startswith("[unknown"):
                bad_name.append(";".join(frames))
                break
        if frames and frames[0] == "[truncated]":
            trunc += c
            real = frames[1:]
        elif frames and frames[0] in ROOTS:
            rooted += c
            real = frames
        elif frames == ["[no user stack]"]:
            # sampled in the kernel after the user stack was gone (a
            # thread's exit): no user frame to root (unwind_exec_exit)
            real = []
        else:
            bad_root.append(";".join(frames))
            real = frames
        # a switch function is the outermost frame of a [truncated] stack,
        # or the goroutine's frames follow it
        for i, f in enumerate(real):
            if f in SWITCH:
                switched += c
                if frames[0] == "[truncated]":
                    if i != 0:
                        bad_switch.append(";".join(frames))
                elif i == 0 or not goroutine_ok(real[:i], chains) or (
                        f == "runtime.systemstack" and real[i - 1] != "runtime.systemstack_switch"):
                    bad_cont.append(";".join(frames))
                else:
                    continued += c
                break
        for i, f in enumerate(real):
            if f in CALLERS and i and real[i - 1] not in CALLERS[f]:
                bad_edge.append(";".join(frames))
                break
        if real:
            selfc[real[-1]] = selfc.get(real[-1], 0) + c
    print("%s: %d samples/us in %d stacks: %d rooted, %d [truncated] (%.2f%%), %d at a stack "
          "switch, %d of them continued on the goroutine's stack" % (
              tag, total, len(folded), rooted, trunc, 100.0 * trunc / max(total, 1), switched,
              continued))
    if total < (100 if tag.endswith("cpu") else 1):
        errs.append("%s: only %d samples" % (tag, total))
    for what, lst in (("unnamed or [unknown] frames", bad_name),
                      ("stacks neither rooted nor [truncated]", bad_root),
                      ("frames above a stack switch", bad_switch),
                      ("goroutine frames past a switch not in a runtime.Callers chain",
                       bad_cont),
                      ("calls the workload does not make", bad_edge)):
        if lst:
            errs.append("%s: %d %s, e.g. %s" % (tag, len(lst), what, lst[0][:300]))
    cut = {}
    for stack, c in folded.items():
        if len(stack) > 2 and stack[1] == "[truncated]":
            cut[fn(stack[2])] = cut.get(fn(stack[2]), 0) + c
    print("%s: [truncated] at %s" % (tag, sorted(cut.items(), key=lambda x: -x[1])[:5]))
    # The issue's <= 1% is held by unwind_go_truncated.py over >= 3000
    # samples; here, in runs of 500-1200 samples, a few samples more or
    # less move the share by a percent (1.1-3.0% in the merged tree before
    # morestack's gopreempt_m went on on g0 to mstart, 0.17-0.57% after),
    # so the bound is 4%: far under the 16-20% of before the walk went
    # past the switch.
    if tag.endswith("cpu") and trunc > 0.04 * total:
        errs.append("%s: %.2f%% of the samples [truncated], more than 4%%" % (
            tag, 100.0 * trunc / max(total, 1)))
    stats.update(self=selfc, seen=seen, rooted=rooted, total=total, switched=switched,
                 continued=continued)


def profile(d, binp, errs, secs=3):
    """check binp's cpu and futex profiles; returns the cpu stats"""
    cap, maps, chains, rstats = record(d, binp, secs)
    if not chains:
        errs.append("%s printed no runtime.Callers chain" % os.path.basename(binp))
    print("%s: walks at a switch continued %d, stopped %d (parked goroutines %d); "
          "Go processes %d" % (os.path.basename(binp), rstats.get("stacks_go_switch_continued", 0),
                               rstats.get("stacks_go_switch_stopped", 0),
                               rstats.get("stacks_go_switch_parked", 0),
                               rstats.get("go_processes", 0)))
    if not rstats.get("stacks_go_switch_continued") or rstats.get("go_processes") != 1:
        errs.append("%s: record --stats counts no walk continued past a switch, or no Go "
                    "process (%s)" % (os.path.basename(binp),
                                      {k: v for k, v in rstats.items() if "go_" in k}))
    binname = os.path.basename(binp)
    out = {}
    for ev in ("cpu", "futex"):
        folded = ls.parse_folded(open(report(cap, os.path.join(d, binname + "." + ev + ".folded"),
                                             ev)).read())
        st = {}
        check_stacks("%s %s" % (binname, ev), folded, binname, errs, st, chains)
        out[ev] = st
        pb = report(cap, os.path.join(d, binname + "." + ev + ".pb.gz"), ev)
        outside = [(a, n) for a, n in pprof_addresses(pb)
                   if a and not any(lo <= a < hi for lo, hi in maps)]
        if outside:
            errs.append("%s %s: %d locations outside executable mappings, e.g. %s" % (
                binname, ev, len(outside), ["%#x %s" % x for x in outside[:3]]))
    cpu = out["cpu"]
    gc = [f for f in cpu["seen"] if f.startswith("runtime.gcBgMarkWorker")]
    if not gc or not cpu["switched"] or not cpu["continued"]:
        errs.append("%s: the workload did not exercise the GC (%s) or a stack switch (%d)" % (
            binname, gc, cpu["switched"]))
    return cpu


def top(selfc, share):
    tot = sum(selfc.values()) or 1
    return {f for f, c in selfc.items() if c >= share * tot and not f.startswith("[")}


def main():
    if os.geteuid() != 0:
        print("SKIP %s: needs root to load BPF programs" % NAME)
        return 0
    if subprocess.run(["sh", "-c", "command -v go"], capture_output=True).returncode:
        print("FAIL %s: go not installed (tests/install-deps.sh installs golang-go)" % NAME)
        return 1
    errs = []
    with tempfile.TemporaryDirectory(prefix="sfprof-go.") as d:
        full, strip = os.path.join(d, "gowork"), os.path.join(d, "gowork-s")
        go_build(d, full)
        go_build(d, strip, "-ldflags=-s")
        # linked by gcc, then stripped: .eh_frame for the C start files only
        xstrip = os.path.join(d, "gowork-xs")
        go_build(d, xstrip, "-ldflags=-linkmode=external -s", cgo="1")
        # position-independent: the table is .data.rel.ro.gopclntab
        pie = os.path.join(d, "gowork-pie")
        go_build(d, pie, "-buildmode=pie", "-ldflags=-s")
        # 1. pcsp rows == .debug_frame rows
        helper = os.path.join(d, "go_rows")
        san = []
        if "__asan_" in subprocess.run(["nm", os.path.join(BUILD, "libsfprof.a")],
                                       capture_output=True, text=True).stdout:
            san = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
        r = subprocess.run([os.environ.get("CC", "gcc"), "-std=gnu11", "-O2", "-g", "-Wall",
                            "-Wextra", "-Werror", "-D_GNU_SOURCE"] + san +
                           ["-Iinclude", "-Isrc", "-o", helper, "tests/e2e/go_rows.c",
                            os.path.join(BUILD, "libsfprof.a")] + ldlibs(), cwd=ROOT, capture_output=True,
                           text=True)
        if r.returncode != 0:
            errs.append("tests/e2e/go_rows.c does not build: %s" % r.stderr[:300])
        else:
            r = subprocess.run([helper, full], capture_output=True, text=True)
            print("pcsp rows vs .debug_frame rows: " + r.stdout.strip())
            m = re.search(r"same (\d+) differ (\d+)", r.stdout)
            if r.returncode != 0 or not m or int(m.group(1)) < 10000:
                errs.append("pcsp rows differ from .debug_frame's: %s %s" % (
                    r.stdout[-400:], r.stderr[-200:]))
        # the offsets table == the DWARF's (the Go Debian ships)
        helper2 = os.path.join(d, "go_offsets")
        r = subprocess.run([os.environ.get("CC", "gcc"), "-std=gnu11", "-O2", "-g", "-Wall",
                            "-Wextra", "-Werror", "-D_GNU_SOURCE"] + san +
                           ["-Iinclude", "-Isrc", "-o", helper2, "tests/e2e/go_offsets.c",
                            os.path.join(BUILD, "libsfprof.a")] + ldlibs(), cwd=ROOT,
                           capture_output=True, text=True)
        if r.returncode != 0:
            errs.append("tests/e2e/go_offsets.c does not build: %s" % r.stderr[:300])
        else:
            r = subprocess.run([helper2, full], capture_output=True, text=True)
            print("runtime offsets: " + r.stdout.strip())
            if r.returncode != 0 or not r.stdout.strip().endswith(" same"):
                errs.append("the offsets table is not the DWARF's: %s %s" % (
                    r.stdout[-400:], r.stderr[-200:]))
        # 2. and 3.
        a = profile(d, full, errs)
        ta = top(a["self"], 0.03)
        if not ta:
            errs.append("no top function in the unstripped profile")
        for other in (strip, xstrip, pie):
            b = profile(d, other, errs)
            tag = os.path.basename(other)
            tb = top(b["self"], 0.03)
            print("top functions: unstripped %s; %s %s" % (sorted(ta), tag, sorted(tb)))
            if ta - b["seen"] or tb - a["seen"]:
                errs.append("top functions differ: only unstripped %s, only %s %s" % (
                    sorted(ta - b["seen"]), tag, sorted(tb - a["seen"])))
            # stripped builds unwind from pcsp as well as from .debug_frame
            fa, fb = a["rooted"] / max(a["total"], 1), b["rooted"] / max(b["total"], 1)
            print("rooted: unstripped %.1f%%, %s %.1f%%" % (100 * fa, tag, 100 * fb))
            if fb < 0.8 * fa:
                errs.append("%s stacks rooted %.1f%%, unstripped %.1f%%" % (
                    tag, 100 * fb, 100 * fa))
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

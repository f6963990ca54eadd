#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Anonymous code no JIT map names (LuaJIT's traces: machine code in an
anonymous executable mapping, no perf map, no jitdump) is one frame per
mapping, never one per sampled address, spelled the same way live
(a started command), with -p (attached to a running process) and from
record + report: <= 4 distinct anonymous-code frames in each, the same
names in all three (doc/sfprof.1, DESCRIPTION). In pprof (from the
report) each such Location keeps its runtime address, in a Mapping that
holds it."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from libunwind import ROOT, SFPROF  # noqa: E402
from libsurface import pprof_raw, pprof_mappings  # noqa: E402

NAME = "names_anon_code"
HOT_LUA = os.path.join(ROOT, "tests", "workloads", "lua", "hot.lua")
# what an unnamed frame of anonymous code may be spelled as: the old
# spellings ([anon]+0x, [unknown]+0x) and the one frame per mapping
ANON = re.compile(r"^(\[anon\]\+0x|\[unknown\]\+0x|\[jit\])")


UNMAPPED = re.compile(r"^\[unknown\]\+0x")


def anon_frames(path):
    """The anonymous-code names of a folded file, its samples, the samples
    in anonymous code, and the samples whose PC was in no mapping of
    sfprof's view ([unknown]+0xADDR) apart."""
    names, total, anon, unmapped = set(), 0, 0, 0
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        total += int(n)
        hit = [f for f in stack.split(";") if ANON.match(f)]
        if any(UNMAPPED.match(f) for f in hit):
            unmapped += int(n)
        names.update(f for f in hit if not UNMAPPED.match(f))
        anon += int(n) if hit else 0
    return names, total, anon, unmapped


def check_pprof(pb, errs):
    _, text = pprof_raw(pb)
    maps = {m[0]: m for m in pprof_mappings(text)}
    locs = re.findall(r"^\s+\d+: 0x([0-9a-f]+) (?:M=(\d+) )?\[jit\] ", text, re.M)
    bad = [(a, m) for a, m in locs
           if int(a, 16) == 0 or not m or int(m) not in maps or
           not maps[int(m)][1] <= int(a, 16) < maps[int(m)][2]]
    print("pprof: %d [jit] locations, %d without an address in their mapping" % (
        len(locs), len(bad)))
    if not locs or bad:
        errs.append("pprof: expected every [jit] location at its address in its mapping, "
                    "got %d of %d not (%s)" % (len(bad), len(locs), bad[:3]))


def main():
    if os.geteuid() != 0:
        print("SKIP %s: needs root to load BPF programs" % NAME)
        return 0
    luajit = shutil.which("luajit")
    if not luajit:
        print("SKIP %s: no luajit on this machine (tests/install-deps.sh)" % NAME)
        return 0
    errs, seen = [], {}
    with tempfile.TemporaryDirectory() as d:
        live = os.path.join(d, "live.folded")
        r = subprocess.run([SFPROF, "-F", "199", "--quiet", "-o", live, "--",
                            luajit, HOT_LUA, "3"], capture_output=True, text=True,
                           timeout=120)
        if r.returncode != 0:
            print("FAIL %s: sfprof exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        seen["live"] = live

        target = subprocess.Popen([luajit, HOT_LUA, "5"], stdout=subprocess.DEVNULL)
        try:
            time.sleep(0.5)  # (its trace compiled)
            attached = os.path.join(d, "p.folded")
            r = subprocess.run([SFPROF, "-F", "199", "--quiet", "-d", "3", "-p",
                                str(target.pid), "-o", attached], capture_output=True,
                               text=True, timeout=120)
        finally:
            target.kill()
            target.wait()
        if r.returncode != 0:
            print("FAIL %s: sfprof -p exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        seen["-p"] = attached

        cap = os.path.join(d, "run.sfcap")
        r = subprocess.run([SFPROF, "record", "-F", "199", "--quiet", "-o", cap, "--",
                            luajit, HOT_LUA, "3"], capture_output=True, text=True,
                           timeout=120)
        if r.returncode != 0:
            print("FAIL %s: record exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        rep = os.path.join(d, "report.folded")
        r = subprocess.run([SFPROF, "report", "-o", rep, cap], capture_output=True,
                           text=True, timeout=120)
        if r.returncode != 0:
            print("FAIL %s: report exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        seen["report"] = rep

        if shutil.which("go"):
            pb = os.path.join(d, "report.pb.gz")
            r = subprocess.run([SFPROF, "report", "-o", pb, cap], capture_output=True,
                               text=True, timeout=120)
            if r.returncode != 0:
                errs.append("report -o pprof exited %d: %s" % (r.returncode, r.stderr[-200:]))
            else:
                check_pprof(pb, errs)
        else:
            print("(no go on this machine: the pprof part is skipped)")

        got = {}
        for what, path in seen.items():
            names, total, anon, unmapped = anon_frames(path)
            got[what] = names
            print("%s: %d samples, %d in anonymous code, %d distinct names for it: %s" % (
                what, total, anon, len(names), sorted(names)[:6]))
            # A trace's PC in no mapping of sfprof's view is "[unknown]+0xADDR",
            # honestly unnamed, not a name of its own: seen once in CI's ASan
            # run under load (1 of ~600 samples live; 0 in 3 runs here). A
            # few are said; more, or any mapped PC spelled apart, fail.
            if unmapped:
                print("%s: %d samples at a PC in no mapping sfprof knew yet" % (what, unmapped))
            if unmapped > max(2, total // 100):
                errs.append("%s: expected at most 1%% of samples in unmapped anonymous code, "
                            "got %d of %d" % (what, unmapped, total))
            if total < 100 or anon < 0.5 * total:
                errs.append("%s: expected most of >= 100 samples in the trace, got %d of %d"
                            % (what, anon, total))
            if len(names) > 4:
                errs.append("%s: expected <= 4 distinct anonymous-code frames, got %d"
                            % (what, len(names)))
        if len(set(frozenset(v) for v in got.values())) != 1:
            errs.append("expected the same anonymous-code names live, with -p and in "
                        "report, got %s" % {k: sorted(v)[:3] for k, v in got.items()})
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

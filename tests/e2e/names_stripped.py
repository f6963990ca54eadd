#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Stripped code named by function: a stripped workload's frames are
`binary+0xSTART`, START the ELF vaddr of the function holding the PC as
its FDE says (readelf --debug-dump=frames), one frame per function: the
leaf is work_leaf's start (nm of the unstripped binary), and there are no
more distinct frames of the binary than it has functions."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libunwind import SFPROF, WL  # noqa: E402

NAME = "names_stripped"


def fde_ranges(path):
    """{start: end} of every FDE"""
    out = subprocess.run(["readelf", "--debug-dump=frames", path],
                         capture_output=True, text=True, check=True).stdout
    return {int(a, 16): int(b, 16)
            for a, b in re.findall(r"\bpc=([0-9a-f]+)\.\.([0-9a-f]+)", out)}


def nm_funcs(path):
    out = subprocess.run(["nm", path], capture_output=True, text=True,
                         check=True).stdout
    # (gcc's clones keep the function's name: work_leaf.constprop.0)
    return {l.split()[2].split(".")[0]: int(l.split()[0], 16) for l in out.splitlines()
            if len(l.split()) == 3 and l.split()[1] in "tT"}


def main():
    if os.geteuid() != 0:
        print("SKIP %s: needs root to load BPF programs" % NAME)
        return 0
    errs = []
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(WL, "cpuwork-ehframe")
        binp = os.path.join(d, "cpuwork-stripped")
        shutil.copy(src, binp)
        subprocess.run(["strip", "-s", binp], check=True)
        out = os.path.join(d, "out.folded")
        r = subprocess.run([SFPROF, "-F", "499", "--quiet", "-o", out, "--", binp, "200"],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            print("FAIL %s: sfprof exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        fdes = fde_ranges(binp)
        funcs = nm_funcs(src)
        seen, leaf = {}, {}
        pat = re.compile(r"^cpuwork-stripped\+0x([0-9a-f]+)$")
        for line in open(out):
            stack, _, n = line.rstrip("\n").rpartition(" ")
            frames = stack.split(";")
            for f in frames:
                m = pat.match(f)
                if m:
                    seen[int(m.group(1), 16)] = seen.get(int(m.group(1), 16), 0) + int(n)
            m = pat.match(frames[-1])
            if m:
                a = int(m.group(1), 16)
                leaf[a] = leaf.get(a, 0) + int(n)
        # A PC no FDE covers (crt code such as __do_global_dtors_aux, run
        # at exit) has no function to name it after: it stays its own
        # address. Every covered PC must be named by its FDE's start.
        covered = {a for a in seen if any(lo <= a < hi for lo, hi in fdes.items())}
        bad = sorted(a for a in covered if a not in fdes)
        print("%d distinct cpuwork-stripped frames, %d FDEs, %d functions; not at an FDE "
              "start: %s" % (len(seen), len(fdes), len(funcs), [hex(a) for a in bad]))
        if not seen:
            errs.append("no cpuwork-stripped+0x frame")
        if bad:
            errs.append("frames not at an FDE start: %s" % [hex(a) for a in bad])
        if len(covered) > len(fdes):
            errs.append("%d distinct frames for %d FDEs" % (len(covered), len(fdes)))
        top = max(leaf, key=leaf.get) if leaf else None
        print("heaviest leaf: %s (work_leaf is at %#x)" % (
            hex(top) if top is not None else None, funcs.get("work_leaf", 0)))
        if top != funcs.get("work_leaf"):
            errs.append("heaviest leaf %s is not work_leaf's start %#x" % (
                hex(top) if top is not None else None, funcs.get("work_leaf", 0)))
        for fn in ("work_mid", "work_unit"):
            if funcs.get(fn) not in seen:
                errs.append("%s (%#x) is not a frame" % (fn, funcs.get(fn, 0)))
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Inline frames and source lines from DWARF: a workload built -O2 -g
whose hot functions gcc inlines (tests/workloads/inlined.c) is recorded
once and reported as pprof, folded (with and without --no-inline) and SVG.
 - pprof: at every sampled PC of the workload, the frames that share its
   address (innermost first) are the functions `addr2line -i -f` prints
   for it;
 - folded: the inlined functions are frames of their own
   (spin_outer;mix_mid;mix_leaf, run;step_inline), and --no-inline drops
   them;
 - SVG: tooltips end in file:line, a line addr2line gives for that name.
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libunwind import SFPROF, WL  # noqa: E402

NAME = "names_inline"


def run(argv):
    return subprocess.run(argv, capture_output=True, text=True, timeout=300)


def pprof_raw(path):
    """-> (samples [(count, [loc ids] leaf first)], {loc: (addr, mapping,
    [names] innermost first)}, {mapping: (start, offset, file)}).
    By profile.proto a location's inline levels are several Lines of one
    Location; pprof -raw prints the first after the address and each
    further one on a continuation line."""
    env = dict(os.environ, HOME=tempfile.gettempdir())
    r = subprocess.run(["go", "tool", "pprof", "-raw", path], capture_output=True,
                       text=True, timeout=300, env=env)
    if r.returncode != 0:
        raise RuntimeError("go tool pprof -raw: " + r.stderr[-300:])
    samples, locs, maps, sec, cur = [], {}, {}, None, None
    for line in r.stdout.splitlines():
        if line.startswith("Samples:"):
            sec = "s"
        elif line.startswith("Locations"):
            sec = "l"
        elif line.startswith("Mappings"):
            sec = "m"
        elif sec == "s":
            m = re.match(r"^\s+(\d+)(?:\s+\d+)*: ([\d ]*?)\s*$", line)
            if m:
                samples.append((int(m.group(1)), [int(x) for x in m.group(2).split()]))
        elif sec == "l":
            m = re.match(r"^\s+(\d+): 0x([0-9a-f]+) (?:M=(\d+) )?(.*?) \S*:\d+ s=\d+$",
                         line)
            c = re.match(r"^\s+(\S.*?) \S*:\d+ s=\d+$", line)
            if m:
                cur = int(m.group(1))
                locs[cur] = (int(m.group(2), 16), int(m.group(3) or 0), [m.group(4)])
            elif c and cur is not None:
                locs[cur][2].append(c.group(1))
        elif sec == "m":
            m = re.match(r"^(\d+): 0x([0-9a-f]+)/0x[0-9a-f]+/0x([0-9a-f]+) (\S+)", line)
            if m:
                maps[int(m.group(1))] = (int(m.group(2), 16), int(m.group(3), 16),
                                         m.group(4))
    return samples, locs, maps


def addr2line(binary, addrs):
    """{addr: [(function, file, line)] innermost first}"""
    r = subprocess.run(["addr2line", "-i", "-f", "-a", "-e", binary],
                       input="".join("%#x\n" % a for a in addrs), capture_output=True,
                       text=True, check=True)
    out, cur = {}, None
    lines = r.stdout.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("0x"):
            cur = int(lines[i], 16)
            out[cur] = []
            i += 1
            continue
        fl = re.sub(r" \(discriminator \d+\)$", "", lines[i + 1])
        f, _, ln = fl.rpartition(":")
        out[cur].append((lines[i], f, ln))
        i += 2
    return out


def main():
    if os.geteuid() != 0:
        print("SKIP %s: needs root to load BPF programs" % NAME)
        return 0
    errs = []
    wl = os.path.join(WL, "inlined-ehframe")
    with tempfile.TemporaryDirectory() as d:
        cap = os.path.join(d, "inl.cap")
        r = run([SFPROF, "record", "-F", "499", "--quiet", "-o", cap, "--", wl, "2"])
        if r.returncode != 0:
            print("FAIL %s: record exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        outs = {}
        for tag, extra in (("pb.gz", []), ("folded", []), ("svg", []),
                           ("noinl.folded", ["--no-inline"])):
            outs[tag] = os.path.join(d, "inl." + tag)
            r = run([SFPROF, "report", "-o", outs[tag]] + extra + [cap])
            if r.returncode != 0:
                errs.append("report %s exited %d: %s" % (tag, r.returncode, r.stderr[-200:]))
        if errs:
            print("FAIL %s: %s" % (NAME, "; ".join(errs)))
            return 1

        # pprof: per sampled PC of the workload, the levels sfprof gives
        samples, locs, maps = pprof_raw(outs["pb.gz"])
        wl_map = [m for m, v in maps.items() if os.path.basename(v[2]) == "inlined-ehframe"]
        got = {}
        for _, ids in samples:
            for k in ids:
                addr, m, names = locs[k]
                if m in wl_map:
                    start, off, _ = maps[m]
                    got[addr - start + off] = names
        want = addr2line(wl, sorted(got))
        bad, levels = [], 0
        for a, names in sorted(got.items()):
            w = [f for f, _, _ in want.get(a, [])]
            if w and w[0] == "??":
                w = []
            # the outermost name is the symbol table's (gcc's clones keep
            # a suffix there: spin_outer.constprop.0); DWARF's is the base
            if names[:-1] != w[:-1] or (w and names[-1].split(".")[0] != w[-1]):
                bad.append("%#x: sfprof %s, addr2line %s" % (a, names, w))
            levels += len(names) - 1
        print("%d sampled PCs of the workload, %d inline frames, %d differ from "
              "addr2line -i -f" % (len(got), levels, len(bad)))
        if len(got) < 5 or levels < 5:
            errs.append("too few sampled PCs (%d) or inline frames (%d)" % (len(got), levels))
        if bad:
            errs.append("differ from addr2line: %s" % "; ".join(bad[:5]))

        # folded, with and without inline frames
        folded = open(outs["folded"]).read()
        noinl = open(outs["noinl.folded"]).read()
        for chain in ("spin_outer;mix_mid;mix_leaf", "run;step_inline"):
            if chain not in folded:
                errs.append("folded lacks %s" % chain)
        for fn in ("mix_leaf", "mix_mid", "step_inline"):
            if fn in noinl:
                errs.append("--no-inline folded still has %s" % fn)
        if "spin_outer" not in noinl:
            errs.append("--no-inline folded lacks spin_outer")

        # SVG tooltips: NAME (...) FILE:LINE, a line addr2line gives NAME
        svg = open(outs["svg"]).read()
        lines_of = {}
        for lv in want.values():
            for f, fl, ln in lv:
                lines_of.setdefault(f, set()).add("%s:%s" % (fl, ln))
        shown = 0
        for name, src in re.findall(r"<title>([^<]*?) \([^()<]*\) ([^<]+:\d+)</title>", svg):
            if name in ("mix_leaf", "mix_mid", "step_inline", "spin_outer"):
                shown += 1
                if src not in lines_of.get(name, ()):
                    errs.append("SVG tooltip of %s says %s, not a line of it" % (name, src))
        print("%d SVG tooltips of the workload's functions with file:line" % shown)
        if shown < 3:
            errs.append("only %d SVG tooltips with file:line" % shown)
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

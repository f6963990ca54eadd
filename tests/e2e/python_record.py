#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CPython frames through a capture: `record` a python3.11 run of
outer -> middle -> leaf in 3 threads (on-CPU and futex), then `report`
it after the process has exited. The capture carries the names record
read (PYFRAME records), so report names the chain in at least 80% of the
worker threads' samples, as live would; the live profile record makes of
the same events (SFPROF_RECORD_PROFILE) must equal report's byte for
byte; report --no-python keeps the native eval frames. In pprof (read
by go tool pprof -raw) each Python frame is a Function with its file and
a Line: leaf, chain.py, at a line of leaf (its body, or its def line at entry); and the Functions'
start_line (s=) is the co_firstlineno the child printed, for leaf,
middle and outer (read live by record, carried by PYFRAME records).
Each Python Location has an address of its own in the interpreter's
synthetic "[python]" mapping, one per (code object, line) (not address
0 and no mapping): leaf's Locations are at distinct addresses, one per
line; and work() of twins.py and work() of twins_b.py, one name in two
files, are distinct Locations at distinct addresses."""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from libpython import EVAL, PY, SFPROF, TempDir, chain_samples, folded_counts, py_name, ready, \
    script, worker_samples  # noqa: E402

NAME = "python_record"


def py_locs(text, name, file_re):
    """[(address, mapping, file, line)] of the pprof Locations of Python
    function `name` in a file matching file_re (go tool pprof -raw)"""
    return [(int(m.group(1), 16), int(m.group(2)), m.group(3), int(m.group(4)))
            for m in re.finditer(r"^\s+\d+: (0x[0-9a-f]+) M=(\d+) %s (\S*%s):(\d+) s=\d+$" % (
                re.escape(name), file_re), text, re.M)]


def mappings(text):
    """{mapping id: file name} of go tool pprof -raw's Mappings"""
    return {int(m.group(1)): m.group(2) for m in re.finditer(
        r"^\s*(\d+): 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ (\S+)", text, re.M)}


def python_locations(text, name, file_re):
    """name's Locations: in a [python] mapping, one address per line"""
    locs, maps = py_locs(text, name, file_re), mappings(text)
    print("pprof: %s's Locations %s, mappings %s" % (
        name, [("%#x" % a, "M=%d" % mp, ln) for a, mp, _, ln in locs],
        sorted({maps.get(mp) for _, mp, _, _ in locs}, key=str)))
    if not locs:
        return ["pprof: no Location of %s with an address and a mapping" % name]
    errs = []
    if any(maps.get(mp) != "[python]" for _, mp, _, _ in locs):
        errs.append("pprof: %s's Locations outside a [python] mapping (%s)" % (name, maps))
    if len({a for a, _, _, _ in locs}) != len(locs) or \
            len({(mp, a) for a, mp, _, _ in locs}) != len({ln for _, _, _, ln in locs}):
        errs.append("pprof: %s's Locations not one address per line: %s" % (name, locs))
    return errs


def twins(d):
    """work() of twins.py and of twins_b.py: two Locations, two addresses"""
    cap, pb = os.path.join(d, "twins.sfcap"), os.path.join(d, "twins.pb.gz")
    r = subprocess.run([SFPROF, "record", "-F", "199", "-e", "cpu", "--quiet", "-o", cap,
                        "--", PY, script("twins.py"), "2"],
                       capture_output=True, text=True, timeout=180)
    if r.returncode != 0:
        return ["twins: record exited %d: %s" % (r.returncode, r.stderr[-300:])]
    r = subprocess.run([SFPROF, "report", "-o", pb, cap], capture_output=True, text=True,
                       timeout=180)
    if r.returncode != 0:
        return ["twins: report exited %d: %s" % (r.returncode, r.stderr[-300:])]
    from libsurface import pprof_raw
    _, text = pprof_raw(pb)
    a, b = py_locs(text, "work", r"/twins\.py"), py_locs(text, "work", r"/twins_b\.py")
    print("pprof: work() of twins.py at %s, of twins_b.py at %s" % (
        sorted({"%#x" % x[0] for x in a}), sorted({"%#x" % x[0] for x in b})))
    if not a or not b:
        return ["twins: work() of twins.py (%d) or twins_b.py (%d) has no Location with an "
                "address" % (len(a), len(b))]
    if {x[0] for x in a} & {x[0] for x in b}:
        return ["twins: work() of the two files share addresses: %s %s" % (a, b)]
    return []


def main():
    if not ready(NAME):
        return 0
    errs = []
    with TempDir() as d:
        cap = os.path.join(d, "py.sfcap")
        live = os.path.join(d, "live.folded")
        env = dict(os.environ, SFPROF_RECORD_PROFILE=live)
        r = subprocess.run([SFPROF, "record", "-F", "199", "-e", "cpu", "--quiet", "-o", cap,
                            "--", PY, script("chain.py"), "4"],
                           capture_output=True, text=True, timeout=180, env=env)
        if r.returncode != 0:
            print("FAIL %s: record exited %d: %s" % (NAME, r.returncode, r.stderr[-400:]))
            return 1
        first = dict((k, int(v)) for k, v in re.findall(r"\b(\w+)=(\d+)", "".join(
            ln for ln in r.stdout.splitlines() if ln.startswith("co_firstlineno "))))
        if sorted(first) != ["leaf", "middle", "outer"]:
            print("FAIL %s: the child printed no co_firstlineno line: %r" % (NAME, r.stdout[:200]))
            return 1
        out = os.path.join(d, "report.folded")
        r = subprocess.run([SFPROF, "report", "--per-thread", "-o", out, cap],
                           capture_output=True, text=True, timeout=180)
        if r.returncode != 0:
            print("FAIL %s: report exited %d: %s" % (NAME, r.returncode, r.stderr[-400:]))
            return 1
        st = folded_counts(out)
        total, good = chain_samples(worker_samples(st), "chain.py")
        print("report: %d worker samples, %d (%.1f%%) carry outer;middle;leaf" % (
            total, good, 100.0 * good / max(total, 1)))
        if total < 60:
            errs.append("only %d worker samples" % total)
        elif good < 0.8 * total:
            errs.append("chain in %.1f%% of worker samples" % (100.0 * good / total))
        # the same events, the same profile: live (record's) and report
        out2 = os.path.join(d, "report2.folded")
        subprocess.run([SFPROF, "report", "-o", out2, cap], capture_output=True, timeout=180)
        if open(out2).read() != open(live).read():
            errs.append("report's profile differs from record's live one")
        out3 = os.path.join(d, "native.folded")
        r = subprocess.run([SFPROF, "report", "--no-python", "-o", out3, cap],
                           capture_output=True, text=True, timeout=180)
        nat = folded_counts(out3)
        if r.returncode != 0 or any(py_name(f) for s in nat for f in s.split(";")) or \
                not any(EVAL in s.split(";") for s in nat):
            errs.append("report --no-python: exit %d, or Python frames, or no %s" % (
                r.returncode, EVAL))
        if shutil.which("go"):
            pb = os.path.join(d, "py.pb.gz")
            r = subprocess.run([SFPROF, "report", "-o", pb, cap], capture_output=True,
                               text=True, timeout=180)
            from libsurface import pprof_raw
            samples, text = pprof_raw(pb)
            lines = [int(m.group(1)) for m in re.finditer(
                r"^\s+\d+: 0x[0-9a-f]+ M=\d+ leaf \S*/chain\.py:(\d+) s=\d+$", text, re.M)]
            with_leaf = sum(v for v, names in samples if "leaf" in names)
            print("pprof: leaf at chain.py lines %s, in %d samples" % (sorted(set(lines)),
                                                                       with_leaf))
            # 8 is leaf's def line: its RESUME, the first instruction, carries it
            # (a sample at leaf's entry, seen once on a loaded machine)
            if r.returncode != 0 or not lines or not all(8 <= ln <= 12 for ln in lines) or \
                    with_leaf < 0.5 * total:
                errs.append("pprof: leaf's Function/Line wrong or missing (%s)" % lines)
            starts = {}
            for m in re.finditer(r"^\s+(?:\d+: 0x[0-9a-f]+ M=\d+ )?(leaf|middle|outer) "
                                 r"\S*/chain\.py:\d+ "
                                 r"s=(\d+)$", text, re.M):
                starts.setdefault(m.group(1), set()).add(int(m.group(2)))
            print("pprof: start lines %s, co_firstlineno %s" % (
                {k: sorted(v) for k, v in sorted(starts.items())}, first))
            if any(starts.get(k) != {v} for k, v in first.items()):
                errs.append("pprof: Function.start_line %s, not co_firstlineno %s" % (
                    starts, first))
            errs += python_locations(text, "leaf", r"chain\.py")
            errs += twins(d)
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

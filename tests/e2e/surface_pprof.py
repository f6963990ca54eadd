#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pprof output read by `go tool pprof -raw` (Debian's golang-go): it parses,
and its total and its top functions (flat, by leaf) equal the folded output's
for the same profile; for a futex profile the values are nanoseconds. The
last test does the same for a live capture (record once, report twice)."""
import os
import subprocess
import shutil
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import libsurface as ls  # noqa: E402
from surface_svg import many_stacks_folded  # noqa: E402

TMP = ls.tmpdir("sfprof-surface-pprof-")


def compare(name, folded_text, kind, scale):
    """pprof from folded_text vs the folded writer's own output."""
    pb = os.path.join(TMP, name + ".pb.gz")
    fo = os.path.join(TMP, name + ".folded")
    ls.write_profile(folded_text, "pprof", pb, kind=kind)
    ls.write_profile(folded_text, "folded", fo, kind=kind)
    folded = ls.parse_folded(open(fo).read())
    samples, raw = ls.pprof_raw(pb)
    want_total = sum(folded.values()) * scale
    got_total = sum(v for v, _ in samples)
    if got_total != want_total:
        return "total: folded %d, pprof %d" % (want_total, got_total)
    unit = "samples/count" if kind == "cpu" else "wait/nanoseconds"
    if unit not in raw:
        return "sample type %s not in -raw output" % unit
    fl = ls.leaf_totals_folded(folded, scale)
    pl = ls.leaf_totals_pprof(samples)
    if ls.top(fl, 10) != ls.top(pl, 10):
        return "top functions differ: folded %s, pprof %s" % (ls.top(fl, 5), ls.top(pl, 5))
    # every stack, root included, reads the same leaf-to-root
    fs = {}
    for v, names in samples:
        key = tuple(ls.norm(n) for n in reversed(names))
        fs[key] = fs.get(key, 0) + v
    want = {tuple(ls.norm(n) for n in k): c * scale for k, c in folded.items()}
    if fs != want:
        diff = sorted(set(fs.items()) ^ set(want.items()))[:2]
        return "stacks differ, e.g. %s" % (diff,)
    return None


def test_pprof_cpu_should_match_folded_in_go_tool_pprof():
    name = "pprof_cpu_should_match_folded_in_go_tool_pprof"
    if not shutil.which("go"):
        return "SKIP %s: go not installed (make deps installs golang-go)" % name
    text = ("server;main;parse;lex 30\nserver;main;parse 12\nserver;main;eval 55\n"
            "server;gc 5\nserver-io;poll 2\nserver;main;libfoo.so+0x1a2b 4\n"
            "server;main;handle;do_syscall_64_[k] 9\n")
    why = compare("cpu", text, "cpu", 1)
    return "FAIL %s: %s" % (name, why) if why else "PASS " + name


def test_pprof_futex_should_count_nanoseconds_in_go_tool_pprof():
    name = "pprof_futex_should_count_nanoseconds_in_go_tool_pprof"
    if not shutil.which("go"):
        return "SKIP %s: go not installed (make deps installs golang-go)" % name
    text = ("lock:hot_lock;worker;handle;pthread_mutex_lock 250000\n"
            "lock:cold_lock;worker;handle;pthread_mutex_lock 12000\n"
            "lock:0x7ffd1000;flusher;pthread_cond_wait 300\n")
    why = compare("futex", text, "futex", 1000)
    return "FAIL %s: %s" % (name, why) if why else "PASS " + name


def test_pprof_of_100k_stacks_should_match_folded():
    name = "pprof_of_100k_stacks_should_match_folded"
    if not shutil.which("go"):
        return "SKIP %s: go not installed (make deps installs golang-go)" % name
    why = compare("big", many_stacks_folded(100000, seed=2), "cpu", 1)
    return "FAIL %s: %s" % (name, why) if why else "PASS " + name


def report_works():
    r = subprocess.run([ls.SFPROF, "report", "--help"], capture_output=True, text=True)
    return r.returncode == 0


def test_pprof_from_sfprof_should_match_its_folded_output():
    name = "pprof_from_sfprof_should_match_its_folded_output"
    if not shutil.which("go"):
        return "SKIP %s: go not installed (make deps installs golang-go)" % name
    ok, why = ls.pipeline_ready()
    if not ok:
        return "SKIP %s: %s" % (name, why)
    if not report_works():
        return "SKIP %s: sfprof report not available yet" % name
    cap = os.path.join(TMP, "live.cap")
    r = subprocess.run([ls.SFPROF, "record", "-F", "299", "-d", "2", "-o", cap, "--",
                        os.path.join(ls.WL, "demo-sframe"), "4"],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        return "FAIL %s: record exited %d: %s" % (name, r.returncode, r.stderr[-300:])
    pb, fo = os.path.join(TMP, "live.pb.gz"), os.path.join(TMP, "live.folded")
    for out in (pb, fo):
        r = subprocess.run([ls.SFPROF, "report", "-o", out, cap], capture_output=True, text=True,
                           timeout=300)
        if r.returncode != 0:
            return "FAIL %s: report -o %s exited %d: %s" % (name, out, r.returncode, r.stderr[-300:])
    folded = ls.parse_folded(open(fo).read())
    samples, _ = ls.pprof_raw(pb)
    if sum(v for v, _ in samples) != sum(folded.values()):
        return "FAIL %s: totals differ: pprof %d, folded %d" % (
            name, sum(v for v, _ in samples), sum(folded.values()))
    fl, pl = ls.leaf_totals_folded(folded), ls.leaf_totals_pprof(samples)
    if ls.top(fl, 10) != ls.top(pl, 10):
        return "FAIL %s: top differs: folded %s, pprof %s" % (name, ls.top(fl, 5), ls.top(pl, 5))
    return "PASS %s (%d samples)" % (name, sum(folded.values()))


if __name__ == "__main__":
    sys.exit(ls.run_tests(globals()))

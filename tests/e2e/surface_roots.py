#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Roots and titles name the process, not one of its threads: a live run of
tests/workloads/mt.c (threads named worker-0, worker-1... do all the work,
the main thread waits) gives one --per-process root per process, and its
SVG subtitle and pprof comment name the target `mt-sframe`, as `report` of
the same capture does. SKIPs when not root."""
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import libsurface as ls  # noqa: E402

TMP = ls.tmpdir("sfprof-surface-roots-")
MT = os.path.join(ls.WL, "mt-sframe")
COMM = "mt-sframe"


def need():
    if os.geteuid() != 0:
        return "needs root (CAP_BPF + CAP_PERFMON) to load BPF programs"
    if not os.access(ls.SFPROF, os.X_OK) or not os.access(MT, os.X_OK):
        return "%s or %s not built" % (ls.SFPROF, MT)
    return None


def run(args):
    r = subprocess.run([ls.SFPROF, "-F", "299"] + args + ["--", MT, "3", "1"],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError("sfprof exited %d: %s" % (r.returncode, r.stderr[-300:]))
    return int(re.search(r"pid (\d+)", r.stdout).group(1))


def test_per_process_should_give_one_root_per_process_not_per_thread_name():
    name = "per_process_should_give_one_root_per_process_not_per_thread_name"
    why = need()
    if why:
        return "SKIP %s: %s" % (name, why)
    out = os.path.join(TMP, "pp.folded")
    pid = run(["--per-process", "-o", out])
    roots = {}
    for stack, c in ls.parse_folded(open(out).read()).items():
        roots[stack[0]] = roots.get(stack[0], 0) + c
    want = "%s-%d" % (COMM, pid)
    if list(roots) != [want]:
        return "FAIL %s: expected the one root %r, got %r" % (name, want, roots)
    return "PASS %s (%s: %d samples)" % (name, want, roots[want])


def test_live_title_and_pprof_comment_should_name_the_process():
    name = "live_title_and_pprof_comment_should_name_the_process"
    why = need()
    if why:
        return "SKIP %s: %s" % (name, why)
    svg = os.path.join(TMP, "live.svg")
    pid = run(["-o", svg])
    root, _ = ls.svg_frames(svg)
    sub = next((t.text for t in root.iter(ls.SVG_NS + "text")
                if (t.text or "").startswith("target:")), "")
    want = "target: %s (pid %d)" % (COMM, pid)
    if not sub.startswith(want):
        return "FAIL %s: expected SVG subtitle %r, got %r" % (name, want, sub)
    if not ls.upprof() and not ls.shutil.which("go"):
        return "SKIP %s: SVG right; no pprof to read the comment" % name
    pb = os.path.join(TMP, "live.pb.gz")
    run(["-o", pb])
    _, text = ls.pprof_raw(pb, tool=ls.upprof())
    comment = next((l for l in text.splitlines() if l.startswith("Comment:")), "")
    if " of %s " % COMM not in comment:
        return "FAIL %s: expected pprof comment 'of %s', got %r" % (name, COMM, comment)
    return "PASS " + name


if __name__ == "__main__":
    sys.exit(ls.run_tests(globals()))

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Per-sample cost of `sfprof report` against an older sfprof (BASE) on the
same captures: CPU time of the passes inside one report process
(SFPROF_REPORT_REPEAT=6: pass 1 cold, 2-6 warm; medians of 5 runs), with
and without aggregation (SFPROF_REPORT_NO_PROFILE=1), and warm
instructions a sample under callgrind ((Ir of 5 passes - Ir of 1) / 4 /
events), the figure other jobs on a shared machine do not move.
  BASE=/tmp/sfprof.old CAPS=/tmp/caps bench/unwind_cfi_cost.py deep shallow xz
CAPS holds TAG.sfp captures (bench/report_speed.sh with CAPS= keeps its
deep, shallow and xz ones). Needs valgrind."""
import os, re, statistics, subprocess, sys
caps = os.environ.get("CAPS", "/tmp/caps")
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
bins = {"this": os.path.join(root, os.environ.get("BUILD", "build"), "sfprof"),
        "BASE": os.environ.get("BASE", "")}
if not bins["BASE"]:
    sys.exit("unwind_cfi_cost: set BASE to an older sfprof binary")
def passes(b, cap, prof):
    env = dict(os.environ, SFPROF_REPORT_REPEAT="6")
    if not prof:
        env["SFPROF_REPORT_NO_PROFILE"] = "1"
    r = subprocess.run([b, "report", "-o", os.devnull, cap], env=env, capture_output=True, text=True)
    v = [float(m.group(1)) for m in re.finditer(r"report_pass_\d+_ns_per_event: (\S+)", r.stderr)]
    return v
def ir(b, cap, rep):
    env = dict(os.environ, SFPROF_REPORT_REPEAT=str(rep), SFPROF_REPORT_NO_PROFILE="1")
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", b, "report", "-o", os.devnull, cap], env=env, capture_output=True, text=True)
    m = re.search(r"Collected : (\d+)", r.stderr)
    return int(m.group(1))
def events(cap):
    r = subprocess.run([bins["this"], "report", "--stats", "-o", os.devnull, cap], capture_output=True, text=True)
    return int(re.search(r"report_events: (\d+)", r.stderr).group(1))
for tag in sys.argv[1:]:
    cap = os.path.join(caps, tag + ".sfp")
    n = events(cap)
    res = {}
    for prof in (False, True):
        warm = {k: [] for k in bins}
        cold = {k: [] for k in bins}
        for _ in range(5):
            for k, b in bins.items():
                v = passes(b, cap, prof)
                cold[k].append(v[0]); warm[k] += v[1:]
        for k in bins:
            res[(prof, k)] = (statistics.median(cold[k]), statistics.median(warm[k]))
    irs = {}
    for k, b in bins.items():
        irs[k] = (ir(b, cap, 5) - ir(b, cap, 1)) / (4 * n)
    print("%s (%d events):" % (tag, n))
    for prof in (False, True):
        t, b = res[(prof, "this")], res[(prof, "BASE")]
        print("  %-34s this %6.0f / %6.0f ns  BASE %6.0f / %6.0f ns  this/BASE warm %.3f" % (
            "unwind+symbolize+aggregate cold/warm" if prof else "unwind+symbolize cold/warm",
            t[0], t[1], b[0], b[1], t[1] / b[1]))
    print("  warm instructions/event (unwind+symbolize): this %.0f BASE %.0f  this/BASE %.4f" % (
        irs["this"], irs["BASE"], irs["this"] / irs["BASE"]))

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""sfprof's stacks against perf --call-graph dwarf on the same run.

For each build of tests/workloads/uwmix.c (-Wa,--gsframe: the binary's own
.sframe; plain: tables derived from .eh_frame), all five parts running in
threads (a chain, recursion 250 deep, a qsort callback through libc, a
signal handler, a library dlopen()ed after attach):
  - sfprof and perf record the same process at the same time; a second
    perf run follows (the perf-vs-perf noise floor);
  - >= 99% of sfprof's samples reach the thread's entry frame;
  - every sample whose leaf has exactly one call chain shows that chain;
  - overlap(sfprof, perf) >= overlap(perf, perf) - 0.02, >= 3000 samples
    a run; both figures printed.
Also the single-threaded case (--main): recursion on the main thread
reaches _start.
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libunwind import (SFPROF, WL, entry_share, have_perf, norm, overlap,  # noqa: E402
                       parse_stats, perf_fold, perf_record, read_folded,
                       start_ready)

FREQ = 999
SECS = 14
# 250 recursive frames need more than perf's default 8 KiB: both get 32 KiB
STACK = 32768
REC = ["uw_rec"] * 251


def expected(leaf):
    """Full chain (normalised) of a single-chain leaf, root first; for
    qsort the libc part between uw_sort_driver and the callback varies
    with msort's recursion and is checked separately."""
    t = ["clone3", "start_thread"]
    return {
        "uw_chain_leaf": t + ["uw_chain_thread", "uw_chain_a", "uw_chain_b", "uw_chain_leaf"],
        "uw_rec_leaf": t + ["uw_rec_thread", "uw_rec_top"] + REC + ["uw_rec_leaf"],
        "uw_sig_leaf": t + ["uw_sig_thread", "uw_sig_loop", "restore_rt",
                            "uw_sig_handler", "uw_sig_leaf"],
        "lib_uw_leaf": t + ["uw_dl_thread", "uw_call_lib", "lib_uw_work",
                            "lib_uw_inner", "lib_uw_leaf"],
        "uw_cmp_leaf": t + ["uw_qsort_thread", "uw_sort_driver", "qsort_r",
                            "msort_with_tmp.part.0", "uw_cmp_leaf"],
    }.get(leaf)


def chain_ok(stack):
    leaf = stack[-1]
    want = expected(leaf)
    if want is None:
        return None
    got = list(stack)
    if leaf == "uw_cmp_leaf":
        # collapse msort's recursion; qsort_r may call the callback directly
        # for tiny runs, which this workload's 4096-element sort never does
        c = []
        for f in got:
            if not (c and f == c[-1] == "msort_with_tmp.part.0"):
                c.append(f)
        got = c
    return got == want


def run_build(flavor):
    errs = []
    exe = os.path.join(WL, "uwmix-" + flavor)
    with tempfile.TemporaryDirectory() as d:
        wl = start_ready([exe, str(SECS * 2 + 6), "chain,recurse,qsort,signal,dlopen"])
        pid = wl.pid
        sf_out = os.path.join(d, "sf.folded")
        pa, pb = os.path.join(d, "a.data"), os.path.join(d, "b.data")
        # sfprof and perf A watch the same seconds of the same process;
        # perf B is a second perf run of the same workload right after it
        # (the perf-vs-perf noise floor)
        perf_a = perf_record(pid, SECS, pa, FREQ, STACK)
        # --no-inline: compared with perf script --no-inline
        sf = subprocess.run([SFPROF, "-F", str(FREQ), "-d", str(SECS), "--stats",
                             "--no-inline", "--stack-size", str(STACK),
                             "-o", sf_out, "-p", str(pid)],
                            capture_output=True, text=True, timeout=120)
        perf_a.wait(timeout=120)
        perf_b = perf_record(pid, SECS, pb, FREQ, STACK)
        perf_b.wait(timeout=120)
        wl.kill()
        wl.wait()
        if sf.returncode != 0:
            return ["sfprof exited %d: %s" % (sf.returncode, sf.stderr[-500:])], None
        st = parse_stats(sf.stderr)
        s = read_folded(sf_out)
        a, b = perf_fold(pa), perf_fold(pb)
    ns, na, nb = sum(s.values()), sum(a.values()), sum(b.values())
    ent = entry_share(s)
    exact_n = exact_bad = 0
    bad_example = None
    for k, n in s.items():
        ok = chain_ok(k) if k else None
        if ok is None:
            continue
        exact_n += n
        if not ok:
            exact_bad += n
            bad_example = bad_example or k
    ov_sp, ov_pp = overlap(s, a), overlap(a, b)
    print("%s: samples sfprof %d perf-a %d perf-b %d; entry %.4f; exact %d/%d; "
          "overlap sfprof-vs-perf %.4f perf-vs-perf %.4f; stops %s" % (
              flavor, ns, na, nb, ent, exact_n - exact_bad, exact_n, ov_sp, ov_pp,
              {k[12:]: v for k, v in st.items() if k.startswith("unwind_stop_") and v}))
    if min(ns, na, nb) < 3000:
        errs.append("%s: fewer than 3000 samples in a run (%d/%d/%d)" % (flavor, ns, na, nb))
    if ent < 0.99:
        errs.append("%s: only %.4f of samples reach the entry frame" % (flavor, ent))
    if exact_n == 0 or exact_bad:
        errs.append("%s: %d of %d single-chain samples wrong, e.g. %s" % (
            flavor, exact_bad, exact_n,
            ";".join(bad_example[:8]) + "..." if bad_example else "-"))
    for leaf in ("uw_chain_leaf", "uw_rec_leaf", "uw_cmp_leaf", "uw_sig_leaf", "lib_uw_leaf"):
        if not any(k and k[-1] == leaf for k in s):
            errs.append("%s: no sample of %s" % (flavor, leaf))
    if ov_sp < ov_pp - 0.02:
        errs.append("%s: overlap with perf %.4f < perf-vs-perf %.4f - 0.02" % (flavor, ov_sp, ov_pp))
    return errs, (ov_sp, ov_pp)


def run_main_thread(flavor):
    exe = os.path.join(WL, "uwmix-" + flavor)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "m.folded")
        r = subprocess.run([SFPROF, "-F", "499", "--no-inline", "-o", out, "--", exe, "--main", "2",
                            "recurse"],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            return ["--main %s: sfprof exited %d" % (flavor, r.returncode)]
        s = read_folded(out)
    want = ["start", "libc_start_main", "libc_start_call_main", "main",
            "uw_rec_thread", "uw_rec_top"] + REC + ["uw_rec_leaf"]
    leaf = {k: n for k, n in s.items() if k and k[-1] == "uw_rec_leaf"}
    bad = sum(n for k, n in leaf.items() if list(k) != want)
    tot = sum(leaf.values())
    print("%s --main: %d uw_rec_leaf samples, %d with a wrong chain, entry %.4f" % (
        flavor, tot, bad, entry_share(s)))
    errs = []
    if not tot or bad:
        errs.append("--main %s: %d/%d uw_rec_leaf samples wrong (%s)" % (
            flavor, bad, tot, ";".join(next(iter(leaf), ("none",))[:6])))
    if entry_share(s) < 0.99:
        errs.append("--main %s: entry share %.4f" % (flavor, entry_share(s)))
    return errs


def main():
    name = "unwind_perf"
    if os.geteuid() != 0:
        print("SKIP %s: needs root to load BPF programs and run perf" % name)
        return 0
    if not have_perf():
        print("SKIP %s: perf is not installed" % name)
        return 0
    errs = []
    for flavor in ("sframe", "ehframe"):
        e, _ = run_build(flavor)
        errs += e
        errs += run_main_thread(flavor)
    if errs:
        print("FAIL %s: %s" % (name, "; ".join(errs)))
        return 1
    print("PASS %s" % name)
    return 0


if __name__ == "__main__":
    sys.exit(main())

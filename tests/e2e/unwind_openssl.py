#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CFAs from DWARF expressions: libcrypto's RSA/bignum assembly (Debian's
OpenSSL) defines its CFA with DW_CFA_def_cfa_expression (*(rsp+40)+8,
*(rsp+8+8*r9)+8), which SFrame cannot say; sfprof keeps the expression
beside the derived rows and evaluates it over the snapshot. `openssl speed
rsa2048`: <= 0.5% of the samples [truncated], >= 99% rooted at the entry
point, live and recorded then reported.

Beside perf (as unwind_perf.py does for uwmix): sfprof and perf record
--call-graph dwarf take the same 8 s of one `openssl speed rsa2048`'s
signing phase, and a second perf run the next 8 s (perf's own noise
floor). Frames no symbol names (openssl and most of libcrypto are
stripped) compare as their object's name, both sides. sfprof's share of
stacks not rooted at the entry is at most perf's (the larger of its two
runs) + 0.5%, and overlap(sfprof, perf) >= overlap(perf, perf) - 0.02
(the overlap: the sum over distinct stacks of the smaller share, 1 -
the distance), with >= 1000 samples in each run."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from libunwind import (SFPROF, have_perf, overlap, perf_fold, perf_record,  # noqa: E402
                       read_folded)

NAME = "unwind_openssl"


def check(path, what, errs):
    total = cut = 0
    roots = {}
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        frames, n = stack.split(";"), int(n)
        total += n
        if "[truncated]" in frames:
            cut += n
        elif len(frames) > 1:
            roots[frames[1]] = roots.get(frames[1], 0) + n
    root, rooted = max(roots.items(), key=lambda kv: kv[1]) if roots else ("-", 0)
    print("%s: %d samples, %d [truncated] (%.2f%%), %d rooted at %s (%.2f%%)" % (
        what, total, cut, 100.0 * cut / max(total, 1), rooted, root,
        100.0 * rooted / max(total, 1)))
    if total < 200:
        errs.append("%s: only %d samples" % (what, total))
    elif cut > 0.005 * total:
        errs.append("%s: expected <= 0.5%% truncated, got %.2f%%" % (what, 100.0 * cut / total))
    elif rooted < 0.99 * total:
        errs.append("%s: expected >= 99%% rooted, got %.2f%%" % (what, 100.0 * rooted / total))


PERF_SECS = 8
PERF_FREQ = 999
PERF_STACK = 32768
UNNAMED = re.compile(r"^(.+)\+0x[0-9a-f]+$")


def same_names(stacks):
    """sfprof's unnamed frames (object+0xSTART) spelled as perf_fold()
    spells perf's [unknown] ones (object+?)"""
    out = {}
    for k, n in stacks.items():
        k = tuple(UNNAMED.sub(r"\1+?", f) for f in k)
        out[k] = out.get(k, 0) + n
    return out


def unrooted(stacks, root):
    tot = sum(stacks.values())
    ok = sum(n for k, n in stacks.items() if k[:len(root)] == root)
    return 1.0 - ok / float(tot) if tot else 1.0


def beside_perf(openssl, errs):
    """sfprof and perf A on the same seconds, perf B the next ones"""
    with tempfile.TemporaryDirectory() as d:
        wl = subprocess.Popen([openssl, "speed", "-seconds", "30", "rsa2048"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(1)
            sf_out = os.path.join(d, "sf.folded")
            pa, pb = os.path.join(d, "a.data"), os.path.join(d, "b.data")
            perf_a = perf_record(wl.pid, PERF_SECS, pa, PERF_FREQ, PERF_STACK)
            sf = subprocess.run([SFPROF, "-F", str(PERF_FREQ), "-d", str(PERF_SECS), "--quiet",
                                 "--no-inline", "--stack-size", str(PERF_STACK), "-o", sf_out,
                                 "-p", str(wl.pid)], capture_output=True, text=True, timeout=120)
            perf_a.wait(timeout=120)
            perf_b = perf_record(wl.pid, PERF_SECS, pb, PERF_FREQ, PERF_STACK)
            perf_b.wait(timeout=120)
        finally:
            wl.kill()
            wl.wait()
        if sf.returncode != 0:
            errs.append("beside perf: sfprof exited %d: %s" % (sf.returncode, sf.stderr[-300:]))
            return
        s = same_names(read_folded(sf_out))
        a, b = perf_fold(pa), perf_fold(pb)
    ns, na, nb = sum(s.values()), sum(a.values()), sum(b.values())
    if min(ns, na, nb) < 1000:
        errs.append("beside perf: fewer than 1000 samples in a run (sfprof %d, perf %d/%d)" % (
            ns, na, nb))
        return
    # the entry, as both spell it: perf's most common first two frames
    roots = {}
    for k, n in a.items():
        roots[k[:2]] = roots.get(k[:2], 0) + n
    root = max(roots.items(), key=lambda kv: kv[1])[0]
    us, ua, ub = unrooted(s, root), unrooted(a, root), unrooted(b, root)
    ov_sp, ov_pp = overlap(s, a), overlap(a, b)
    print("beside perf: samples sfprof %d perf-a %d perf-b %d; not rooted at %s: sfprof "
          "%.2f%% perf-a %.2f%% perf-b %.2f%%; distinct stacks sfprof %d perf-a %d perf-b %d; "
          "overlap sfprof-vs-perf %.4f perf-vs-perf %.4f (distance %.4f, %.4f)" % (
              ns, na, nb, ";".join(root), 100 * us, 100 * ua, 100 * ub, len(s), len(a), len(b),
              ov_sp, ov_pp, 1 - ov_sp, 1 - ov_pp))
    if us > max(ua, ub) + 0.005:
        errs.append("beside perf: %.2f%% of sfprof's %d samples not rooted, perf %.2f%%/%.2f%% "
                    "of %d/%d" % (100 * us, ns, 100 * ua, 100 * ub, na, nb))
    if ov_sp < ov_pp - 0.02:
        errs.append("beside perf: overlap with perf %.4f < perf-vs-perf %.4f - 0.02 (%d, %d, "
                    "%d samples)" % (ov_sp, ov_pp, ns, na, nb))


def main():
    if os.geteuid() != 0:
        print("SKIP %s: needs root to load BPF programs" % NAME)
        return 0
    openssl = shutil.which("openssl")
    if not openssl:
        print("SKIP %s: no openssl on this machine (tests/install-deps.sh)" % NAME)
        return 0
    cmd = [openssl, "speed", "-seconds", "3", "rsa2048"]
    errs = []
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "live.folded")
        r = subprocess.run([SFPROF, "-F", "199", "--quiet", "-o", out, "--"] + cmd,
                           capture_output=True, text=True, timeout=180)
        if r.returncode != 0:
            print("FAIL %s: sfprof exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        check(out, "live", errs)
        cap = os.path.join(d, "run.sfcap")
        r = subprocess.run([SFPROF, "record", "-F", "199", "--quiet", "-o", cap, "--"] + cmd,
                           capture_output=True, text=True, timeout=180)
        if r.returncode != 0:
            print("FAIL %s: record exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        rep = os.path.join(d, "report.folded")
        r = subprocess.run([SFPROF, "report", "-o", rep, cap], capture_output=True,
                           text=True, timeout=180)
        if r.returncode != 0:
            print("FAIL %s: report exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        check(rep, "record+report", errs)
    if have_perf():
        beside_perf(openssl, errs)
    else:
        print("%s: perf is not installed; the comparison with perf is skipped" % NAME)
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

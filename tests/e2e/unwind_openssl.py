#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CFAs from DWARF expressions: libcrypto's RSA/bignum assembly (Debian's
OpenSSL) defines its CFA with DW_CFA_def_cfa_expression (*(rsp+40)+8,
*(rsp+8+8*r9)+8), which SFrame cannot say; sfprof keeps the expression
beside the derived rows and evaluates it over the snapshot. `openssl speed
rsa2048`: <= 0.5% of the samples [truncated], >= 99% rooted at the entry
point, live and recorded then reported."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libunwind import SFPROF  # noqa: E402

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
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

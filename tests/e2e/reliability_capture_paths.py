#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A capture's MAPPING paths that report cannot trust are said (issue 23
item 15): a relative path (relative to report's directory? never opened)
and a truncated ELF (still used for what it holds) each get one
"sfprof: PATH: ..." line; both were used or dropped with no word."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import libcapfile as cf  # noqa: E402
from libunwind import SFPROF as BUILT, WL  # noqa: E402

SFPROF = os.environ.get("SFPROF", BUILT)
SPIN = os.path.join(WL, "spin-sframe")


def result(name, err):
    print("FAIL %s: %s" % (name, err) if err else "PASS %s" % name)


def with_path(cap, path, out):
    version, flags, recs = cf.parse(open(cap, "rb").read())
    n = 0
    for i, (typ, p) in enumerate(recs):
        if typ == cf.MAPPING and cf.mapping_path(p).endswith("/spin-sframe"):
            recs[i] = (typ, cf.mapping_with_path(p, path))
            n += 1
    open(out, "wb").write(cf.build(version, flags, recs))
    return n


def report(cap, d):
    r = subprocess.run([SFPROF, "report", "--no-buildid-cache", "-o",
                        os.path.join(d, "out.folded"), cap], capture_output=True,
                       text=True, timeout=60, cwd=d)
    return r.returncode, r.stderr


def main():
    if os.geteuid() != 0:
        print("SKIP reliability_capture_paths: needs root (BPF record)")
        return
    d = tempfile.mkdtemp(prefix="sfprof-cpaths-")
    try:
        cap = os.path.join(d, "spin.cap")
        r = subprocess.run([SFPROF, "record", "--no-buildid-cache", "-o", cap, "-F", "199",
                            "-d", "1", "--", SPIN, "1"], capture_output=True, timeout=60)
        if r.returncode != 0:
            print("FAIL reliability_capture_paths: record exited %d" % r.returncode)
            return
        half = os.path.join(d, "half")
        shutil.copy(SPIN, half)
        os.truncate(half, os.path.getsize(SPIN) // 2)

        name = "reliability_capture_paths_truncated_elf_is_said"
        bad = os.path.join(d, "half.cap")
        if not with_path(cap, half, bad):
            result(name, "no MAPPING of spin-sframe in the capture")
            return
        rc, err = report(bad, d)
        want = "sfprof: %s: truncated: %d bytes" % (half, os.path.getsize(half))
        result(name, None if rc == 0 and want in err and err.count(want) == 1 else
               "expected exit 0 and one line '%s...', got exit %d: %s" % (want, rc, err[-300:]))

        name = "reliability_capture_paths_relative_path_is_said"
        bad = os.path.join(d, "rel.cap")
        with_path(cap, "half", bad)
        rc, err = report(bad, d)
        want = "sfprof: half: not opened: a relative path"
        result(name, None if rc == 0 and err.count(want) == 1 else
               "expected exit 0 and one line '%s...', got exit %d: %s" % (want, rc, err[-300:]))
    finally:
        shutil.rmtree(d)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CPython 3.12 and 3.13 where an interpreter of them is present (Debian
12 has none: /usr/bin, /usr/local/bin and pyenv's versions are looked
in; SKIP without any): the outer -> middle -> leaf chain in 3 threads must
be named in at least 80% of the worker threads' samples, as for 3.11."""
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from libpython import (TempDir, chain_samples, folded_counts, privileged, run,  # noqa: E402
                       script, worker_samples)

NAME = "python_versions"


def interpreters():
    out = []
    for v in ("3.12", "3.13"):
        cands = ["/usr/bin/python" + v, "/usr/local/bin/python" + v] + sorted(
            glob.glob(os.path.expanduser("~/.pyenv/versions/%s*/bin/python%s" % (v, v))))
        for c in cands:
            try:
                with open(c, "rb") as f:
                    if f.read(4) == b"\x7fELF":  # (a pyenv shim is a script)
                        out.append((v, c))
                        break
            except OSError:
                pass
    return out


def main():
    if not privileged(NAME):
        return 0
    found = interpreters()
    if not found:
        print("SKIP %s: no CPython 3.12 or 3.13 interpreter on this machine" % NAME)
        return 0
    errs = []
    for v, py in found:
        with TempDir() as d:
            out = os.path.join(d, "v.folded")
            rc, err, st = run(["-F", "199", "--per-thread", "--stats", "--quiet", "-o", out,
                               "--", py, script("chain.py"), "3"])
            if rc != 0:
                errs.append("%s: sfprof exited %d: %s" % (v, rc, err[-200:]))
                continue
            total, good = chain_samples(worker_samples(folded_counts(out)), "chain.py")
            print("%s (%s): %d worker samples, %d (%.1f%%) carry the chain" % (
                v, py, total, good, 100.0 * good / max(total, 1)))
            if total < 30:
                errs.append("%s: only %d worker samples" % (v, total))
            elif good < 0.8 * total:
                errs.append("%s: chain in %.1f%%" % (v, 100.0 * good / total))
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

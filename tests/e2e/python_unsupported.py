#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A CPython version sfprof has no offsets for (a stand-in "python3.10"
that defines _PyRuntime and exports Py_Version 3.10.4, two processes of
it): said once on stderr, counted in --stats
(python_processes_unsupported), no Python walk, and the native stacks
stay as they are (main;spin_leaf)."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from libcapture import SFPROF, WL, folded_counts, parse_stats, privileged  # noqa: E402

NAME = "python_unsupported"


def main():
    if not privileged(NAME):
        return 0
    fake = os.path.join(WL, "python3_10-sframe")
    out = "/tmp/sfprof-%s-%d.folded" % (NAME, os.getpid())
    try:
        r = subprocess.run([SFPROF, "--stats", "--quiet", "-o", out, "--", "/bin/sh", "-c",
                            "%s 2 & %s 2; wait" % (fake, fake)],
                           capture_output=True, text=True, timeout=120)
        stacks = folded_counts(out) if r.returncode == 0 else {}
    finally:
        if os.path.exists(out):
            os.unlink(out)
    st = parse_stats(r.stderr)
    said = [l for l in r.stderr.splitlines() if "CPython 3.10" in l]
    native = sum(n for s, n in stacks.items() if s.endswith(";main;spin_leaf"))
    total = sum(n for s, n in stacks.items() if "spin_leaf" in s)
    print("exit %d; said %d times: %s; unsupported %d, walks %d; %d of %d samples main;spin_leaf"
          % (r.returncode, len(said), said[:1], st.get("python_processes_unsupported", -1),
             st.get("python_walks", -1), native, total))
    errs = []
    if r.returncode != 0:
        errs.append("sfprof exited %d: %s" % (r.returncode, r.stderr[-300:]))
    if len(said) != 1:
        errs.append("the version was said %d times, want once" % len(said))
    if st.get("python_processes_unsupported") != 2 or st.get("python_walks") != 0:
        errs.append("--stats: unsupported %s, walks %s" % (
            st.get("python_processes_unsupported"), st.get("python_walks")))
    if total < 20 or native < 0.95 * total:
        errs.append("native stacks: %d of %d" % (native, total))
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

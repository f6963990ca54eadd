#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""-e offcpu through a capture file: `record -e offcpu --kernel` then
`report` reproduces, byte for byte, the profile the live pipeline made of
the same events (SFPROF_RECORD_PROFILE), report takes the event from the
capture without -e, and the SVG and pprof outputs say off-CPU time."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libcapture import SFPROF, WL, Checker, privileged  # noqa: E402


def main():
    name = "offcpu_record_report_equals_live"
    if not privileged(name):
        return 0
    c = Checker(name)
    with tempfile.TemporaryDirectory() as d:
        cap, live, rep = (os.path.join(d, n) for n in ("oc.cap", "oc.live", "oc.folded"))
        env = dict(os.environ, SFPROF_RECORD_PROFILE=live)
        r = subprocess.run([SFPROF, "record", "-e", "offcpu", "--kernel", "-o", cap, "--",
                            os.path.join(WL, "offcpu-ehframe"), "2"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=120, env=env)
        if not c.check(r.returncode == 0, "record exited %d: %s" % (r.returncode, r.stderr[-300:])):
            return 0 if c.done() else 1
        rr = subprocess.run([SFPROF, "report", "-o", rep, cap], capture_output=True, text=True,
                            timeout=120)
        c.check(rr.returncode == 0, "report exited %d: %s" % (rr.returncode, rr.stderr[-300:]))
        a = open(live).read() if os.path.exists(live) else ""
        b = open(rep).read() if os.path.exists(rep) else ""
        total = sum(int(l.rsplit(" ", 1)[1]) for l in a.splitlines() if l)
        print("# live %d lines (%.3f s off CPU), report %d lines, identical: %s" % (
            len(a.splitlines()), total / 1e6, len(b.splitlines()), a == b))
        c.check(a and a == b, "report differs from the live profile of the same events")
        # microseconds: about 2 s for each of the seven threads (main joins),
        # plus 30 ms per vfork child (~60 of them)
        c.check(14e6 <= total <= 18.5e6, "total %.3f s off CPU, want 14-18.5" % (total / 1e6))
        c.check("pipe_read" in b and "cond_block" in b, "no pipe_read_[k] or cond_block in report")
        svg = os.path.join(d, "oc.svg")
        subprocess.run([SFPROF, "report", "-o", svg, cap], capture_output=True, timeout=120)
        c.check(os.path.exists(svg) and "Off-CPU time" in open(svg).read(),
                "SVG title does not say Off-CPU time")
    return 0 if c.done() else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Capture integrity (issue 12): one bit flipped at a random position in
each of 100 copies of a recorded capture. None may change the profile
silently: each report either prints exactly the original profile or says
the capture is damaged, and a damaged copy keeps every event but the one
(at most) in the damaged record."""
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libunwind import SFPROF as BUILT, WL  # noqa: E402

SFPROF = os.environ.get("SFPROF", BUILT)
SPIN = os.path.join(WL, "spin-sframe")
COPIES = 100


def report(cap, out):
    r = subprocess.run([SFPROF, "report", "--stats", "-o", out, cap],
                       capture_output=True, text=True, errors="replace", timeout=120)
    events = None
    for ln in r.stderr.splitlines():
        if ln.startswith("report_events: "):
            events = int(ln.split()[1])
    folded = open(out).read() if os.path.exists(out) else None
    msgs = [ln for ln in r.stderr.splitlines() if ln.startswith("sfprof:")]
    return r.returncode, events, folded, msgs


def main():
    name = "reliability_capture_bit_flips_never_silent"
    if os.geteuid() != 0:
        print("SKIP %s: needs root (BPF record)" % name)
        return
    with tempfile.TemporaryDirectory(prefix="sfprof-flip-") as d:
        cap = os.path.join(d, "a.cap")
        r = subprocess.run([SFPROF, "record", "-o", cap, "-F", "499", "-d", "1",
                            "--", SPIN, "1"], capture_output=True, timeout=60)
        if r.returncode != 0:
            print("FAIL %s: record exited %d: %s" % (name, r.returncode, r.stderr[-300:]))
            return
        rc, total, good, base_msgs = report(cap, os.path.join(d, "good.folded"))
        if rc != 0 or not total or not good:
            print("FAIL %s: report of the intact capture: exit %d, %s events"
                  % (name, rc, total))
            return
        data = open(cap, "rb").read()
        rng = random.Random(12)
        same = reported = refused = silent = 0
        errs = []
        for i in range(COPIES):
            bit = rng.randrange(len(data) * 8)
            b = bytearray(data)
            b[bit // 8] ^= 1 << (bit % 8)
            bad = os.path.join(d, "bad.cap")
            with open(bad, "wb") as f:
                f.write(b)
            out = os.path.join(d, "bad.folded")
            if os.path.exists(out):
                os.unlink(out)
            rc, events, folded, msgs = report(bad, out)
            new = [m for m in msgs if m not in base_msgs]
            said = any("damaged" in m or "corrupt" in m or "truncated" in m or
                       "not an sfprof capture" in m or "version" in m for m in new)
            if rc != 0 and said:
                refused += 1  # the file refused at open, with the reason
            elif said:
                reported += 1
                if events is None or events < total - 1:
                    errs.append("bit %d (offset %d): damage reported but %s of %d events kept"
                                % (bit, bit // 8, events, total))
            elif rc == 0 and folded == good and events == total:
                same += 1
            else:
                silent += 1
                errs.append("bit %d (offset %d): exit %d, %s events of %d, profile %s, no damage said: %s"
                            % (bit, bit // 8, rc, events, total,
                               "same" if folded == good else "changed", new[-2:]))
        summary = ("%d copies of a %d-byte capture (%d events): %d identical, "
                   "%d damage reported, %d refused at open, %d silently changed"
                   % (COPIES, len(data), total, same, reported, refused, silent))
        if errs:
            print("FAIL %s: %s; %s" % (name, summary, "; ".join(errs[:5])))
        else:
            print("PASS %s: %s" % (name, summary))


if __name__ == "__main__":
    main()

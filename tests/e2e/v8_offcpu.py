#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""node's JS frames named with no flag under -e offcpu (issue 25, V8): a
JS function that blocks in Atomics.wait (a futex wait under V8's C++
runtime) is named from V8's objects in the off-CPU stacks that wait in it,
live and through record then report after node exited: >= 80% of the
time blocked in Atomics.wait is under JS:sleeperJS, the frame rooted."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libunwind import SFPROF  # noqa: E402
from v8_names import node_or_skip  # noqa: E402

NAME = "v8_offcpu"

APP = """'use strict';
const ia = new Int32Array(new SharedArrayBuffer(4));
function sleeperJS(ms) {
  let s = 0;
  for (let i = 0; i < 2000; i++) s += i & 3;
  Atomics.wait(ia, 0, 0, ms);
  return s;
}
function waitOuterJS() { let t = 0; for (let k = 0; k < 2; k++) t += sleeperJS(2); return t; }
const end = Date.now() + Number(process.argv[2]);
let acc = 0;
while (Date.now() < end) acc += waitOuterJS();
if (acc < 0) console.log(acc);
"""


def check(out, what, errs):
    blocked = named = 0
    for line in open(out):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        frames, n = stack.split(";"), int(n)
        if not any("Builtin_AtomicsWait" in f for f in frames):
            continue
        blocked += n
        if any(f.startswith("JS:sleeperJS ") for f in frames) and frames[1] == "_start":
            named += n
    print("%s: %.1f ms blocked in Atomics.wait, %.1f%% of it under JS:sleeperJS, rooted" % (
        what, blocked / 1e3, 100.0 * named / max(blocked, 1)))
    if blocked < 500e3:  # (microseconds)
        errs.append("%s: only %.1f ms blocked in Atomics.wait" % (what, blocked / 1e3))
    elif named < 0.8 * blocked:
        errs.append("%s: %.1f%% of the blocked time under JS:sleeperJS, want >= 80%%" % (
            what, 100.0 * named / blocked))


def main():
    node = node_or_skip(NAME)
    if not node:
        return 0
    errs = []
    with tempfile.TemporaryDirectory() as d:
        app = os.path.join(d, "off.js")
        with open(app, "w") as f:
            f.write(APP)
        out = os.path.join(d, "live.folded")
        r = subprocess.run([SFPROF, "-e", "offcpu", "--quiet", "-o", out, "--", node, app,
                            "3000"], capture_output=True, text=True, timeout=120, cwd=d)
        if r.returncode != 0:
            errs.append("live: exited %d: %s" % (r.returncode, r.stderr[-300:]))
        else:
            check(out, "live -e offcpu", errs)
        cap = os.path.join(d, "run.sfcap")
        rep = os.path.join(d, "report.folded")
        r = subprocess.run([SFPROF, "record", "-e", "offcpu", "--quiet", "-o", cap, "--", node,
                            app, "3000"], capture_output=True, text=True, timeout=120, cwd=d)
        if r.returncode != 0:
            errs.append("record: exited %d: %s" % (r.returncode, r.stderr[-300:]))
        else:
            r = subprocess.run([SFPROF, "report", "-o", rep, cap], capture_output=True,
                               text=True, timeout=120)
            if r.returncode != 0:
                errs.append("report: exited %d: %s" % (r.returncode, r.stderr[-300:]))
            else:
                check(rep, "record -e offcpu, then report", errs)
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

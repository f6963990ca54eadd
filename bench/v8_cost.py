#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What naming node's JS frames from V8's own objects costs sfprof (user
space: there is no BPF part), on the v8_names workload (tests/e2e/
v8_names.py: asyncJS -> method -> outerJS -> innerJS, no node flags),
live at 499 Hz, from --stats: stacks_runtime_name_ns over the frames
named (stacks_runtime_named + _unnamed), the process's first naming
(its node binary read for the v8dbg_* layout, stacks_runtime_name_ns_max)
taken out and given apart. Medians of REPEATS runs. NODE_FLAGS go to
node: --jitless (every frame interpreted: the interpreter's frames, named
through their BytecodeArray) or --no-opt --no-sparkplug.
  Usage: bench/v8_cost.py [REPEATS [NODE_FLAGS...]]   (default 5, none)"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "e2e"))
from libbench import SFPROF, need_root, stats_of  # noqa: E402
import v8_names  # noqa: E402


def main():
    need_root("v8_cost")
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    flags = sys.argv[2:]
    node = shutil.which("node")
    per_frame, first, frames_per_sample = [], [], []
    with tempfile.TemporaryDirectory() as d:
        app = os.path.join(d, "app.js")
        with open(app, "w") as f:
            f.write(v8_names.APP)
        for _ in range(reps):
            r = subprocess.run([SFPROF, "--stats", "--quiet", "-F", "499", "-o", "/dev/null",
                                "--", node] + flags + [app, "4000", os.path.join(d, "pid")],
                               capture_output=True, text=True, timeout=120, cwd=d)
            if r.returncode != 0:
                sys.exit("sfprof failed (%d): %s" % (r.returncode, r.stderr[-500:]))
            st = stats_of(r.stderr)
            n = st.get("stacks_runtime_named", 0) + st.get("stacks_runtime_unnamed", 0)
            if n < 2:
                sys.exit("no frames named: %s" % r.stderr[-500:])
            per_frame.append((st["stacks_runtime_name_ns"] - st["stacks_runtime_name_ns_max"]) /
                             (n - 1))
            first.append(st["stacks_runtime_name_ns_max"])
            frames_per_sample.append(n / max(st["stacks_events"], 1))
    print("| per JS frame named | first frame of a process (binary read) | frames named per sample |")
    print("|---|---|---|")
    print("| %.1f us | %.1f ms | %.2f |" % (statistics.median(per_frame) / 1e3,
                                         statistics.median(first) / 1e6,
                                         statistics.median(frames_per_sample)))
    print("(medians of %d runs, node flags: %s)" % (reps, " ".join(flags) or "none"))


if __name__ == "__main__":
    main()

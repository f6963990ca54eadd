#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Ruby methods in off-CPU stacks: a Ruby thread blocked 2 s in Queue#pop
(tests/workloads/ruby/wait.rb: consumer -> wait_item -> Queue#pop) shows
under -e offcpu as consumer -> wait_item -> pop (the C method, by its
name) at the lines of the call and of the pop, for >= 75% of the time it waited (folded weights are microseconds), above the native wait. The
names of a process that exits right after its block ends are read while
it runs (the rb_new ring), so the frames are named, not unreadable."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from librubyrt import RUBY, folded_counts, has_chain, ready, run, script, where  # noqa: E402

NAME = "ruby_offcpu"
WAIT_S = 2


def main():
    if not ready(NAME):
        return 0
    errs = []
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "off.folded")
        rc, so, se, st = run(["-e", "offcpu", "--stats", "--quiet", "-o", out, "--", RUBY,
                              "--disable-gems", script("wait.rb"), str(WAIT_S)])
        loc = where(so)
        stacks = folded_counts(out) if rc == 0 else {}
    chain = ["consumer", "wait_item"]
    named = sum(n for s, n in stacks.items() if has_chain(s, chain, loc) and
                "futex" in s.rpartition(";")[2] and
                s.split(";")[s.split(";").index("wait_item (wait.rb:%d)" % loc["wait_item"][1]) + 1]
                == "pop")
    unreadable = sum(n for s, n in stacks.items() if "[python: unreadable frame]" in s)
    print("exit %d; where %s; %.2f s blocked in consumer -> wait_item at a futex wait; "
          "%.2f s unreadable" % (rc, loc, named / 1e6, unreadable / 1e6))
    if rc != 0:
        errs.append("sfprof exited %d: %s" % (rc, se[-300:]))
    if named < 0.75 * WAIT_S * 1e6:
        top = max(stacks, key=stacks.get) if stacks else None
        errs.append("expected >= %.1f s off CPU under consumer -> wait_item, got %.2f s (top: %s)"
                    % (0.75 * WAIT_S, named / 1e6, top))
    if unreadable:
        errs.append("expected no unreadable Ruby frame, got %.2f s of them" % (unreadable / 1e6))
    if errs:
        for e in errs:
            print("FAIL %s: %s" % (NAME, e))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

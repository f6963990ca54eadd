#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""PHP functions in off-CPU stacks: a PHP script blocked 2 s in sleep()
(tests/workloads/php/wait.php: Waiter::consumer -> Waiter::waitItem ->
sleep) shows under -e offcpu as Waiter::consumer -> Waiter::waitItem ->
sleep (the internal function, by its name) at the lines of the call and
of the sleep, for >= 75% of the time it waited (folded weights are
microseconds), above the native wait, and no frame is unreadable."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from librubyrt import PHP, finish, folded_counts, has_chain, php_ready, php_script  # noqa: E402
from librubyrt import run, where  # noqa: E402

NAME = "php_offcpu"
WAIT_S = 2


def main():
    if not php_ready(NAME):
        return 0
    errs = []
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "off.folded")
        rc, so, se, st = run(["-e", "offcpu", "--stats", "--quiet", "-o", out, "--", PHP,
                              php_script("wait.php"), str(WAIT_S)])
        loc = where(so)
        stacks = folded_counts(out) if rc == 0 else {}
    chain = ["Waiter::consumer", "Waiter::waitItem"]
    named = sum(n for s, n in stacks.items() if has_chain(s, chain, loc) and
                "nanosleep" in s.rpartition(";")[2] and
                s.split(";")[s.split(";").index("Waiter::waitItem (wait.php:%d)" %
                                                loc["Waiter::waitItem"][1]) + 1] == "sleep")
    unreadable = sum(n for s, n in stacks.items() if "[php: unreadable frame]" in s)
    print("exit %d; where %s; %.2f s blocked in consumer -> waitItem -> sleep; "
          "%.2f s unreadable" % (rc, loc, named / 1e6, unreadable / 1e6))
    if rc != 0:
        errs.append("sfprof exited %d: %s" % (rc, se[-300:]))
    if named < 0.75 * WAIT_S * 1e6:
        top = max(stacks, key=stacks.get) if stacks else None
        errs.append("expected >= %.1f s off CPU under consumer -> waitItem, got %.2f s (top: %s)"
                    % (0.75 * WAIT_S, named / 1e6, top))
    if unreadable:
        errs.append("expected no unreadable PHP frame, got %.2f s of them" % (unreadable / 1e6))
    return finish(NAME, errs)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""PHP functions in on-CPU stacks (Debian's php8.2 CLI, NTS): a class
method chain Chain::outer -> Chain::middle -> a closure ->
Chain::leafWork (tests/workloads/php/chain.php) shows, in >= 90% of the
process's samples, as those four PHP frames in order, each at the
file:line PHP's own debug_backtrace() gives (the leaf: a line of its
body), merged into the native stack (native frames below them). The same
through record and report (the names travel in the capture), and
--no-php keeps the native execute_ex frames only. Mixed: array_map, an
internal function calling back into PHP, shows by name right after
Chain::middle, then its C code (zend_call_function), then the closure."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from librubyrt import finish, folded_counts, has_chain, php_ready  # noqa: E402
from librubyrt import native_only, record_report, run, where  # noqa: E402
from librubyrt import PHP, php_script  # noqa: E402

NAME = "php_chain"
CHAIN = ["Chain::outer", "Chain::middle", "Chain::{closure}", "Chain::leafWork"]


def mixed(stack):
    """middle, then array_map (internal), zend_call_function, the closure."""
    fr = stack.split(";")
    try:
        m = next(i for i, f in enumerate(fr) if f.startswith("Chain::middle ("))
        b = next(i for i, f in enumerate(fr) if f.startswith("Chain::{closure} ("))
        z = fr.index("zend_call_function")
    except (StopIteration, ValueError):
        return False
    return fr[m + 1] == "array_map" and m + 1 < z < b


def share(stacks, loc):
    total = sum(stacks.values())
    good = sum(n for s, n in stacks.items() if has_chain(s, CHAIN, loc) and
               not s.split(";")[1].endswith(")") and mixed(s))
    return good, total


def main():
    if not php_ready(NAME):
        return 0
    errs = []
    cmd = ["--", PHP, php_script("chain.php"), "3"]
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "live.folded")
        rc, so, se, st = run(["-F", "199", "--stats", "--quiet", "-o", out] + cmd)
        loc = where(so)
        stacks = folded_counts(out) if rc == 0 else {}
        good, total = share(stacks, loc)
        print("live: exit %d, %d of %d samples show the chain and array_map; where %s; "
              "php_processes %s"
              % (rc, good, total, loc, st.get("php_processes")))
        if rc != 0:
            errs.append("sfprof exited %d: %s" % (rc, se[-300:]))
        if any(c not in loc for c in CHAIN):
            errs.append("expected the script to report %s, got %s" % (CHAIN, loc))
        if total < 100 or good < 0.9 * total:
            top = max(stacks, key=stacks.get) if stacks else None
            errs.append("expected >= 90%% of >= 100 samples with the chain, got %d of %d "
                        "(top: %s)" % (good, total, top))

        errs += record_report(d, cmd, share, "the chain")

        errs += native_only(d, cmd, "php", "execute_ex")
    return finish(NAME, errs)


if __name__ == "__main__":
    sys.exit(main())

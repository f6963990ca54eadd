#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""PHP frames are named as PHP names them (debug_backtrace's class and
function): a static method and an instance method alike as
Class::method, a closure in a method as Class::{closure}, a function by
its name, an internal function (array_map) by its name. The workload
(tests/workloads/php/labels.php) prints those names from PHP itself;
>= 90% of its on-CPU samples show the chain Worker::start ->
Worker::outer -> array_map -> Worker::{closure} -> Worker::middle ->
spin with those names, at the lines PHP reports."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from librubyrt import PHP, finish, folded_counts, has_chain, php_ready, php_script  # noqa: E402
from librubyrt import run, where  # noqa: E402

NAME = "php_labels"
WANT = ["Worker::start", "Worker::outer", "Worker::{closure}", "Worker::middle", "spin"]


def ok(stack, loc):
    fr = stack.split(";")
    try:
        o = next(i for i, f in enumerate(fr) if f.startswith("Worker::outer ("))
    except StopIteration:
        return False
    return has_chain(stack, WANT, loc) and fr[o + 1] == "array_map"


def main():
    if not php_ready(NAME):
        return 0
    errs = []
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "live.folded")
        rc, so, se, _ = run(["-F", "199", "--quiet", "-o", out, "--", PHP,
                             php_script("labels.php"), "3"])
        loc = where(so)
        stacks = folded_counts(out) if rc == 0 else {}
        total = sum(stacks.values())
        good = sum(n for s, n in stacks.items() if ok(s, loc))
        print("live: exit %d, %d of %d samples show the chain; PHP says %s"
              % (rc, good, total, loc))
        if rc != 0:
            errs.append("sfprof exited %d: %s" % (rc, se[-300:]))
        if any(w not in loc for w in WANT):
            errs.append("expected PHP to name the chain %s, got %s" % (WANT, sorted(loc)))
        if total < 100 or good < 0.9 * total:
            top = max(stacks, key=stacks.get) if stacks else None
            errs.append("expected >= 90%% of >= 100 samples with PHP's names, got %d of %d "
                        "(top: %s)" % (good, total, top))
    return finish(NAME, errs)


if __name__ == "__main__":
    sys.exit(main())

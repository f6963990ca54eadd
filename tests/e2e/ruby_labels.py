#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Ruby frames are labelled as Ruby's own profiler API labels them
(rb_profile_frame_full_label, as rbspy shows them): a singleton method as
Class.method, an instance method as Class#method, a block as "block in
Class#method", a module function called on its module as Module.method,
and a C method as Class#method (Array#each). The workload
(tests/workloads/ruby/labels.rb) prints those labels from Ruby itself;
>= 90% of its on-CPU samples show the chain Worker.start -> Worker#outer
-> Array#each -> block in Worker#outer -> Worker#middle -> Util.spin
with those labels, at the lines Ruby reports, live and through record
and report (the labels travel in the capture)."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from librubyrt import RUBY, finish, folded_counts, has_chain, ready, record_report  # noqa: E402
from librubyrt import run, script, where  # noqa: E402

NAME = "ruby_labels"


def chain_of(loc):
    """The Ruby frames of the chain, outermost first, by Ruby's labels."""
    names = [n for n in loc if n != "<main>" and loc[n][1] != 0]
    return list(reversed(names))


def cfunc_ok(stack, loc):
    """The C method between Worker#outer and its block, by Ruby's label."""
    cname = next((n for n in loc if loc[n][1] == 0 and n != "<main>"), None)
    fr = stack.split(";")
    try:
        o = next(i for i, f in enumerate(fr) if f.startswith("Worker#outer ("))
    except StopIteration:
        return False
    return cname is not None and o + 1 < len(fr) and fr[o + 1] == cname


def share(stacks, loc):
    chain = chain_of(loc)
    total = sum(stacks.values())
    good = sum(n for s, n in stacks.items() if has_chain(s, chain, loc) and cfunc_ok(s, loc))
    return good, total


def main():
    if not ready(NAME):
        return 0
    errs = []
    cmd = ["--", RUBY, "--disable-gems", script("labels.rb"), "3"]
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "live.folded")
        rc, so, se, st = run(["-F", "199", "--quiet", "-o", out] + cmd)
        loc = where(so)
        stacks = folded_counts(out) if rc == 0 else {}
        good, total = share(stacks, loc)
        print("live: exit %d, %d of %d samples show the chain %s" % (rc, good, total,
                                                                     chain_of(loc)))
        want = ["Worker.start", "Worker#outer", "block in Worker#outer", "Worker#middle",
                "Util.spin"]
        if rc != 0:
            errs.append("sfprof exited %d: %s" % (rc, se[-300:]))
        if chain_of(loc) != want:
            errs.append("expected Ruby to label the chain %s, got %s" % (want, chain_of(loc)))
        if total < 100 or good < 0.9 * total:
            top = max(stacks, key=stacks.get) if stacks else None
            errs.append("expected >= 90%% of >= 100 samples with Ruby's labels, got %d of %d "
                        "(top: %s)" % (good, total, top))

        errs += record_report(d, cmd, share, "the chain")
    return finish(NAME, errs)


if __name__ == "__main__":
    sys.exit(main())

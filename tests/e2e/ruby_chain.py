#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Ruby methods in on-CPU stacks (Debian's ruby3.1): a class method chain
Chain.outer -> Chain.middle -> a block -> Chain.leaf_work
(tests/workloads/ruby/chain.rb) shows, in >= 90% of the process's
samples, as those four Ruby frames in order, labelled as Ruby qualifies
them (the workload prints the labels), each at the file:line Ruby's own
caller_locations gives (the
leaf: a line of its body), merged into the native stack (native frames
below them). The same through record and report (the names travel in
the capture), and --no-ruby keeps the native rb_vm_exec frames only. In
pprof each Ruby method is a Function with its file and start line (its
def) and its samples' Lines at the lines Ruby reports.
Mixed: Array#each, a C method calling back into Ruby, shows as its
qualified method name (Array#each) right after Chain.middle, then its C
code (rb_ary_each, rb_yield), then the block it called."""
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from librubyrt import RUBY, finish, folded_counts, has_chain, ready  # noqa: E402
from librubyrt import native_only, record_report, run, script, where  # noqa: E402

NAME = "ruby_chain"
CHAIN = ["Chain.outer", "Chain.middle", "block in Chain.middle", "Chain.leaf_work"]


def mixed(stack, cfunc):
    """middle, then Array#each (the C method), rb_ary_each, rb_yield, the block."""
    fr = stack.split(";")
    try:
        m = next(i for i, f in enumerate(fr) if f.startswith(CHAIN[1] + " ("))
        b = next(i for i, f in enumerate(fr) if f.startswith(CHAIN[2] + " ("))
    except StopIteration:
        return False
    return fr[m + 1] == cfunc and m + 1 < fr.index("rb_ary_each") < fr.index("rb_yield") < b


def share(stacks, loc):
    total = sum(stacks.values())
    cfunc = next((n for n in loc if loc[n][0] == "-"), None)
    good = sum(n for s, n in stacks.items() if has_chain(s, CHAIN, loc) and
               not s.split(";")[1].endswith(")") and mixed(s, cfunc))
    return good, total


def pprof_check(d, cmd):
    """leaf_work, middle, outer: Functions of chain.rb starting at their
    def lines, with Lines where Ruby says they run."""
    if not shutil.which("go"):
        print("(pprof not checked: no go tool; tests/install-deps.sh installs golang-go)")
        return []
    from libsurface import pprof_raw  # noqa: E402
    out = os.path.join(d, "p.pb.gz")
    rc, so, se, _ = run(["-F", "199", "--quiet", "-o", out] + cmd)
    if rc != 0:
        return ["pprof run exited %d: %s" % (rc, se[-300:])]
    loc = where(so)
    _, text = pprof_raw(out)
    errs, seen = [], {}
    # (each at its own address in the interpreter's [ruby] mapping, pymerge.c)
    for m in re.finditer(r"^\s+\d+: 0x[0-9a-f]+ M=\d+ (.+) (\S+):(\d+) s=(\d+)$", text, re.M):
        seen.setdefault(m.group(1), set()).add((os.path.basename(m.group(2)), int(m.group(3)),
                                                int(m.group(4))))
    defs = dict((n, loc["def " + n][1]) for n in (CHAIN[3], CHAIN[1], CHAIN[0]))
    for name, start in defs.items():
        want = [(f, line, s) for f, line, s in seen.get(name, ())
                if f == "chain.rb" and s == start and
                (loc[name][1] <= line <= loc[name][2])]
        print("pprof %s: %s" % (name, sorted(seen.get(name, ()))[:4]))
        if not want:
            errs.append("expected pprof Function %s of chain.rb at start line %d with a Line in "
                        "%s, got %s" % (name, start, loc[name][1:], sorted(seen.get(name, ()))))
    return errs


def main():
    if not ready(NAME):
        return 0
    errs = []
    cmd = ["--", RUBY, "--disable-gems", script("chain.rb"), "3"]
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "live.folded")
        rc, so, se, st = run(["-F", "199", "--stats", "--quiet", "-o", out] + cmd)
        loc = where(so)
        stacks = folded_counts(out) if rc == 0 else {}
        good, total = share(stacks, loc)
        print("live: exit %d, %d of %d samples show the chain and each; where %s; "
              "ruby_processes %s"
              % (rc, good, total, loc, st.get("ruby_processes")))
        if rc != 0:
            errs.append("sfprof exited %d: %s" % (rc, se[-300:]))
        if any(c not in loc for c in CHAIN + ["Array#each"]):
            errs.append("expected the script to report %s, got %s" % (CHAIN, loc))
        if total < 100 or good < 0.9 * total:
            top = max(stacks, key=stacks.get) if stacks else None
            errs.append("expected >= 90%% of >= 100 samples with the chain, got %d of %d "
                        "(top: %s)" % (good, total, top))

        errs += record_report(d, cmd, share, "the chain")

        errs += pprof_check(d, cmd)

        errs += native_only(d, cmd, "ruby", "rb_vm_exec")
    return finish(NAME, errs)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Ruby methods in off-CPU stacks: a Ruby thread blocked 2 s in Queue#pop
(tests/workloads/ruby/wait.rb: consumer -> wait_item -> Queue#pop) shows
under -e offcpu as Waiter.consumer -> Waiter.wait_item ->
Thread::Queue#pop (the C method, by its qualified name, as Ruby prints
them) at the lines of the call and of the pop, for >= 75% of the time it waited (folded weights are microseconds), above the native wait. The
names are read while the process runs (the rb_new ring: at the block
when sfprof knew the process by then, else as the block ends; the
script lives 0.5 s on), so the frames are named, not unreadable. The
same wait under -e futex (Queue#pop waits on a futex), and with --wakers
the waker's stack names the Ruby code that woke it: Thread::Queue#<< in <main>
at the line of the push."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from librubyrt import RUBY, finish, folded_counts, has_chain, ready, run, script  # noqa: E402
from librubyrt import where  # noqa: E402

NAME = "ruby_offcpu"
WAIT_S = 2


CHAIN = ["Waiter.consumer", "Waiter.wait_item"]
POP, PUSH = "Thread::Queue#pop", "Thread::Queue#<<"


def popped(s, loc):
    """The blocked stack: consumer -> wait_item -> pop, at a futex wait."""
    fr = s.split(";")
    at = "%s (wait.rb:%d)" % (CHAIN[1], loc[CHAIN[1]][1])
    return has_chain(s, CHAIN, loc) and at in fr and \
        fr[fr.index(at) + 1] == POP and "futex" in fr[-1]


def futex_and_wakers(chain):
    errs = []
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "w.folded")
        rc, so, se, st = run(["-e", "futex,offcpu", "--wakers", "--stats", "-o", out, "--",
                              RUBY, "--disable-gems", script("wait.rb"), str(WAIT_S)])
        loc = where(so)
        fx = folded_counts(os.path.join(d, "w.futex.folded")) if rc == 0 else {}
        off = folded_counts(os.path.join(d, "w.offcpu.folded")) if rc == 0 else {}
    waited = sum(n for s, n in fx.items() if popped(s.partition(";--;")[0], loc))
    push = "<main> (wait.rb:%d)" % loc.get("<main>", ("", 0, 0))[1]
    woken = sum(n for s, n in off.items() if ";--;" in s and
                popped(s.partition(";--;")[0], loc) and
                ";%s;%s;" % (PUSH, push) in s.partition(";--;")[2])
    print("futex: %.2f s in pop's futex wait; --wakers: %.2f s woken by << at %s"
          % (waited / 1e6, woken / 1e6, push))
    if rc != 0:
        errs.append("-e futex,offcpu --wakers exited %d: %s" % (rc, se[-300:]))
    if waited < 0.75 * WAIT_S * 1e6:
        # (the wait is one event: say what became of it)
        top = max(fx, key=fx.get)[:700] if fx else None
        keys = [k for k in st if k.startswith(("ruby_", "python_stacks", "python_frames",
                                               "stacks_events", "stacks_wakers", "lost", "stack_"))]
        errs.append("expected >= %.1f s of futex wait under consumer -> wait_item -> pop, got "
                    "%.2f s (top futex stack: %s; stats: %s)"
                    % (0.75 * WAIT_S, waited / 1e6, top, {k: st[k] for k in keys}))
    if woken < 0.75 * WAIT_S * 1e6:
        errs.append("expected >= %.1f s of the block joined to a waker in << at %s, got %.2f s"
                    % (0.75 * WAIT_S, push, woken / 1e6))
    return errs


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
    chain = CHAIN
    if any(n not in loc for n in CHAIN + [POP, PUSH]):
        errs.append("expected Ruby to name %s, got %s" % (CHAIN + [POP, PUSH], sorted(loc)))
        loc.setdefault(CHAIN[1], ("", 0, 0))
    named = sum(n for s, n in stacks.items() if popped(s, loc))
    unreadable = sum(n for s, n in stacks.items() if "[ruby: unreadable frame]" in s)
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
    errs += futex_and_wakers(chain)
    return finish(NAME, errs)


if __name__ == "__main__":
    sys.exit(main())

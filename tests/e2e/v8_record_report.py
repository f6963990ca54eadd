#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Records replay V8's frames: a plain node (no flags for sfprof's sake)
recorded by `sfprof record -p` and reported after node has exited names the
main thread's JS chain as live mode does (issue 25). Live, sfprof names a
compiled frame by its JSFunction slot, and an interpreted (Ignition) one,
which runs in node's shared interpreter builtins, by the JSFunction in its
frame checked against its BytecodeArray and bytecode offset slots; the
capture carries the compiled frames' names as JIT entries by PC and, for
the interpreted ones, what report needs to check the snapshot's slots
(src/runtimes/v8/v8record.h), since node's memory is gone by then.

Each case runs one node (v8_names' chain asyncJS -> Worker.method ->
outerJS -> innerJS) and, at the same time, `sfprof -p` (live) and
`sfprof record -p` on it; once node has exited, `sfprof report`. In both,
outerJS;innerJS must be in >= 90% of the main thread's samples (rooted at
_start), and report's most common JS chain must be live's, within 10
points of its share; record's own profile of the same events
(SFPROF_RECORD_PROFILE, named live from node) and report's differ in at
most 1% of the main thread's samples (measured 0 of 701 --jitless, 0 of
769 compiled); and report never names a JS frame out of the chain's
order (a wrong function; one left generic between them is not). The cases:
 - no flags, after warm-up (compiled: TurboFan/Maglev/Sparkplug code);
 - --jitless (everything interpreted);
 - no flags, early in node's life (attached as node starts its loop:
   interpreted, then tiering up; three runs together).
"""
import collections
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from libunwind import SFPROF  # noqa: E402
from v8_names import APP, CHAIN, js_name, node_or_skip  # noqa: E402

NAME = "v8_record_report"


def stacks(path):
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        yield stack.split(";"), int(n)


def in_order(names):
    """The chain's functions among names each once at most, in the chain's
    order (an unnamed frame between them is the VM's generic frame, not a
    wrong name)."""
    ch = [x for x in names if x in CHAIN]
    it = iter(CHAIN)
    return all(x in it for x in ch)


def measure(path, what, errs, floor):
    """The main thread's samples, how many carry outerJS;innerJS, its JS
    chains, and how many samples name JS frames out of the chain's order."""
    main = hit = wrong = 0
    chains = collections.Counter()
    for frames, n in stacks(path):
        if len(frames) < 2 or frames[0] != "node" or frames[1] != "_start":
            continue
        main += n
        names = [js_name(f) for f in frames if js_name(f)]
        chains[tuple(names)] += n
        if any(names[i] == "outerJS" and names[i + 1] == "innerJS"
               for i in range(len(names) - 1)):
            hit += n
        if not in_order(names):
            wrong += n
    share = 100.0 * hit / max(main, 1)
    print("%s: main thread %d samples, outerJS;innerJS in %d (%.1f%%), %d out of order"
          % (what, main, hit, share, wrong))
    if main < floor:
        errs.append("%s: only %d main-thread samples" % (what, main))
    elif share < 90.0:
        errs.append("%s: outerJS;innerJS in %.1f%% of the main thread's samples, want >= 90%%"
                    % (what, share))
    if wrong:
        errs.append("%s: %d samples name JS frames out of the chain's order" % (what, wrong))
    return main, chains


def one_run(d, flags, warm, dur, hz, k, errs, what):
    """node with flags; live and record on it after `warm` s: the paths of
    live's output and the capture, or None."""
    app = os.path.join(d, "app.js")
    pidf = os.path.join(d, "pid%d" % k)
    live = os.path.join(d, "live%d.folded" % k)
    cap = os.path.join(d, "run%d.sfcap" % k)
    own = os.path.join(d, "record%d.folded" % k)
    try:
        os.unlink(pidf)
    except OSError:
        pass
    # (node runs its loop warm + dur + 1.5 s: both sfprofs end before it)
    node = subprocess.Popen(["node"] + flags + [app, str(int((warm + dur + 1.5) * 1000)), pidf],
                            cwd=d)
    try:
        t0 = time.time()
        while not os.path.exists(pidf) or not open(pidf).read().strip():
            if time.time() - t0 > 30:
                errs.append("%s: node wrote no pid" % what)
                return None
            time.sleep(0.005)
        time.sleep(warm)
        common = ["-p", str(node.pid), "-d", str(dur), "-F", str(hz), "--quiet", "-o"]
        lp = subprocess.Popen([SFPROF] + common + [live], stderr=subprocess.PIPE, text=True)
        rp = subprocess.Popen([SFPROF, "record"] + common + [cap], stderr=subprocess.PIPE,
                              text=True, env=dict(os.environ, SFPROF_RECORD_PROFILE=own))
        _, lerr = lp.communicate(timeout=120)
        _, rerr = rp.communicate(timeout=120)
        node.wait(timeout=60)  # (report after node has exited)
    finally:
        node.kill()
        node.wait()
    if lp.returncode or rp.returncode:
        errs.append("%s: sfprof exited %d, record %d: %s" % (what, lp.returncode, rp.returncode,
                                                             (lerr + rerr)[-300:]))
        return None
    return live, cap, own


def main_stacks(path):
    """The main thread's folded stacks (their counts)."""
    c = collections.Counter()
    for frames, n in stacks(path):
        if len(frames) > 1 and frames[0] == "node" and frames[1] == "_start":
            c[";".join(frames)] += n
    return c


def run_case(d, what, flags, warm, dur, hz, runs, errs):
    live = os.path.join(d, "live.folded")
    rep = os.path.join(d, "report.folded")
    mine, theirs = collections.Counter(), collections.Counter()
    with open(live, "w") as lo, open(rep, "w") as ro:
        for k in range(runs):
            got = one_run(d, flags, warm, dur, hz, k, errs, what)
            if not got:
                return
            one = os.path.join(d, "report%d.folded" % k)
            r = subprocess.run([SFPROF, "report", "--quiet", "-o", one, got[1]],
                               capture_output=True, text=True, timeout=120)
            if r.returncode:
                errs.append("%s: report exited %d: %s" % (what, r.returncode, r.stderr[-300:]))
                return
            lo.write(open(got[0]).read())
            ro.write(open(one).read())
            mine.update(main_stacks(got[2]))
            theirs.update(main_stacks(one))
    floor = 50 * runs
    lm, lc = measure(live, what + " live", errs, floor)
    rm, rc = measure(rep, what + " record/report", errs, floor)
    if not lc or not rc:
        return
    (ltop, ln), (rtop, rn) = lc.most_common(1)[0], rc.most_common(1)[0]
    lshare, rshare = 100.0 * ln / max(lm, 1), 100.0 * rn / max(rm, 1)
    print("%s: most common JS chain live %s (%.1f%%), report %s (%.1f%%)"
          % (what, " -> ".join(ltop), lshare, " -> ".join(rtop), rshare))
    if ltop != rtop or abs(lshare - rshare) > 10.0:
        errs.append("%s: report's most common JS chain %s (%.1f%%) is not live's %s (%.1f%%)"
                    % (what, rtop, rshare, ltop, lshare))
    # the same events: record's own profile (named live from node) against
    # the report's (from the capture)
    total = sum(mine.values())
    diff = sum(abs(mine[k] - theirs[k]) for k in set(mine) | set(theirs)) // 2
    print("%s: record's own profile and report's, the same %d main-thread samples: %d differ"
          % (what, total, diff))
    if total < 50 or diff > total // 100:
        errs.append("%s: report differs from record's own profile in %d of %d main-thread "
                    "samples: %s" % (what, diff, total, sorted(
                        set(mine.items()) ^ set(theirs.items()))[:4]))


def main():
    if not node_or_skip(NAME):
        return 0
    errs = []
    only = os.environ.get("V8_CASE", "")
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "app.js"), "w") as f:
            f.write(APP)
        for what, flags, warm, dur, hz, runs in (
                ("compiled", [], 2.0, 4, 199, 1),
                ("jitless", ["--jitless"], 0.5, 4, 199, 1),
                ("early", [], 0.0, 1, 499, 3)):
            if not only or only == what:
                run_case(d, what, flags, warm, dur, hz, runs, errs)
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""node's interpreted (Ignition) JS frames named with no flag in node
(issue 25, V8): a function V8 has not compiled runs in node's own
interpreter builtins (Builtins_InterpreterEntryTrampoline, a bytecode
handler), and sfprof names its frame by the frame's JSFunction, checked
against its BytecodeArray, as a compiled one. v8_names' chain asyncJS ->
Worker.method -> outerJS -> innerJS, live: under --jitless (everything
interpreted) and --no-opt --no-sparkplug, >= 90% of the samples running JS
carry outerJS;innerJS, rooted, the whole chain in order in >= 50%; and a
short default run, early in node's life (functions interpreted before
they tier up; three runs together), the same. With --no-v8 the interpreted frames stay the
interpreter's builtins. Off-CPU (-e offcpu), v8_offcpu's Atomics.wait
under --jitless: >= 80% of the blocked time under JS:sleeperJS, rooted.
pprof (go tool pprof -top, where go is): the chain's functions each a
Location of its own (not inline Lines of one: their frames share the
interpreter's return PC), asyncJS, method, outerJS, innerJS each in >= 80%
of the time. Record then report: an interpreter builtin's PC is
every interpreted function's, so the capture carries each interpreted
function's BytecodeArray and name (v8record.h) and report names a frame
by its slots in the snapshot: the chain as live (check()), no JS name out
of order, and at most 10% at an unnamed entry trampoline
(v8_record_report compares it with live's run on one node)."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libunwind import SFPROF  # noqa: E402
from v8_names import APP, CHAIN, check, js_name, node_or_skip, run  # noqa: E402
import v8_offcpu  # noqa: E402

NAME = "v8_interp"


def interp_frames(out):
    """Samples running JS, and how many have a frame at the interpreter's
    entry trampoline (an interpreted JS frame left unnamed)."""
    total = unnamed = 0
    for line in open(out):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        frames, n = stack.split(";"), int(n)
        if not any("JSRunMicrotasksEntry" in f for f in frames):
            continue
        total += n
        if "Builtins_InterpreterEntryTrampoline" in frames:
            unnamed += n
    return total, unnamed


def main():
    node = node_or_skip(NAME)
    if not node:
        return 0
    errs = []
    with tempfile.TemporaryDirectory() as d:
        app = os.path.join(d, "app.js")
        pidf = os.path.join(d, "pid")
        with open(app, "w") as f:
            f.write(APP)
        # (the short run's node idles 2 s after its JS: a loaded machine's
        # sfprof reads its last samples' objects before node exits)
        linger = os.path.join(d, "linger.js")
        with open(linger, "w") as f:
            f.write(APP + "setTimeout(() => {}, 2000);\n")
        for what, flags, js, ms, hz in (
                ("--jitless", ["--jitless"], app, "4000", "499"),
                ("--no-opt --no-sparkplug", ["--no-opt", "--no-sparkplug"], app, "4000", "499"),
                ("default flags, early in life", [], linger, "600", "999")):
            # (the short run three times over: enough samples on a loaded
            # machine)
            out = os.path.join(d, "live.folded")
            ok = True
            with open(out, "w") as all_out:
                for k in range(3 if js == linger else 1):
                    one = os.path.join(d, "one.folded")
                    ok = ok and run([SFPROF, "-F", hz, "--quiet", "-o", one, "--", node] +
                                    flags + [js, ms, pidf], d, errs, what)
                    if ok:
                        all_out.write(open(one).read())
            if ok:
                check(out, "live, " + what, errs)
                total, unnamed = interp_frames(out)
                print("%s: %d of %d samples keep an unnamed interpreter frame" % (
                    what, unnamed, total))
                if unnamed > 0.1 * max(total, 1):
                    errs.append("%s: %d of %d samples keep an unnamed interpreter frame" % (
                        what, unnamed, total))
        # pprof: a Location a frame (go tool pprof's -top says "inline"
        # for a function that is a Line of another's Location)
        go = shutil.which("go")
        pb = os.path.join(d, "live.pb.gz")
        if go and run([SFPROF, "-F", "499", "--quiet", "-o", pb, "--", node, "--jitless", app,
                       "2000", pidf], d, errs, "pprof run"):
            r = subprocess.run([go, "tool", "pprof", "-top", "-nodecount=500", pb],
                               capture_output=True, text=True, timeout=300)
            cum = {}
            for line in r.stdout.splitlines():
                parts = line.split(None, 5)
                if len(parts) == 6 and parts[5].startswith("JS:"):
                    name = parts[5].split(" ")[0][3:]
                    cum[name] = (float(parts[4].rstrip("%")), "(inline)" in parts[5])
            print("pprof --jitless: %s" % ", ".join("%s %.1f%%%s" % (k, cum[k][0], " inline"
                                                    if cum[k][1] else "")
                                                    for k in CHAIN if k in cum))
            for k in CHAIN:
                if k not in cum or cum[k][0] < 80 or cum[k][1]:
                    errs.append("pprof: %s %s" % (k, "%.1f%%%s" % (cum[k][0], " inline" if
                                                   cum[k][1] else "") if k in cum else "absent"))
        # off-CPU: an interpreted function blocked in Atomics.wait
        off_app = os.path.join(d, "off.js")
        with open(off_app, "w") as f:
            f.write(v8_offcpu.APP)
        off = os.path.join(d, "offcpu.folded")
        if run([SFPROF, "-e", "offcpu", "--quiet", "-o", off, "--", node, "--jitless", off_app,
                "3000"], d, errs, "-e offcpu --jitless"):
            v8_offcpu.check(off, "live -e offcpu, --jitless", errs)
        # --no-v8: the interpreted frames are the interpreter's builtins
        nv = os.path.join(d, "nov8.folded")
        if run([SFPROF, "-F", "499", "--quiet", "--no-v8", "-o", nv, "--", node, "--jitless",
                app, "2000", pidf], d, errs, "--no-v8 run"):
            js = sum(int(line.rpartition(" ")[2]) for line in open(nv) if ";JS:" in line)
            total, unnamed = interp_frames(nv)
            print("--no-v8 --jitless: %d samples with a JS name, %d of %d in the interpreter" % (
                js, unnamed, total))
            if js:
                errs.append("--no-v8: %d samples named from V8 all the same" % js)
            if unnamed < 0.9 * max(total, 1):
                errs.append("--no-v8 --jitless: only %d of %d samples in the interpreter" % (
                    unnamed, total))
        # record then report: named from the capture, never a wrong name
        cap = os.path.join(d, "run.sfcap")
        rep = os.path.join(d, "report.folded")
        if run([SFPROF, "record", "-F", "499", "--quiet", "-o", cap, "--", node, "--jitless",
                app, "2000", pidf], d, errs, "record") and \
                run([SFPROF, "report", "-o", rep, cap], d, errs, "report"):
            check(rep, "record, then report, --jitless", errs)
            wrong = 0
            for line in open(rep):
                stack, _, n = line.rstrip("\n").rpartition(" ")
                names = [js_name(f) for f in stack.split(";") if js_name(f)]
                it = iter(CHAIN)
                if not all(x in it for x in names if x in CHAIN):
                    wrong += int(n)
            total, unnamed = interp_frames(rep)
            print("record, then report, --jitless: %d of %d samples keep an unnamed "
                  "interpreter frame, %d with JS names out of order" % (unnamed, total, wrong))
            if wrong:
                errs.append("report: %d samples with JS names out of order" % wrong)
            if unnamed > 0.1 * max(total, 1):
                errs.append("report: %d of %d samples keep an unnamed interpreter frame" % (
                    unnamed, total))
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

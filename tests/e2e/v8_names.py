#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""node's JS frames named with no flag in node (issue 25, V8): sfprof reads
the JSFunction of each JIT frame from its frame (V8's v8dbg_* layout) and
names it from the VM's own objects. A CPU-bound chain asyncJS (an async
function) -> Worker.method (a class method) -> outerJS -> innerJS, each
too big for TurboFan to inline: >= 90% of the samples running JS carry
outerJS;innerJS in that order, rooted at _start, live and through record
then report after node has exited; the method and the async function are
named in order above them; and the names agree with what node's own perf
map (--perf-basic-prof, with --no-v8) gives the same program; with --no-v8
and no perf map they stay [jit]."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libunwind import SFPROF  # noqa: E402

NAME = "v8_names"
CHAIN = ["asyncJS", "method", "outerJS", "innerJS"]

# A block never run (n < 0) that makes a function's bytecode longer than
# TurboFan inlines (max_inlined_bytecode_size, 460 bytes).
PAD = "  if (n < 0) {\n" + "".join(
    "    s = (s * %d + %d) | 0; if (s === %d) s ^= %d;\n" % (31 + k, k, 1000 + k, k)
    for k in range(60)) + "  }\n"

APP = """'use strict';
require('fs').writeFileSync(process.argv[3], String(process.pid));
function innerJS(n) {
  let s = 0;
%(pad)s  for (let i = 0; i < n; i++) {
    s = (s + i * i) %% 1000003;
    if ((i & 1023) === 7) s ^= (i >>> 3);
  }
  return s;
}
function outerJS(n) {
  let s = 0;
%(pad)s  for (let k = 0; k < 4; k++) s += innerJS(n + k);
  return s;
}
class Worker {
  method(n) {
    let s = 0;
%(pad)s    return (outerJS(n) + s) & 0xffff;
  }
}
async function asyncJS(w, n) {
  let s = 0;
%(pad)s  return w.method(n) + s;
}
const w = new Worker();
const end = Date.now() + Number(process.argv[2]);
let acc = 0;
(async () => {
  while (Date.now() < end) acc += await asyncJS(w, 20000);
  if (acc < 0) console.log(acc);
})();
""" % {"pad": PAD}


def js_name(frame):
    """The function a JS frame names: 'JS:*innerJS /p/app.js:3:17' (a
    perf map's, its tier mark after JS:) or 'JS:innerJS /p/app.js'."""
    if not frame.startswith("JS:"):
        return None
    f = frame[3:]
    if f[:1] in "~^*+":
        f = f[1:]
    return f.split(" ")[0]


def check(out, what, errs, perfmap_only=False):
    total = chain = rooted = named_all = 0
    seen = {}
    for line in open(out):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        frames, n = stack.split(";"), int(n)
        if not any("JSRunMicrotasksEntry" in f for f in frames):
            continue  # not running the app's JS (startup, compiler threads)
        total += n
        names = [js_name(f) for f in frames if js_name(f)]
        # (perfmap_only: the names the perf map spells, a tier mark after
        # JS:, not the ones sfprof read from the VM before the map had them)
        for x in set(js_name(f) for f in frames if js_name(f) and
                     (not perfmap_only or f[3:4] in "~^*+")):
            seen[x] = seen.get(x, 0) + n
        # outerJS then innerJS, next to each other among the JS frames
        if any(names[i] == "outerJS" and names[i + 1] == "innerJS"
               for i in range(len(names) - 1)):
            chain += n
            if len(frames) > 1 and frames[1] == "_start":
                rooted += n
            if [x for x in names if x in CHAIN] == CHAIN:
                named_all += n
    print("%s: %d samples running JS: outerJS;innerJS in %d (%.1f%%), %d rooted; the whole "
          "chain %s in %d; names seen %s" % (what, total, chain, 100.0 * chain / max(total, 1),
                                             rooted, ";".join(CHAIN), named_all,
                                             sorted(seen.items(), key=lambda kv: -kv[1])[:8]))
    if total < 200:
        errs.append("%s: only %d samples running JS" % (what, total))
        return seen
    if chain < 0.9 * total:
        errs.append("%s: outerJS;innerJS in %.1f%% of samples, want >= 90%%" %
                    (what, 100.0 * chain / total))
    if rooted < 0.95 * chain:
        errs.append("%s: only %d of %d chain stacks rooted at _start" % (what, rooted, chain))
    if named_all < 0.5 * total:
        errs.append("%s: the async function and the class method named in order above the "
                    "chain in %d of %d samples, want >= 50%%" % (what, named_all, total))
    return seen


def run(cmd, d, errs, what):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=d)
    if r.returncode != 0:
        errs.append("%s: exited %d: %s" % (what, r.returncode, r.stderr[-300:]))
        return False
    return True


def node_or_skip(name):
    """node's path, or None after a SKIP line (not root, or no node)."""
    if os.geteuid() != 0:
        print("SKIP %s: needs root to load BPF programs" % name)
        return None
    node = shutil.which("node")
    if not node:
        print("SKIP %s: no node on this machine" % name)
    return node


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
        out = os.path.join(d, "live.folded")
        if run([SFPROF, "-F", "499", "--quiet", "-o", out, "--", node, app, "5000", pidf],
               d, errs, "live"):
            live = check(out, "live, no flags", errs)
        cap = os.path.join(d, "run.sfcap")
        rep = os.path.join(d, "report.folded")
        if run([SFPROF, "record", "-F", "499", "--quiet", "-o", cap, "--", node, app, "5000",
                pidf], d, errs, "record") and \
                run([SFPROF, "report", "-o", rep, cap], d, errs, "report"):
            check(rep, "record, then report after node exited", errs)
        # the same program with node's own perf map: the same names
        pm = os.path.join(d, "perfmap.folded")
        ok = run([SFPROF, "-F", "499", "--quiet", "--no-v8", "-o", pm, "--", node,
                  "--perf-basic-prof", app, "5000", pidf], d, errs, "perf-map run")
        try:
            os.unlink("/tmp/perf-%s.map" % open(pidf).read().strip())
        except OSError:
            pass
        if ok:
            ref = check(pm, "--perf-basic-prof", errs, perfmap_only=True)
            for x in CHAIN:
                if (ref.get(x, 0) > 0.5 * sum(ref.values()) / len(ref)) != (x in live):
                    errs.append("%s named %s with the perf map, %s without" % (
                        x, "in %d samples" % ref[x] if x in ref else "never",
                        "in %d samples" % live[x] if x in live else "never"))
        # --no-jvm is HotSpot's alone: node's frames named from V8 all the same
        nj = os.path.join(d, "nojvm.folded")
        if run([SFPROF, "-F", "499", "--quiet", "--no-jvm", "-o", nj, "--", node, app, "2000",
                pidf], d, errs, "--no-jvm run"):
            check(nj, "--no-jvm", errs)
        # --no-v8 and no perf map: the frames stay [jit], as before
        nv = os.path.join(d, "nov8.folded")
        if run([SFPROF, "-F", "499", "--quiet", "--no-v8", "-o", nv, "--", node, app, "2000",
                pidf], d, errs, "--no-v8 run"):
            js = sum(int(line.rpartition(" ")[2]) for line in open(nv) if ";JS:" in line)
            print("--no-v8, no perf map: %d samples with a JS name" % js)
            if js:
                errs.append("--no-v8: %d samples named from V8 all the same" % js)
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

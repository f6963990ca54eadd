#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Shapes of Python code (tests/workloads/python/shapes.py), each in an
on-CPU profile of its own python3.11 process:
  - a generator: consume_gen above gen_values, with the native resume
    (gen_iternext, gen_send_ex2) between them;
  - a class method, by its qualname Worker.compute;
  - an async function run by asyncio: acompute above the event loop's
    frames (BaseEventLoop.run_forever);
  - a 500-deep recursion: cut at the 128-frame bound, the cut marked by
    "[python: more frames]" right above 128 frames of recurse;
  - json.dumps of a large object: the _json C encoder's native frames
    (encoder_*) above JSONEncoder.iterencode and their Python caller
    dump_it.
Each shape must be in at least 80% of the samples that hold its marker
frame, and the marker in at least half of all samples."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from libpython import CUT, PY, TempDir, base, folded_counts, has_chain, py_name, ready, run, \
    script  # noqa: E402

NAME = "python_shapes"


def share(stacks, marker, ok):
    """(samples, samples with the marker frame, those for which ok(frames))."""
    tot = sum(stacks.values())
    mk = {s: n for s, n in stacks.items() if any(py_name(f) == marker for f in s.split(";"))}
    return tot, sum(mk.values()), sum(n for s, n in mk.items() if ok(s.split(";")))


def json_ok(f):
    enc = [i for i, x in enumerate(f) if x.startswith("encoder_")]
    if not enc:
        return False
    caller = [i for i, x in enumerate(f) if x.startswith("dump_it (shapes.py:")]
    it = [i for i, x in enumerate(f) if x.startswith("JSONEncoder.iterencode (")]
    return bool(caller and it) and caller[0] < it[0] < enc[0]


def recursion_ok(f):
    if CUT not in f:
        return False
    k = f.index(CUT)
    rest = f[k + 1:k + 129]
    return len(rest) == 128 and all(x.startswith("recurse (shapes.py:") for x in rest)


def main():
    if not ready(NAME):
        return 0
    errs = []
    with TempDir() as d:
        checks = [
            ("gen", "gen_values",
             lambda f: has_chain(f, ["consume_gen", "gen_values"], "shapes.py") and
             any(base(x) in ("gen_iternext", "gen_send_ex2") for x in
                 f[f.index(next(x for x in f if x.startswith("consume_gen ("))):])),
            ("method", "Worker.compute", lambda f: True),
            ("async", "acompute", lambda f: any(
                x.startswith("BaseEventLoop.run_forever (") for x in f[:f.index(next(
                    x for x in f if x.startswith("acompute (")))])),
            ("recursion", "recurse", recursion_ok),
            ("json", "dump_it", json_ok),
        ]
        for what, marker, ok in checks:
            out = os.path.join(d, what + ".folded")
            rc, err, st = run(["-F", "199", "--stats", "--quiet", "-o", out, "--",
                               PY, script("shapes.py"), what, "3"])
            if rc != 0:
                errs.append("%s: sfprof exited %d: %s" % (what, rc, err[-300:]))
                continue
            tot, mk, good = share(folded_counts(out), marker, ok)
            print("%s: %d samples, %d with %s, %d (%.1f%%) of those right" % (
                what, tot, mk, marker, good, 100.0 * good / max(mk, 1)))
            if tot < 50:
                errs.append("%s: only %d samples" % (what, tot))
            elif mk < 0.5 * tot or good < 0.8 * mk:
                errs.append("%s: %s in %d of %d samples, right in %d" % (
                    what, marker, mk, tot, good))
            if what == "recursion" and (not st.get("python_walks_cut") or
                                        not st.get("python_stacks_cut")):
                errs.append("recursion: --stats counts no cut walk")
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

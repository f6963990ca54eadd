#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The suite's runner (tests/run-tests.sh) on a folder of scripts made here
(E2E_DIR, and a BUILD with no unit tests): two scripts run at once (their
times overlap), none beside another of its group (names_jit.py and
names_pytramp.py share /tmp/perf-*.map), one that must run alone
(targets_scope.py) beside none, and with TEST_JOBS=1 none at once; each
script's lines come out whole, in the order the scripts are listed, though
they print them slowly while another runs; a FAIL line and an exit without
one both count as failures; lib* scripts are not run; the wall time is
said; the closing line is exactly "N passed, N failed, N skipped", last,
and the exit status is 1 with a failure, 0 without."""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libcapture import Checker  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RUNNER = os.path.join(ROOT, "tests", "run-tests.sh")

# name -> (seconds it runs, what it prints at the end)
SCRIPTS = {
    "a_one.sh": (1.2, ""),
    "b_two.sh": (1.2, ""),
    "c_fail.sh": (0.2, 'echo "FAIL c_fail_check: expected 1, got 2"'),
    "d_exit.sh": (0.2, "exit 3"),
    "names_jit.py": (0.8, ""),
    "names_pytramp.py": (0.8, ""),
    "targets_scope.py": (0.6, ""),
    "lib_helper.py": (0.1, ""),
}


def make(d, log):
    for name, (secs, tail) in SCRIPTS.items():
        tag = name.split(".")[0]
        with open(os.path.join(d, name), "w") as f:
            # three PASS lines spread over its run, its start and end logged
            f.write("#!/bin/sh\n"
                    "echo \"start %s $(date +%%s.%%N)\" >> %s\n"
                    "for i in 1 2 3; do echo \"PASS %s_$i\"; sleep %.2f; done\n"
                    "echo \"end %s $(date +%%s.%%N)\" >> %s\n"
                    "%s\n" % (tag, log, tag, secs / 3, tag, log, tail))
        os.chmod(os.path.join(d, name), 0o755)


def spans(log):
    """{tag: (start, end)}"""
    out = {}
    for line in open(log):
        what, tag, t = line.split()
        s, e = out.get(tag, (None, None))
        out[tag] = (float(t), e) if what == "start" else (s, float(t))
    return out


def overlap(a, b):
    return a[0] < b[1] and b[0] < a[1]


def run(d, build, log, jobs, filt=""):
    if os.path.exists(log):
        os.unlink(log)
    env = dict(os.environ, E2E_DIR=d, BUILD=build, TEST_JOBS=str(jobs), E2E_FILTER=filt)
    return subprocess.run([RUNNER], capture_output=True, text=True, env=env, timeout=120)


def main():
    c = Checker("suite_parallel")
    with tempfile.TemporaryDirectory(prefix="sfprof-suite.") as d:
        e2e, build = os.path.join(d, "e2e"), os.path.join(d, "build")
        os.mkdir(e2e)
        os.mkdir(build)
        log = os.path.join(d, "times.log")
        make(e2e, log)

        r = run(e2e, build, log, 2)
        lines = r.stdout.splitlines()
        sp = spans(log)
        c.check(r.returncode == 1, "exit status %d with failures, want 1" % r.returncode)
        c.check(lines and lines[-1] == "21 passed, 2 failed, 0 skipped",
                "closing line %r, want '21 passed, 2 failed, 0 skipped'" % (lines[-1:],))
        c.check(any(re.match(r"^Wall time: \d+ s \(e2e \d+ s, 2 at a time", x) for x in lines[:-1]),
                "no wall time line before the closing one")
        c.check("lib_helper" not in sp, "a lib* script ran")
        c.check(set(sp) == {n.split(".")[0] for n in SCRIPTS} - {"lib_helper"},
                "scripts run: %s" % sorted(sp))
        c.check(overlap(sp["a_one"], sp["b_two"]), "a_one and b_two did not run at once")
        c.check(not overlap(sp["names_jit"], sp["names_pytramp"]),
                "names_jit and names_pytramp (one group) ran at once")
        c.check(all(not overlap(sp["targets_scope"], v) for k, v in sp.items()
                    if k != "targets_scope"), "targets_scope (alone) ran beside another")
        # the result lines, each script's whole and in order
        res = [x.split()[1].split("/")[0].rstrip(":") for x in lines if re.match(r"^(PASS|FAIL|SKIP) ", x)]
        order = []
        for x in res:
            if not order or order[-1] != x:
                order.append(x)
        want = ["a_one.sh", "b_two.sh", "c_fail.sh", "d_exit.sh", "names_jit.py",
                "names_pytramp.py", "targets_scope.py"]
        c.check(order == want, "results in the order %s, want each whole in %s" % (order, want))
        c.check("FAIL c_fail.sh/c_fail_check: expected 1, got 2" in lines, "c_fail's FAIL line")
        c.check("FAIL d_exit.sh: exited 3" in lines, "an exit 3 without a FAIL line not counted")

        r = run(e2e, build, log, 1)
        sp = spans(log)
        c.check(not overlap(sp["a_one"], sp["b_two"]), "TEST_JOBS=1 ran two at once")

        r = run(e2e, build, log, 2, "a_one")
        lines = r.stdout.splitlines()
        c.check(r.returncode == 0 and lines[-1:] == ["3 passed, 0 failed, 0 skipped"],
                "all passing: exit %d, closing %r" % (r.returncode, lines[-1:]))
    return 0 if c.done() else 1


if __name__ == "__main__":
    sys.exit(main())

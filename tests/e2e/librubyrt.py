# SPDX-License-Identifier: MIT
"""Helpers for the CRuby and PHP end-to-end tests (not a test: lib* is
skipped).

The workloads are Ruby scripts in tests/workloads/ruby/ and PHP ones in
tests/workloads/php/, run by Debian's ruby3.1 and php8.2 under sfprof. A
Ruby or PHP frame prints as "name (file:LINE)" in folded stacks, as a
Python one does."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from libcapture import ROOT, SFPROF, folded_counts, parse_stats, privileged  # noqa: E402,F401

RUBY = "/usr/bin/ruby3.1" if os.access("/usr/bin/ruby3.1", os.X_OK) else None
WORKLOADS = os.path.join(ROOT, "tests", "workloads", "ruby")
PHP = "/usr/bin/php8.2" if os.access("/usr/bin/php8.2", os.X_OK) else None
PHP_WORKLOADS = os.path.join(ROOT, "tests", "workloads", "php")
RBFRAME = re.compile(r"^(.+) \(([^():]+):(\d+)\)$")


def ready(name):
    """SKIP unless root and ruby3.1 are there."""
    if not privileged(name):
        return False
    if not RUBY:
        print("SKIP %s: no ruby3.1 on this machine (tests/install-deps.sh)" % name)
        return False
    return True


def php_ready(name):
    """SKIP unless root and php8.2 are there."""
    if not privileged(name):
        return False
    if not PHP:
        print("SKIP %s: no php8.2 on this machine (tests/install-deps.sh)" % name)
        return False
    return True


def php_script(name):
    return os.path.join(PHP_WORKLOADS, name)


def script(name):
    return os.path.join(WORKLOADS, name)


def run(args, timeout=180):
    """Run sfprof with args; (returncode, stdout, stderr, stats dict)."""
    r = subprocess.run([SFPROF] + args, capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout, r.stderr, parse_stats(r.stderr)


def rb_frames(stack):
    """The Ruby frames of a folded stack, outermost first: (label, file, line)."""
    out = []
    for f in stack.split(";"):
        m = RBFRAME.match(f)
        if m:
            out.append((m.group(1), m.group(2), int(m.group(3))))
    return out


def where(stdout):
    """What chain.rb (chain.php) printed before "ready": {label: (file, lo, hi)}."""
    out = {}
    for line in stdout.splitlines():
        if line == "ready":
            break
        label, _, rest = line.rpartition(" ")
        label, _, file = label.rpartition(" ")
        lo, _, hi = rest.partition("-")
        out.setdefault(label, (file, int(lo), int(hi or lo)))
    return out


def has_chain(stack, chain, loc):
    """Whether the Ruby frames named `chain` are in the stack, in this
    order, one right after the other among its Ruby frames, each at the
    file and line (range) loc says."""
    fr = rb_frames(stack)
    for k in range(len(fr) - len(chain) + 1):
        ok = True
        for j, name in enumerate(chain):
            label, file, line = fr[k + j]
            want = loc.get(name)
            if label != name or not want or file != want[0] or not want[1] <= line <= want[2]:
                ok = False
                break
        if ok:
            return True
    return False

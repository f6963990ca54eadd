# SPDX-License-Identifier: MIT
"""Helpers for the CPython end-to-end tests (not a test: lib* is skipped).

The workloads are Python scripts in tests/workloads/python/, run by
Debian's python3.11 under sfprof. A Python frame prints as
"qualname (file.py:LINE)" in folded stacks."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libcapture import ROOT, SFPROF, folded_counts, parse_stats, privileged  # noqa: E402,F401

# Debian's interpreter, not whatever python3.11 comes first in PATH (a
# pyenv shim is a shell script running another build)
PY = "/usr/bin/python3.11" if os.access("/usr/bin/python3.11", os.X_OK) else None
WORKLOADS = os.path.join(ROOT, "tests", "workloads", "python")
PYFRAME = re.compile(r"^(.+) \(([^():]+):(\d+)\)$")
EVAL = "_PyEval_EvalFrameDefault"
CUT = "[python: more frames]"


def ready(name):
    """SKIP unless root and python3.11 are there."""
    if not privileged(name):
        return False
    if not PY:
        print("SKIP %s: no python3.11 on this machine (tests/install-deps.sh)" % name)
        return False
    return True


def script(name):
    return os.path.join(WORKLOADS, name)


def run(args, timeout=180):
    """Run sfprof with args; (returncode, stderr, stats dict)."""
    r = subprocess.run([SFPROF] + args, capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stderr, parse_stats(r.stderr)


def base(frame):
    """A native frame's name without the suffixes of compiler-made copies
    (Debian's LTO build: take_gil.lto_priv.0, x.constprop.0, x.cold)."""
    return frame.split(".")[0] if not frame.startswith(".") else frame


def py_name(frame):
    """The qualname of a Python frame ("f (x.py:3)"), or None."""
    m = PYFRAME.match(frame)
    return m.group(1) if m else None


def has_chain(frames, chain, file=None):
    """Whether the Python frames named `chain` appear in this order, one
    right after the other among the stack's Python frames (native frames
    may sit between them), and inside native frames (some native frame
    is below the first)."""
    names = [(i, py_name(f)) for i, f in enumerate(frames)]
    py = [(i, n) for i, n in names if n is not None and
          (file is None or frames[i].endswith(")") and ("(%s:" % file) in frames[i])]
    seq = [n for _, n in py]
    for k in range(len(seq) - len(chain) + 1):
        if seq[k:k + len(chain)] == list(chain):
            first = py[k][0]
            return any(py_name(f) is None for f in frames[1:first])
    return False


def worker_samples(stacks):
    """{stack: n} of the threads that are not the main one (per-thread
    roots, "comm-PID/TID")."""
    out = {}
    for s, n in stacks.items():
        root = s.split(";")[0]
        pid, _, tid = root.rpartition("-")[2].partition("/")
        if tid and tid != pid:
            out[s] = n
    return out


def chain_samples(stacks, file):
    """(total, those carrying outer -> middle -> leaf of `file`)."""
    return sum(stacks.values()), sum(n for s, n in stacks.items()
                                     if has_chain(s.split(";"), ["outer", "middle", "leaf"], file))


class TempDir:
    def __enter__(self):
        self.d = tempfile.mkdtemp(prefix="sfprof-py.")
        return self.d

    def __exit__(self, *a):
        shutil.rmtree(self.d, True)

# SPDX-License-Identifier: MIT
"""Helpers for the capture end-to-end tests (not a test: lib* is skipped).

Reads the raw event files that `sfprof --dump-events FILE` writes: the
8-byte magic "SFPREV01", then struct sfprof_event records
(include/sfprof_event.h) back to back, each e.size bytes long.
"""
import atexit
import os
import shutil
import struct
import tempfile
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
SFPROF = os.path.join(BUILD, "sfprof")
WL = os.path.join(BUILD, "workloads")

HDR = struct.Struct("<IHHIIIIQQQIiII16s21Q")
assert HDR.size == 248
REGS = ("r15 r14 r13 r12 bp bx r11 r10 r9 r8 ax cx dx si di orig_ax ip cs "
        "flags sp ss").split()
EV_CPU, EV_FUTEX, EV_FORK, EV_EXIT = 1, 2, 3, 4
EVF_KERNEL_MODE, EVF_STACK_PARTIAL, EVF_STACK_FULL, EVF_NO_USER_REGS = 1, 2, 4, 8
EVF_USER_GONE = 1 << 7  # include/sfprof_event.h
EVF_STACK_TOP = 16


class Event:
    __slots__ = ("size", "kind", "flags", "pid", "tid", "cpu", "stack_len",
                 "ts", "weight", "futex_addr", "futex_op", "kstack_id",
                 "syscall_nr", "comm", "regs", "stack")

    def __init__(self, buf, off):
        f = HDR.unpack_from(buf, off)
        (self.size, self.kind, self.flags, self.pid, self.tid, self.cpu,
         self.stack_len, self.ts, self.weight, self.futex_addr, self.futex_op,
         self.kstack_id, self.syscall_nr, _pad) = f[:14]
        self.comm = f[14].split(b"\0")[0].decode(errors="replace")
        self.regs = dict(zip(REGS, f[15:]))
        self.stack = bytes(buf[off + 248: off + 248 + self.stack_len])


def read_events(path, lifecycle=False):
    """The records of a --dump-events file: samples and waits, and with
    lifecycle=True also the FORK/EXIT records of processes in scope."""
    with open(path, "rb") as f:
        buf = f.read()
    if buf[:8] != b"SFPREV01":
        raise ValueError("%s: bad magic %r" % (path, buf[:8]))
    off, out = 8, []
    while off < len(buf):
        if len(buf) - off < 248:
            raise ValueError("%s: truncated header at %d" % (path, off))
        e = Event(buf, off)
        if e.size < 248 or e.size % 8 or off + e.size > len(buf) \
                or 248 + e.stack_len > e.size:
            raise ValueError("%s: bad record at %d (size %d)" % (path, off, e.size))
        if lifecycle or e.kind not in (EV_FORK, EV_EXIT):
            out.append(e)
        off += e.size
    return out


_PERF_HOME = None


def perf_env():
    """The environment for running perf: a HOME of this test's own, so
    perf's build-id cache (~/.debug) is never one that another perf run
    is writing or has damaged (perf 6.1 then aborts in util/build-id.c)."""
    global _PERF_HOME
    if _PERF_HOME is None:
        _PERF_HOME = tempfile.mkdtemp(prefix="sfprof-perf-home.")
        atexit.register(shutil.rmtree, _PERF_HOME, True)
    return dict(os.environ, HOME=_PERF_HOME)


def folded_counts(path):
    """A folded file as {stack: weight} (lines of one stack summed)."""
    out = {}
    with open(path) as f:
        for line in f:
            stack, _, n = line.rstrip("\n").rpartition(" ")
            if stack:
                out[stack] = out.get(stack, 0) + int(n)
    return out


def weight_of(stacks, frame):
    """Total weight of the stacks that have `frame` as one of their frames."""
    return sum(n for s, n in stacks.items() if frame in s.split(";"))


def by_root(stacks):
    """Weight per root frame (comm, comm-pid...)."""
    roots = {}
    for s, n in stacks.items():
        r = s.split(";")[0]
        roots[r] = roots.get(r, 0) + n
    return roots


def parse_stats(text):
    st = {}
    for line in text.splitlines():
        k, sep, v = line.partition(": ")
        if sep and v.strip().isdigit():
            st[k.strip()] = int(v)
    return st


def privileged(name):
    """SKIP loudly unless we can load BPF (root)."""
    if os.geteuid() != 0:
        print("SKIP %s: needs root (CAP_BPF + CAP_PERFMON) to load BPF programs" % name)
        return False
    if not os.access(SFPROF, os.X_OK):
        print("FAIL %s: %s not built" % (name, SFPROF))
        return False
    return True


def task_cpu_ns(pid):
    """On-CPU time of every thread of pid so far, from schedstat (ns)."""
    total = 0
    try:
        for t in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/schedstat" % (pid, t)) as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    except OSError:
        pass
    return total


def text_ranges(pid, needle, perm="x"):
    """Mappings of pid whose path contains needle and whose permissions
    contain perm (default: executable): [(lo, hi)]."""
    out = []
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            p = line.split()
            if len(p) >= 6 and perm in p[1] and needle in p[5]:
                lo, hi = (int(x, 16) for x in p[0].split("-"))
                out.append((lo, hi))
    return out


def start_workload(argv):
    """Start a workload that prints 'pid N' first; returns (Popen, pid)."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    if not line.startswith("pid "):
        raise RuntimeError("workload %s did not print its pid: %r" % (argv[0], line))
    return p, int(line.split()[1])


class Checker:
    """Collects failed checks of one named test; prints PASS/FAIL once."""

    def __init__(self, name):
        self.name, self.errors = name, []

    def check(self, cond, what):
        if not cond:
            self.errors.append(what)
        return cond

    def done(self):
        if self.errors:
            print("FAIL %s: %s" % (self.name, "; ".join(self.errors)))
        else:
            print("PASS %s" % self.name)
        sys.stdout.flush()
        return not self.errors

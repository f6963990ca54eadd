# SPDX-License-Identifier: MIT
"""Helpers for the unwinder end-to-end tests (not a test: lib* is skipped).

Folds `perf script` output and sfprof's folded output into comparable
stack distributions: function names only, root first, glibc aliases
normalised, and computes their overlap (sum over stacks of the smaller
share).
"""
import os
import re
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
SFPROF = os.path.join(BUILD, "sfprof")
WL = os.path.join(BUILD, "workloads")

# thread entry frames, as norm() spells them (_start -> start)
ENTRY = {"start", "libc_start_main", "start_thread", "clone3", "clone",
         "clone_internal"}

# glibc exports one function under several names; both sides are mapped
# through the same table, so the choice of representative does not matter.
ALIASES = {
    "qsort_r": "qsort_r", "GI___qsort_r": "qsort_r",
    "pthread_mutex_lock": "pthread_mutex_lock",
    "__pthread_mutex_lock": "pthread_mutex_lock",
    "___pthread_mutex_lock": "pthread_mutex_lock",
    "libc_start_main_impl": "libc_start_main",
}


def norm(name):
    """One spelling per function: no symbol version, no __GI_ / _IO_ /
    __libc_ / leading underscores, known aliases merged."""
    name = name.split("@")[0]
    if name.startswith("__GI_"):
        name = name[5:]
    # sfprof prefers the public alias (fwrite, recv) where perf keeps
    # glibc's internal one (_IO_fwrite, __libc_recv)
    if name.startswith("_IO_"):
        name = name[4:]
    if name.startswith("__libc_") and not name.startswith("__libc_start"):
        name = name[7:]
    name = ALIASES.get(name, name)
    stripped = name.lstrip("_")
    if stripped:
        name = stripped
    return ALIASES.get(name, name)


def fold_perf_script(text, keep_comm=False):
    """perf script -F comm,tid,ip,sym,dso (--no-inline) -> {stack: count},
    stack a tuple of names root first. Kernel frames are dropped (sfprof
    reports user stacks). perf symbolizes a return address at PC-1, which
    for glibc's signal trampoline is the nop in front of __restore_rt:
    such an [unknown] frame in libc is __restore_rt."""
    out = {}
    for block in text.split("\n\n"):
        lines = [l for l in block.split("\n") if l.strip()]
        if not lines:
            continue
        comm = lines[0].split()[0]
        frames = []
        for l in lines[1:]:
            m = re.match(r"\s*([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$", l)
            if not m:
                continue
            sym, dso = m.group(2), m.group(3)
            if "kernel.kallsyms" in dso or dso.startswith("[kernel") or \
                    int(m.group(1), 16) >= 0xffff800000000000:
                continue
            if sym.endswith("(inlined)"):
                continue
            sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
            if sym == "[unknown]" and "libc.so" in dso:
                sym = "__restore_rt"
            elif sym == "[unknown]":
                sym = "%s+?" % os.path.basename(dso)
            frames.append(norm(sym))
        if not frames:
            continue
        key = tuple(reversed(frames))
        if keep_comm:
            key = (comm,) + key
        out[key] = out.get(key, 0) + 1
    return out


def read_folded(path, drop_root=True):
    """sfprof folded -> {stack: weight}; the comm root dropped."""
    out = {}
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, n = line.rpartition(" ")
            frames = stack.split(";")
            if drop_root:
                frames = frames[1:]
            key = tuple(f if f.startswith("[") else norm(f) for f in frames)
            out[key] = out.get(key, 0) + int(n)
    return out


def overlap(a, b):
    ta, tb = float(sum(a.values())), float(sum(b.values()))
    if not ta or not tb:
        return 0.0
    return sum(min(a[k] / ta, b.get(k, 0) / tb) for k in a)


def entry_share(stacks):
    """Share of the weight whose outermost frame is a thread entry."""
    tot = sum(stacks.values())
    ok = sum(n for k, n in stacks.items() if k and k[0] in ENTRY)
    return ok / float(tot) if tot else 0.0


def perf_record(pid, secs, out, freq, stack=8192):
    # -m: 32 KiB stacks at 999 Hz overrun perf's default 512 KiB ring
    return subprocess.Popen(["perf", "record", "-q", "-m", "4096",
                             "--call-graph", "dwarf,%d" % stack,
                             "-F", str(freq), "-p", str(pid), "-o", out,
                             "--", "sleep", str(secs)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)


def perf_fold(data):
    # perf script stops at kernel.perf_event_max_stack (127) frames by
    # default: the 250-deep recursion needs more
    r = subprocess.run(["perf", "script", "--no-inline", "--max-stack", "1024", "-i", data,
                        "-F", "comm,tid,ip,sym,dso"],
                       capture_output=True, text=True, timeout=600)
    return fold_perf_script(r.stdout)


def start_ready(argv):
    """Start a workload that prints 'ready PID' first."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    if not line.startswith("ready "):
        raise RuntimeError("%s did not start: %r" % (argv[0], line))
    return p


def have_perf():
    try:
        subprocess.run(["perf", "--version"], capture_output=True, check=True)
        return True
    except (OSError, subprocess.CalledProcessError):
        return False


def parse_stats(text):
    st = {}
    for line in text.splitlines():
        k, sep, v = line.partition(": ")
        if sep and v.strip().isdigit():
            st[k.strip()] = int(v)
    return st

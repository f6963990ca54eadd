#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""record -> report: `sfprof record` writes a capture (mode 0600) and, with
SFPROF_RECORD_PROFILE, the profile the live pipeline made of the same
events; `sfprof report` on the capture must reproduce it byte for byte
(on-CPU and futex). A capture whose binary changed since is refused for
that binary with a message, never symbolized with the wrong file (and
named from record's copy in the build-id cache when there is one); a
truncated capture is reported up to the damage, with a message."""
import os
import shutil
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libunwind import SFPROF, WL, read_folded  # noqa: E402


def record(d, tag, argv, extra=()):
    cap = os.path.join(d, tag + ".cap")
    live = os.path.join(d, tag + ".live")
    env = dict(os.environ, SFPROF_RECORD_PROFILE=live)
    r = subprocess.run([SFPROF, "record", "-o", cap] + list(extra) + ["--"] + argv,
                       capture_output=True, text=True, timeout=120, env=env)
    return r, cap, live


def report(cap, out, extra=()):
    return subprocess.run([SFPROF, "report", "-o", out] + list(extra) + [cap],
                          capture_output=True, text=True, timeout=120)


def same_events(d, errs, tag, argv, extra=()):
    r, cap, live = record(d, tag, argv, extra)
    if r.returncode != 0:
        errs.append("%s: record exited %d: %s" % (tag, r.returncode, r.stderr[-300:]))
        return None
    mode = stat.S_IMODE(os.stat(cap).st_mode)
    if mode != 0o600:
        errs.append("%s: capture mode %o, want 600" % (tag, mode))
    out = os.path.join(d, tag + ".report")
    rr = report(cap, out)
    if rr.returncode != 0:
        errs.append("%s: report exited %d: %s" % (tag, rr.returncode, rr.stderr[-300:]))
        return None
    a, b = open(live).read(), open(out).read()
    n = sum(int(l.rsplit(" ", 1)[1]) for l in a.splitlines() if l)
    print("%s: live %d lines (weight %d), report %d lines, identical: %s" % (
        tag, len(a.splitlines()), n, len(b.splitlines()), a == b))
    if not a or a != b:
        errs.append("%s: report differs from the live profile of the same events" % tag)
    return cap


def main():
    name = "unwind_record"
    if os.geteuid() != 0:
        print("SKIP %s: needs root to load BPF programs" % name)
        return 0
    errs = []
    with tempfile.TemporaryDirectory() as d:
        cap = same_events(d, errs, "cpu",
                          [os.path.join(WL, "uwmix-sframe"), "3", "chain,qsort,signal,dlopen"],
                          ["-F", "499"])
        same_events(d, errs, "futex", [os.path.join(WL, "uwlock-ehframe"), "1"],
                    ["-e", "futex"])
        # --kernel: kernel stacks and their symbols travel in the capture
        same_events(d, errs, "kernel",
                    [os.path.join(WL, "uwmix-ehframe"), "2", "chain,dlopen"],
                    ["-F", "999", "--kernel"])
        kfile = os.path.join(d, "kernel.report")
        if os.path.exists(kfile):
            kframes = open(kfile).read().count("_[k]")
            print("kernel: %d kernel frames (NAME_[k]) in the report" % kframes)

        # truncated: the report covers what is before the cut, and says so
        if cap:
            full = read_folded(os.path.join(d, "cpu.report"))
            cut = os.path.join(d, "cut.cap")
            data = open(cap, "rb").read()
            with open(cut, "wb") as f:
                f.write(data[: len(data) * 6 // 10 + 5])
            out = os.path.join(d, "cut.folded")
            rr = report(cut, out)
            part = read_folded(out) if os.path.exists(out) else {}
            print("truncated: exit %d, %d of %d samples, message: %s" % (
                rr.returncode, sum(part.values()), sum(full.values()),
                rr.stderr.strip().splitlines()[:1]))
            if rr.returncode != 0 or not part or \
                    not 0 < sum(part.values()) < sum(full.values()):
                errs.append("truncated capture: exit %d, %d samples" % (
                    rr.returncode, sum(part.values())))
            if "truncated" not in rr.stderr or "before the damage" not in rr.stderr:
                errs.append("truncated capture: no clear message (%r)" % rr.stderr[:200])

        # changed binary: refused for that binary, with a message
        bdir = os.path.join(d, "bin")
        os.mkdir(bdir)
        exe = os.path.join(bdir, "uwmix-sframe")
        shutil.copy(os.path.join(WL, "uwmix-sframe"), exe)
        shutil.copy(os.path.join(WL, "libuwlib.so"), bdir)
        r, cap2, _ = record(d, "changed", [exe, "2", "chain,dlopen"], ["-F", "499"])
        if r.returncode != 0:
            errs.append("changed: record exited %d" % r.returncode)
        else:
            os.unlink(exe)
            shutil.copy(os.path.join(WL, "uwmix-ehframe"), exe)  # another build-id
            out = os.path.join(d, "changed.folded")
            # without record's copy of the binary (the build-id cache):
            # the changed file is refused
            rr = report(cap2, out, ["--no-buildid-cache"])
            text = open(out).read() if os.path.exists(out) else ""
            named = "uw_chain_leaf" in text
            print("changed binary: exit %d, message: %s; workload frames named: %s" % (
                rr.returncode, [l for l in rr.stderr.splitlines() if "build-id" in l][:1],
                named))
            if "build-id" not in rr.stderr or exe not in rr.stderr:
                errs.append("changed binary: no build-id message naming %s (%r)" % (
                    exe, rr.stderr[:300]))
            if named:
                errs.append("changed binary: its frames were symbolized from the new file")
            if "lib_uw_leaf" not in text:
                errs.append("changed binary: the unchanged library lost its names")
            # with it, report finds the recorded binary by its build-id
            rc = report(cap2, out)
            text = open(out).read() if os.path.exists(out) else ""
            if rc.returncode != 0 or "uw_chain_leaf" not in text:
                errs.append("changed binary: not named from the build-id cache (%r)"
                            % rc.stderr[:300])
    if errs:
        print("FAIL %s: %s" % (name, "; ".join(errs)))
        return 1
    print("PASS %s" % name)
    return 0


if __name__ == "__main__":
    sys.exit(main())

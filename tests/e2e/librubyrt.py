# SPDX-License-Identifier: MIT
"""Helpers for the CRuby and PHP end-to-end tests (not a test: lib* is
skipped).

The workloads are Ruby scripts in tests/workloads/ruby/ and PHP ones in
tests/workloads/php/, run by Debian's ruby3.1 and php8.2 under sfprof. A
Ruby or PHP frame prints as "name (file:LINE)" in folded stacks, as a
Python one does."""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from libcapture import ROOT, SFPROF, WL, folded_counts, parse_stats, privileged  # noqa: E402,F401

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


def finish(name, errs):
    """Print the test's FAIL lines, or PASS: its exit status."""
    for e in errs:
        print("FAIL %s: %s" % (name, e))
    if errs:
        return 1
    print("PASS %s" % name)
    return 0


def record_report(d, cmd, share, what):
    """Record cmd (sfprof's arguments after the options) and report it:
    the errors, expecting >= 90% of >= 100 reported samples that
    share(stacks, where) counts good (what: what they show)."""
    cap, rep = os.path.join(d, "r.sfprof"), os.path.join(d, "rep.folded")
    rc, so, se, _ = run(["record", "-F", "199", "--quiet", "-o", cap] + cmd)
    rc2, _, se2, _ = run(["report", "-o", rep, cap]) if rc == 0 else (rc, "", "", {})
    stacks = folded_counts(rep) if rc == 0 and rc2 == 0 else {}
    good, total = share(stacks, where(so))
    print("record/report: exit %d/%d, %d of %d samples show %s" % (rc, rc2, good, total, what))
    if rc or rc2:
        return ["record/report exited %d/%d: %s" % (rc, rc2, (se + se2)[-300:])]
    if total < 100 or good < 0.9 * total:
        top = max(stacks, key=stacks.get) if stacks else None
        return ["expected >= 90%% of the reported samples to show %s, got %d of %d (where %s; "
                "top: %s)" % (what, good, total, where(so), top)]
    return []


def fake_profile(argv, d):
    """sfprof -F 199 --stats on argv: (result, stats, folded stacks)."""
    out = os.path.join(d, "out.folded")
    r = subprocess.run([SFPROF, "-F", "199", "--stats", "--quiet", "-o", out, "--"] + argv,
                       capture_output=True, text=True, timeout=120)
    stacks = folded_counts(out) if r.returncode == 0 and os.path.exists(out) else {}
    return r, parse_stats(r.stderr), stacks


def fake_no_vm(d, rt, native_exe):
    """A copy of native_exe named rt ("ruby", "php"), which has no VM: its
    stacks native, counted RT_processes_no_vm, never walked. The errors."""
    exe = os.path.join(d, rt)
    shutil.copy(native_exe, exe)
    r, st, stacks = fake_profile([exe], d)
    print("no VM: exit %d, no_vm %s, %s_processes %s, walks %s, %d samples"
          % (r.returncode, st.get(rt + "_processes_no_vm"), rt, st.get(rt + "_processes"),
             st.get(rt + "_walks"), sum(stacks.values())))
    if r.returncode != 0 or st.get(rt + "_processes_no_vm", 0) < 1 or \
            st.get(rt + "_processes", 0) != 0 or st.get(rt + "_walks", 0) != 0 or not stacks:
        return ["expected a counted no-VM %s with native stacks, got exit %d, %s"
                % (rt, r.returncode, r.stderr[-300:])]
    return []


def fake_vm(d, rt, runs, shown=()):
    """A fake VM of runtime rt walked: for each (mode, argv) of runs, one
    process walked, exit 0, >= 90% of >= 50 samples in the native
    spin_leaf and no named interpreter frame (shown: more --stats keys to
    print). The errors."""
    errs = []
    for mode, argv in runs:
        r, st, stacks = fake_profile(argv, d)
        total = sum(stacks.values())
        native = sum(n for s, n in stacks.items() if "spin_leaf" in s.split(";"))
        named = sum(n for s, n in stacks.items() if rb_frames(s))
        keys = [rt + "_processes", rt + "_walks", rt + "_walks_failed"] + list(shown)
        print("%s: exit %d, %s; %d of %d samples in spin_leaf, %d with a named %s frame"
              % (mode, r.returncode, ", ".join("%s %s" % (k, st.get(k)) for k in keys),
                 native, total, named, rt))
        if r.returncode != 0:
            errs.append("%s: sfprof exited %d: %s" % (mode, r.returncode, r.stderr[-300:]))
            continue
        if st.get(rt + "_processes") != 1 or st.get(rt + "_walks", 0) < 1:
            errs.append("%s: expected the fake VM walked, got %s processes, %s walks"
                        % (mode, st.get(rt + "_processes"), st.get(rt + "_walks")))
        if total < 50 or native < 0.9 * total or named:
            errs.append("%s: expected >= 90%% of >= 50 samples in spin_leaf and no named "
                        "%s frame, got %d of %d, %d named" % (mode, rt, native, total, named))
    return errs


def native_only(d, cmd, rt, vm_frame):
    """--no-RT on cmd: the errors, expecting no interpreter frame and the
    native vm_frame (the VM's loop) in >= 90% of the samples."""
    out = os.path.join(d, "native.folded")
    rc, _, _, _ = run(["-F", "199", "--no-" + rt, "--quiet", "-o", out] + cmd)
    stacks = folded_counts(out) if rc == 0 else {}
    nrt = sum(n for s, n in stacks.items() if rb_frames(s))
    nvm = sum(n for s, n in stacks.items() if vm_frame in s.split(";"))
    total = sum(stacks.values())
    print("--no-%s: exit %d, %d of %d samples with %s frames, %d with %s"
          % (rt, rc, nrt, total, rt, nvm, vm_frame))
    if rc != 0 or nrt != 0 or nvm < 0.9 * total:
        return ["expected --no-%s to keep native %s stacks only, got %d %s, %d %s of %d (exit %d)"
                % (rt, vm_frame, nrt, rt, nvm, vm_frame, total, rc)]
    return []


def fake_cc(name):
    """The C compiler for a fake-VM test (None: SKIP said, or not root)."""
    if not privileged(name):
        return None
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        print("SKIP %s: no C compiler" % name)
    return cc

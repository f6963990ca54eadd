#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Processes that only look like Ruby get native stacks and a counted
reason, never a crash: a binary named "ruby" with no VM in it (counted
ruby_processes_no_vm, no walk), and a "ruby" linking a fake
libruby-3.1.so that exports ruby_version 3.1.2 and a TLS
ruby_current_ec pointing at garbage (random frames, a frame list that
runs off its mapping, frames pointing at themselves,
tests/e2e/ruby_fakevm.c): sfprof walks it, names no frame of it
(ruby_iseq_read_errors, "[python: unreadable frame]"), exits 0, and the
native frames main;spin_leaf stay in every stack."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libcapture import SFPROF, WL, folded_counts, parse_stats, privileged  # noqa: E402
from librubyrt import rb_frames  # noqa: E402

NAME = "ruby_fakevm"
HERE = os.path.dirname(os.path.abspath(__file__))


def profile(d, argv):
    out = os.path.join(d, "out.folded")
    r = subprocess.run([SFPROF, "-F", "199", "--stats", "--quiet", "-o", out, "--"] + argv,
                       capture_output=True, text=True, timeout=120)
    stacks = folded_counts(out) if r.returncode == 0 and os.path.exists(out) else {}
    return r, parse_stats(r.stderr), stacks


def main():
    if not privileged(NAME):
        return 0
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        print("SKIP %s: no C compiler" % NAME)
        return 0
    errs = []
    with tempfile.TemporaryDirectory() as d:
        novm = os.path.join(d, "ruby")
        shutil.copy(os.path.join(WL, "cpuwork-sframe"), novm)
        r, st, stacks = profile(d, [novm])
        print("no VM: exit %d, no_vm %s, ruby_processes %s, walks %s, %d samples"
              % (r.returncode, st.get("ruby_processes_no_vm"), st.get("ruby_processes"),
                 st.get("ruby_walks"), sum(stacks.values())))
        if r.returncode != 0 or st.get("ruby_processes_no_vm", 0) < 1 or \
                st.get("ruby_processes", 0) != 0 or st.get("ruby_walks", 0) != 0 or not stacks:
            errs.append("expected a counted no-VM ruby with native stacks, got exit %d, %s"
                        % (r.returncode, r.stderr[-300:]))

        fd = os.path.join(d, "fake")
        os.mkdir(fd)
        lib = os.path.join(fd, "libruby-3.1.so.3.1")
        exe = os.path.join(fd, "ruby")
        src = os.path.join(HERE, "ruby_fakevm.c")
        subprocess.run([cc, "-O1", "-shared", "-fPIC", "-DFAKE_LIB", "-o", lib, src], check=True)
        subprocess.run([cc, "-O1", "-g", "-fno-omit-frame-pointer", "-o", exe, src, lib,
                        "-Wl,-rpath," + fd], check=True)
        for mode in ("garbage", "truncated", "loop"):
            r, st, stacks = profile(d, [exe, "2", mode])
            total = sum(stacks.values())
            native = sum(n for s, n in stacks.items() if "spin_leaf" in s.split(";"))
            named = sum(n for s, n in stacks.items() if rb_frames(s))
            print("%s: exit %d, ruby_processes %s, walks %s, failed %s, read errors %s; "
                  "%d of %d samples in spin_leaf, %d with a named Ruby frame"
                  % (mode, r.returncode, st.get("ruby_processes"), st.get("ruby_walks"),
                     st.get("ruby_walks_failed"), st.get("ruby_iseq_read_errors"), native,
                     total, named))
            if r.returncode != 0:
                errs.append("%s: sfprof exited %d: %s" % (mode, r.returncode, r.stderr[-300:]))
                continue
            if st.get("ruby_processes") != 1 or st.get("ruby_walks", 0) < 1:
                errs.append("%s: expected the fake VM walked, got %s processes, %s walks"
                            % (mode, st.get("ruby_processes"), st.get("ruby_walks")))
            if total < 100 or native < 0.9 * total or named:
                errs.append("%s: expected >= 90%% of >= 100 samples in spin_leaf and no named "
                            "Ruby frame, got %d of %d, %d named" % (mode, native, total, named))
    if errs:
        for e in errs:
            print("FAIL %s: %s" % (NAME, e))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

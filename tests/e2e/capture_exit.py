#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""sfprof ends cleanly, exit 0, with what it collected, when the target
exits during the run (-p and -- COMMAND), and on SIGINT/SIGTERM."""
import os
import signal
import subprocess
import tempfile
import time

from libcapture import SFPROF, WL, Checker, parse_stats, privileged, read_events, start_workload

SPIN = os.path.join(WL, "spin-sframe")


def output_lines(path):
    with open(path) as f:
        return [l for l in f.read().splitlines() if l.strip()]


def target_exits_pid():
    name = "capture_exit_target_exits_during_run"
    if not privileged(name):
        return
    c = Checker(name)
    wl, pid = start_workload([SPIN, "1.5"])
    with tempfile.TemporaryDirectory() as d:
        out, raw = os.path.join(d, "out"), os.path.join(d, "ev.raw")
        t0 = time.monotonic()
        r = subprocess.run([SFPROF, "-p", str(pid), "-d", "30", "--stats", "-o", out,
                            "--dump-events", raw], capture_output=True, text=True, timeout=60)
        took = time.monotonic() - t0
        wl.wait()
        st = parse_stats(r.stderr)
        c.check(r.returncode == 0, "exit %d: %s" % (r.returncode, r.stderr.strip()))
        c.check(took < 10, "sfprof ran %.1f s after a 1.5 s target" % took)
        # the rate itself is capture_rate's business; a busy machine may
        # give the target much less than 1.5 s of CPU
        c.check(st.get("events_cpu", 0) >= 10, "events_cpu %s" % st.get("events_cpu"))
        c.check(len(read_events(raw)) == st.get("events_cpu"), "dump and stats disagree")
        lines = output_lines(out) if os.path.exists(out) else []
        c.check(lines and all(l.rsplit(" ", 1)[-1].isdigit() for l in lines),
                "output missing or malformed: %r" % lines[:3])
        c.check(sum(int(l.rsplit(" ", 1)[1]) for l in lines) == st.get("events_cpu"),
                "output counts do not sum to events_cpu")
    c.done()


def command_runs_to_end():
    name = "capture_exit_command_profiled_until_exit"
    if not privileged(name):
        return
    c = Checker(name)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out")
        r = subprocess.run([SFPROF, "--stats", "-o", out, "--", SPIN, "1"],
                           capture_output=True, text=True, timeout=60)
        st = parse_stats(r.stderr)
        c.check(r.returncode == 0, "exit %d: %s" % (r.returncode, r.stderr.strip()))
        c.check("pid " in r.stdout, "the command's own output is missing: %r" % r.stdout)
        # sfprof attaches before exec: the whole run is sampled
        c.check(st.get("events_cpu", 0) >= 10, "events_cpu %s for ~1 s at 99 Hz" % st.get("events_cpu"))
        c.check(os.path.exists(out) and output_lines(out), "no output written")
    c.done()


def command_not_found():
    name = "capture_exit_command_not_found_exit_2"
    if not privileged(name):
        return
    c = Checker(name)
    r = subprocess.run([SFPROF, "--", "/nonexistent/sfprof-no-such-cmd"],
                       capture_output=True, text=True, timeout=30)
    c.check(r.returncode == 2, "exit %d" % r.returncode)
    c.check("sfprof-no-such-cmd" in r.stderr and len(r.stderr.strip().splitlines()) == 1,
            "stderr %r" % r.stderr)
    c.done()


def stops_on_signal(sig):
    name = "capture_exit_%s_writes_output" % signal.Signals(sig).name.lower()
    if not privileged(name):
        return
    c = Checker(name)
    wl, pid = start_workload([SPIN, "20"])
    try:
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out")
            p = subprocess.Popen([SFPROF, "-p", str(pid), "--stats", "-o", out],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(1.5)
            p.send_signal(sig)
            try:
                _, err = p.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                _, err = p.communicate()
                c.check(False, "did not stop within 10 s of the signal")
            st = parse_stats(err)
            c.check(p.returncode == 0, "exit %d: %s" % (p.returncode, err.strip()))
            c.check(st.get("events_cpu", 0) >= 10, "events_cpu %s" % st.get("events_cpu"))
            c.check(os.path.exists(out) and output_lines(out), "no output written")
            c.check(wl.poll() is None, "the -p target was killed")
    finally:
        wl.kill()
        wl.wait()
    c.done()


if __name__ == "__main__":
    target_exits_pid()
    command_runs_to_end()
    command_not_found()
    stops_on_signal(signal.SIGINT)
    stops_on_signal(signal.SIGTERM)

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""-e cpu,futex,offcpu: one run (one load, one ring, one capture) writes one
output per event, named after -o (m.folded -> m.cpu.folded, m.futex.folded,
m.offcpu.folded), each with the same total as a run of that event alone
(cpu: samples per second of the burner's own CPU time within 10% of
-F in both, the waits within 10% of each other); `record` of the three
then `report` writes the same three profiles as the live pipeline."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from libcapture import SFPROF, WL, Checker, parse_stats, privileged  # noqa: E402

WORKLOAD = [os.path.join(WL, "offcpu-sframe"), "2", "mixed"]
EVENTS = ("cpu", "futex", "offcpu")


def total(path):
    return sum(int(l.rsplit(" ", 1)[1]) for l in open(path) if l.strip())


def sfprof(argv, env=None):
    """Runs sfprof ARGV -- WORKLOAD; returns it with .burn_cpu, the burner's
    CPU seconds as the workload measured them."""
    r = subprocess.run([SFPROF] + argv + ["--"] + WORKLOAD, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=120, env=env)
    r.burn_cpu = sum(float(l.split()[2]) for l in r.stdout.splitlines()
                     if l.startswith("cpu oc-burn "))
    return r


def main():
    name = "offcpu_multi_events_one_run"
    if not privileged(name):
        return 0
    c = Checker(name)
    with tempfile.TemporaryDirectory() as d:
        alone, hz = {}, {}
        for ev in EVENTS:
            out = os.path.join(d, ev + ".folded")
            # -F means something for cpu only (any other event refuses it)
            r = sfprof(["-e", ev] + (["-F", "499"] if ev == "cpu" else []) + ["-o", out])
            c.check(r.returncode == 0, "-e %s exited %d: %s" % (ev, r.returncode, r.stderr[-200:]))
            alone[ev] = total(out) if os.path.exists(out) else 0
            if ev == "cpu":
                hz["alone"] = alone[ev] / max(r.burn_cpu, 1e-3)
        r = sfprof(["-e", ",".join(EVENTS), "-F", "499", "--stats", "-o",
                    os.path.join(d, "m.folded")])
        c.check(r.returncode == 0, "-e cpu,futex,offcpu exited %d: %s" % (r.returncode,
                                                                        r.stderr[-300:]))
        st = parse_stats(r.stderr)
        together = {}
        for ev in EVENTS:
            p = os.path.join(d, "m.%s.folded" % ev)
            if c.check(os.path.exists(p), "no %s" % os.path.basename(p)):
                together[ev] = total(p)
        hz["together"] = together.get("cpu", 0) / max(r.burn_cpu, 1e-3)
        print("# alone %s; together %s; cpu samples per burner CPU second %s; lost_total %s" % (
            alone, together, {k: round(v) for k, v in hz.items()}, st.get("lost_total")))
        for k, v in hz.items():
            c.check(abs(v - 499) <= 50, "cpu %s: %.0f samples per CPU second, want 499 +- 50" % (
                k, v))
        for ev in ("futex", "offcpu"):
            c.check(alone[ev] > 0 and abs(together.get(ev, 0) - alone[ev]) <= 0.1 * alone[ev],
                    "%s: %d together, %d alone (want within 10%%)" % (
                        ev, together.get(ev, 0), alone[ev]))
        c.check(st.get("events_cpu", 0) > 0 and st.get("events_futex", 0) > 0 and
                st.get("events_offcpu", 0) > 0, "not every kind of event in one run: %s" % {
                    k: st.get(k) for k in ("events_cpu", "events_futex", "events_offcpu")})

        # record the three, report them: the live pipeline's three profiles
        cap = os.path.join(d, "m.cap")
        live = os.path.join(d, "live.folded")
        r = sfprof(["record", "-e", ",".join(EVENTS), "-o", cap],
                   env=dict(os.environ, SFPROF_RECORD_PROFILE=live))
        c.check(r.returncode == 0, "record exited %d: %s" % (r.returncode, r.stderr[-300:]))
        rp = subprocess.run([SFPROF, "report", "-o", os.path.join(d, "rep.folded"), cap],
                            capture_output=True, text=True, timeout=120)
        c.check(rp.returncode == 0, "report exited %d: %s" % (rp.returncode, rp.stderr[-300:]))
        for ev in EVENTS:
            a, b = (os.path.join(d, "%s.%s.folded" % (n, ev)) for n in ("live", "rep"))
            same = os.path.exists(a) and os.path.exists(b) and open(a).read() == open(b).read()
            c.check(same and total(b) > 0, "report's %s profile differs from live" % ev)
        rp = subprocess.run([SFPROF, "report", cap], capture_output=True, text=True, timeout=60)
        c.check(rp.returncode == 2 and "-o" in rp.stderr,
                "report of several events to stdout: exit %d, %r" % (rp.returncode, rp.stderr))
    return 0 if c.done() else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Continuous mode (--interval SEC): one pprof file per interval, named from
-o's %t (UTC start) and %p (target PID). The intervals tile the run, none
empty for a busy target, each event in exactly one (their sample counts add
up to the events the capture delivered); an idle interval is a valid
profile with no samples (its time, duration and sample types still there);
SIGHUP ends one early; SIGINT writes the partial last one and exits 0."""
import gzip
import os
import re
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import libsurface as ls  # noqa: E402

TMP = ls.tmpdir("sfprof-surface-interval-")


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << shift
        shift += 7
        if c < 0x80:
            return v, i


def fields(b):
    """(field, wire type, value) of a protobuf message; value is bytes
    for length-delimited fields."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % wt)
        yield f, wt, v


def sample_types(path):
    """The profile's sample types as "type/unit" strings."""
    strs, types = [], []
    for f, wt, v in fields(gzip.open(path).read()):
        if f == 6:
            strs.append(v.decode())
        elif f == 1:
            vt = dict((sf, sv) for sf, _, sv in fields(v))
            types.append((vt.get(1, 0), vt.get(2, 0)))
    return ["%s/%s" % (strs[t], strs[u]) for t, u in types]


def pprof_summary(path):
    """(time_nanos, duration_nanos, total of the first sample value)."""
    t = d = total = 0
    for f, wt, v in fields(gzip.open(path).read()):
        if f == 9:
            t = v
        elif f == 10:
            d = v
        elif f == 2:
            for sf, swt, sv in fields(v):
                if sf == 2 and swt == 2:
                    total += varint(sv, 0)[0]
                elif sf == 2:
                    total += sv
    return t, d, total


def wait_attached(pid, limit=60):
    """Wait until sfprof pid holds its perf events and BPF links (it has
    attached). Under load the verifier can take seconds; a signal's delay
    counts from here, not from the start."""
    end = time.time() + limit
    while time.time() < end:
        kinds = set()
        try:
            for fd in os.listdir("/proc/%d/fd" % pid):
                try:
                    kinds.add(os.readlink("/proc/%d/fd/%s" % (pid, fd)))
                except OSError:
                    pass
        except OSError:
            return
        if "anon_inode:[perf_event]" in kinds and "anon_inode:bpf_link" in kinds:
            return
        time.sleep(0.05)
    raise RuntimeError("sfprof %d did not attach within %d s" % (pid, limit))


def run_intervals(name, interval, secs, signals=(), idle=0):
    """sfprof --interval on a running workload (idle for its first idle
    seconds); signals: [(delay, sig)]. Returns (rc, stderr, [(path, time,
    duration, samples)] by time, [the wall-clock time each signal was
    sent])."""
    out_dir = os.path.join(TMP, name)
    os.makedirs(out_dir)
    demo = [os.path.join(ls.WL, "demo-sframe"), "20"]
    if idle:
        demo = ["sh", "-c", 'sleep %s; exec "$0" "$@"' % idle] + demo
    wl = subprocess.Popen(demo, stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.2)
        cmd = [ls.SFPROF, "--interval", str(interval), "-F", "199", "--stats", "-p",
               str(wl.pid), "-o", os.path.join(out_dir, "prof-%p-%t.pb.gz")]
        if secs:
            cmd[1:1] = ["-d", str(secs)]
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if signals:
            wait_attached(p.pid)
        t0, sent = time.time(), []
        for delay, sig in signals:
            time.sleep(max(0, t0 + delay - time.time()))
            sent.append(time.time())
            p.send_signal(sig)
        _, err = p.communicate(timeout=120)
    finally:
        wl.kill()
        wl.wait()
    profs = []
    for fn in sorted(os.listdir(out_dir)):
        m = re.match(r"^prof-(\d+)-(\d{8}T\d{6}Z)(?:-\d+)?\.pb\.gz$", fn)
        if not m or int(m.group(1)) != wl.pid:
            raise RuntimeError("unexpected output name %s (pid %d)" % (fn, wl.pid))
        t, d, n = pprof_summary(os.path.join(out_dir, fn))
        if time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(t // 10**9)) != m.group(2):
            raise RuntimeError("%s: time_nanos %d is not its %%t" % (fn, t))
        profs.append((fn, t, d, n))
    profs.sort(key=lambda x: x[1])
    # two in one second (SIGHUP): the later one is numbered, none lost
    for a, b in zip(profs, profs[1:]):
        if a[0] == b[0]:
            raise RuntimeError("two profiles named %s" % a[0])
    return p.returncode, err, profs, sent


def check_tiling(profs, err, idle=0):
    """None, or why the profiles are not one run cut in pieces (the first
    idle ones may be empty, no other)."""
    for a, b in zip(profs, profs[1:]):
        if a[1] + a[2] != b[1]:
            return "gap or overlap: %s ends at %d, %s starts at %d" % (a[0], a[1] + a[2], b[0],
                                                                      b[1])
    empty = [p[0] for p in profs[idle:] if not p[3]]
    if empty:
        return "empty profiles: %s" % empty
    m = re.search(r"^events_cpu: (\d+)$", err, re.M)
    total = sum(p[3] for p in profs)
    if not m or int(m.group(1)) != total:
        return "samples in the intervals %d, events delivered %s" % (
            total, m.group(1) if m else "?")
    return None


def test_intervals_should_tile_the_run_and_add_up_to_its_events():
    name = "intervals_should_tile_the_run_and_add_up_to_its_events"
    ok, why = ls.pipeline_ready()
    if not ok:
        return "SKIP %s: %s" % (name, why)
    rc, err, profs, _ = run_intervals("tile", 1, 4.5)
    if rc != 0:
        return "FAIL %s: sfprof exited %d: %s" % (name, rc, err[-300:])
    if len(profs) not in (5, 6):  # (the drain may end a little after 4.5 s)
        return "FAIL %s: %d profiles for 4.5 s at 1 s: %s" % (name, len(profs), profs)
    if any(p[2] != 10**9 for p in profs[:-1]) or not 0 < profs[-1][2] <= 10**9:
        return "FAIL %s: durations %s" % (name, [p[2] for p in profs])
    why = check_tiling(profs, err)
    if why:
        return "FAIL %s: %s" % (name, why)
    return "PASS %s (%s samples)" % (name, "+".join(str(p[3]) for p in profs))


def test_sighup_should_end_an_interval_and_sigint_write_the_last():
    name = "sighup_should_end_an_interval_and_sigint_write_the_last"
    ok, why = ls.pipeline_ready()
    if not ok:
        return "SKIP %s: %s" % (name, why)
    # 4 s intervals: HUP 2 s after sfprof attached cuts the first; INT at
    # 3.5 s ends the run. (The cut one and the next
    # may start in one second: "-2" then.)
    rc, err, profs, sent = run_intervals("signals", 4, 0, [(2.0, signal.SIGHUP),
                                                           (3.5, signal.SIGINT)])
    if rc != 0:
        return "FAIL %s: sfprof exited %d after SIGINT: %s" % (name, rc, err[-300:])
    if len(profs) != 2:
        return "FAIL %s: %d profiles, expected the cut one and the last: %s" % (
            name, len(profs), profs)
    cut = (profs[0][1] + profs[0][2]) / 1e9
    if not profs[0][2] or abs(cut - sent[0]) > 0.3:
        return "FAIL %s: the first interval ended %.2f s after SIGHUP" % (name, cut - sent[0])
    why = check_tiling(profs, err)
    if why:
        return "FAIL %s: %s" % (name, why)
    return "PASS %s (%.2f s + %.2f s)" % (name, profs[0][2] / 1e9, profs[1][2] / 1e9)


def test_idle_intervals_should_be_profiles_with_no_samples_but_their_time():
    name = "idle_intervals_should_be_profiles_with_no_samples_but_their_time"
    ok, why = ls.pipeline_ready()
    if not ok:
        return "SKIP %s: %s" % (name, why)
    # idle for the first 3.5 s (sh sleeps; sfprof attaches within about
    # a second), then busy: the intervals before the first sample are
    # written too, with no sample in them
    rc, err, profs, _ = run_intervals("idle", 1, 6.5, idle=3.5)
    if rc != 0:
        return "FAIL %s: sfprof exited %d: %s" % (name, rc, err[-300:])
    if len(profs) not in (7, 8):
        return "FAIL %s: %d profiles for 6.5 s at 1 s: %s" % (name, len(profs), profs)
    if profs[0][3] or profs[1][3]:
        return "FAIL %s: samples in the idle intervals: %s" % (name, profs[:2])
    if any(p[2] != 10**9 for p in profs[:-1]):
        return "FAIL %s: durations %s" % (name, [p[2] for p in profs])
    for fn, t, _, _ in profs[:2]:
        types = sample_types(os.path.join(TMP, "idle", fn))
        if types != ["samples/count", "cpu/nanoseconds"] or not t:
            return "FAIL %s: idle %s: sample types %s, time %d" % (name, fn, types, t)
    why = check_tiling(profs, err, idle=4)
    if why:
        return "FAIL %s: %s" % (name, why)
    if not any(p[3] for p in profs[4:]):
        return "FAIL %s: no samples once busy: %s" % (name, profs)
    return "PASS %s (%s samples)" % (name, "+".join(str(p[3]) for p in profs))


def test_interval_should_need_a_file_and_a_known_template():
    name = "interval_should_need_a_file_and_a_known_template"
    for args, what in ((["--interval", "1", "-p", "1"], "no -o"),
                       (["--interval", "1", "-o", "x-%q.pb.gz", "-p", "1"], "bad escape"),
                       (["--interval", "0.1", "-o", "x.pb.gz", "-p", "1"], "too short"),
                       (["record", "--interval", "1", "-o", "x.cap", "-p", "1"], "record")):
        r = subprocess.run([ls.SFPROF] + args, capture_output=True, text=True, timeout=30)
        if r.returncode != 2 or "sfprof:" not in r.stderr:
            return "FAIL %s: %s: exit %d, %r" % (name, what, r.returncode, r.stderr[-200:])
    return "PASS " + name


if __name__ == "__main__":
    sys.exit(ls.run_tests(globals()))

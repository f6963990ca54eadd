#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What a user sees from a live run of sfprof on the demo workload
(tests/workloads/demo.c): default roots (the comm), --per-thread roots
(comm-pid/tid), the lock view (--by-lock: the more contended mutex has the
larger total and both are named by symbol), the output format chosen by -f
or the -o extension, and the progress line, which appears only when stderr
is a terminal (checked under a pseudo-terminal) and never with --quiet.
Every test SKIPs with the reason until sfprof writes folded stacks."""
import gzip
import os
import pty
import re
import select
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import libsurface as ls  # noqa: E402

TMP = ls.tmpdir("sfprof-surface-cli-")
DEMO = os.path.join(ls.WL, "demo-sframe")
COMM = "demo-sframe"
READY = None


def ready():
    global READY
    if READY is None:
        READY = ls.pipeline_ready()
    return READY


def sfprof(args, secs=2, workload_secs=None, timeout=120, maps=None):
    """Run sfprof on a fresh demo workload; returns (CompletedProcess, pid).
    maps: a list that receives the workload's /proc/PID/maps text."""
    wl = subprocess.Popen([DEMO, str(workload_secs or secs + 3)], stdout=subprocess.PIPE, text=True)
    pid = int(wl.stdout.readline().split()[-1])  # "demo pid N"
    try:
        if maps is not None:
            with open("/proc/%d/maps" % pid) as f:
                maps.append(f.read())
        r = subprocess.run([ls.SFPROF, "-p", str(pid), "-d", str(secs)] + args,
                           capture_output=True, text=True, timeout=timeout)
    finally:
        wl.kill()
        wl.wait()
    return r, pid


def lock_addresses(maps_text):
    """{symbol: runtime address} of the demo's two mutexes, from nm and the
    load address of the binary's first mapping."""
    base = None
    real = os.path.realpath(DEMO)
    for line in maps_text.splitlines():
        f = line.split()
        if len(f) >= 6 and f[5] == real and int(f[2], 16) == 0:
            base = int(f[0].split("-")[0], 16)
            break
    out = {}
    nm = subprocess.run(["nm", DEMO], capture_output=True, text=True).stdout
    for line in nm.splitlines():
        f = line.split()
        if len(f) == 3 and f[2] in ("hot_lock", "cold_lock") and base is not None:
            out[f[2]] = base + int(f[0], 16)
    return out


def roots(folded):
    out = {}
    for stack, c in folded.items():
        out[stack[0]] = out.get(stack[0], 0) + c
    return out


def test_default_roots_should_be_the_process_comm():
    name = "default_roots_should_be_the_process_comm"
    ok, why = ready()
    if not ok:
        return "SKIP %s: %s" % (name, why)
    out = os.path.join(TMP, "default.folded")
    r, _ = sfprof(["-F", "199", "-o", out])
    if r.returncode:
        return "FAIL %s: sfprof exited %d: %s" % (name, r.returncode, r.stderr[-300:])
    rs = roots(ls.parse_folded(open(out).read()))
    if set(rs) != {COMM}:
        return "FAIL %s: roots %s, expected only %r" % (name, sorted(rs)[:5], COMM)
    return "PASS %s (%d samples)" % (name, rs[COMM])


def test_per_thread_roots_should_be_comm_pid_tid():
    name = "per_thread_roots_should_be_comm_pid_tid"
    ok, why = ready()
    if not ok:
        return "SKIP %s: %s" % (name, why)
    out = os.path.join(TMP, "threads.folded")
    r, pid = sfprof(["-F", "199", "--per-thread", "-o", out])
    if r.returncode:
        return "FAIL %s: sfprof exited %d: %s" % (name, r.returncode, r.stderr[-300:])
    rs = roots(ls.parse_folded(open(out).read()))
    tids = set()
    for root in rs:
        m = re.match(r"^(.+)-(\d+)/(\d+)$", root)
        if not m or m.group(1) != COMM or int(m.group(2)) != pid:
            return "FAIL %s: root %r is not %s-%d/TID" % (name, root, COMM, pid)
        tids.add(int(m.group(3)))
    if len(tids) < 4:  # four busy workers
        return "FAIL %s: only %d threads: %s" % (name, len(tids), sorted(rs))
    return "PASS %s (%d threads)" % (name, len(tids))


def test_by_lock_should_rank_the_hot_mutex_first_by_symbol():
    name = "by_lock_should_rank_the_hot_mutex_first_by_symbol"
    ok, why = ready()
    if not ok:
        return "SKIP %s: %s" % (name, why)
    out = os.path.join(TMP, "locks.folded")
    maps = []
    r, _ = sfprof(["-e", "futex", "--by-lock", "-o", out], secs=4, maps=maps)
    if r.returncode:
        return "FAIL %s: sfprof exited %d: %s" % (name, r.returncode, r.stderr[-300:])
    rs = roots(ls.parse_folded(open(out).read()))
    if not rs or not all(k.startswith("lock:") for k in rs):
        return "FAIL %s: roots not lock:...: %s" % (name, sorted(rs)[:3])
    # Ranking, whatever the naming: map lock:0xADDR back with nm + maps.
    addrs = lock_addresses(maps[0])
    if len(addrs) != 2:
        return "FAIL %s: cannot locate hot_lock/cold_lock in the demo binary" % name
    by_sym = {"hot_lock": 0, "cold_lock": 0}
    for root, us in rs.items():
        label = root[5:]
        for sym, a in addrs.items():
            if label == sym or label == "0x%x" % a:
                by_sym[sym] += us
    hot, cold = by_sym["hot_lock"], by_sym["cold_lock"]
    if not hot or not cold:
        return "FAIL %s: want both mutexes, got %s" % (name, ls.top(rs, 5))
    if hot <= cold:
        return "FAIL %s: hot_lock %d us <= cold_lock %d us" % (name, hot, cold)
    if "lock:hot_lock" not in rs or "lock:cold_lock" not in rs:
        # src/lockname.c names a lock in a binary's .data/.bss by symbol
        return ("FAIL %s: ranking right (hot_lock %.1f ms > cold_lock %.1f ms) but the locks "
                "are not named by symbol: %s" % (name, hot / 1e3, cold / 1e3, ls.top(rs, 2)))
    return "PASS %s (hot %.1f ms, cold %.1f ms)" % (name, hot / 1e3, cold / 1e3)


def test_output_format_should_follow_f_or_the_extension():
    name = "output_format_should_follow_f_or_the_extension"
    ok, why = ready()
    if not ok:
        return "SKIP %s: %s" % (name, why)
    cases = [(["-o", os.path.join(TMP, "x.svg")], "svg"),
             (["-o", os.path.join(TMP, "x.pb.gz")], "pprof"),
             (["-o", os.path.join(TMP, "x.txt")], "folded"),
             (["-f", "svg", "-o", os.path.join(TMP, "y.txt")], "svg")]
    for args, kind in cases:
        r, _ = sfprof(["-F", "99"] + args, secs=1)
        path = args[-1]
        if r.returncode:
            return "FAIL %s: %s: exit %d %s" % (name, args, r.returncode, r.stderr[-200:])
        data = open(path, "rb").read()
        got = ("svg" if data.startswith(b"<?xml") else
               "pprof" if data[:2] == b"\x1f\x8b" and gzip.decompress(data) else
               "folded" if ls.looks_folded(data.decode(errors="replace")) else "?")
        if got != kind:
            return "FAIL %s: %s wrote %s, expected %s" % (name, args, got, kind)
    return "PASS " + name


def run_on_pty(args, secs):
    """Run sfprof with stderr on a pseudo-terminal; returns what it wrote there."""
    wl = subprocess.Popen([DEMO, str(secs + 3)], stdout=subprocess.PIPE, text=True)
    pid = int(wl.stdout.readline().split()[-1])
    master, slave = pty.openpty()
    p = subprocess.Popen([ls.SFPROF, "-p", str(pid), "-d", str(secs)] + args,
                         stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    buf = b""
    deadline = time.time() + secs + 60
    while time.time() < deadline:
        rd, _, _ = select.select([master], [], [], 1)
        if rd:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the slave side closed
                break
            if not chunk:
                break
            buf += chunk
        elif p.poll() is not None:
            break
    p.wait()
    os.close(master)
    wl.kill()
    wl.wait()
    return p.returncode, buf.decode(errors="replace")


STATUS = re.compile(r"sfprof: \d+s(/\d+s)?  events [\d,]+  lost [\d,]+  rate [\d,]+/s")


def test_progress_should_show_on_a_terminal_only_and_not_with_quiet():
    name = "progress_should_show_on_a_terminal_only_and_not_with_quiet"
    ok, why = ready()
    if not ok:
        return "SKIP %s: %s" % (name, why)
    out = os.path.join(TMP, "p.folded")
    rc, text = run_on_pty(["-F", "99", "-o", out], secs=4)
    lines = STATUS.findall(text)
    if rc or len(STATUS.findall(text)) < 2:
        return "FAIL %s: on a tty, rc=%d and %d status lines in %r" % (name, rc, len(lines), text[-300:])
    rc, text = run_on_pty(["-F", "99", "--quiet", "-o", out], secs=3)
    if rc or STATUS.search(text):
        return "FAIL %s: --quiet printed %r" % (name, text[-200:])
    r, _ = sfprof(["-F", "99", "-o", out], secs=3)  # stderr is a pipe
    if r.returncode or STATUS.search(r.stderr) or "\r" in r.stderr:
        return "FAIL %s: status line on a pipe: %r" % (name, r.stderr[-200:])
    return "PASS " + name


def test_end_of_run_should_say_what_was_written_and_quiet_should_silence_it():
    name = "end_of_run_should_say_what_was_written_and_quiet_should_silence_it"
    ok, why = ready()
    if not ok:
        return "SKIP %s: %s" % (name, why)
    out = os.path.join(TMP, "sum.folded")
    r, _ = sfprof(["-F", "99", "-o", out], secs=1)
    total = sum(ls.parse_folded(open(out).read()).values()) if not r.returncode else -1
    want = re.compile(r"^sfprof: wrote %s: ([\d,]+) samples, ([\d,]+) lost$" % re.escape(out), re.M)
    m = want.search(r.stderr)
    if r.returncode or not m or int(m.group(1).replace(",", "")) != total:
        return "FAIL %s: expected 'sfprof: wrote %s: %d samples, N lost', got %r" % (
            name, out, total, r.stderr[-300:])
    if int(m.group(2).replace(",", "")) and "sfprof: warning:" not in r.stderr:
        return "FAIL %s: %s lost and no warning: %r" % (name, m.group(2), r.stderr[-300:])
    cap = os.path.join(TMP, "sum.sfcap")
    wl = subprocess.run([ls.SFPROF, "record", "-F", "99", "-d", "1", "-o", cap, "--", DEMO, "2"],
                        capture_output=True, text=True, timeout=120)
    if wl.returncode or not re.search(r"^sfprof: wrote %s: [\d,]+ events, [\d,]+ lost$" %
                                      re.escape(cap), wl.stderr, re.M):
        return "FAIL %s: record: expected 'sfprof: wrote %s: N events, M lost', got %r" % (
            name, cap, wl.stderr[-300:])
    rep = subprocess.run([ls.SFPROF, "report", "-o", out, cap], capture_output=True, text=True,
                         timeout=120)
    if rep.returncode or "sfprof: wrote %s: " % out not in rep.stderr:
        return "FAIL %s: report: expected 'sfprof: wrote %s: N samples', got %r" % (
            name, out, rep.stderr[-300:])
    tmpl = os.path.join(TMP, "iv-%t.folded")
    r, _ = sfprof(["-F", "99", "--interval", "0.5", "-o", tmpl], secs=1.2)
    if r.returncode or not re.search(r"^sfprof: wrote %s: \d+ interval profiles of [\d,]+ events, "
                                     r"[\d,]+ lost$" % re.escape(tmpl), r.stderr, re.M):
        return "FAIL %s: --interval: expected 'sfprof: wrote %s: N interval profiles...', got %r" % (
            name, tmpl, r.stderr[-300:])
    for args in (["-F", "99", "--quiet", "-o", out],):
        r, _ = sfprof(args, secs=1)
        if r.returncode or "sfprof: wrote" in r.stderr:
            return "FAIL %s: --quiet: expected no summary, got %r" % (name, r.stderr[-300:])
    rep = subprocess.run([ls.SFPROF, "report", "--quiet", "-o", out, cap], capture_output=True,
                         text=True, timeout=120)
    if rep.returncode or rep.stderr.strip():
        return "FAIL %s: report --quiet: expected exit 0 and no output, got %d %r" % (
            name, rep.returncode, rep.stderr[-300:])
    return "PASS " + name


def test_end_of_run_should_warn_when_events_were_lost():
    name = "end_of_run_should_warn_when_events_were_lost"
    ok, why = ready()
    if not ok:
        return "SKIP %s: %s" % (name, why)
    import signal
    out = os.path.join(TMP, "lossy.folded")
    # a 1 MiB ring and a stalled consumer (SIGSTOP), as capture_losses.py
    p = subprocess.Popen([ls.SFPROF, "--ring-mb", "1", "--stack-size", "65528", "--stats",
                          "-F", "5000", "-o", out, "--",
                          os.path.join(ls.WL, "threads-sframe"), "4", "100", "3"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(0.8)
    p.send_signal(signal.SIGSTOP)
    time.sleep(1.5)
    p.send_signal(signal.SIGCONT)
    _, err = p.communicate(timeout=120)
    lost = re.search(r"^lost_total: (\d+)$", err, re.M)
    m = re.search(r"^sfprof: wrote %s: [\d,]+ samples, ([\d,]+) lost$" % re.escape(out), err, re.M)
    if p.returncode or not lost or not m:
        return "FAIL %s: expected a summary and lost_total, got exit %d %r" % (
            name, p.returncode, err[-300:])
    if int(lost.group(1)) == 0:
        return "SKIP %s: the ring never filled (nothing to warn about)" % name
    if int(m.group(1).replace(",", "")) != int(lost.group(1)):
        return "FAIL %s: expected %s lost (lost_total), got %s" % (name, lost.group(1), m.group(1))
    if not re.search(r"^sfprof: warning: [\d,]+ events lost .*--ring-mb", err, re.M):
        return "FAIL %s: %s lost and no warning line: %r" % (name, m.group(1), err[-300:])
    return "PASS %s (%s lost)" % (name, m.group(1))


def test_unwritable_output_should_exit_2_before_profiling():
    name = "unwritable_output_should_exit_2_before_profiling"
    if os.geteuid() != 0:
        return "SKIP %s: needs root (access() says yes to root: the real check creates a file)" % name
    mark = os.path.join(TMP, "ran")
    for args in (["-o", "/proc/x.svg", "--", "/bin/sh", "-c", "touch " + mark],
                 ["record", "-o", "/proc/x.sfcap", "--", "/bin/sh", "-c", "touch " + mark],
                 ["-e", "cpu,futex", "-o", "/proc/x.svg", "--", "/bin/sh", "-c", "touch " + mark]):
        t0 = time.time()
        r = subprocess.run([ls.SFPROF] + args, capture_output=True, text=True, timeout=60)
        lines = r.stderr.strip().splitlines()
        if r.returncode != 2 or len(lines) != 1 or "/proc/x." not in lines[0]:
            return "FAIL %s: %s: expected exit 2 and one line naming the file, got %d %r" % (
                name, args[:3], r.returncode, r.stderr[-300:])
        if os.path.exists(mark) or time.time() - t0 > 5:
            return "FAIL %s: %s: expected no run, but the command ran (or it took %.1f s)" % (
                name, args[:3], time.time() - t0)
    for sub in (["report", "/nonexistent.sfcap"], ["diff", "/nonexistent-a", "/nonexistent-b"]):
        r = subprocess.run([ls.SFPROF] + sub + ["-o", "/proc/x.svg"], capture_output=True,
                           text=True, timeout=60)
        if r.returncode != 2 or "/proc/x.svg" not in r.stderr:
            return "FAIL %s: %s: expected exit 2 naming /proc/x.svg, got %d %r" % (
                name, sub[0], r.returncode, r.stderr[-300:])
    return "PASS " + name


def test_report_e_of_an_event_the_capture_lacks_should_exit_2_saying_so():
    name = "report_e_of_an_event_the_capture_lacks_should_exit_2_saying_so"
    ok, why = ready()
    if not ok:
        return "SKIP %s: %s" % (name, why)
    cap = os.path.join(TMP, "cpu-only.sfcap")
    r = subprocess.run([ls.SFPROF, "record", "-F", "99", "-d", "1", "-o", cap, "--", DEMO, "2"],
                       capture_output=True, text=True, timeout=120)
    if r.returncode:
        return "FAIL %s: record: %s" % (name, r.stderr[-300:])
    r = subprocess.run([ls.SFPROF, "report", cap, "-e", "futex", "-o", os.path.join(TMP, "f.folded")],
                       capture_output=True, text=True, timeout=120)
    lines = r.stderr.strip().splitlines()
    if r.returncode != 2 or len(lines) != 1 or "no futex events" not in lines[0]:
        return "FAIL %s: expected exit 2 and 'holds no futex events', got %d %r" % (
            name, r.returncode, r.stderr[-300:])
    return "PASS " + name


if __name__ == "__main__":
    sys.exit(ls.run_tests(globals()))

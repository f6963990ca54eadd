#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Memory of the always-on whole-machine mode under process churn:
`sfprof -a --interval 10 -o DIR/x-%t.pb.gz --stats` while this script
starts RATE short processes a second (default 20; each burns WORK_MS of
CPU in shortlived-sframe, default 2) and a new binary every second (a
copy of shortlived-sframe under a fresh name with its own build-id; the
copies of exited processes are deleted a few seconds later, as a
package upgrade or a build leaves them). Every 10 s it samples sfprof's
/proc/PID/smaps_rollup:
  Rss      every resident page of every mapping: the BPF ring buffer's
           data pages are mapped twice (so a record never wraps) and
           count twice here
  Pss      each page divided by its map count: the double-mapped ring
           counts once; the figure to compare with the 100 MB target
  Private  Private_Clean + Private_Dirty: pages mapped once, by sfprof
           alone (the heap, no ring, no shared libraries' shared text)
and prints the per-minute maxima, the flatness of the second half
(max - min of the per-minute Pss), and the --stats counters of the run
(losses, caches' sizes and evictions).
  Usage: bench/agent_mem.py [MINUTES [RATE [WORK_MS [INTERVAL]]]]
         (default 3 20 2 10; the issue's soak is `bench/agent_mem.py 60`)
SFPROF=/path runs another sfprof binary (a private copy for a long soak,
so rebuilds do not change it mid-run); SFPROF_ARGS adds options (e.g.
"-e cpu,offcpu"); AGENT_MEM_SMAPS=1 prints the mappings holding the
most memory at the end; SFPROF_WRAP runs it under a tool (e.g. "heaptrack -o
/tmp/x"), sampling the wrapped sfprof process. AGENT_MEM_AGENT=1 runs `sfprof agent
-a -e cpu,offcpu -F 99 --listen 127.0.0.1:0` instead (the systemd unit's
events) and collects from it every 10 s as a fleet does: the last 10 s of
on-CPU samples (/debug/pprof/profile?seconds=10) and /metrics.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.dont_write_bytecode = True
from soaklib import SFPROF, WL, build_id_offset  # noqa: E402

SHORT = os.path.join(WL, "shortlived-sframe")
STAT_KEYS = ("samples_seen", "events_cpu", "lost_total", "lost_stack_read", "lost_ringbuf",
             "lost_busy", "lost_task", "lost_target_map", "no_user_stack_exit_exec",
             "stack_reads_deferred", "stack_reads_deferred_read", "stack_reads_defer_failed",
             "processes_followed", "processes_exited", "procs_reaped", "dso_loads",
             "dso_evicted", "dso_shed", "dso_shed_hot", "dso_shed_bytes", "dso_loaded", "dso_dwarf_trims",
             "thread_tops_learned", "sideband_lost", "changes_lost")


def rollup(pid):
    """Rss, Pss and Private (clean + dirty) of pid in KiB, from smaps_rollup."""
    f = {}
    with open("/proc/%d/smaps_rollup" % pid) as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 2 and parts[0].endswith(":") and parts[1].isdigit():
                f[parts[0][:-1]] = int(parts[1])
    return f.get("Rss", 0), f.get("Pss", 0), f.get("Private_Clean", 0) + f.get("Private_Dirty", 0)


def top_mappings(pid, n=15):
    """The n mappings (by name) holding the most of pid's Rss, as lines
    'Rss Pss Private KiB, count, name': where the memory is."""
    agg, cur = {}, None
    with open("/proc/%d/smaps" % pid) as fh:
        for line in fh:
            parts = line.split(None, 5)
            if "-" in parts[0] and not parts[0].endswith(":"):
                cur = agg.setdefault(parts[5].strip() if len(parts) > 5 else "[anon]",
                                     [0, 0, 0, 0])
                cur[3] += 1
            elif parts[0] in ("Rss:", "Pss:", "Private_Clean:", "Private_Dirty:"):
                cur[{"Rss:": 0, "Pss:": 1}.get(parts[0], 2)] += int(parts[1])
    return ["%8d %8d %8d %5d %s" % (v[0], v[1], v[2], v[3], k)
            for k, v in sorted(agg.items(), key=lambda kv: -kv[1][0])[:n]]


class Churn(threading.Thread):
    """RATE short processes a second; a new binary (fresh name, fresh
    build-id) every second, deleted 5 s after it was made."""

    def __init__(self, tmp, rate, work_ms):
        super().__init__(daemon=True)
        self.tmp, self.rate, self.work_ms = tmp, rate, work_ms
        self.stop = threading.Event()
        self.started = self.binaries = 0

    def run(self):
        image = bytearray(open(SHORT, "rb").read())
        at = build_id_offset(image)
        made, live = [], []
        period = 1.0 / self.rate
        nxt = time.monotonic()
        exe = SHORT
        while not self.stop.is_set():
            if self.started % self.rate == 0:
                self.binaries += 1
                image[at:at + 8] = self.binaries.to_bytes(8, "little")
                exe = os.path.join(self.tmp, "churn%d" % self.binaries)
                with open(exe, "wb") as f:
                    f.write(image)
                os.chmod(exe, 0o755)
                made.append((time.monotonic(), exe))
                while made and made[0][0] < time.monotonic() - 5:
                    os.unlink(made.pop(0)[1])
            live.append(os.posix_spawn(exe, [exe, str(self.work_ms)], os.environ))
            self.started += 1
            live = [p for p in live if os.waitpid(p, os.WNOHANG)[0] == 0]
            nxt += period
            self.stop.wait(max(0.0, nxt - time.monotonic()))
        for p in live:
            os.waitpid(p, 0)


class Scraper(threading.Thread):
    """A collector of the agent (AGENT_MEM_AGENT): every 10 s, the last
    10 s of on-CPU samples (/debug/pprof/profile?seconds=10, answered from
    the retention) and /metrics, as Parca or Alloy and Prometheus would."""

    def __init__(self, errf):
        super().__init__(daemon=True)
        self.errf, self.stop = errf, threading.Event()
        self.profiles = self.bytes = self.metrics = self.failed = 0

    def run(self):
        base = None
        while base is None and not self.stop.wait(0.1):
            self.errf.flush()
            with open(self.errf.name) as f:
                m = re.search(r"listening on (http://\S+?)/?$", f.read(), re.M)
            base = m.group(1) if m else None
        while base and not self.stop.wait(10):
            for path in ("/debug/pprof/profile?seconds=10", "/metrics"):
                try:
                    with urllib.request.urlopen(base + path, timeout=60) as r:
                        n = len(r.read())
                except OSError:
                    self.failed += 1
                    continue
                if path == "/metrics":
                    self.metrics += 1
                else:
                    self.profiles += 1
                    self.bytes += n


def sfprof_pid(wrapper, deadline=10):
    """The pid of sfprof itself: the wrapper's, or its descendant's."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % d) as f:
                    st = f.read()
                exe = os.readlink("/proc/%s/exe" % d)
            except OSError:
                continue
            if os.path.realpath(exe) == os.path.realpath(SFPROF) and int(d) != wrapper.pid:
                ppids = [int(st.rsplit(")", 1)[1].split()[1])]
                if ppids[0] == wrapper.pid or wrapper.pid == int(d):
                    return int(d)
        time.sleep(0.1)
    return wrapper.pid


def stats_of(err):
    st = {}
    for line in err.splitlines():
        k, sep, v = line.partition(": ")
        if sep and v.strip().isdigit():
            st[k] = int(v)
    return st


def main():
    a = sys.argv[1:]
    minutes = float(a[0]) if len(a) > 0 else 3
    rate = int(a[1]) if len(a) > 1 else 20
    work_ms = float(a[2]) if len(a) > 2 else 2
    interval = a[3] if len(a) > 3 else "10"
    if os.geteuid() != 0:
        print("agent_mem: SKIP: needs root")
        return 0
    tmp = tempfile.mkdtemp(prefix="agent_mem.")
    sf = pid = None
    try:
        agent = bool(os.environ.get("AGENT_MEM_AGENT"))
        if agent:  # the agent itself, as a fleet runs it, scraped every 10 s
            cmd = [SFPROF, "agent", "-a", "-e", "cpu,offcpu", "-F", "99",
                   "--listen", "127.0.0.1:0", "--quiet", "--stats"]
        else:
            cmd = [SFPROF, "-a", "--interval", interval, "--quiet", "--stats",
                   "-o", os.path.join(tmp, "x-%t.pb.gz")]
        cmd += os.environ.get("SFPROF_ARGS", "").split()
        print("# %s, churn %d processes/s (shortlived %s ms), a new binary every second, "
              "%.1f minutes" % (" ".join(cmd), rate, work_ms, minutes))
        errf = open(os.path.join(tmp, "stderr"), "w+")
        wrap = os.environ.get("SFPROF_WRAP", "").split()
        sf = subprocess.Popen(wrap + cmd, stdout=subprocess.DEVNULL, stderr=errf)
        pid = sfprof_pid(sf) if wrap else sf.pid
        churn = Churn(tmp, rate, work_ms)
        churn.start()
        scraper = Scraper(errf) if agent else None
        if scraper:
            scraper.start()
        t0 = time.monotonic()
        rows, peak = [], None
        print("| t s | Rss MiB | Pss MiB | Private MiB |")
        print("|---|---|---|---|")
        while time.monotonic() - t0 < minutes * 60 and sf.poll() is None:
            time.sleep(min(10, max(0, t0 + (len(rows) + 1) * 10 - time.monotonic())))
            try:
                r = rollup(pid)
            except OSError:
                break
            rows.append((time.monotonic() - t0,) + r)
            if os.environ.get("AGENT_MEM_SMAPS") and r[0] >= max(x[1] for x in rows):
                try:
                    peak = (rows[-1][0], top_mappings(pid))
                except OSError:
                    pass
            print("| %.0f | %.1f | %.1f | %.1f |" % (rows[-1][0], r[0] / 1024, r[1] / 1024,
                                                     r[2] / 1024))
            sys.stdout.flush()
        if os.environ.get("AGENT_MEM_SMAPS") and sf.poll() is None:
            print("largest mappings at the end (KiB: Rss Pss Private, count, name):")
            print("\n".join(top_mappings(pid)))
            if peak:
                print("... and at the highest Rss, %.0f s:" % peak[0])
                print("\n".join(peak[1]))
        churn.stop.set()
        churn.join()
        if scraper:
            scraper.stop.set()
            scraper.join()
            print("scrapes: %d profiles (%d bytes in all), %d /metrics, %d failed" % (
                scraper.profiles, scraper.bytes, scraper.metrics, scraper.failed))
        if sf.poll() is None:
            os.kill(pid, signal.SIGINT)
            sf.wait(timeout=60)
        errf.seek(0)
        err = errf.read()
        profiles = len([f for f in os.listdir(tmp) if f.endswith(".pb.gz")])
    finally:
        # an exception or ^C above must not leave the agent running
        if sf is not None and sf.poll() is None:
            os.kill(pid, signal.SIGKILL)
            sf.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    if sf.returncode != 0:
        sys.exit("sfprof exited %d: %s" % (sf.returncode, err[-400:]))
    per_min = {}
    for t, rss, pss, priv in rows:
        m = int((t - 1) // 60) + 1
        old = per_min.get(m, (0, 0, 0))
        per_min[m] = (max(old[0], rss), max(old[1], pss), max(old[2], priv))
    print("\nper-minute maxima (MiB):")
    print("| minute | Rss | Pss | Private |")
    print("|---|---|---|---|")
    for m in sorted(per_min):
        v = per_min[m]
        print("| %d | %.1f | %.1f | %.1f |" % (m, v[0] / 1024, v[1] / 1024, v[2] / 1024))
    half = [per_min[m] for m in sorted(per_min) if m > len(per_min) / 2]
    if half:
        for i, name in ((0, "Rss"), (1, "Pss"), (2, "Private")):
            print("second half %s: %.1f-%.1f MiB (spread %.1f)" % (
                name, min(v[i] for v in half) / 1024, max(v[i] for v in half) / 1024,
                (max(v[i] for v in half) - min(v[i] for v in half)) / 1024))
    st = stats_of(err)
    if "samples_seen" not in st:
        print("no --stats from sfprof; its stderr ends:\n" + err[-3000:])
    print("processes started %d, binaries %d, profiles written %d" % (
        churn.started, churn.binaries, profiles))
    for k in STAT_KEYS:
        if k in st:
            print("    %s: %d" % (k, st[k]))
    events = st.get("samples_seen", 0)
    if events:
        print("lost %.2f%% of samples (lost_total %d / samples_seen %d)" % (
            100.0 * st.get("lost_total", 0) / events, st.get("lost_total", 0), events))
    return 0


if __name__ == "__main__":
    sys.exit(main())

# SPDX-License-Identifier: MIT
"""Helpers of the agent tests (tests/e2e/agent_*.py): start `sfprof agent`
on a loopback port it picks (it prints the address), wait until it is
attached (/healthz 200), fetch over plain HTTP or TLS, read pprof -raw
text with its labels, stop with a signal and time the exit."""
import gzip
import os
import re
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import libcapture as lc  # noqa: E402
import libsurface as ls  # noqa: E402

BUILD = lc.BUILD
SFPROF = lc.SFPROF


class Agent:
    """A running `sfprof agent ARGS --listen 127.0.0.1:0`."""

    def __init__(self, args, listen="127.0.0.1:0", timeout=30, scheme_ctx=None, headers=None):
        self.errf = open(os.path.join(ls.tmpdir("sfprof-agent-log-"), "stderr"), "w+")
        self.p = subprocess.Popen([SFPROF, "agent", "--listen", listen] + args,
                                  stdout=subprocess.DEVNULL, stderr=self.errf)
        self.ctx = scheme_ctx
        self.base = None
        end = time.time() + timeout
        while time.time() < end and self.base is None:
            m = re.search(r"listening on (https?://[^ ]+?)/?$", self.stderr(), re.M)
            if m:
                self.base = m.group(1)
            elif self.p.poll() is not None:
                raise RuntimeError("agent exited %d: %s" % (self.p.returncode, self.stderr()))
            else:
                time.sleep(0.05)
        if self.base is None:
            self.stop()
            raise RuntimeError("agent did not say where it listens: " + self.stderr())
        while time.time() < end:  # attached: /healthz answers ok
            try:
                if self.get("/healthz", headers)[0] == 200:
                    return
            except OSError:
                pass
            if self.p.poll() is not None:
                raise RuntimeError("agent exited %d: %s" % (self.p.returncode, self.stderr()))
            time.sleep(0.1)
        self.stop()
        raise RuntimeError("agent not healthy in %d s: %s" % (timeout, self.stderr()))

    def stderr(self):
        self.errf.flush()
        self.errf.seek(0)
        return self.errf.read()

    @property
    def port(self):
        return int(self.base.rsplit(":", 1)[1])

    def get(self, path, headers=None, timeout=60):
        """(status, body bytes) of GET base+path."""
        req = urllib.request.Request(self.base + path, headers=headers or {})
        try:
            with urllib.request.urlopen(req, timeout=timeout, context=self.ctx) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def stop(self, sig=signal.SIGTERM, timeout=10):
        """Send sig; (exit status, seconds to exit); killed after timeout."""
        if self.p.poll() is not None:
            return self.p.returncode, 0.0
        t0 = time.time()
        self.p.send_signal(sig)
        try:
            rc = self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = self.p.wait()
        return rc, time.time() - t0


def tls_context(cafile):
    ctx = ssl.create_default_context(cafile=cafile)
    ctx.check_hostname = False  # the certificate names 127.0.0.1 only by IP
    return ctx


def raw_samples(text):
    """pprof -raw text -> [(values [int], {label: value})]."""
    out, cur = [], None
    body = text.split("Samples:", 1)[-1].split("Locations", 1)[0]
    for line in body.splitlines():
        m = re.match(r"^\s+(\d+(?:\s+\d+)*):\s", line)
        if m:
            cur = ([int(v) for v in m.group(1).split()], {})
            out.append(cur)
            continue
        if cur is not None:
            for k, v in re.findall(r"(\w+):\[([^\]]*)\]", line):
                cur[1][k] = v
    return out


def pprof_times(data):
    """(time_nanos, duration_nanos) of a gzipped profile.proto (bytes), read
    from its top-level fields 9 and 10 (pprof -raw rounds and drops units)."""
    buf = gzip.decompress(data)
    i, out = 0, {}

    def varint():
        nonlocal i
        v = shift = 0
        while True:
            b = buf[i]
            i += 1
            v |= (b & 0x7f) << shift
            shift += 7
            if b < 0x80:
                return v

    while i < len(buf):
        key = varint()
        field, wt = key >> 3, key & 7
        if wt == 0:
            out[field] = varint()
        elif wt == 2:
            n = varint()  # (read before i moves)
            i += n
        elif wt == 1:
            i += 8
        elif wt == 5:
            i += 4
        else:
            raise ValueError("wire type %d in a profile" % wt)
    return out.get(9), out.get(10, 0)


def raw_header(text):
    """(Time as unix ns, Duration in s) of pprof -raw text."""
    m = re.search(r"^Time: (\d+-\d+-\d+ \d+:\d+:\d+)(\.\d+)? \+0000 UTC", text, re.M)
    # (pprof prints a fractional duration in seconds without the unit)
    d = re.search(r"^Duration: ([\d.]+)(ms|s)?$", text, re.M)
    if not m or not d:
        return None, None
    t = time.mktime(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S")) - time.timezone
    ns = int(t) * 10**9 + int(float(m.group(2) or "0") * 1e9)
    return ns, float(d.group(1)) / (1000 if d.group(2) == "ms" else 1)


def pprof_fetch(tool, url, *extra, env_add=None, symbolize=False):
    """pprof -raw of url with tool (a command list); (returncode, text).
    symbolize: as pprof does by default (it asks the server's
    /debug/pprof/symbol for what the profile does not name)."""
    env = dict(ls.pprof_env(), PPROF_TMPDIR=ls.tmpdir("sfprof-agent-pprof-"), **(env_add or {}))
    r = subprocess.run(tool + ["-raw"] + ([] if symbolize else ["-symbolize=none"]) +
                       list(extra) + [url],
                       capture_output=True, text=True, timeout=120, env=env)
    return r.returncode, r.stdout + r.stderr


class CpuClock:
    """CPU time of a process sampled every 50 ms, to read its CPU time in
    any window afterwards (interpolated)."""

    def __init__(self, pid):
        self.pid, self.points = pid, []

    def sample(self):
        self.points.append((time.time_ns(), lc.task_cpu_ns(self.pid)))

    def run_for(self, seconds):
        end = time.time() + seconds
        while time.time() < end:
            self.sample()
            time.sleep(0.05)

    def at(self, t_ns):
        pts = self.points
        if not pts or t_ns < pts[0][0] or t_ns > pts[-1][0]:
            return None
        for (t0, c0), (t1, c1) in zip(pts, pts[1:]):
            if t0 <= t_ns <= t1:
                return c0 + (c1 - c0) * (t_ns - t0) / max(t1 - t0, 1)
        return pts[-1][1]


def skip(name, why):
    print("SKIP %s: %s" % (name, why), flush=True)
    return True


def run_tests(namespace):
    """Each test_* of namespace in name order; each prints its PASS/FAIL/
    SKIP line (Checker.done) and returns False on failure; an exception
    is a FAIL with its reason. The exit status: 1 if any failed."""
    rc = 0
    for k, fn in sorted(namespace.items()):
        if not k.startswith("test_"):
            continue
        try:
            ok = fn()
        except Exception as e:  # a crash is a failure with its reason
            print("FAIL %s: %s: %s" % (k[5:], type(e).__name__, e), flush=True)
            ok = False
        rc |= 0 if ok else 1
    return rc

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""sfprof agent is safe by default: a non-loopback --listen without a token
or TLS exits 2 (before loading anything); with --auth-token-file a request
without the token or with a wrong one gets 401; TLS (a self-signed
certificate made here with openssl) is fetched by Python's ssl and by
upstream pprof -tls_ca and
`go tool pprof` (SSL_CERT_FILE); garbage and out-of-range parameters get 400 at
once with one line; a fifth profile request while four wait gets 503 at
once; 300 idle connections (from other loopback addresses)
leave /metrics answering, and the per-address limit holds; a client that
sends its header a byte at a time is cut off at --header-timeout while
others are served. Only loopback addresses are used."""
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import libagent as la  # noqa: E402
import libcapture as lc  # noqa: E402
import libsurface as ls  # noqa: E402


def test_non_loopback_listen_without_token_should_exit_2():
    name = "non_loopback_listen_without_token_should_exit_2"
    c = lc.Checker(name)
    for addr in ("0.0.0.0:0", "[::]:0", "192.0.2.1:6060"):
        t = time.time()
        r = subprocess.run([la.SFPROF, "agent", "--listen", addr], capture_output=True, text=True,
                           timeout=30)
        lines = r.stderr.strip().splitlines()
        c.check(r.returncode == 2, "--listen %s: exit %d, expected 2" % (addr, r.returncode))
        c.check(len(lines) == 1 and lines[0].startswith("sfprof: ") and "--auth-token-file" in lines[0],
                "--listen %s: message %r" % (addr, r.stderr))
        c.check(time.time() - t < 5, "--listen %s took %.1f s to refuse" % (addr, time.time() - t))
    r = subprocess.run([la.SFPROF, "agent", "--listen", "127.0.0.1:0", "--tls-cert", "/nonexistent"],
                       capture_output=True, text=True, timeout=30)
    c.check(r.returncode == 2, "--tls-cert without --tls-key: exit %d" % r.returncode)
    return c.done()


def test_token_should_be_needed_and_compared():
    name = "token_should_be_needed_and_compared"
    if not lc.privileged(name):
        return True
    c = lc.Checker(name)
    tok = os.path.join(ls.tmpdir("sfprof-agent-tok-"), "token")
    with open(tok, "w") as f:
        f.write("s3cret-token-of-the-test\n")
    os.chmod(tok, 0o600)
    good = {"Authorization": "Bearer s3cret-token-of-the-test"}
    ag = la.Agent(["--auth-token-file", tok], headers=good)
    try:
        for hdr, what in ((None, "no token"),
                          ({"Authorization": "Bearer s3cret-token-of-the-tesT"}, "wrong token"),
                          ({"Authorization": "Bearer s3cret"}, "a prefix of the token"),
                          ({"Authorization": "Basic czNjcmV0"}, "basic auth")):
            for path in ("/metrics", "/debug/pprof/profile?seconds=1", "/healthz"):
                st, body = ag.get(path, hdr)
                c.check(st == 401, "%s on %s: %d, expected 401" % (what, path, st))
        st, body = ag.get("/metrics", good)
        c.check(st == 200 and b"sfprof_http_requests_total" in body, "with the token: %d" % st)
        c.check(b'sfprof_http_requests_total{code="401"} 12' in body, "401s not counted")
        st, body = ag.get("/debug/pprof/profile?seconds=1", good)
        c.check(st == 200 and body[:2] == b"\x1f\x8b", "profile with the token: %d" % st)
    finally:
        rc, _ = ag.stop()
    c.check(rc == 0, "agent exit %d" % rc)
    return c.done()


def make_cert(tmp):
    key, crt = os.path.join(tmp, "key.pem"), os.path.join(tmp, "cert.pem")
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                        "-out", crt, "-days", "1", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1"],
                       capture_output=True, text=True, timeout=60)
    return (key, crt) if r.returncode == 0 else (None, r.stderr)


def test_tls_should_serve_python_and_go_tool_pprof():
    name = "tls_should_serve_python_and_go_tool_pprof"
    if not lc.privileged(name):
        return True
    if not shutil.which("openssl"):
        return la.skip(name, "openssl not installed")
    c = lc.Checker(name)
    tmp = ls.tmpdir("sfprof-agent-tls-")
    key, crt = make_cert(tmp)
    if not c.check(key, "openssl: %s" % crt):
        return c.done()
    ag = la.Agent(["--tls-cert", crt, "--tls-key", key], scheme_ctx=la.tls_context(crt))
    try:
        c.check(ag.base.startswith("https://"), "base %s" % ag.base)
        st, body = ag.get("/metrics")
        c.check(st == 200 and b"sfprof_events_total" in body, "https /metrics: %d" % st)
        url = ag.base + "/debug/pprof/profile?seconds=1"
        up = ls.upprof()
        if up:
            rc, text = la.pprof_fetch([up, "-tls_ca", crt], url)
            c.check(rc == 0 and "Samples:" in text, "upstream pprof -tls_ca: %s" % text[-300:])
        # Go 1.19's go tool pprof fetches /debug/pprof/ URLs with its own
        # client, which ignores -tls_ca: it trusts SSL_CERT_FILE
        rc, text = la.pprof_fetch(["go", "tool", "pprof"], url, env_add={"SSL_CERT_FILE": crt})
        c.check(rc == 0 and "Samples:" in text, "go tool pprof (SSL_CERT_FILE): %s" % text[-300:])
        # plain HTTP on the TLS port is not served
        s = socket.create_connection(("127.0.0.1", ag.port), timeout=5)
        s.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
        got = b""
        try:
            got = s.recv(100)
        except OSError:
            pass
        s.close()
        c.check(not got.startswith(b"HTTP/1.") or b" 200 " not in got[:20],
                "plain HTTP on the TLS port answered: %r" % got[:40])
    finally:
        rc, _ = ag.stop()
    c.check(rc == 0, "agent exit %d" % rc)
    return c.done()


def test_bad_parameters_should_get_400_at_once():
    name = "bad_parameters_should_get_400_at_once"
    if not lc.privileged(name):
        return True
    c = lc.Checker(name)
    ag = la.Agent([])
    try:
        for q in ("seconds=abc", "seconds=0", "seconds=3601", "seconds=-1", "seconds=1e3",
                  "seconds=99999999999999999999", "pid=x", "pid=0", "pid=1&pid=2", "foo=1",
                  "comm=aaaaaaaaaaaaaaaaaaaaaa", "cgroup=relative", "seconds", "seconds=%00"):
            t = time.time()
            st, body = ag.get("/debug/pprof/profile?" + q)
            dt = time.time() - t
            text = body.decode("utf-8", "replace")
            c.check(st == 400, "?%s: %d, expected 400" % (q, st))
            c.check(dt < 1, "?%s: answered in %.2f s" % (q, dt))
            c.check(text.count("\n") == 1 and text.endswith("\n") and text.startswith("sfprof"),
                    "?%s: body %r is not one line" % (q, text))
        st, _ = ag.get("/etc/passwd")
        c.check(st == 404, "/etc/passwd: %d" % st)
        st, _ = ag.get("/debug/pprof/../../etc/passwd")
        c.check(st in (400, 404), "a dot-dot path: %d" % st)
        st, _ = ag.get("/debug/pprof/heap")
        c.check(st == 404, "heap: %d" % st)
        # a request over the memory limit (16 KiB) is refused, the agent lives on
        st, _ = ag.get("/metrics", {"X-Big": "a" * 20000})
        c.check(st in (413, 431), "a 20 KB header: %d" % st)
        st, _ = ag.get("/metrics")
        c.check(st == 200, "after the big header /metrics: %d" % st)
    finally:
        rc, _ = ag.stop()
    c.check(rc == 0, "agent exit %d" % rc)
    return c.done()


def test_concurrent_profile_requests_should_be_limited():
    name = "concurrent_profile_requests_should_be_limited"
    if not lc.privileged(name):
        return True
    c = lc.Checker(name)
    ag = la.Agent(["--retention", "2"])
    res = []
    try:
        # four requests past the retention wait ~3 s each for their data
        ths = [threading.Thread(target=lambda: res.append(
            ag.get("/debug/pprof/profile?seconds=5", timeout=30)[0])) for _ in range(4)]
        for t in ths:
            t.start()
        time.sleep(0.5)
        t0 = time.time()
        st, body = ag.get("/debug/pprof/profile?seconds=1")
        c.check(st == 503 and time.time() - t0 < 1, "a fifth at once: %d after %.2f s"
                % (st, time.time() - t0))
        st, _ = ag.get("/metrics", timeout=2)
        c.check(st == 200, "/metrics while four wait: %d" % st)
        for t in ths:
            t.join(timeout=30)
        c.check(sorted(res) == [200] * 4, "the four waiting got %s" % res)
        st, _ = ag.get("/debug/pprof/profile?seconds=1")
        c.check(st == 200, "once they are answered: %d" % st)
    finally:
        rc, _ = ag.stop()
    c.check(rc == 0, "agent exit %d" % rc)
    return c.done()


def connect_from(src, port):
    s = socket.socket()
    s.bind((src, 0))
    s.settimeout(5)
    s.connect(("127.0.0.1", port))
    return s


def test_idle_connections_should_not_stop_metrics():
    name = "idle_connections_should_not_stop_metrics"
    if not lc.privileged(name):
        return True
    c = lc.Checker(name)
    ag = la.Agent([])
    socks = []
    try:
        for i in range(300):  # 100 from each of three loopback addresses
            socks.append(connect_from("127.0.0.%d" % (2 + i % 3), ag.port))
        time.sleep(0.5)
        t = time.time()
        st, body = ag.get("/metrics", timeout=5)
        dt = time.time() - t
        c.check(st == 200 and b"sfprof_events_total" in body, "/metrics: %d" % st)
        c.check(dt < 1, "/metrics with 300 idle connections took %.2f s" % dt)
        st, body = ag.get("/debug/pprof/profile?seconds=1", timeout=10)
        c.check(st == 200, "profile with 300 idle connections: %d" % st)
        # one address may hold 128: the next ones are closed at once
        extra = [connect_from("127.0.0.9", ag.port) for _ in range(140)]
        time.sleep(0.5)
        closed = 0
        for s in extra:
            s.settimeout(0.05)
            try:
                closed += s.recv(1) == b""
            except socket.timeout:
                pass
            except OSError:
                closed += 1
        c.check(closed >= 12, "140 from one address: %d closed, expected >= 12" % closed)
        socks += extra
    finally:
        for s in socks:
            s.close()
        rc, _ = ag.stop()
    c.check(rc == 0, "agent exit %d" % rc)
    return c.done()


def test_slow_header_should_be_cut_off():
    name = "slow_header_should_be_cut_off"
    if not lc.privileged(name):
        return True
    c = lc.Checker(name)
    ag = la.Agent(["--header-timeout", "2"])
    s = connect_from("127.0.0.1", ag.port)
    try:
        req = b"GET /metrics HTTP/1.1\r\nHost: x\r\nUser-Agent: slow\r\n\r\n"
        t0 = time.time()
        cut = None
        for i, b in enumerate(req):  # a byte every 0.25 s: 13 s for all
            try:
                s.sendall(bytes([b]))
                s.settimeout(0.01)
                got = s.recv(100)
                if got == b"" or got:
                    cut = time.time() - t0
                    break
            except socket.timeout:
                pass
            except OSError:
                cut = time.time() - t0
                break
            if i == 2:  # meanwhile, others are served
                st, _ = ag.get("/metrics", timeout=2)
                c.check(st == 200, "/metrics during a slow header: %d" % st)
            time.sleep(0.25)
        c.check(cut is not None and 1.5 <= cut <= 4,
                "a header a byte per 0.25 s cut after %s s, expected ~2" % cut)
        st, body = ag.get("/metrics")
        c.check(b"sfprof_http_header_timeouts_total 1" in body, "timeouts not counted")
    finally:
        s.close()
        rc, _ = ag.stop()
    c.check(rc == 0, "agent exit %d" % rc)
    return c.done()


if __name__ == "__main__":
    sys.exit(la.run_tests(globals()))

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A PHP-FPM worker (Debian's php-fpm8.2, NTS, running as nobody) serving
requests is named as the CLI is: sfprof -p WORKER while a FastCGI client
sends requests for a script with an instance -> instance -> static method
chain gives >= 90% of the worker's on-CPU samples {main} ->
Worker::outer -> Worker::middle -> Worker::leafWork, at the script's
lines, above FPM's own request loop (php_execute_script), and the same
through record then report. Then the worker serves two scripts in turn,
a.php (class Alpha) and b.php (class Beta) of one shape: without opcache
each request frees its functions and the next compiles its own where
they were, and no sample may carry the other script's frames (37% of
them had a.php's {main} above Beta's methods when a frame was known by
its address alone). The FastCGI client is a few lines here (the
protocol's BEGIN_REQUEST, PARAMS and STDIN records)."""
import contextlib
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from librubyrt import finish, folded_counts, has_chain, php_ready, run  # noqa: E402

NAME = "php_fpm"
FPM = "/usr/sbin/php-fpm8.2"
CHAIN = ["{main}", "Worker::outer", "Worker::middle", "Worker::leafWork"]
# each frame's file and line range in SCRIPT: the line of its call (as
# debug_backtrace gives them; php_labels checks that), and the leaf's loop,
# where it runs: the opline of the running frame is the VM's register
# (php.bpf.h), not the one the frame saved at its last call, which said
# the function's first line (5) or its return (7) in most samples
LINES = {"{main}": ("work.php", 10, 10), "Worker::outer": ("work.php", 3, 3),
         "Worker::middle": ("work.php", 4, 4), "Worker::leafWork": ("work.php", 6, 6)}

SCRIPT = """<?php
class Worker {
  public function outer($n) { return $this->middle($n); }
  public function middle($n) { return self::leafWork($n); }
  public static function leafWork($n) {
    $s = 0; for ($i = 0; $i < $n; $i++) $s = ($s + $i * $i) %% 1000003;
    return $s;
  }
}
echo (new Worker())->outer(%d);
"""

CONF = """[global]
error_log = %(d)s/error.log
daemonize = no
pid = %(d)s/fpm.pid
[www]
user = nobody
group = nogroup
listen = 127.0.0.1:%(port)d
pm = static
pm.max_children = 1
"""


def fcgi_record(kind, content):
    return struct.pack(">BBHHBx", 1, kind, 1, len(content), 0) + content


def fcgi_pair(k, v):
    k, v = k.encode(), v.encode()
    return bytes([len(k), len(v)]) + k + v  # (every name and value < 128 bytes)


def fcgi_get(port, script):
    """One FastCGI request for script; the bytes FPM answered."""
    params = b"".join(fcgi_pair(k, v) for k, v in (
        ("SCRIPT_FILENAME", script), ("REQUEST_METHOD", "GET"),
        ("SCRIPT_NAME", "/" + os.path.basename(script)), ("SERVER_PROTOCOL", "HTTP/1.0")))
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(fcgi_record(1, struct.pack(">HB5x", 1, 0)) + fcgi_record(4, params) +
                  fcgi_record(4, b"") + fcgi_record(5, b""))
        out = b""
        while True:
            d = s.recv(65536)
            if not d:
                return out
            out += d


@contextlib.contextmanager
def serving(port, scripts):
    """A FastCGI client asking for scripts in turn, until the block ends."""
    stop = threading.Event()

    def client():
        while not stop.is_set():
            for p in scripts:
                try:
                    fcgi_get(port, p)
                except OSError:
                    time.sleep(0.01)
    t = threading.Thread(target=client, daemon=True)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join(timeout=30)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker_pid(master):
    """The pool's one worker: the FPM master's child."""
    for _ in range(100):
        try:
            with open("/proc/%d/task/%d/children" % (master, master)) as f:
                kids = f.read().split()
            if kids:
                return int(kids[0])
        except OSError:
            pass
        time.sleep(0.05)
    return None


def share(path):
    """(samples with the chain, all samples, the top stack; or, when under
    90% carry the chain, the top stack of those without it)"""
    counts = folded_counts(path)
    total = sum(counts.values())
    ok = {st for st in counts
          if has_chain(st, CHAIN, LINES) and "php_execute_script" in st.split(";")}
    good = sum(counts[st] for st in ok)
    bad = {st: n for st, n in counts.items() if st not in ok}
    if good < 0.9 * total and bad:
        return good, total, "(without the chain) " + max(bad, key=bad.get)
    return good, total, (max(counts, key=counts.get) if counts else "")


def mixed(path):
    """(samples whose PHP frames come from two scripts, all samples, the
    top such stack)"""
    counts = folded_counts(path)
    bad = {}
    for st, n in counts.items():
        frames = st.split(";")
        files = {f.rsplit("(", 1)[1].split(":")[0] for f in frames if f.endswith(")") and ".php:" in f}
        alpha = any(f.startswith("Alpha::") for f in frames)
        beta = any(f.startswith("Beta::") for f in frames)
        if len(files) > 1 or (alpha and beta) or (alpha and "b.php" in files) or \
                (beta and "a.php" in files):
            bad[st] = n
    top = max(bad, key=bad.get) if bad else ""
    return sum(bad.values()), sum(counts.values()), top


def two_scripts(d, port, w, errs):
    """The worker serves a.php and b.php in turn, under sfprof -p."""
    paths = []
    for cls, name in (("Alpha", "a.php"), ("Beta", "b.php")):
        p = os.path.join(d, name)
        with open(p, "w") as f:
            f.write((SCRIPT % 1500000).replace("Worker", cls))
        os.chmod(p, 0o644)
        paths.append(p)
    out = os.path.join(d, "two.folded")
    with serving(port, paths):
        rc, _, se, _ = run(["-F", "199", "--quiet", "-d", "3", "-p", str(w), "-o", out])
    if rc != 0:
        errs.append("two scripts: sfprof exited %d: %s" % (rc, se[-300:]))
        return
    bad, total, top = mixed(out)
    counts = folded_counts(out)
    both = [sum(n for st, n in counts.items() if cls + "::leafWork" in st) for cls in ("Alpha", "Beta")]
    if total < 100 or bad or min(both) < 0.2 * total:
        errs.append("two scripts: %d of %d samples mix a.php's and b.php's frames (0 wanted); "
                    "Alpha, Beta leaf samples %s; top mixed: %s" % (bad, total, both, top[:400]))


def main():
    if not php_ready(NAME):
        return 0
    if not os.access(FPM, os.X_OK):
        print("SKIP %s: no %s on this machine (tests/install-deps.sh)" % (NAME, FPM))
        return 0
    errs = []
    d = tempfile.mkdtemp()
    os.chmod(d, 0o755)  # the worker runs as nobody and reads the script
    port = free_port()
    script = os.path.join(d, "work.php")
    with open(script, "w") as f:
        f.write(SCRIPT % 3000000)
    os.chmod(script, 0o644)
    with open(os.path.join(d, "fpm.conf"), "w") as f:
        f.write(CONF % {"d": d, "port": port})
    fpm = subprocess.Popen([FPM, "-y", os.path.join(d, "fpm.conf"), "-F"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        w = worker_pid(fpm.pid)
        for _ in range(100):  # the pool listens
            try:
                fcgi_get(port, script)
                break
            except OSError:
                time.sleep(0.05)
        if not w:
            print("FAIL %s: php-fpm started no worker" % NAME)
            return 1

        with serving(port, [script]):
            live = os.path.join(d, "live.folded")
            rc, _, se, _ = run(["-F", "199", "--quiet", "-d", "3", "-p", str(w), "-o", live])
            if rc != 0:
                errs.append("live: sfprof exited %d: %s" % (rc, se[-300:]))
            else:
                good, total, top = share(live)
                if total < 100 or good < 0.9 * total:
                    errs.append("live: the chain at its lines in %d of %d samples (>= 90%%); "
                                "top: %s" % (good, total, top[:400]))
            cap = os.path.join(d, "fpm.sfcap")
            rc, _, se, _ = run(["record", "-F", "199", "--quiet", "-d", "3", "-p", str(w),
                                "-o", cap])
        rep = os.path.join(d, "report.folded")
        if rc == 0:
            rc, _, se, _ = run(["report", "--quiet", cap, "-o", rep])
        if rc != 0:
            errs.append("record/report: exited %d: %s" % (rc, se[-300:]))
        else:
            good, total, top = share(rep)
            if total < 100 or good < 0.9 * total:
                errs.append("record/report: the chain in %d of %d samples; top: %s" %
                            (good, total, top[:400]))
        two_scripts(d, port, w, errs)
    finally:
        fpm.terminate()
        try:
            fpm.wait(timeout=10)
        except subprocess.TimeoutExpired:
            fpm.kill()
            fpm.wait()
        shutil.rmtree(d, ignore_errors=True)
    return finish(NAME, errs)


if __name__ == "__main__":
    sys.exit(main())

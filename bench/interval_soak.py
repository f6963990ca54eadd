#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Memory in continuous mode: sfprof --interval 60 at 99 Hz on one process
that dlopen()s a new library every second (a copy of libswapa.so with its
own build-id, so every one is a new binary), runs in it for a fifth of the
second (the machine is shared), and dlclose()s it, for MINUTES (default 60). Prints sfprof's RSS
(VmRSS) every minute, then the profiles written and the binaries loaded
and evicted: a flat curve means neither the profiles nor the binary cache
grow with the run's length.
  Usage: bench/interval_soak.py [MINUTES] [RATE [FREQ [INTERVAL]]]
RATE libraries a second (default 1; each runs for a fifth of its 1/RATE s),
FREQ Hz (default 99), INTERVAL seconds (default 60): an accelerated soak
such as `bench/interval_soak.py 3 20 999 10` goes through 3,600 libraries
in three minutes. SFPROF_WRAP (e.g. "heaptrack -o /tmp/x") runs sfprof
under a heap profiler.
"""
import ctypes
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
from soaklib import SFPROF, WL, build_id_offset, print_stats, watch_rss  # noqa: E402

LIB = os.path.join(WL, "libswapa.so")


def target(secs, tmp, rate):
    """The profiled process: RATE new libraries a second."""
    image = bytearray(open(LIB, "rb").read())
    at = build_id_offset(image)
    now = ctypes.CFUNCTYPE(ctypes.c_double)(time.monotonic)
    end, i = time.monotonic() + secs, 0
    while time.monotonic() < end:
        i += 1
        image[at:at + 8] = struct.pack("<Q", i)
        path = os.path.join(tmp, "libsoak%d.so" % i)
        open(path, "wb").write(image)
        lib = ctypes.CDLL(path)
        lib.swap_a_work.argtypes = [ctypes.c_double, ctypes.CFUNCTYPE(ctypes.c_double)]
        lib.swap_a_work(0.2 / rate, now)
        ctypes.CDLL("libc.so.6").dlclose(ctypes.c_void_p(lib._handle))
        os.unlink(path)
        time.sleep(0.8 / rate)


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--target":
        target(float(sys.argv[2]), sys.argv[3], float(sys.argv[4]))
        return
    mins = float(sys.argv[1]) if len(sys.argv) > 1 else 60
    rate = float(sys.argv[2]) if len(sys.argv) > 2 else 1
    freq = sys.argv[3] if len(sys.argv) > 3 else "99"
    interval = sys.argv[4] if len(sys.argv) > 4 else "60"
    wrap = os.environ.get("SFPROF_WRAP", "").split()
    secs = mins * 60
    tmp = tempfile.mkdtemp(prefix="sfprof-soak-")
    try:
        t = subprocess.Popen([sys.executable, __file__, "--target", str(secs + 5), tmp, str(rate)])
        time.sleep(0.5)
        s = subprocess.Popen(wrap + [SFPROF, "--interval", interval, "-F", freq, "-d", str(secs),
                              "--quiet", "--stats", "-p", str(t.pid), "-o",
                              os.path.join(tmp, "cpu-%t.pb.gz")], stderr=subprocess.PIPE,
                             text=True)
        watch_rss(s, 60, "%.0f")
        _, err = s.communicate()
        t.kill()
        t.wait()
        profs = [f for f in os.listdir(tmp) if f.endswith(".pb.gz")]
        print("    profiles written: %d" % len(profs))
        print_stats(err, ("intervals_written", "events_cpu", "dso_loads", "dso_evicted",
                          "procs", "changes_mappings"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

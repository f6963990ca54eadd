# SPDX-License-Identifier: MIT
"""What bench/soak.py and bench/interval_soak.py share: where sfprof and
the workloads are, sfprof's VmRSS, the RSS table printed while a run lasts,
and the --stats counters picked out of its stderr at the end, and where an
ELF image keeps its build-id (to make new binaries by patching it).
SFPROF=/path runs another sfprof binary (e.g. a private copy for a long
soak, so rebuilds do not change it mid-run)."""
import os
import struct
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
SFPROF = os.environ.get("SFPROF", os.path.join(BUILD, "sfprof"))
WL = os.path.join(BUILD, "workloads")


def rss_kib(pid):
    """VmRSS of pid in KiB (0 when /proc has none, e.g. a zombie)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def watch_rss(proc, every_s, minute_fmt):
    """Print a markdown table of proc's RSS every every_s seconds until it
    exits; minute_fmt formats the minutes since the start (e.g. "%.0f")."""
    t0 = time.monotonic()
    print("| minute | sfprof RSS MiB |")
    print("|---|---|")
    row = "| " + minute_fmt + " | %.1f |"
    while proc.poll() is None:
        try:
            print(row % ((time.monotonic() - t0) / 60, rss_kib(proc.pid) / 1024.0))
            sys.stdout.flush()
        except OSError:
            break
        time.sleep(every_s)


def print_stats(err, keys):
    """The --stats lines of err (sfprof's stderr) whose name is in keys."""
    for line in err.splitlines():
        if line.split(":")[0] in keys:
            print("    " + line)


def build_id_offset(image):
    """File offset of the GNU build-id's bytes (ELF64 little-endian)."""
    shoff, = struct.unpack_from("<Q", image, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", image, 0x3a)
    for i in range(shnum):
        _, typ, _, _, off, size = struct.unpack_from("<IIQQQQ", image, shoff + i * shentsize)
        if typ != 7:  # SHT_NOTE
            continue
        p = off
        while p < off + size:
            namesz, descsz, ntype = struct.unpack_from("<III", image, p)
            name_end = p + 12 + ((namesz + 3) & ~3)
            if ntype == 3 and image[p + 12:p + 15] == b"GNU":  # NT_GNU_BUILD_ID
                return name_end
            p = name_end + ((descsz + 3) & ~3)
    raise RuntimeError("no GNU build-id note")

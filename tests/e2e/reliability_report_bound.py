#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""report's memory is bounded (issue 23 item 9): a hostile capture of 20k
mappings and 20k forks of that process (4.8 MB) once took 4 GB and was
killed, each fork copying its parent's mappings. Forks share them now
(copy on write): the fork bomb is reported within 1 GiB of address space.
A capture that makes every fork change its copy hits the documented bound
(sfprof.1, LIMITS) with a clear error, not the machine's memory."""
import os
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import libcapfile as cf  # noqa: E402
from libunwind import SFPROF as BUILT, WL  # noqa: E402

SFPROF = os.environ.get("SFPROF", BUILT)
SPIN = os.path.join(WL, "spin-sframe")
TASK = 8
TASK_FORK = 3
N = 20000
PROT_EXEC = 4


def result(name, err):
    print("FAIL %s: %s" % (name, err) if err else "PASS %s" % name)


def mapping(pid, start, size, path):
    p = path.encode()
    fixed = struct.pack("<IIQQQQQIIII", pid, PROT_EXEC | 1, 1, start,
                        start + size, 0, 1000 + (start >> 16) % 100000, 8, 1,
                        0, len(p))
    return fixed + p


def task_fork(pid, ppid):
    return struct.pack("<IIIIQ", TASK_FORK, pid, ppid, 0, 2)


def hostile(cap, out, each_fork_maps):
    """cap with N mappings in its target and N forks of it inserted before
    its first event; each fork maps one more file when each_fork_maps."""
    version, flags, recs = cf.parse(open(cap, "rb").read())
    pid = None
    for typ, p in recs:
        if typ == cf.MAPPING and cf.mapping_path(p).endswith("/spin-sframe"):
            pid = struct.unpack_from("<I", p, 0)[0]
            break
    if pid is None:
        return None
    first_ev = next(i for i, (t, _) in enumerate(recs) if t == cf.EVENT)
    base = 0x7e0000000000
    extra = [(cf.MAPPING, mapping(pid, base + i * 0x10000, 0x1000,
                                  "/nonexistent/hostile/lib%d.so" % i))
             for i in range(N)]
    for i in range(N):
        child = 5000000 + i
        extra.append((TASK, task_fork(child, pid)))
        if each_fork_maps:
            extra.append((cf.MAPPING, mapping(child, 0x10000000 + i * 0x10000,
                                              0x1000, "/nonexistent/own%d" % i)))
    recs[first_ev:first_ev] = extra
    with open(out, "wb") as f:
        f.write(cf.build(version, flags, recs))
    return os.path.getsize(out)


def report(cap, d, limit_as):
    def pre():
        if limit_as:
            resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))
    t0 = time.time()
    try:
        r = subprocess.run([SFPROF, "report", "--no-buildid-cache", "--stats",
                            "-o", os.path.join(d, "out.folded"), cap],
                           capture_output=True, timeout=50, preexec_fn=pre)
    except subprocess.TimeoutExpired:
        return None, "timed out after 50 s", 50
    return r.returncode, r.stderr.decode("utf-8", "replace"), time.time() - t0


def main():
    if os.geteuid() != 0:
        print("SKIP reliability_report_bound: needs root (BPF record)")
        return
    # ASan reserves terabytes of address space and cannot run under a limit
    asan = b"__asan_init" in open(SFPROF, "rb").read()
    limit = None if asan else 1 << 30
    d = tempfile.mkdtemp(prefix="sfprof-rbound-")
    try:
        cap = os.path.join(d, "spin.cap")
        r = subprocess.run([SFPROF, "record", "--no-buildid-cache", "-o", cap,
                            "-F", "199", "-d", "1", "--", SPIN, "1"],
                           capture_output=True, timeout=60)
        if r.returncode != 0:
            print("FAIL reliability_report_bound: record exited %d: %s"
                  % (r.returncode, r.stderr[-300:]))
            return

        name = "reliability_report_bound_fork_bomb_shares_mappings"
        bomb = os.path.join(d, "bomb.cap")
        size = hostile(cap, bomb, False)
        if size is None:
            result(name, "no MAPPING of spin-sframe in the capture")
            return
        rc, err, secs = report(bomb, d, limit)
        stats = dict(l.split(": ", 1) for l in err.splitlines() if ": " in l
                     and not l.startswith("sfprof"))
        folded = os.path.join(d, "out.folded")
        samples = 0
        if os.path.exists(folded):
            for line in open(folded):
                if "spin" in line:
                    samples += int(line.rsplit(" ", 1)[1])
        if rc != 0:
            result(name, "report of a %.1f MB capture (%d mappings, %d forks) "
                   "under a 1 GiB limit: exit %s: %s"
                   % (size / 1e6, N, N, rc, err.strip()[-300:]))
        elif int(stats.get("maps_shared", "0")) < N:
            result(name, "expected maps_shared >= %d, got %s"
                   % (N, stats.get("maps_shared")))
        elif samples == 0:
            result(name, "expected the target's samples named, got none")
        else:
            result(name, None)
            print("  %.1f MB capture, %d forks shared, %.1f s, %d samples"
                  % (size / 1e6, N, secs, samples))

        name = "reliability_report_bound_copies_past_the_bound_fail_clearly"
        copies = os.path.join(d, "copies.cap")
        hostile(cap, copies, True)
        rc, err, secs = report(copies, d, limit)
        if rc != 1 or "mappings in all (sfprof.1, LIMITS)" not in err:
            result(name, "expected exit 1 naming the bound, got exit %s: %s"
                   % (rc, err.strip()[-300:]))
        else:
            result(name, None)
            print("  refused in %.1f s: %s" % (secs, err.strip().splitlines()[-1]))
    finally:
        shutil.rmtree(d)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The page cache's folio sizes of what reports map (BENCHMARKS.md, "Kernel
side of a report"): each folio is one entry to map and to unmap.

- record writes the capture in aligned 64 KiB blocks, so a fresh capture is
  cached in folios of 64 KiB (it wrote 4 KiB pieces, 4 KiB folios);
- report maps the capture with MADV_HUGEPAGE, so one read back from disk
  comes in as 2 MiB folios (MAP_POPULATE alone: 4 KiB ones);
- the DWARF cache maps a stored image the same way.

Needs a kernel and file system whose page cache holds large folios (probed
with one 2 MiB write: SKIP if not) and /proc/kpageflags (root)."""
import glob
import mmap
import os
import shutil
import struct
import subprocess
import tempfile

from libcapture import SFPROF, WL, Checker, privileged

KPF_COMPOUND_TAIL = 1 << 16


def folios(path):
    """Sizes in pages of the folios caching path, in file order (reads it)."""
    with open(path, "rb") as f:
        m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
        try:
            n = (len(m) + 4095) // 4096
            for i in range(n):
                m[i * 4096]
            base = None
            with open("/proc/self/maps") as maps:
                for line in maps:
                    if line.rstrip().endswith(path):
                        base = int(line.split("-")[0], 16)
                        break
            sizes, run = [], 0
            with open("/proc/self/pagemap", "rb") as pm, open("/proc/kpageflags", "rb") as kf:
                for i in range(n):
                    pm.seek((base // 4096 + i) * 8)
                    pfn = struct.unpack("<Q", pm.read(8))[0] & ((1 << 55) - 1)
                    kf.seek(pfn * 8)
                    flags = struct.unpack("<Q", kf.read(8))[0]
                    if flags & KPF_COMPOUND_TAIL and run:
                        run += 1
                        continue
                    if run:
                        sizes.append(run)
                    run = 1
            sizes.append(run)
            return sizes
        finally:
            m.close()


def drop(path):
    """Drop path's pages from the page cache (this file only)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def large_folios(d):
    """Whether one 2 MiB write here is cached as one 2 MiB folio."""
    p = os.path.join(d, "probe")
    with open(p, "wb", buffering=0) as f:
        f.write(b"\x5a" * (2 << 20))
    try:
        return max(folios(p)) >= 512
    except (OSError, ValueError):
        return False


def main():
    name = "capture_pagecache"
    if not privileged(name):
        return
    thp = "never"
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            thp = f.read().split("[")[1].split("]")[0]
    except (OSError, IndexError):
        pass
    with tempfile.TemporaryDirectory(prefix="sfprof-pagecache-", dir="/var/tmp") as d:
        if thp == "never" or not os.access("/proc/kpageflags", os.R_OK) or not large_folios(d):
            print("SKIP %s: no large page-cache folios here (THP %s)" % (name, thp))
            return
        cap = os.path.join(d, "spin.cap")
        r = subprocess.run([SFPROF, "record", "-F", "999", "-o", cap, "--",
                            os.path.join(WL, "spin-sframe"), "4"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=60)
        c = Checker(name + "_record_writes_64k_blocks")
        size = os.path.getsize(cap) if os.path.exists(cap) else 0
        if c.check(r.returncode == 0 and size > (2 << 20),
                   "record exited %d, %d bytes: %s" % (r.returncode, size, r.stderr[-300:])):
            f = folios(cap)
            # every folio but those of the last, partial block
            body = f[:-1]
            while body and sum(body) * 4096 > size - (64 << 10):
                body.pop()
            small = [s for s in body if s < 16]
            print("# %s: %d bytes in %d folios, %d of them under 64 KiB" % (
                c.name, size, len(f), len(small)))
            c.check(body and not small, "folios under 64 KiB: %d of %d" % (len(small), len(body)))
        c.done()
        if r.returncode != 0 or size <= (2 << 20):
            return

        c = Checker(name + "_report_reads_back_2m_folios")
        copy = os.path.join(d, "copy.cap")
        shutil.copyfile(cap, copy)
        drop(copy)
        out = os.path.join(d, "out.folded")
        r = subprocess.run([SFPROF, "report", copy, "-o", out], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, timeout=60,
                           env=dict(os.environ, SFPROF_DWARF_CACHE=""))
        if c.check(r.returncode == 0 and os.path.getsize(out) > 0,
                   "report exited %d: %s" % (r.returncode, r.stderr[-300:])):
            f = folios(copy)
            print("# %s: largest folio %d pages" % (c.name, max(f)))
            c.check(max(f) >= 512, "largest folio %d pages, not 512" % max(f))
        c.done()

        c = Checker(name + "_dwarf_image_reads_back_2m_folios")
        cache = os.path.join(d, "dwarf")
        env = dict(os.environ, SFPROF_DWARF_CACHE=cache)
        r = subprocess.run([SFPROF, "report", cap, "-o", out], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, timeout=120, env=env)
        images = [p for p in glob.glob(os.path.join(cache, "*", "*", "dwarf-*"))
                  if os.path.getsize(p) > (2 << 20)]
        if r.returncode == 0 and not images:
            print("SKIP %s: no DWARF image over 2 MiB stored (no libc debug file?)" % c.name)
            return
        if c.check(r.returncode == 0, "report exited %d: %s" % (r.returncode, r.stderr[-300:])):
            for p in images:
                drop(p)
            r = subprocess.run([SFPROF, "report", cap, "-o", out], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, timeout=120, env=env)
            c.check(r.returncode == 0, "second report exited %d" % r.returncode)
            for p in images:
                f = folios(p)
                print("# %s: %s: largest folio %d pages" % (c.name, os.path.basename(p), max(f)))
                c.check(max(f) >= 512, "%s: largest folio %d pages, not 512" % (p, max(f)))
        c.done()


if __name__ == "__main__":
    main()

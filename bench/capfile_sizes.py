#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A capture's bytes by record type (src/capfile/capfile.h: each record a
16-byte header, its payload and padding to 8), RUNTIME records by their
kind (runtime.h enum runtime_record_type) and, for V8's (kind 3), by their
own kind (v8record.h: LAYOUT, FUNC). Usage: capfile_sizes.py X.sfcap
(a version 2 capture)."""
import collections
import struct
import sys

TYPES = {1: "META", 2: "MAPPING", 3: "EVENT", 4: "KSTACK", 5: "KSYM", 6: "STATS", 7: "END",
         8: "TASK", 12: "PYFRAME", 16: "JIT", 17: "PYTRAMP", 18: "RUNTIME"}
RT = {1: "pytramp", 2: "hotspot", 3: "v8"}
V8 = {1: "LAYOUT", 2: "FUNC"}


def main(path):
    data = open(path, "rb").read()
    if data[:8] != b"SFPROFCA" or struct.unpack_from("<I", data, 8)[0] != 2:
        sys.exit("capfile_sizes: %s is not a version 2 capture" % path)
    n, b = collections.Counter(), collections.Counter()
    at = 16
    while at + 16 <= len(data):
        typ, ln = struct.unpack_from("<II", data, at)
        size = 16 + (ln + 7) // 8 * 8
        name = TYPES.get(typ, str(typ))
        if typ == 18 and ln >= 16:
            kind = struct.unpack_from("<I", data, at + 16)[0]
            name = "RUNTIME " + RT.get(kind, str(kind))
            if kind == 3 and ln >= 18:
                name += " " + V8.get(data[at + 16 + 16 + 1], "?")
        n[name] += 1
        b[name] += size
        at += size
    print("%s: %d bytes" % (path, len(data)))
    for k in sorted(b, key=lambda k: -b[k]):
        print("  %-20s %7d records %10d bytes %6.2f%%" % (k, n[k], b[k], 100.0 * b[k] / len(data)))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: capfile_sizes.py X.sfcap")
    main(sys.argv[1])

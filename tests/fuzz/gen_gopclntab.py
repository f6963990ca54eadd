#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the seed corpus of fuzz_gopclntab (also the fixtures of
tests/unit/test_gopclntab.c): small .gopclntab sections in the Go 1.18
and 1.20 layouts (src/runtimes/go/gopclntab.h), five functions each:

  main.leaf           0x401000 +0x40  SP delta 0, 24 from +4, 0 from +0x38,
                                       table ends at +0x3c (then padding)
  runtime.systemstack 0x401040 +0x40  SPWRITE, delta 0 to +0x30
  runtime.goexit      0x401080 +0x20  TOPFRAME, delta 0 to +0x10
  runtime.sigreturn   0x4010a0 +0x20  delta 0 to +0xb
  main.big            0x4010c0 +0x200 delta 0, 4104 from +1 (two-byte
                                       varints) to +0x1f0

usage: gen_gopclntab.py DIR   (writes DIR/go118.bin, DIR/go120.bin)
"""
import os
import struct
import sys

TEXT = 0x401000
FUNCS = [  # name, offset, size, flag, [(value, end offset)]
    ("main.leaf", 0x000, 0x40, 0, [(0, 4), (24, 0x38), (0, 0x3c)]),
    ("runtime.systemstack", 0x040, 0x40, 2, [(0, 0x30)]),
    ("runtime.goexit", 0x080, 0x20, 1, [(0, 0x10)]),
    ("runtime.sigreturn", 0x0a0, 0x20, 0, [(0, 0xb)]),
    ("main.big", 0x0c0, 0x200, 0, [(0, 1), (4104, 0x1f0)]),
]


def uvarint(v):
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def pcvalue(runs):
    """Go's PC-value encoding: zig-zag value deltas from -1, PC deltas"""
    out, val, pc = bytearray(), -1, 0
    for v, end in runs:
        d = v - val
        out += uvarint((d << 1) if d >= 0 else ((-d << 1) - 1))
        out += uvarint(end - pc)
        val, pc = v, end
    return bytes(out + b"\0")


def table(magic):
    names, nameoff = bytearray(), []
    for f in FUNCS:
        nameoff.append(len(names))
        names += f[0].encode() + b"\0"
    pctab, pcsp = bytearray(b"\0"), []  # offset 0 means "no table"
    for f in FUNCS:
        pcsp.append(len(pctab))
        pctab += pcvalue(f[4])
    hdr_len = 8 + 8 * 8
    funcname = hdr_len
    cu = funcname + len(names)
    filetab = cu
    pct = filetab
    pcln = pct + len(pctab)
    rec = 40 if magic == 0xfffffff0 else 44
    nf = len(FUNCS)
    ftab = bytearray()
    recs = bytearray()
    first = (nf + 1) * 8
    for i, (name, off, size, flag, _) in enumerate(FUNCS):
        ftab += struct.pack("<II", off, first + i * rec)
        r = struct.pack("<IiiIIIIII", off, nameoff[i], 0, 0, pcsp[i], 0, 0, 0, 0)
        if rec == 44:
            r += struct.pack("<i", 1)  # startLine (1.20+)
        r += struct.pack("<BBBB", 0, flag, 0, 0)
        recs += r
    last = FUNCS[-1]
    ftab += struct.pack("<II", last[1] + last[2], 0)
    hdr = struct.pack("<IBBBBQQQQQQQQ", magic, 0, 0, 1, 8, nf, 0, TEXT, funcname, cu,
                      filetab, pct, pcln)
    return bytes(hdr + names + pctab + ftab + recs)


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    for name, magic in (("go118.bin", 0xfffffff0), ("go120.bin", 0xfffffff1)):
        with open(os.path.join(d, name), "wb") as f:
            f.write(table(magic))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Seeds for fuzz_hsrecord (HotSpot's capture records, hsrecord.h: each a
u16 length then its bytes) and one for fuzz_capfile: its full_v2.cap with
those records as RUNTIME records of kind 2 (RUNTIME_REC_HOTSPOT) after
META, checksums made to agree."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def hdr(kind):
    return struct.pack("<BBH", 1, kind, 0)


def jvm(fp_method=-24, fp_bcp=-56, interp=1):
    return hdr(1) + struct.pack("<iiI", fp_method, fp_bcp, interp)


def code(start, end, fc, fs, kind):
    return hdr(2) + struct.pack("<QQQII", start, end, fc, fs, kind)


def frame(pc, line, name, file=b"", inl=b""):
    return hdr(3) + struct.pack("<QIHHHH", pc, line, len(name), len(file), len(inl), 0) + \
        name + file + inl


def method(m, code_at, size, name, file=b"", lnt=b""):
    return hdr(4) + struct.pack("<QQIHHI", m, code_at, size, len(name), len(file), len(lnt)) + \
        name + file + lnt


# (bci, line) pairs as HotSpot compresses them: 0..4 -> 14, 9 -> 15, then
# a wide pair (0xff, bci +300, line +2), the end
LNT = bytes([(0 << 3) | 6, (4 << 3) | 0, (5 << 3) | 1, 0xff]) + bytes([0xd8, 0x04, 4, 0])

RECS = [
    jvm(),
    code(0x7f0000001000, 0x7f0000001400, 0x7f0000001010, 6, 1),
    code(0x7f0000000000, 0x7f0000000800, 0x7f0000000000, 0, 2),
    code(0x7f0000001200, 0x7f0000001600, 0x7f0000001220, 8, 1),  # (replaces the first)
    frame(0x7f0000001233, 31, b"HsChain.outerLoop", b"HsChain.java",
          b"HsChain.countPrimes\tHsChain.java\t25\nHsChain.lambda$outerLoop$0\tHsChain.java\t33\n"),
    frame(0x7f0000001233, 0, b""),  # (voids it)
    method(0x7f1000000008, 0x7f1000000100, 40, b"HsChain.isPrime", b"HsChain.java", LNT),
    method(0x7f1000000008, 0x7f1000000200, 0, b"java.lang.Thread.sleep"),
]


def pack(recs):
    return b"".join(struct.pack("<H", len(r)) + r for r in recs)


def crc32c(data, crc=0):
    crc ^= 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82f63b78 if crc & 1 else 0)
    return crc ^ 0xffffffff


def record(rtype, payload):
    h = struct.pack("<II", rtype, len(payload))
    crc = crc32c(payload, crc32c(h))
    h += struct.pack("<I", crc)
    h += struct.pack("<I", crc32c(h))
    return h + payload + b"\0" * ((8 - len(payload) % 8) % 8)


def capfile_seed():
    src = open(os.path.join(HERE, "corpus", "capfile", "full_v2.cap"), "rb").read()
    off = 16
    rlen = struct.unpack_from("<I", src, off + 4)[0]
    meta_end = off + 16 + rlen + (8 - rlen % 8) % 8
    rt = b"".join(record(18, struct.pack("<IIII", 2, 4242, len(r), 0) + r) for r in RECS)
    return src[:meta_end] + rt + src[meta_end:]


def main():
    out = os.path.join(HERE, "corpus", "hsrecord")
    os.makedirs(out, exist_ok=True)
    seeds = {"all": pack(RECS), "code_overlap": pack(RECS[1:4]), "frame_void": pack(RECS[4:6]),
             "methods": pack(RECS[6:])}
    for name, data in seeds.items():
        open(os.path.join(out, name), "wb").write(data)
    open(os.path.join(HERE, "corpus", "capfile", "runtime_hotspot.cap"), "wb").write(
        capfile_seed())


if __name__ == "__main__":
    main()

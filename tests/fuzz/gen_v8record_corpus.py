#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Seeds for fuzz_v8record (V8's capture records, v8record.h: each a u16
length then its bytes; after a zero length, a stack snapshot whose
interpreter frame's slots agree with the FUNC records or not), and one for
fuzz_capfile: its full_v2.cap with a LAYOUT and two FUNC records as
RUNTIME records of kind 3 (RUNTIME_REC_V8) after META, checksums made to
agree (gen_hsrecord_corpus.record())."""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "v8record")


def hdr(kind):
    return struct.pack("<BBH", 1, kind, 0)


def layout(fp_fn=-16, fp_cx=-8, fp_ba=-24, fp_off=-32, tag=1, mask=3, shift=32, bias=53):
    return hdr(1) + struct.pack("<iiiiQQII", fp_fn, fp_cx, fp_ba, fp_off, tag, mask, shift, bias)


def func(fn, ba, length, name):
    return hdr(2) + struct.pack("<QQII", fn, ba, length, len(name)) + name


def recs(*rs):
    return b"".join(struct.pack("<H", len(r)) + r for r in rs)


def frame(cx, fn, ba, off, bias=53):
    """64 bytes, fp at 32: the slots below it"""
    s = bytearray(64)
    struct.pack_into("<QQQQ", s, 0, (off + bias) << 32, ba, fn, cx)
    return bytes(s)


def main():
    os.makedirs(OUT, exist_ok=True)
    fn, ba = 0x2a0000101, 0x2a0002001
    seeds = {
        "named": recs(layout(), func(fn, ba, 77, b"outerJS /tmp/app.js")) + b"\0\0" +
        frame(0x2a0000401, fn, ba, 10),
        "other_array": recs(layout(), func(fn, ba, 77, b"outerJS")) + b"\0\0" +
        frame(0x2a0000401, fn, ba + 0x1000, 10),
        "replaced": recs(layout(), func(fn, ba, 77, b"outerJS"),
                         func(fn, ba + 0x1000, 20, b"innerJS")) + b"\0\0" +
        frame(0x2a0000401, fn, ba + 0x1000, 19),
        "no_layout": recs(func(fn, ba, 77, b"f")) + b"\0\0" + frame(0x2a0000401, fn, ba, 0),
        "bad": recs(layout(fp_fn=-12), func(8, ba, 77, b"x"), b"\1\2\0\0", b"\2\1\0\0"),
    }
    for k, v in seeds.items():
        with open(os.path.join(OUT, k), "wb") as f:
            f.write(v)
    sys.path.insert(0, HERE)
    from gen_hsrecord_corpus import record
    src = open(os.path.join(HERE, "corpus", "capfile", "full_v2.cap"), "rb").read()
    rlen = struct.unpack_from("<I", src, 16 + 4)[0]
    meta_end = 16 + 16 + rlen + (8 - rlen % 8) % 8
    rt = b"".join(record(18, struct.pack("<IIII", 3, 4242, len(r), 0) + r) for r in
                  (layout(), func(fn, ba, 77, b"outerJS /tmp/app.js"),
                   func(fn + 0x100, ba + 0x1000, 20, b"innerJS /tmp/app.js")))
    with open(os.path.join(HERE, "corpus", "capfile", "runtime_v8.cap"), "wb") as f:
        f.write(src[:meta_end] + rt + src[meta_end:])


if __name__ == "__main__":
    main()

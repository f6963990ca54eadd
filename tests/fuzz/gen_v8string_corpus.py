#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Seeds for fuzz_v8string: node 20's V8 objects (tests/fuzz/v8mem_image.h)
in a memory image: a JSFunction named by a one-byte String, by a ScopeInfo's
function variable, by a cons of a two-byte and a thin string, with its
script's name; an interpreted frame (its function's bytecode the frame's).
  gen_v8string_corpus.py DIR"""
import os
import struct
import sys

BASE = 0x100000000


class Img:
    def __init__(self):
        self.mem = bytearray(0x1000)
        self.top = 64

    def q(self, off, v):
        struct.pack_into("<Q", self.mem, off, v & (2**64 - 1))

    def obj(self, t, size):
        m = self.top
        struct.pack_into("<H", self.mem, m + 12, t)
        o = m + 32
        self.top = o + ((size + 7) & ~7)
        self.q(o, BASE + m + 1)
        return o

    def s1(self, s):
        o = self.obj(8, 16 + len(s))
        struct.pack_into("<i", self.mem, o + 12, len(s))
        self.mem[o + 16:o + 16 + len(s)] = s
        return BASE + o + 1

    def s2(self, s):
        o = self.obj(0, 16 + 2 * len(s))
        struct.pack_into("<i", self.mem, o + 12, len(s))
        for i, c in enumerate(s):
            struct.pack_into("<H", self.mem, o + 16 + 2 * i, c)
        return BASE + o + 1

    def fn(self, name, script):
        sfi = self.obj(262, 48)
        self.q(sfi + 16, name)
        self.q(sfi + 32, script)
        f = self.obj(2066, 64)
        self.q(f + 24, BASE + sfi + 1)
        return BASE + f + 1

    def script(self, name):
        o = self.obj(167, 48)
        self.q(o + 16, self.s1(name))
        return BASE + o + 1

    def out(self, f):
        return struct.pack("<QQ", BASE, f) + bytes(self.mem[:self.top])


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    seeds = {}
    m = Img()
    seeds["string"] = m.out(m.fn(m.s1(b"innerJS"), m.script(b"/app/main.js")))
    m = Img()
    si = m.obj(261, 8 + 8 * 8)
    m.q(si + 8, (3 << 12) << 32)
    m.q(si + 24, 1 << 32)
    m.q(si + 32, m.s1(b"local"))
    m.q(si + 40, 0)
    m.q(si + 48, m.s1(b"method"))
    seeds["scopeinfo"] = m.out(m.fn(BASE + si + 1, m.script(b"/app/k.js")))
    m = Img()
    thin = m.obj(13, 24)
    struct.pack_into("<i", m.mem, thin + 12, 3)
    m.q(thin + 16, m.s1(b"JSx"))
    a = m.s2([0x6f, 0xe9, 0x4e2d])
    c = m.obj(1, 32)
    struct.pack_into("<i", m.mem, c + 12, 6)
    m.q(c + 16, a)
    m.q(c + 24, BASE + thin + 1)
    seeds["cons_thin"] = m.out(m.fn(BASE + c + 1, 0))
    m = Img()
    f = m.fn(m.s1(b"interpJS"), m.script(b"/app/i.js"))
    ba = m.obj(191, 56 + 24)
    m.q(ba + 8, 24 << 32)
    sfi = struct.unpack_from("<Q", m.mem, f - 1 - BASE + 24)[0] - 1 - BASE
    m.q(sfi + 8, BASE + ba + 1)
    cx = m.obj(150, 32)
    fp = m.top + 48
    m.top = fp + 8
    m.q(fp - 8, BASE + cx + 1)
    m.q(fp - 16, f)
    m.q(fp - 32, BASE + ba + 1)
    m.q(fp - 40, (53 + 5) << 32)
    seeds["interp_frame"] = struct.pack("<QQ", BASE, BASE + fp) + bytes(m.mem[:m.top])
    for k, v in seeds.items():
        with open(os.path.join(d, k), "wb") as f:
            f.write(v)


if __name__ == "__main__":
    main()

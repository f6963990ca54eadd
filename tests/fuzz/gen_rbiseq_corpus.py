#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Seeds for fuzz_rbiseq: Ruby 3.1 iseqs laid out as libruby 3.1.2 lays
them out (src/runtimes/ruby/rboffsets.c): an iseq (T_IMEMO/imemo_iseq),
its body, an embedded label, a heap path or a [path, realpath] array,
insns_info entries and a succinct line table (small and large iseqs);
and method entries of a class and of its singleton class, their class
ivar tables and the symbol table naming the ivars (class paths).
  gen_rbiseq_corpus.py DIR"""
import os
import struct
import sys

BASE = 0x7f0000000000
T_STRING, T_ARRAY, T_IMEMO = 0x05, 0x07, 0x1a
T_CLASS, FL_SINGLETON = 0x02, 1 << 12
SYMBOLS = 0x3800  # fuzz_rbiseq.c: the global symbol table of a class path


def class_image(singleton):
    """A method entry (imemo_ment) of class Worker, or of its singleton
    class, whose ivar __attached__ is Worker; Worker's __classpath__ ivar;
    the symbol table naming the ivars' IDs (serials 200, 201)."""
    mem = bytearray(0x6000)

    def put(off, fmt, *v):
        struct.pack_into("<" + fmt, mem, off, *v)

    def string(off, b):
        put(off, "QQ", T_STRING | (len(b) << 14), 0)
        mem[off + 16:off + 16 + len(b)] = b

    def klass(off, flags, ivars):
        # RClass: basic, super, ptr -> ext: iv_index_tbl, iv_tbl -> st_table
        ext, tbl, ents = off + 0x40, off + 0x60, off + 0xa0
        put(off, "QQQQ", flags, 0, 0, BASE + ext)
        put(ext, "QQ", 0, BASE + tbl)
        put(tbl + 32, "QQQ", 0, len(ivars), BASE + ents)
        for i, (ident, rec) in enumerate(ivars):
            put(ents + 24 * i, "QQQ", 7 + i, ident, rec)

    cp_id, at_id = (200 << 4) | 1, (201 << 4) | 1
    put(0, "QQ", T_IMEMO | (6 << 12), BASE + (0x300 if singleton else 0x100))
    string(0x80, b"Worker")
    klass(0x100, T_CLASS, [(cp_id, BASE + 0x80)])
    klass(0x300, T_CLASS | FL_SINGLETON, [(cp_id + 16 * 7, 0), (at_id, BASE + 0x100)])
    # rb_symbols_t: last_id, ids -> [chunk] -> chunk[serial * 2] the name
    put(SYMBOLS, "I", 1000)
    put(SYMBOLS + 16, "Q", BASE + 0x3900)
    put(0x3900, "QQQQQ", T_ARRAY, 0, 1, 0, BASE + 0x3940)
    put(0x3940, "Q", BASE + 0x3980)
    put(0x3980, "QQQQQ", T_ARRAY, 0, 1024, 0, BASE + 0x3a00)
    string(0x5000, b"__classpath__")
    string(0x5040, b"__attached__")
    put(0x3a00 + 8 * 400, "Q", BASE + 0x5000)
    put(0x3a00 + 8 * 402, "Q", BASE + 0x5040)
    return struct.pack("<QQiI", BASE, BASE, -1, 0) + bytes(mem)


def image(label, path, lines, iseq_size, array_path, instr):
    mem = bytearray(0x4000)

    def put(off, fmt, *v):
        struct.pack_into("<" + fmt, mem, off, *v)

    iseq, body, lab, pth, ary, ents, tab, heap = 0, 0x100, 0x300, 0x340, 0x380, 0x400, 0x1000, 0x3000
    put(iseq, "QQQ", T_IMEMO | (7 << 12), 0, BASE + body)
    put(body, "IIQ", 1, iseq_size, BASE + 0x2000)
    put(lab, "QQ", T_STRING | (len(label) << 14), 0)
    mem[lab + 16:lab + 16 + len(label)] = label
    put(pth, "QQQQ", T_STRING | (1 << 13), 0, len(path), BASE + heap)
    mem[heap:heap + len(path)] = path
    put(ary, "QQQQ", T_ARRAY | (1 << 13) | (2 << 15), 0, BASE + pth, BASE + pth)
    put(body + 64, "QQQQ", BASE + (ary if array_path else pth), BASE + lab, BASE + lab,
        (lines[0][1] << 1) | 1)
    put(body + 120, "QQIIQ", BASE + ents, 0, len(lines), 0, BASE + tab)
    for i, (_, line) in enumerate(lines):
        put(ents + 12 * i, "iiI", line, i, 1)
    # the succinct table of iseq.c: imm_part[6], then 512-position blocks
    poss = [p for p, _ in lines]
    imm = 54
    imm_size = (iseq_size + 8 if iseq_size < imm else imm) // 9
    r = 0
    for j in range(imm_size):
        v = 0
        for i in range(9):
            if r < len(poss) and poss[r] == j * 9 + i:
                r += 1
            v |= r << (7 * i)
        put(tab + 8 * j, "Q", v)
    succ = 0 if iseq_size < imm else (iseq_size - imm + 511) // 512
    for k in range(succ):
        blk = tab + 48 + 80 * k
        put(blk, "I", r)
        small = 0
        ranks = 0
        for j in range(8):
            bits = 0
            if j:
                ranks |= small << (9 * (j - 1))
            for i in range(64):
                if r < len(poss) and poss[r] == k * 512 + j * 64 + i + imm:
                    bits |= 1 << i
                    r += 1
            put(blk + 16 + 8 * j, "Q", bits)
            small += bin(bits).count("1")
        put(blk + 8, "Q", ranks)
    return struct.pack("<QQiI", BASE, BASE + iseq, instr, 0) + bytes(mem)


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    seeds = {
        "method.img": image(b"leaf_work", b"/srv/app/lib/chain.rb",
                            [(0, 8), (3, 9), (7, 10), (20, 11)], 40, False, 9),
        "block_array_path.img": image(b"block in middle", b"/srv/app/chain.rb",
                                      [(0, 20), (5, 21)], 12, True, 6),
        "large.img": image(b"outer", b"x.rb",
                           [(p, 100 + p) for p in range(0, 1200, 13)], 1300, False, 700),
        "no_pc.img": image(b"<main>", b"main.rb", [(0, 1)], 4, False, -1),
        "class_me.img": class_image(False),
        "singleton_me.img": class_image(True),
    }
    for name, b in seeds.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(b)


if __name__ == "__main__":
    main()

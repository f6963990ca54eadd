#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Seeds for fuzz_hotspot: a small synthetic HotSpot image (tables with
the fields hotspot.h reads, a CodeCache with one heap, an nmethod of
java/lang/Demo.run, the interpreter) and a PC in each."""
import os
import struct
import sys

BASE = 0x10000
STR, STRUCTS, TYPES = 0x100, 0x1000, 0x2000


def image(blob_name, lo_symbol=b"java/lang/Demo", method=b"run"):
    mem = bytearray(0x9000)

    def put(off, fmt, *v):
        struct.pack_into("<" + fmt, mem, off, *v)

    strs = {}
    pos = [STR]

    def s(text):
        if text not in strs:
            strs[text] = BASE + pos[0]
            mem[pos[0]:pos[0] + len(text)] = text
            pos[0] += len(text) + 1
        return strs[text]

    # the exported variables: tables, entry offsets, strides
    put(0, "11Q", BASE + STRUCTS, BASE + TYPES, 0, 8, 16, 24, 32, 40, 0, 8, 24)
    fields = [  # type, field, static, offset or address
        (b"CodeCache", b"_heaps", 1, BASE + 0x3000),
        (b"GrowableArrayBase", b"_len", 0, 8), (b"GrowableArray<int>", b"_data", 0, 16),
        (b"CodeHeap", b"_memory", 0, 0), (b"CodeHeap", b"_segmap", 0, 32),
        (b"CodeHeap", b"_log2_segment_size", 0, 64),
        (b"VirtualSpace", b"_low_boundary", 0, 0), (b"VirtualSpace", b"_high_boundary", 0, 8),
        (b"HeapBlock", b"_header", 0, 0), (b"HeapBlock::Header", b"_used", 0, 8),
        (b"CodeBlob", b"_name", 0, 0), (b"CodeBlob", b"_code_begin", 0, 8),
        (b"CodeBlob", b"_code_end", 0, 16), (b"CodeBlob", b"_frame_size", 0, 24),
        (b"CodeBlob", b"_frame_complete_offset", 0, 28), (b"CompiledMethod", b"_method", 0, 32),
        (b"Method", b"_constMethod", 0, 8), (b"ConstMethod", b"_constants", 0, 8),
        (b"ConstMethod", b"_name_index", 0, 16), (b"ConstantPool", b"_pool_holder", 0, 8),
        (b"ConstantPool", b"_length", 0, 16), (b"Klass", b"_name", 0, 16),
        (b"Symbol", b"_length", 0, 0), (b"Symbol", b"_body", 0, 6),
    ]
    for i, (t, f, st, v) in enumerate(fields):
        put(STRUCTS + 40 * i, "QQiiQQ", s(t), s(f), st, 0, 0 if st else v, v if st else 0)
    for i, (t, size) in enumerate([(b"HeapBlock", 16), (b"ConstantPool", 32)]):
        put(TYPES + 24 * i, "QQQ", s(t), size, 0)
    # CodeCache::_heaps -> GrowableArray -> [CodeHeap]
    put(0x3000, "Q", BASE + 0x3010)
    put(0x3018, "iiQ", 1, 0, BASE + 0x3040)
    put(0x3040, "Q", BASE + 0x3100)
    put(0x3100, "QQ", BASE + 0x8000, BASE + 0x9000)
    put(0x3120, "Q", BASE + 0x4000)
    put(0x3140, "i", 6)
    for i in range(64):  # one block of 64 segments
        mem[0x4000 + i] = min(i, 0xfe)
    put(0x8008, "B", 1)
    put(0x8010, "QQQiiQ", s(blob_name), BASE + 0x8100, BASE + 0x8800, 6, 16, BASE + 0x5000)
    put(0x5008, "Q", BASE + 0x5100)
    put(0x5108, "QH", BASE + 0x5200, 2)
    put(0x5208, "Qi", BASE + 0x5400, 4)
    put(0x5230, "Q", BASE + 0x5600)
    put(0x5410, "Q", BASE + 0x5500)
    for at, text in ((0x5500, lo_symbol), (0x5600, method)):
        put(at, "H", len(text))
        mem[at + 6:at + 6 + len(text)] = text
    return mem


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "corpus", "hotspot")
    os.makedirs(out, exist_ok=True)
    seeds = {
        "nmethod": (image(b"nmethod"), 0x8200),
        "interpreter": (image(b"Interpreter"), 0x8104),
        "hidden_class": (image(b"nmethod", b"Demo$$Lambda$1+0x0000000800c0b000", b"test"), 0x87ff),
        "header_pc": (image(b"nmethod"), 0x8020),
    }
    for name, (mem, pc) in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(struct.pack("<QQ", BASE, BASE + pc) + bytes(mem))


if __name__ == "__main__":
    main()

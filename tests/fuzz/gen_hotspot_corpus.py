#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Seeds for fuzz_hotspot: a small synthetic HotSpot image (tables with
the fields hotspot.h reads, its int constants, a CodeCache with one heap,
an nmethod of java/lang/Demo.run, the interpreter, the method's
ConstMethod with bytecodes and a line-number table, an interpreted frame
of it on a stack) and a PC in each. At 120: the interpreted frame's fp."""
import os
import struct
import sys

BASE = 0x10000
STR, STRUCTS, TYPES, INTS = 0x100, 0x1000, 0x2000, 0x2800
FP = 0x6080
# the line-number table: (bci 0, line 10), (5, 12), (9, 40), end
LNT = bytes([0xff, 0x00, 20, (5 << 3) | 2, 0xff, 8, 56, 0])


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
    put(0, "15Q", BASE + STRUCTS, BASE + TYPES, 0, 8, 16, 24, 32, 40, 0, 8, 24,
        BASE + INTS, 0, 8, 16)
    put(120, "Q", BASE + FP)
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
        # (for interpreted frames and lines)
        (b"Method", b"_access_flags", 0, 40), (b"ConstMethod", b"_constMethod_size", 0, 24),
        (b"ConstMethod", b"_flags", 0, 28), (b"ConstMethod", b"_code_size", 0, 32),
        (b"ConstantPool", b"_tags", 0, 24), (b"ConstantPool", b"_source_file_name_index", 0, 20),
        (b"Array<int>", b"_length", 0, 0), (b"Array<u1>", b"_data", 0, 4),
        # (for compiled frames' scopes)
        (b"CompiledMethod", b"_scopes_data_begin", 0, 40),
        (b"nmethod", b"_scopes_pcs_offset", 0, 48), (b"nmethod", b"_dependencies_offset", 0, 52),
        (b"nmethod", b"_metadata_offset", 0, 56),
        (b"PcDesc", b"_pc_offset", 0, 0), (b"PcDesc", b"_scope_decode_offset", 0, 4),
    ]
    for i, (t, f, st, v) in enumerate(fields):
        put(STRUCTS + 40 * i, "QQiiQQ", s(t), s(f), st, 0, 0 if st else v, v if st else 0)
    for i, (t, size) in enumerate([(b"HeapBlock", 16), (b"ConstantPool", 32),
                                   (b"ConstMethod", 48), (b"PcDesc", 16)]):
        put(TYPES + 24 * i, "QQQ", s(t), size, 0)
    for i, (n, v) in enumerate([(b"JVM_CONSTANT_Utf8", 1),
                                (b"ConstMethod::_has_linenumber_table", 1),
                                (b"frame::interpreter_frame_sender_sp_offset", -1),
                                (b"frame::interpreter_frame_last_sp_offset", -2),
                                (b"InvocationEntryBci", -1)]):
        put(INTS + 16 * i, "Qi", s(n), v)
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
    # the nmethod's metadata (its Method, an inlined one's), scopes data
    # (0: none; at 1 its own method at bci 5; at 4 the inlined one at bci
    # 9, its sender the scope at 1) and PcDescs (a sentinel; code offset
    # 0x100: both scopes; 0x200: its own)
    put(0x8010 + 40, "QiiiQ", BASE + 0x8070, 0x80, 0xb0, 0x40, 0)
    put(0x8050, "QQ", BASE + 0x5000, BASE + 0x5a00)
    mem[0x8070:0x8077] = bytes([0, 0, 1, 6, 1, 2, 10])
    put(0x8090, "iiii" * 3, -1, 0, 0, 0, 0x100, 4, 0, 0, 0x200, 1, 0, 0)
    put(0x5008, "Q", BASE + 0x5100)
    put(0x5108, "QH", BASE + 0x5200, 2)
    put(0x5208, "Qi", BASE + 0x5400, 4)
    put(0x5230, "Q", BASE + 0x5600)
    put(0x5410, "Q", BASE + 0x5500)
    # ConstMethod: 16 words, flags (a line-number table), 16 bytes of code
    # at its end (sizeof 48), the table after them
    put(0x5118, "iHxxH", 16, 1, 16)
    mem[0x5130:0x5140] = bytes(range(0x10, 0x20))
    mem[0x5140:0x5140 + len(LNT)] = LNT
    # the pool: its source file at index 3, tags (2 and 3 Utf8)
    put(0x5214, "HxxQ", 3, BASE + 0x5700)
    put(0x5238, "Q", BASE + 0x5800)
    put(0x5700, "i4B", 4, 0, 7, 1, 1)
    # an interpreted frame of the method: Method* at fp-24, bcp (bci 5)
    # at fp-64
    put(FP - 24, "Q", BASE + 0x5000)
    put(FP - 64, "Q", BASE + 0x5130 + 5)
    for at, text in ((0x5500, lo_symbol), (0x5600, method), (0x5800, b"Demo.java")):
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
    # (a line-number table at the input's start, for hotspot__line_of();
    # bci 7 in the PC's low bits)
    seeds["line_table"] = (bytearray(LNT) + bytes(64), 7)
    for name, (mem, pc) in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(struct.pack("<QQ", BASE, BASE + pc) + bytes(mem))


if __name__ == "__main__":
    main()

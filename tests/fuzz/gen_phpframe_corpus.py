#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Seeds for fuzz_phpframe: PHP 8.2 zend_functions laid out as php8.2
lays them out (src/runtimes/php/phpreader.c): a user method with its
class, file and opcodes, a closure, the script's top level (no name), an
internal function.
  gen_phpframe_corpus.py DIR"""
import os
import struct
import sys

BASE = 0x7f0000000000


def zstr(mem, off, s):
    struct.pack_into("<QQQ", mem, off, 1, 0, len(s))
    mem[off + 24:off + 24 + len(s)] = s


def image(fn_type, name, cls, file, lines, instr):
    mem = bytearray(0x2000)
    mem[0] = fn_type
    if name:
        struct.pack_into("<Q", mem, 8, BASE + 0x400)
        zstr(mem, 0x400, name)
    if cls:
        struct.pack_into("<Q", mem, 16, BASE + 0x500)
        struct.pack_into("<Q", mem, 0x500 + 8, BASE + 0x600)
        zstr(mem, 0x600, cls)
    struct.pack_into("<I", mem, 80, len(lines))
    struct.pack_into("<Q", mem, 88, BASE + 0x800)
    struct.pack_into("<Q", mem, 152, BASE + 0x700)
    zstr(mem, 0x700, file)
    struct.pack_into("<I", mem, 160, lines[0] if lines else 1)
    for i, line in enumerate(lines):
        struct.pack_into("<I", mem, 0x800 + 32 * i + 24, line)
    return struct.pack("<QQiI", BASE, BASE, instr, 0) + bytes(mem)


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    seeds = {
        "method.img": image(2, b"leafWork", b"Chain", b"/srv/app/chain.php",
                            [11, 13, 14, 15, 18, 20], 3),
        "closure.img": image(2, b"{closure}", b"Chain", b"/srv/app/chain.php", [25, 25], 1),
        "main.img": image(2, None, None, b"/srv/app/index.php", [1, 2, 5], 2),
        "internal.img": image(1, b"array_map", None, b"", [], -1),
    }
    for name, b in seeds.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(b)


if __name__ == "__main__":
    main()

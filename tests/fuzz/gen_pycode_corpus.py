#!/usr/bin/python3.11
# SPDX-License-Identifier: MIT
"""Seed corpus for tests/fuzz/fuzz_pycode.c: memory images (format in
tests/fuzz/pymem_image.h) of real code objects of this interpreter, with
the str and bytes objects they point to, copied from its own memory.
Run with Debian's /usr/bin/python3.11 (the offsets of pyoffsets.h's 3.11
table): tests/fuzz/gen_pycode_corpus.py tests/fuzz/corpus/pycode"""
import ctypes
import struct
import sys


class Cls:
    def meth(self):
        x = 1
        for i in range(3):
            x += i
        return x


def outer():
    def inner():
        y = 0
        return y
    return inner


def far_lines():
    a = 1



    # many blank lines: "no column" / long-form entries with line deltas
    b = a + 1




    return [a,
            b,
            a * b]


NON_ASCII_SRC = "def fünf():\n    a = 1\n    return a\n\ndef 函数():\n    return 2\n"
NON_ASCII_FILE = "/tmp/ünï😀/файл.py"


def dump(obj):
    n = sys.getsizeof(obj)
    return struct.pack("<QII", id(obj), n, 0) + ctypes.string_at(id(obj), n)


def code_segments(c):
    out = dump(c)
    for o in (c.co_qualname, c.co_name, c.co_filename, c.co_linetable):
        out += dump(o)
    return out


def image(codes, instr, flags=1):
    c2 = id(codes[1]) if len(codes) > 1 else 0
    hdr = struct.pack("<BBHIQQQQQ", ord("P"), sys.version_info.minor, flags, instr,
                      id(codes[0]), id(type(codes[0])), id(str), id(bytes), c2)
    assert len(hdr) == 48
    return hdr + b"".join(code_segments(c) for c in codes)


def main(outdir):
    ns = {}
    exec(compile(NON_ASCII_SRC, NON_ASCII_FILE, "exec"), ns)
    seeds = {
        "method.img": image([Cls.meth.__code__], 10),
        "nested.img": image([outer().__code__], 4),
        "non_ascii.img": image([ns["fünf"].__code__, ns["函数"].__code__], 2),
        "far_lines.img": image([far_lines.__code__], 20),
        "unchecked_trusted.img": image([outer.__code__, Cls.meth.__code__], 6, flags=2),
    }
    for name, data in seeds.items():
        with open(f"{outdir}/{name}", "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main(sys.argv[1])

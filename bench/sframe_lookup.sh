#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SFrame lookup benchmark: builds a program with more than 10k functions
# here with gcc -Wa,--gsframe (binutils emits its .sframe), then measures
# sframe_table__find() per second on one core, random PCs and PCs in
# call-stack order (bench/sframe_lookup.c). Also runs on the project's own
# sfprof binary when it was built with a .sframe-producing toolchain.
#   usage: bench/sframe_lookup.sh [NFUNCS] [SECONDS_PER_PATTERN]
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
NFUNCS=${1:-12000}
SECS=${2:-3}
out=$BUILD/bench
mkdir -p "$out"
make -s BUILD="$BUILD" "$BUILD/libsfprof.a" >/dev/null
${CC:-gcc} -std=gnu11 -O2 -g -Wall -Wextra -Iinclude -Isrc -o "$out/sframe_lookup" \
	bench/sframe_lookup.c "$BUILD/libsfprof.a" $(make -s --no-print-directory print-ldlibs) -lm

big=$out/sframe_big_$NFUNCS
if [ ! -x "$big" ]; then
	python3 - "$out/sframe_big.c" "$NFUNCS" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "w") as f:
    f.write("#include <alloca.h>\n#include <string.h>\n")
    for i in range(n):
        f.write(f"long f{i}(long x);\n")
    for i in range(n):
        a, b = (i * 7919 + 1) % n, (i * 104729 + 3) % n
        shape = i % 4
        if shape == 0:   # leaf: one row
            body = f"return x * {i | 1} + 1;"
        elif shape == 1: # values live across calls: pushes, several rows
            body = (f"long p = x * 3, q = x ^ {i}, r = x + {i};"
                    f" if (x < 2) return p; p += f{a}(x - 1); q += f{b}(x - 2);"
                    f" return p * q + r;")
        elif shape == 2: # big frame
            body = (f"volatile char buf[{256 + i % 4096}]; buf[x & 255] = (char)x;"
                    f" return buf[x & 255] + (x > 1 ? f{a}(x - 1) : 0);")
        else:            # alloca: CFA from the frame pointer
            body = (f"char *m = alloca((x & 63) + 16); memset(m, (int)x, 16);"
                    f" return m[3] + (x > 1 ? f{b}(x - 2) : 0);")
        f.write(f"__attribute__((noinline)) long f{i}(long x) {{ {body} }}\n")
    f.write("int main(int c, char **v) { (void)v; return (int)f0(c); }\n")
PY
	echo "building $NFUNCS functions with -O2 -Wa,--gsframe ..."
	gcc -O2 -fomit-frame-pointer -Wa,--gsframe -o "$big" "$out/sframe_big.c"
fi

echo "## $big"
echo "\$ $out/sframe_lookup $big $SECS"
"$out/sframe_lookup" "$big" "$SECS"

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# srcline's DWARF lookups (BENCHMARKS.md "DWARF inline frames and source
# lines"): open / cold / warm cost per lookup, on libc (its libc6-dbg debug
# file, zlib-compressed) with the DWARF cache off and warm, and on a
# workload built -O2 -g (its own uncompressed DWARF).
#   bench/srcline.sh    (BUILD=build N=200 ROUNDS=7)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
N=${N:-200}
ROUNDS=${ROUNDS:-7}
make -s BUILD="$BUILD" "$BUILD/libsfprof.a" "$BUILD/workloads/uwmix-sframe" >/dev/null
mkdir -p "$BUILD/bench"
${CC:-gcc} -std=gnu11 -O2 -g -D_GNU_SOURCE -Iinclude -Isrc -o "$BUILD/bench/srcline_bench" \
	bench/srcline_bench.c "$BUILD/libsfprof.a" $(make -s --no-print-directory print-ldlibs)
libc=/lib/x86_64-linux-gnu/libc.so.6
cache=$(mktemp -d); trap 'rm -rf "$cache"' EXIT
echo "\$ SFPROF_DWARF_CACHE= $BUILD/bench/srcline_bench $libc $N $ROUNDS   (cache off)"
SFPROF_DWARF_CACHE= "$BUILD/bench/srcline_bench" "$libc" "$N" "$ROUNDS"
SFPROF_DWARF_CACHE=$cache "$BUILD/bench/srcline_bench" "$libc" 2 1 >/dev/null # fills it
echo "\$ SFPROF_DWARF_CACHE=DIR $BUILD/bench/srcline_bench $libc $N $ROUNDS   (cache warm)"
SFPROF_DWARF_CACHE=$cache "$BUILD/bench/srcline_bench" "$libc" "$N" "$ROUNDS"
echo "\$ SFPROF_DWARF_CACHE=DIR $BUILD/bench/srcline_bench $libc $N $ROUNDS libdw   (cache warm, libdw's scope calls)"
SFPROF_DWARF_CACHE=$cache "$BUILD/bench/srcline_bench" "$libc" "$N" "$ROUNDS" libdw
for a in "" libdw; do
	echo "\$ $BUILD/bench/srcline_bench $BUILD/workloads/uwmix-sframe $N $ROUNDS $a"
	"$BUILD/bench/srcline_bench" "$BUILD/workloads/uwmix-sframe" "$N" "$ROUNDS" $a
done

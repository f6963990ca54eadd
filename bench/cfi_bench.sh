#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# [cfi] conversion benchmark: cfi_to_sframe on stock Debian binaries and the
# largest binaries the tests use. Median of 21 runs each.
#   derive  = interpret .eh_frame into rows (cfi_derive)
#   convert = derive + sframe_encode v3 (cfi_to_sframe), what the dso cache pays
#   MB/s    = (.eh_frame + .debug_frame) bytes / convert time
#   ratio   = derived .sframe bytes / (.eh_frame + .eh_frame_hdr) bytes
set -eu
BUILD=${BUILD:-build}
cd "$(dirname "$0")/.."
[ -f "$BUILD/libsfprof.a" ] || make -s BUILD="$BUILD" "$BUILD/libsfprof.a"
mkdir -p "$BUILD/bench"
${CC:-gcc} -std=gnu11 -O2 -g -Wall -Wextra -Werror -Iinclude -Isrc -o "$BUILD/bench/cfi_bench" \
	bench/cfi_bench.c "$BUILD/libsfprof.a" $(make -s --no-print-directory print-ldlibs)
files=()
for f in /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 \
	/lib64/ld-linux-x86-64.so.2 /usr/bin/python3 \
	"$BUILD"/cfi-oracle/libduktape-omit-fp-sframe.so; do
	[ -f "$f" ] && files+=("$(readlink -f "$f")")
done
echo "command: BUILD=$BUILD bench/cfi_bench.sh   ($BUILD/bench/cfi_bench -n 21 FILE...)"
"$BUILD/bench/cfi_bench" -n 21 "${files[@]}"

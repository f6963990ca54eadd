#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Symbolizer and address-space model costs (BENCHMARKS.md "## symbolize"):
# cold dso load of libc (maps, open, symbols, SFrame) and warm lookups/s.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
make -s BUILD="$BUILD" "$BUILD/libsfprof.a" >/dev/null
mkdir -p "$BUILD/bench"
${CC:-gcc} -std=gnu11 -O2 -g -D_GNU_SOURCE -Iinclude -Isrc -o "$BUILD/bench/symbolize_bench" \
	bench/symbolize_bench.c "$BUILD/libsfprof.a" $(make -s --no-print-directory print-ldlibs)
echo "\$ $BUILD/bench/symbolize_bench libc.so.6 ${SECONDS_PER:-1}"
"$BUILD/bench/symbolize_bench" libc.so.6 "${SECONDS_PER:-1}"

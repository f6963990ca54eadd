#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CPython code-object reader costs (BENCHMARKS.md "## python code objects"):
# cold decode, re-validated and trusted cache hits, on a live python3.11.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
[ -x /usr/bin/python3.11 ] || { echo "pycode: no /usr/bin/python3.11, skipped"; exit 0; }
make -s BUILD="$BUILD" "$BUILD/libsfprof.a" >/dev/null
mkdir -p "$BUILD/bench"
${CC:-gcc} -std=gnu11 -O2 -g -D_GNU_SOURCE -Iinclude -Isrc -o "$BUILD/bench/pycode_bench" \
	bench/pycode_bench.c "$BUILD/libsfprof.a" $(make -s --no-print-directory print-ldlibs)
echo "\$ $BUILD/bench/pycode_bench ${ROUNDS:-5}"
"$BUILD/bench/pycode_bench" "${ROUNDS:-5}"

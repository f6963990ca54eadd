#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The verifier's cost at start-up, per capture program (bench/verifier_cost.c):
# instructions, verified instructions, verification time, load wall time.
#   bench/verifier_cost.sh [RUNS]   (BUILD=build; ALL=1 configures -a)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
[ "$(id -u)" = 0 ] || { echo "verifier_cost: SKIP: needs root"; exit 0; }
[ -f "$BUILD/libsfprof.a" ] || make -s BUILD="$BUILD" "$BUILD/libsfprof.a"
mkdir -p "$BUILD/bench"
${CC:-gcc} -std=gnu11 -O2 -g -Wall -Wextra -Werror -Iinclude -Isrc -I"$BUILD" -o "$BUILD/bench/verifier_cost" \
	bench/verifier_cost.c $(make -s --no-print-directory print-ldlibs)
"$BUILD/bench/verifier_cost" "${1:-5}"

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# jitdump parse speed (BENCHMARKS.md "## symbolize"): a big jit-PID.dump
# written by node --perf-prof running a JS program that compiles many
# functions, read as sfprof follows it (code bytes stepped over).
#   bench/jitdump_bench.sh           (BUILD=build, FUNCS=20000, RUNS=11)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
FUNCS=${FUNCS:-20000}
RUNS=${RUNS:-11}
command -v node >/dev/null || { echo "jitdump_bench: node missing"; exit 0; }
make -s BUILD="$BUILD" "$BUILD/libsfprof.a" >/dev/null
mkdir -p "$BUILD/bench"
${CC:-gcc} -std=gnu11 -O2 -g -D_GNU_SOURCE -Iinclude -Isrc -o "$BUILD/bench/jitdump_bench" \
	bench/jitdump_bench.c "$BUILD/libsfprof.a" $(make -s --no-print-directory print-ldlibs)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# FUNCS distinct functions, each called until V8 compiles it (sparkplug,
# then maglev/turbofan for some): one LOAD (+ unwinding info) per tier
cat > "$tmp/many.js" <<JS
const fs = [];
for (let i = 0; i < $FUNCS; i++)
  fs.push(new Function("x", "let s = x; for (let j = 0; j < 50; j++) s = (s * 31 + j + " + i + ") | 0; return s;"));
let acc = 0;
for (let r = 0; r < 200; r++) for (const f of fs) acc += f(r);
console.log(acc);
JS
(cd "$tmp" && node --perf-prof --interpreted-frames-native-stack many.js >/dev/null)
dump=$(ls "$tmp"/jit-*.dump)
echo "\$ $BUILD/bench/jitdump_bench $dump $RUNS"
"$BUILD/bench/jitdump_bench" "$dump" "$RUNS"

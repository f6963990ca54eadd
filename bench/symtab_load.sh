#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What loading the symbol tables costs a `sfprof report` (BENCHMARKS.md,
# "Symbol table load"), this build against BASE (another sfprof binary),
# on the report-speed recordings (bench/report_speed.sh makes them):
#   1. callgrind instructions of symtab__load (inclusive, all binaries of
#      the capture) and of the whole report, per capture;
#   2. perf stat task-clock and page faults of the whole report, RUNS
#      runs of each binary interleaved (the machine is shared), medians;
#   3. whether the folded and pprof outputs are byte-identical to BASE's.
#   BASE=/work/main/build/sfprof CAPS=/tmp/rs/caps bench/symtab_load.sh
#   (BUILD=build RUNS=21)
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
RUNS=${RUNS:-21}
CAPS=${CAPS:-/tmp/rs/caps}
BASE=${BASE:-}
SF=$BUILD/sfprof
[ -n "$BASE" ] || { echo "symtab_load: set BASE=<older sfprof>"; exit 0; }
for t in valgrind callgrind_annotate perf; do
	command -v $t >/dev/null || { echo "symtab_load: $t missing"; exit 0; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

inclusive() { # callgrind file, function -> inclusive Ir
	callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
		awk -v f=":$2 " 'index($0, f) { gsub(",", "", $1); print $1; exit }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

printf '%-8s %-5s %14s %14s %10s %8s\n' capture bin symtab__load report \
	task-ms faults
for cap in deep shallow xz; do
	f=$CAPS/$cap.sfp
	[ -s "$f" ] || { echo "symtab_load: no $f"; continue; }
	"$BASE" report "$f" -o "$tmp/base.folded" 2>/dev/null
	"$SF" report "$f" -o "$tmp/new.folded" 2>/dev/null
	"$BASE" report "$f" -f pprof -o "$tmp/base.pb" 2>/dev/null
	"$SF" report "$f" -f pprof -o "$tmp/new.pb" 2>/dev/null
	same=identical
	cmp -s "$tmp/base.folded" "$tmp/new.folded" || same="FOLDED DIFFERS"
	cmp -s "$tmp/base.pb" "$tmp/new.pb" || same="$same, PPROF DIFFERS"
	for b in base new; do
		bin=$BASE; [ $b = new ] && bin=$SF
		valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$b" \
			"$bin" report "$f" -o /dev/null >/dev/null 2>&1
	done
	: >"$tmp/t.base"; : >"$tmp/t.new"; : >"$tmp/pf.base"; : >"$tmp/pf.new"
	for ((i = 0; i < RUNS; i++)); do
		for b in base new; do
			bin=$BASE; [ $b = new ] && bin=$SF
			perf stat -x, -e task-clock,page-faults -o "$tmp/ps" \
				"$bin" report "$f" -o /dev/null >/dev/null 2>&1
			awk -F, '/task-clock/ { print $1 }' "$tmp/ps" >>"$tmp/t.$b"
			awk -F, '/page-faults/ { print $1 }' "$tmp/ps" >>"$tmp/pf.$b"
		done
	done
	for b in base new; do
		tot=$(awk '/^summary:|^totals:/ { print $2; exit }' "$tmp/cg.$b")
		printf '%-8s %-5s %14s %14s %10.2f %8s\n' "$cap" "$b" \
			"$(inclusive "$tmp/cg.$b" symtab__load)" "$tot" \
			"$(median <"$tmp/t.$b")" "$(median <"$tmp/pf.$b")"
	done
	echo "$cap: output $same to BASE's"
done

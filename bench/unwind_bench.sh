#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Unwinding + symbolization cost per sample: `sfprof report` on a capture
# against `perf script` on perf.data recorded from the same process at the
# same rate and stack size, at the same time. Needs root (BPF, perf).
#   bench/unwind_bench.sh            (BUILD=build, SECS=6, HZ=999, RUNS=11)
#   BASE=/tmp/sfprof.old bench/unwind_bench.sh
#                                    also times an older sfprof binary on
#                                    the same captures, runs interleaved,
#                                    and checks its output is identical
#   IR=1 bench/unwind_bench.sh       also counts the instructions of one
#                                    `sfprof report` (and BASE's) under
#                                    valgrind --tool=callgrind: a figure
#                                    that other jobs on the machine do
#                                    not move
# Prints, per workload build: samples, frames/sample, sfprof report CPU
# and wall time per sample (median of RUNS; whole command: startup, cold
# caches, output), per-pass
# CPU cost inside one report process (pass 1 cold, passes 2+ warm; with
# and without profile aggregation; medians of 5 runs), perf script CPU time per sample
# (default, and --no-inline), and the overlap of the two stacks' sets.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SECS=${SECS:-6}
HZ=${HZ:-999}
STACK=32768
SF=$BUILD/sfprof
if [ "$(id -u)" != 0 ]; then echo "unwind_bench: needs root"; exit 0; fi
command -v perf >/dev/null || { echo "unwind_bench: perf missing"; exit 0; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

RUNS=${RUNS:-11}
BASE=${BASE:-}
IR=${IR:-}
if [ -n "$IR" ] && ! command -v valgrind >/dev/null; then
	echo "unwind_bench: IR=1 needs valgrind"; IR=
fi

instructions() { # binary capture -> instructions of `report -o /dev/null`
	valgrind --tool=callgrind --callgrind-out-file=/dev/null \
		"$1" report -o /dev/null "$2" 2>&1 |
		awk '/Collected :/{print $NF}'
}

median_runs() { # command... -> "cpu wall": medians over RUNS runs of CPU
	# seconds (user+sys; the machine is shared, and CPU time does not
	# count waiting for it) and wall seconds
	python3 - "$RUNS" "$@" <<'PY'
import os, resource, statistics, subprocess, sys, time
cpu, wall = [], []
for _ in range(int(sys.argv[1])):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall.append(time.perf_counter() - t0)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu.append((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime))
print(statistics.median(cpu), statistics.median(wall))
PY
}

side_by_side() { # capture base new -> "base_cpu base_wall new_cpu new_wall",
	# medians of RUNS runs of `report -o /dev/null`, the two interleaved
	python3 - "$RUNS" "$@" <<'PY'
import os, statistics, sys, time
runs, cap, bins = int(sys.argv[1]), sys.argv[2], sys.argv[3:5]
res = {b: ([], []) for b in bins}
for _ in range(runs):
    for b in bins:
        t0 = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            fd = os.open(os.devnull, os.O_WRONLY)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            os.execv(b, [b, "report", "-o", os.devnull, cap])
        _, _, ru = os.wait4(pid, 0)
        res[b][1].append(time.perf_counter() - t0)
        res[b][0].append(ru.ru_utime + ru.ru_stime)
print(" ".join("%g %g" % (statistics.median(res[b][0]), statistics.median(res[b][1])) for b in bins))
PY
}

# build:parts -- the deep mix (recursion 250 frames deep) in both builds,
# then the same program without the recursion (shallow stacks)
for cfg in sframe:chain,recurse,qsort,signal,dlopen ehframe:chain,recurse,qsort,signal,dlopen \
	   sframe:chain,qsort,signal,dlopen; do
	flavor=${cfg%%:*}
	parts=${cfg#*:}
	wl=$BUILD/workloads/uwmix-$flavor
	"$wl" $((SECS + 6)) "$parts" >"$tmp/wl.out" &
	wpid=$!
	sleep 0.5
	perf record -q -m 4096 --call-graph dwarf,$STACK -F "$HZ" -p "$wpid" -o "$tmp/perf.data" -- sleep "$SECS" 2>/dev/null &
	ppid=$!
	"$SF" record -F "$HZ" --stack-size $STACK -d "$SECS" -p "$wpid" -o "$tmp/cap.sfp" 2>/dev/null
	wait "$ppid"
	kill "$wpid" 2>/dev/null; wait "$wpid" 2>/dev/null

	st=$("$SF" report --stats -o "$tmp/sf.folded" "$tmp/cap.sfp" 2>&1)
	n_sf=$(echo "$st" | awk '/^report_events:/{print $2}')
	frames=$(echo "$st" | awk '/^stacks_frames:/{print $2}')
	n_perf=$(perf script -i "$tmp/perf.data" -F tid 2>/dev/null | wc -l)
	read -r t_sf w_sf < <(median_runs "$SF" report -o "$tmp/out.folded" "$tmp/cap.sfp")
	read -r t_perf w_perf < <(median_runs perf script -i "$tmp/perf.data")
	read -r t_perf_ni w_perf_ni < <(median_runs perf script --no-inline -i "$tmp/perf.data")
	if [ -n "$BASE" ]; then
		"$BASE" report -o "$tmp/base.folded" "$tmp/cap.sfp" 2>/dev/null
		if cmp -s "$tmp/base.folded" "$tmp/sf.folded"; then same=identical; else same=DIFFERENT; fi
		read -r b_cpu b_wall n_cpu n_wall < <(side_by_side "$tmp/cap.sfp" "$BASE" "$SF")
	fi
	ir=
	if [ -n "$IR" ]; then
		ir=$(instructions "$SF" "$tmp/cap.sfp")
		[ -n "$BASE" ] && ir="$ir $(instructions "$BASE" "$tmp/cap.sfp")"
	fi
	# in-process passes: 5 runs of each, interleaved (medians below)
	full= bare=
	for _ in 1 2 3 4 5; do
		full="$full$(SFPROF_REPORT_REPEAT=6 "$SF" report -o "$tmp/out.folded" "$tmp/cap.sfp" 2>&1)
"
		bare="$bare$(SFPROF_REPORT_REPEAT=6 SFPROF_REPORT_NO_PROFILE=1 "$SF" report -o "$tmp/out.folded" "$tmp/cap.sfp" 2>&1)
"
	done
	perf script --no-inline --max-stack 1024 -i "$tmp/perf.data" -F comm,tid,ip,sym,dso > "$tmp/perf.txt" 2>/dev/null
	# the overlap compares functions without inline frames on both sides
	"$SF" report --no-inline -o "$tmp/sf-noinline.folded" "$tmp/cap.sfp" 2>/dev/null
	ov=$(python3 - "$tmp/sf-noinline.folded" "$tmp/perf.txt" <<'PY'
import sys
sys.path.insert(0, "tests/e2e")
from libunwind import fold_perf_script, overlap, read_folded
print("%.4f" % overlap(read_folded(sys.argv[1]), fold_perf_script(open(sys.argv[2]).read())))
PY
)
	python3 - "$flavor ($parts)" "$n_sf" "$frames" "$n_perf" "$t_sf" "$t_perf" "$t_perf_ni" "$ov" "$full" "$bare" \
		"$w_sf" "$w_perf" "${BASE:+$b_cpu $b_wall $n_cpu $n_wall $same}" "$ir" <<'PY'
import statistics, sys
fl, n_sf, frames, n_perf = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
t_sf, t_perf, t_ni = (float(x) for x in sys.argv[5:8])
ov = sys.argv[8]
w_sf, w_perf = float(sys.argv[11]), float(sys.argv[12])
def passes(text):
    # runs of "report_pass_1..6": cold = median of the pass 1s, warm =
    # median over runs of each run's median of passes 2-6
    runs = []
    for l in text.splitlines():
        if l.startswith("report_pass_1_"):
            runs.append([])
        if l.startswith("report_pass_") and runs:
            runs[-1].append(float(l.split()[1]))
    return (statistics.median(r[0] for r in runs),
            statistics.median(statistics.median(r[1:]) for r in runs))
cold_f, warm_f = passes(sys.argv[9])
cold_b, warm_b = passes(sys.argv[10])
us = lambda s, n: 1e6 * s / n
print("uwmix-%s: %d sfprof samples (%.0f frames/sample), %d perf samples; overlap %s" % (
    fl, n_sf, frames / n_sf, n_perf, ov))
print("  sfprof report, whole command     %8.2f us/sample CPU  %8.2f wall" % (us(t_sf, n_sf), us(w_sf, n_sf)))
print("  perf script                      %8.2f us/sample CPU  %8.2f wall  (%.0fx sfprof report)" % (
    us(t_perf, n_perf), us(w_perf, n_perf), us(t_perf, n_perf) / us(t_sf, n_sf)))
print("  perf script --no-inline          %8.2f us/sample CPU  (%.0fx sfprof report)" % (
    us(t_ni, n_perf), us(t_ni, n_perf) / us(t_sf, n_sf)))
print("  in-process, unwind+symbolize     cold %8.2f us  warm %6.2f us/sample" % (cold_b / 1e3, warm_b / 1e3))
print("  in-process, + profile__add       cold %8.2f us  warm %6.2f us/sample" % (cold_f / 1e3, warm_f / 1e3))
if sys.argv[13]:
    b_cpu, b_wall, n_cpu, n_wall, same = sys.argv[13].split()
    b_cpu, b_wall, n_cpu, n_wall = float(b_cpu), float(b_wall), float(n_cpu), float(n_wall)
    print("  BASE report, side by side        %8.2f us/sample CPU  %8.2f wall  (%.2f / %.2f ms)" % (
        us(b_cpu, n_sf), us(b_wall, n_sf), 1e3 * b_cpu, 1e3 * b_wall))
    print("  this report, side by side        %8.2f us/sample CPU  %8.2f wall  (%.2f / %.2f ms; output %s)" % (
        us(n_cpu, n_sf), us(n_wall, n_sf), 1e3 * n_cpu, 1e3 * n_wall, same))
if sys.argv[14]:
    ir = [int(x) for x in sys.argv[14].split()]
    print("  sfprof report, instructions      %8.0f /sample  (%.1fM in all)" % (ir[0] / n_sf, ir[0] / 1e6))
    if len(ir) > 1:
        print("  BASE report, instructions        %8.0f /sample  (%.1fM in all)" % (ir[1] / n_sf, ir[1] / 1e6))
PY
done

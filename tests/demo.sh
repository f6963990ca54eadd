#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make demo`: profile the bundled demo workload (tests/workloads/demo.c:
# four worker threads, two mutexes of very different contention) on-CPU
# and by futex wait time grouped by lock, and write
#   demo-cpu.svg  demo-cpu.folded  demo-futex.svg  demo-futex.folded
# into DEMO_OUT (default: the repository root), then say where they are.
# DEMO_SECONDS (default 10) sets the profiling time.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
OUT=${DEMO_OUT:-$PWD}
SECS=${DEMO_SECONDS:-10}
sfprof=$BUILD/sfprof
wl=$BUILD/workloads/demo-sframe

if [ ! -x "$sfprof" ] || [ ! -x "$wl" ]; then
	echo "demo: $sfprof or $wl missing; build first: make" >&2
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "demo: sfprof loads BPF programs, which needs root (CAP_BPF + CAP_PERFMON): run 'sudo make demo'" >&2
	exit 1
fi
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# The workload outlives the profiles by a few seconds, so every profile
# covers SECS seconds of steady state.
"$wl" $((SECS + 4)) >/dev/null &
wpid=$!
trap 'kill $wpid 2>/dev/null; wait $wpid 2>/dev/null' EXIT
sleep 0.5
echo "demo: profiling the demo workload (pid $wpid: 4 workers, hot_lock and cold_lock) for ${SECS}s,"
echo "      on-CPU at 199 Hz and futex waits by lock, at the same time..."

pids=()
run() { # OUT-FILE sfprof-options...
	local out=$1; shift
	"$sfprof" --quiet -p "$wpid" -d "$SECS" "$@" -o "$OUT/$out" 2>"$OUT/.$out.err" &
	pids+=($!)
}
run demo-cpu.svg -e cpu -F 199
run demo-cpu.folded -e cpu -F 199
run demo-futex.svg -e futex --by-lock
run demo-futex.folded -e futex --by-lock
rc=0
for p in "${pids[@]}"; do
	wait "$p" || rc=1
done
for f in demo-cpu.svg demo-cpu.folded demo-futex.svg demo-futex.folded; do
	if [ -s "$OUT/.$f.err" ]; then
		sed "s/^/demo: $f: /" "$OUT/.$f.err" >&2
	fi
	rm -f "$OUT/.$f.err"
	if [ ! -s "$OUT/$f" ]; then
		echo "demo: $OUT/$f was not written" >&2
		rc=1
	fi
done
if [ $rc != 0 ]; then
	echo "demo: FAILED (see the messages above)" >&2
	exit 1
fi

cat <<MSG

demo: done. Open the flame graphs in a browser (hover, click to zoom, Ctrl-F to search):
  $OUT/demo-cpu.svg       where the CPU time goes (on-CPU samples)
  $OUT/demo-futex.svg     who waits on which lock (futex wait time, one root per lock)
and the same as folded stacks (flamegraph.pl / speedscope input):
  $OUT/demo-cpu.folded
  $OUT/demo-futex.folded
e.g.  xdg-open $OUT/demo-cpu.svg    or    firefox $OUT/demo-futex.svg
MSG
# The lock view in one line each: total wait per root frame.
echo
echo "futex wait by lock (ms):"
awk '{ n = split($0, a, ";"); sub(/ [0-9]+$/, "", a[1]); w[a[1]] += $NF }
     END { for (k in w) printf "  %-32s %10.1f\n", k, w[k] / 1000 }' "$OUT/demo-futex.folded" | sort -k2 -nr | head -5

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs every unit test binary, every fuzz replay over its corpus, and every
# end-to-end script; counts the PASS/FAIL/SKIP lines they print and ends
# with "N passed, N failed, N skipped". Exit status 1 if anything failed.
#
# Budget (Makefile, README): `make test` <= 15 minutes on the 2-core CI
# machine, `.ci/run` (test + check + fuzz-smoke) <= 45. The wall time is
# printed before the closing line, with the slowest e2e scripts.
#
# Environment:
#   TEST_TIER=quick  unit tests, fuzz replays and the QUICK e2e scripts below
#                    (`make test-quick`, for inner-loop work)
#   TEST_JOBS=N      e2e scripts run N at a time (default 2), except ALONE
#   E2E_FILTER=STR   only the e2e scripts whose path contains STR
#   E2E_DIR=DIR      the e2e scripts' folder (tests/e2e; another one:
#                    tests/e2e/suite_parallel.py checks this runner)
set -u
BUILD=${BUILD:-build}
export BUILD
TEST_TIER=${TEST_TIER:-full}
TEST_JOBS=${TEST_JOBS:-2}
E2E_DIR=${E2E_DIR:-tests/e2e}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
start=$SECONDS
log=$(mktemp)
outdir=$(mktemp -d)
# record keeps binaries in $XDG_CACHE_HOME/sfprof/buildid: the tests use
# caches of their own (one per test, so two running at once never share
# one), not the user's ~/.cache
cache=$(mktemp -d)
trap 'rm -f "$log"; rm -rf "$cache" "$outdir"' EXIT

# The e2e scripts of the quick tier: fast (a few seconds each) and together
# touching every stage once (capture, unwind, record/report, symbols, CLI,
# the layering rules).
QUICK="layout_include_cycles.py layout_calls.py layout_headers.py capture_badinput.sh capture_futex.py
	reliability_cmdline.sh sframe_dump.sh names_stripped.py unwind_record.py offcpu_record.py"

# The e2e scripts that must run alone (after the others, one at a time),
# because they share a global resource with whatever runs beside them:
alone() { # script name -> 0 if it must run alone
	case $1 in
	# -a attaches system-wide: every process of a neighbour test is in
	# its profile and in its process-storm counts; and it writes
	# /proc/sys/kernel/ns_last_pid to reuse a PID, which a neighbour's
	# forks would take.
	targets_scope.py) return 0;;
	# Rates and CPU time: samples per second of CPU time against -F, or a
	# spinner that must get a whole core (a neighbour takes one of the two).
	capture_rate.py|offcpu_multi.py|offcpu_wall.py) return 0;;
	# perf record beside sfprof, compared sample for sample or by totals
	# (and against a second perf run as the noise floor): a neighbour's
	# load moves both, and two perf sessions compete for the PMU and the
	# perf_event_mlock_kb budget.
	targets_tree.py|unwind_perf.py|names_cxx.py|unwind_go_truncated.py|unwind_openssl.py) return 0;;
	# Storms that must overflow a ring buffer or count every loss: they
	# need the CPU to themselves to produce the load, and they would starve
	# a neighbour's timing checks.
	capture_losses.py|capture_storm.py|offcpu_storm.py) return 0;;
	# 2000 runnable threads in the runner's session (one autogroup): a
	# neighbour's every process gets a 2000th of the CPU while they spin,
	# and its timing checks fail.
	reliability_many_threads.py) return 0;;
	# The page cache's folio sizes: a neighbour's memory use decides
	# whether 2 MiB folios can be had.
	capture_pagecache.py) return 0;;
	# Kernel stacks that must end at __schedule: while a neighbour's
	# sfprof also has a program on sched_switch (-e offcpu, wall,
	# --wakers, --kernel), the kernel calls them through
	# __traceiter_sched_switch, one frame more than the fixed skip of
	# bpf_get_stackid (SFPROF_KSTACK_SKIP_TP) drops: 0% of the waits
	# then end at __schedule (a bug of sfprof's own, two profilers on
	# one machine, not of the test).
	offcpu_futex_kernel.py) return 0;;
	# Its futex test records 2 s of a workload that started its 10 rounds
	# of 100 ms 0.3 s before and wants 5 of them: sfprof's start (BPF
	# loading, verification) slowed by a neighbour's leaves 4 in the
	# window (6 alone on a loaded machine, 4 beside another test).
	surface_pprof.py) return 0;;
	# Issue 21's agent and its benchmarks (another branch): they listen on
	# a port and measure the agent's CPU and memory.
	agent_*) return 0;;
	esac
	return 1
}

# report NAME OUTFILE RC: the PASS/FAIL/SKIP lines of one finished test,
# prefixed with its name, to stdout and the log; on failure, its context.
report() {
	local name=$1 out=$2 rc=$3
	grep -E '^(PASS|FAIL|SKIP) ' "$out" | sed "s|^\([A-Z]*\) |\1 $name/|" | tee -a "$log"
	if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$out"; then
		echo "FAIL $name: exited $rc" | tee -a "$log"
		tail -30 "$out" | sed 's/^/    /'
	elif grep -q '^FAIL ' "$out"; then
		grep -v -E '^(PASS|SKIP) ' "$out" | tail -40 | sed 's/^/    /'
	fi
}

# start_test I NAME COMMAND...: runs it in the background, its output
# (stdout and stderr) buffered in $outdir/I.out and its status in I.rc
# (written last: its presence says the test is done), its seconds in I.sec.
start_test() {
	local i=$1 name=$2; shift 2
	mkdir -p "$cache/$name"
	(
		t0=$SECONDS
		XDG_CACHE_HOME=$cache/$name "$@" >"$outdir/$i.out" 2>&1
		rc=$?
		echo $((SECONDS - t0)) >"$outdir/$i.sec"
		echo $rc >"$outdir/$i.rc"
	) &
}

# group SCRIPT: the scripts of one group share something among themselves
# only, so they never run beside each other (but beside any other):
group() {
	case $1 in
	# They glob /tmp/perf-*.map before and after their JIT runs: a map a
	# neighbour's JIT writes is taken for their own (names_jitdump fails
	# on it, the others delete it under the neighbour's feet).
	names_jit.py|names_jitdump.py|names_pyperf.py|names_pytramp.py) echo perf-maps;;
	esac
}

# run_all JOBS: every test of names[]/cmds[], JOBS at a time, none beside
# another of its group; the outputs are printed whole, in the order
# given, each as soon as it and those before it are done, so parallel
# output never interleaves.
names=() cmds=()
run_all() {
	local jobs=$1 n=${#names[@]} done_=0 running=0 i j g busy
	local -a state groups
	for ((i = 0; i < n; i++)); do
		state[i]=0 # 0 waiting, 1 running, 2 finished
		groups[i]=$(group "${names[$i]}")
	done
	while [ $done_ -lt "$n" ]; do
		for ((i = done_; i < n && running < jobs; i++)); do
			[ "${state[i]}" = 0 ] || continue
			g=${groups[i]} busy=
			if [ -n "$g" ]; then
				for ((j = done_; j < n; j++)); do
					if [ "${state[j]}" = 1 ] && [ "${groups[j]}" = "$g" ]; then busy=1; fi
				done
			fi
			[ -z "$busy" ] || continue
			# shellcheck disable=SC2086
			start_test "$i" "${names[$i]}" ${cmds[$i]}
			state[i]=1 running=$((running + 1))
		done
		wait -n
		for ((i = done_; i < n; i++)); do
			if [ "${state[i]}" = 1 ] && [ -f "$outdir/$i.rc" ]; then
				state[i]=2 running=$((running - 1))
			fi
		done
		if [ -z "$(jobs -pr)" ]; then
			# none running: one killed before it wrote its status
			# counts as failed, never as a hang here
			for ((i = done_; i < n; i++)); do
				if [ "${state[i]}" = 1 ]; then
					touch "$outdir/$i.out"; echo 0 >"$outdir/$i.sec"; echo 137 >"$outdir/$i.rc"
					state[i]=2 running=$((running - 1))
				fi
			done
		fi
		while [ $done_ -lt "$n" ] && [ "${state[done_]}" = 2 ]; do
			i=$done_
			report "${names[$i]}" "$outdir/$i.out" "$(cat "$outdir/$i.rc")"
			printf '%s %s\n' "$(cat "$outdir/$i.sec")" "${names[$i]}" >>"$outdir/times"
			rm -f "$outdir/$i.out"
			done_=$((done_ + 1))
		done
	done
	names=() cmds=()
	rm -f "$outdir"/*.rc "$outdir"/*.sec
}

if [ "$(id -u)" != 0 ]; then
	echo "WARNING: not root: end-to-end tests that load BPF programs will be SKIPPED" >&2
fi

# Unit tests and replays are short and CPU-bound: run them serially.
for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	names+=("$(basename "$t")") cmds+=("$t")
done
for r in "$BUILD"/tests/replay_*; do
	[ -x "$r" ] || continue
	n=${r##*/replay_}
	if [ -d "tests/fuzz/corpus/$n" ]; then
		names+=("replay_$n") cmds+=("$r tests/fuzz/corpus/$n")
	fi
done
run_all 1
: >"$outdir/times"

together=() solo=()
for e in "$E2E_DIR"/*.sh "$E2E_DIR"/*.py; do
	[ -f "$e" ] || continue
	b=$(basename "$e")
	case "$b" in lib*) continue;; esac
	if [ -n "${E2E_FILTER:-}" ] && [[ "$e" != *"$E2E_FILTER"* ]]; then continue; fi
	if [ "$TEST_TIER" = quick ] && [[ " ${QUICK//[$'\t\n']/ } " != *" $b "* ]]; then continue; fi
	if alone "$b"; then solo+=("$e"); else together+=("$e"); fi
done
e2e_start=$SECONDS
for e in "${together[@]}"; do names+=("$(basename "$e")") cmds+=("timeout 900 $e"); done
run_all "$TEST_JOBS"
for e in "${solo[@]}"; do names+=("$(basename "$e")") cmds+=("timeout 900 $e"); done
run_all 1
e2e_secs=$((SECONDS - e2e_start))

p=$(grep -c '^PASS ' "$log"); f=$(grep -c '^FAIL ' "$log"); s=$(grep -c '^SKIP ' "$log")
if [ "$s" -gt 0 ]; then
	echo "Skipped:"; grep '^SKIP ' "$log" | sed 's/^/  /'
fi
if [ "$f" -gt 0 ]; then
	echo "Failed:"; grep '^FAIL ' "$log" | sed 's/^/  /'
fi
if [ -s "$outdir/times" ]; then
	echo "Slowest e2e scripts: $(sort -rn "$outdir/times" | head -5 | awk '{printf "%s%s %d s", (NR > 1 ? ", " : ""), $2, $1}')"
	# every script's seconds, slowest first, for the budget's bookkeeping
	if [ -d "$BUILD" ]; then sort -rn "$outdir/times" >"$BUILD/test-times.txt" 2>/dev/null || true; fi
fi
wall=$((SECONDS - start))
echo "Wall time: ${wall} s (e2e ${e2e_secs} s, ${TEST_JOBS} at a time; budget: make test <= 900 s)"
if [ "$TEST_TIER" = full ] && [ -z "${E2E_FILTER:-}" ] && [ "$wall" -gt 900 ]; then
	echo "WARNING: over the 15-minute budget of make test (Makefile, README)" >&2
fi
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ] && [ "$p" -gt 0 ]

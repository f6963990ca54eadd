#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Bad command-line input gets one clear line on stderr and exit status 2;
# missing privileges get a message naming them and a non-zero exit.
set -u
cd "$(dirname "$0")/../.."
SFPROF=${BUILD:-build}/sfprof
[ -x "$SFPROF" ] || { echo "FAIL capture_badinput: $SFPROF not built"; exit 0; }

# An exited, reaped child: its PID names no process (reuse within the test is unlikely).
true & gone=$!; wait $gone

expect_usage() { # name, expected stderr substring, args...
	local name=$1 want=$2 err rc n
	shift 2
	err=$("$SFPROF" "$@" 2>&1 >/dev/null); rc=$?
	n=$(printf '%s\n' "$err" | grep -c .)
	if [ $rc -ne 2 ]; then
		echo "FAIL capture_badinput_$name: exit $rc, expected 2 (stderr: $err)"
	elif [ "$n" -ne 1 ]; then
		echo "FAIL capture_badinput_$name: expected one line on stderr, got $n: $err"
	elif [[ "$err" != sfprof:*"$want"* ]]; then
		echo "FAIL capture_badinput_$name: stderr '$err' lacks 'sfprof: ...$want'"
	else
		echo "PASS capture_badinput_$name"
	fi
}

expect_usage p_zero "process ID" -p 0
expect_usage p_abc "process ID" -p abc
expect_usage p_negative "process ID" -p -5
expect_usage F_zero "frequency" -F 0 -p 1
expect_usage F_abc "frequency" -F fast -p 1
expect_usage unknown_long_option "unknown option '--bogus'" --bogus -p 1
expect_usage unknown_short_option "unknown option '-z'" -z -p 1
expect_usage event_unknown "unknown event" -e cycles -p 1
expect_usage duration_zero "duration" -d 0 -p 1
expect_usage stack_size_too_big "stack-size" --stack-size 70000 -p 1
expect_usage no_target "no target"
expect_usage pid_and_command "not several" -p 1 -- true
expect_usage pid_and_all "not several" -p 1 -a
expect_usage cgroup_and_pid "--cgroup DIR selects its own processes" --cgroup /sys/fs/cgroup -p 1
expect_usage missing_value "needs a value" -p
expect_usage record_without_o "-o FILE is required" record -p 1
expect_usage no_such_pid "no such process: $gone" -p "$gone" -d 1
expect_usage cpu_event_unknown "unknown event 'bogus'" --cpu-event bogus -p 1
expect_usage pid_list_empty_item "process IDs" -p 1,,2
expect_usage pid_list_gone "no such process: $gone" -p "1,$gone" -d 1
expect_usage no_inherit_with_all "--no-inherit applies to -p and COMMAND" --no-inherit -a
expect_usage cgroup_not_a_dir "--cgroup /nonexistent-sfprof-cg" --cgroup /nonexistent-sfprof-cg -d 1
expect_usage cgroup_not_cgroup2 "not a cgroup v2 directory" --cgroup /tmp -d 1

# kernel threads and zombies have no user stack: refused up front
kthread=$(awk '/^Kthread:/ && $2 == 1 {print FILENAME}' /proc/[0-9]*/status 2>/dev/null | head -1 | cut -d/ -f3)
if [ -n "$kthread" ]; then
	expect_usage pid_kernel_thread "is a kernel thread" -p "$kthread" -d 1
else
	echo "SKIP capture_badinput_pid_kernel_thread: no process says Kthread: 1 in /proc/PID/status (kernel before 6.1)"
fi
zfile=$(mktemp)
sh -c 'sleep 0.01 & echo $! > "$1"; exec sleep 3' sh "$zfile" &
zparent=$!
sleep 0.3
expect_usage pid_zombie "has exited (a zombie" -p "$(cat "$zfile")" -d 1
kill "$zparent" 2>/dev/null; wait "$zparent" 2>/dev/null; rm -f "$zfile"

# --cpu-event: hardware cycles where the machine has a PMU (a perf
# "cpu"/"cpu_core" event source), else auto falls back to cpu-clock and
# asking for cycles is one clear error.
if [ "$(id -u)" = 0 ]; then
	pmu=0
	for d in /sys/bus/event_source/devices/cpu /sys/bus/event_source/devices/cpu_core; do
		[ -e "$d" ] && pmu=1
	done
	wl=${BUILD:-build}/workloads/spin-sframe
	auto=$("$SFPROF" --stats -F 99 -d 0.3 -o /dev/null -- "$wl" 1 2>&1 | sed -n 's/^sample_event_cycles: //p')
	clock=$("$SFPROF" --cpu-event cpu-clock --stats -F 99 -d 0.3 -o /dev/null -- "$wl" 1 2>&1 |
		sed -n 's/^sample_event_cycles: //p')
	err=$("$SFPROF" --cpu-event cycles --stats -F 99 -d 0.3 -o /dev/null -- "$wl" 1 2>&1); rc=$?
	if [ "$auto" != "$pmu" ] || [ "$clock" != 0 ]; then
		echo "FAIL capture_badinput_cpu_event: PMU $pmu, sample_event_cycles auto '$auto' cpu-clock '$clock'"
	elif [ $pmu = 1 ] && { [ $rc -ne 0 ] || [[ "$err" != *"sample_event_cycles: 1"* ]]; }; then
		echo "FAIL capture_badinput_cpu_event: --cpu-event cycles with a PMU: exit $rc: $err"
	elif [ $pmu = 0 ] && { [ $rc -eq 0 ] || [ "$(printf '%s\n' "$err" | grep -c .)" -ne 1 ] ||
		[[ "$err" != "sfprof: hardware cycles cannot be sampled on this machine"*"--cpu-event cpu-clock" ]]; }; then
		echo "FAIL capture_badinput_cpu_event: --cpu-event cycles without a PMU: exit $rc: $err"
	else
		echo "PASS capture_badinput_cpu_event (PMU: $pmu)"
	fi
fi

# --help: exit 0, lists every option
out=$("$SFPROF" --help 2>&1); rc=$?
missing=
for o in -e -F --cpu-event -d --interval --min-wait --stack-size -o -f --stats -p --kernel --no-demangle --by-lock --per-thread --quiet; do
	printf '%s\n' "$out" | grep -q -- "$o" || missing="$missing $o"
done
if [ $rc -eq 0 ] && [ -z "$missing" ]; then echo "PASS capture_badinput_help_lists_options"
else echo "FAIL capture_badinput_help_lists_options: exit $rc, missing:$missing"; fi

# Without privileges: a message naming them, non-zero exit.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	sleep 5 & victim=$!
	err=$(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
		"$SFPROF" -p $victim -d 1 2>&1 >/dev/null); rc=$?
	kill $victim 2>/dev/null; wait $victim 2>/dev/null
	if [ $rc -ne 0 ] && [[ "$err" == *CAP_BPF* ]] && [[ "$err" == *CAP_PERFMON* ]]; then
		echo "PASS capture_badinput_unprivileged_names_capabilities"
	else
		echo "FAIL capture_badinput_unprivileged_names_capabilities: exit $rc, stderr: $err"
	fi
else
	echo "SKIP capture_badinput_unprivileged_names_capabilities: needs root and setpriv to drop privileges"
fi
exit 0

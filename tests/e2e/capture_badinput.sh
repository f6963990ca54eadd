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
expect_usage pid_and_command "not both" -p 1 -- true
expect_usage missing_value "needs a value" -p
expect_usage record_without_o "-o FILE is required" record -p 1
expect_usage no_such_pid "no such process: $gone" -p "$gone" -d 1

# --help: exit 0, lists every option
out=$("$SFPROF" --help 2>&1); rc=$?
missing=
for o in -e -F -d --min-wait --stack-size -o -f --stats -p --kernel --no-demangle --by-lock --per-thread --quiet; do
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

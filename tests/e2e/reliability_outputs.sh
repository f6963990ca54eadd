#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Outputs that cannot take what a run makes are refused before profiling
# (issue 23.3, 23.10, 23.11):
# - several events (-e cpu,futex) make one file each beside -o: onto
#   /dev/null or /dev/stdout that would create /dev/null.cpu: exit 2, no
#   file made, the command never started;
# - a FIFO with no reader: exit 2 at once, the command never started (it
#   used to hang after profiling and lose the profile); with a reader, the
#   reader gets the profile.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
SFPROF=${SFPROF:-$BUILD/sfprof}
WL=$BUILD/workloads/spin-sframe
[ -x "$SFPROF" ] || { echo "FAIL reliability_outputs: $SFPROF not built"; exit 0; }
if [ "$(id -u)" != 0 ]; then
	echo "SKIP reliability_outputs: needs root (BPF)"
	exit 0
fi
T=$(mktemp -d /tmp/sfprof-outputs-XXXXXX)
trap 'rm -rf "$T"' EXIT

# what is beside /dev/null and /dev/stdout, with inode and change time
# (another run may have left some: only a change counts)
siblings() { stat -c '%n %i %z' /dev/null.* /dev/stdout.* 2>/dev/null | grep -E '\.(cpu|futex|offcpu) '; }

# refused NAME SFPROF-ARGS...: exit 2, one sfprof: line, no sibling in
# /dev, and the command (touch $T/NAME.started) never ran
refused() {
	local name=$1 rc err before made
	shift
	before=$(siblings)
	err=$(timeout 30 "$@" 2>&1 >/dev/null); rc=$?
	made=$(diff <(echo "$before") <(siblings) | sed -n 's/^> \([^ ]*\) .*/\1/p')
	if [ -n "$made" ]; then
		echo "FAIL reliability_outputs_$name: created or wrote" $made
		[ -z "$before" ] && rm -f $made
	elif [ $rc -ne 2 ]; then
		echo "FAIL reliability_outputs_$name: expected exit 2, got $rc: $err"
	elif [ -e "$T/$name.started" ]; then
		echo "FAIL reliability_outputs_$name: the command ran before the refusal"
	elif [ "$(printf '%s\n' "$err" | grep -c .)" != 1 ] || [[ "$err" != sfprof:* ]]; then
		echo "FAIL reliability_outputs_$name: expected one sfprof: line, got: $err"
	else
		echo "PASS reliability_outputs_$name"
	fi
}
refused two_events_dev_null "$SFPROF" -e cpu,futex -o /dev/null -d 0.5 -- sh -c "touch $T/two_events_dev_null.started"
"$SFPROF" record -e cpu,futex -o "$T/two.sfcap" -d 0.5 -- "$WL" 1 >/dev/null 2>&1
refused report_two_events_stdout "$SFPROF" report -o /dev/stdout "$T/two.sfcap"

mkfifo "$T/fifo"
start=$(date +%s%N)
refused fifo_no_reader "$SFPROF" -o "$T/fifo" -d 0.5 -- sh -c "touch $T/fifo_no_reader.started"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $ms -lt 5000 ] || echo "FAIL reliability_outputs_fifo_no_reader_fast: took $ms ms"
refused record_fifo_no_reader "$SFPROF" record -o "$T/fifo" -d 0.5 -- sh -c "touch $T/record_fifo_no_reader.started"

cat "$T/fifo" >"$T/fifo.out" &
reader=$!
timeout 30 "$SFPROF" -F 199 -o "$T/fifo" -d 1 -- "$WL" 2 >/dev/null 2>"$T/fifo.err"; rc=$?
wait $reader
if [ $rc -ne 0 ] || ! grep -q spin_leaf "$T/fifo.out"; then
	echo "FAIL reliability_outputs_fifo_reader: exit $rc, $(wc -l <"$T/fifo.out") lines: $(head -2 "$T/fifo.err")"
else
	echo "PASS reliability_outputs_fifo_reader"
fi

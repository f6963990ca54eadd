#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Files as root (issue 12): -o never writes onto a device or changes its
# mode, never follows a symlink to one; a FIFO is written in place; a
# regular file appears whole (temporary name + rename), and a SIGKILLed
# record leaves its data in that temporary file. The device nodes are
# made here with mknod (a copy of /dev/null's 1:3, so a failing test
# cannot hurt anything).
set -u
cd "$(dirname "$0")/../.."
SFPROF=${SFPROF:-${BUILD:-build}/sfprof}
WL=${BUILD:-build}/workloads/spin-sframe
[ -x "$SFPROF" ] || { echo "FAIL reliability_files: $SFPROF not built"; exit 0; }
if [ "$(id -u)" != 0 ]; then
	echo "SKIP reliability_files: needs root (mknod, BPF)"
	exit 0
fi
T=$(mktemp -d /tmp/sfprof-files-XXXXXX)
trap 'rm -rf "$T"' EXIT

mknod "$T/null" c 1 3 && chmod 0666 "$T/null"
ln -s "$T/null" "$T/link"

mode() { stat -c '%F %a' "$1"; }

# expect_refused NAME FILE ARGS...: exit 2, one line naming FILE, mode kept
expect_refused() {
	local name=$1 file=$2 before after err rc n
	shift 2
	before=$(mode "$file")
	err=$(timeout 60 "$SFPROF" "$@" 2>&1 >/dev/null); rc=$?
	after=$(mode "$file")
	n=$(printf '%s\n' "$err" | grep -c .)
	if [ "$after" != "$before" ]; then
		echo "FAIL reliability_files_$name: $file was '$before', now '$after'"
	elif [ $rc -ne 2 ]; then
		echo "FAIL reliability_files_$name: exit $rc, expected 2 (stderr: $err)"
	elif [ "$n" -ne 1 ] || [[ "$err" != sfprof:*"$file"*device* ]]; then
		echo "FAIL reliability_files_$name: expected one line naming $file: $err"
	else
		echo "PASS reliability_files_$name"
	fi
}

expect_refused record_onto_device "$T/null" record -o "$T/null" -F 99 -d 0.3 -- "$WL" 1
expect_refused live_onto_device "$T/null" -o "$T/null" -F 99 -d 0.3 -- "$WL" 1
expect_refused live_through_symlink_to_device "$T/link" -o "$T/link" -F 99 -d 0.3 -- "$WL" 1
if [ "$(readlink "$T/link")" != "$T/null" ]; then
	echo "FAIL reliability_files_symlink_kept: the symlink was replaced"
else
	echo "PASS reliability_files_symlink_kept"
fi

# A capture to report onto a device: refused before anything is read.
cap="$T/a.cap"
"$SFPROF" record -o "$cap" -F 199 -d 1 -- "$WL" 1 >/dev/null 2>"$T/rec.err"; rc=$?
m=$(stat -c '%a' "$cap" 2>/dev/null)
left=$(ls "$T" | grep -c '^a\.cap\.')
if [ $rc -ne 0 ] || [ "$m" != 600 ] || [ "$left" != 0 ]; then
	echo "FAIL reliability_files_record_regular: exit $rc, mode '$m', $left temporary files: $(cat "$T/rec.err")"
else
	echo "PASS reliability_files_record_regular"
fi
expect_refused report_onto_device "$T/null" report -o "$T/null" "$cap"

# A FIFO is written in place: the reader gets the folded profile.
mkfifo "$T/fifo"
cat "$T/fifo" >"$T/fifo.out" &
reader=$!
"$SFPROF" report -o "$T/fifo" "$cap" 2>"$T/fifo.err"; rc=$?
wait $reader
if [ $rc -ne 0 ] || ! grep -q 'spin_leaf' "$T/fifo.out" || [ ! -p "$T/fifo" ]; then
	echo "FAIL reliability_files_fifo_in_place: exit $rc, $(wc -l <"$T/fifo.out") lines: $(cat "$T/fifo.err")"
else
	echo "PASS reliability_files_fifo_in_place"
fi
# a live run into a FIFO too
cat "$T/fifo" >"$T/fifo2.out" &
reader=$!
"$SFPROF" -o "$T/fifo" -F 199 -d 0.5 -- "$WL" 1 >/dev/null 2>"$T/fifo2.err"; rc=$?
wait $reader
if [ $rc -ne 0 ] || ! grep -q 'spin_leaf' "$T/fifo2.out"; then
	echo "FAIL reliability_files_live_fifo: exit $rc: $(cat "$T/fifo2.err")"
else
	echo "PASS reliability_files_live_fifo"
fi

# A symlink to what stdout is (as /dev/stdout is) is written, not
# replaced. (Made here: an sfprof that renames over it must not be able
# to replace the system's /dev/stdout, as one did while this was written.)
ln -s /proc/self/fd/1 "$T/stdout"
"$SFPROF" report -o "$T/stdout" "$cap" >"$T/stdout.out" 2>"$T/stdout.err"; rc=$?
if [ $rc -ne 0 ] || ! grep -q 'spin_leaf' "$T/stdout.out" || [ ! -L "$T/stdout" ]; then
	echo "FAIL reliability_files_dev_stdout: exit $rc: $(cat "$T/stdout.err")"
else
	echo "PASS reliability_files_dev_stdout"
fi

# SIGKILL during record: the data is in FILE.XXXXXX, and report reads it.
"$SFPROF" record -o "$T/k.cap" -F 199 -- "$WL" 30 >/dev/null 2>&1 &
rec=$!
sleep 2
child=$(pgrep -P $rec)
kill -KILL $rec
wait $rec 2>/dev/null || true
# the workload ends with sfprof (PR_SET_PDEATHSIG); if not, end it here
[ -n "$child" ] && kill -KILL $child 2>/dev/null
tmp=$(ls "$T"/k.cap.?????? 2>/dev/null | head -1)
if [ -e "$T/k.cap" ] || [ -z "$tmp" ]; then
	echo "FAIL reliability_files_sigkill_temp_name: expected only k.cap.XXXXXX, have: $(ls "$T")"
else
	ev=$("$SFPROF" report --stats -o "$T/k.folded" "$tmp" 2>&1 | sed -n 's/^report_events: //p')
	if [ "${ev:-0}" -gt 50 ]; then
		echo "PASS reliability_files_sigkill_temp_name ($ev events in ${tmp##*/})"
	else
		echo "FAIL reliability_files_sigkill_temp_name: ${ev:-no} events in $tmp"
	fi
fi

# A full disk: one line saying so and naming the file, no temporary left.
mkdir "$T/full"
if mount -t tmpfs -o size=64k sfprof-full "$T/full" 2>/dev/null; then
	dd if=/dev/zero of="$T/full/filler" bs=4k 2>/dev/null
	for what in record report; do
		if [ $what = record ]; then
			out="$T/full/x.cap"
			err=$("$SFPROF" record -o "$out" -F 199 -d 0.5 -- "$WL" 1 2>&1 >/dev/null); rc=$?
		else
			out="$T/full/x.folded"
			err=$("$SFPROF" report -o "$out" "$cap" 2>&1 >/dev/null); rc=$?
		fi
		left=$(ls "$T/full" | grep -c '^x\.')
		if [ $rc -eq 0 ] || [[ "$err" != *"$out"*"no space left on device"* ]] || [ "$left" != 0 ]; then
			echo "FAIL reliability_files_enospc_$what: exit $rc, $left files left: $err"
		else
			echo "PASS reliability_files_enospc_$what"
		fi
	done
	umount "$T/full"
else
	echo "SKIP reliability_files_enospc: cannot mount a tmpfs here"
fi
exit 0

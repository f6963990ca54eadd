#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Nothing destroyed on failure, durable records (issue 23.3, 23.5):
# - a record that fails to start (no such -p, a bad --cgroup, a command
#   that cannot run, an unprivileged user) leaves the capture already under
#   -o byte for byte as it was, and no temporary file beside it;
# - a full disk (a 1 MB tmpfs) keeps the capture as far as it was written,
#   readable by report, and says so;
# - a record SIGKILLed at 5 Hz keeps >= 80% of its samples in the
#   temporary file (written at least once a second).
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
SFPROF=${SFPROF:-$BUILD/sfprof}
WL=$BUILD/workloads/spin-sframe
. tests/e2e/libhostile.sh
[ -x "$SFPROF" ] || { echo "FAIL reliability_record: $SFPROF not built"; exit 0; }
if [ "$(id -u)" != 0 ]; then
	echo "SKIP reliability_record: needs root (BPF, mount)"
	exit 0
fi
T=$(mktemp -d /tmp/sfprof-record-XXXXXX)
trap 'umount "$T/small" 2>/dev/null; rm -rf "$T"' EXIT
chmod 755 "$T"

samples() { "$SFPROF" report "$1" 2>/dev/null | awk '{ s += $NF } END { print s + 0 }'; }

good=$T/good.sfcap
"$SFPROF" record -o "$good" -F 199 -d 0.5 -- "$WL" 1 >/dev/null 2>&1
sum=$(sha256sum <"$good")
if [ ! -s "$good" ] || [ "$(samples "$good")" -lt 1 ]; then
	echo "FAIL reliability_record: the first capture has no samples"
	exit 0
fi

# kept NAME ARGS...: a failed record leaves $good as it was
kept() {
	local name=$1 rc left
	shift
	"$@" >/dev/null 2>"$T/$name.err"; rc=$?
	left=$(ls "$T" | grep -c '^good\.sfcap\.')
	if [ $rc -eq 0 ]; then
		echo "FAIL reliability_record_failed_$name: expected a failure, got exit 0"
	elif [ "$(sha256sum <"$good")" != "$sum" ]; then
		echo "FAIL reliability_record_failed_$name: the capture under -o changed ($(stat -c %s "$good") bytes now): $(head -1 "$T/$name.err")"
	elif [ "$left" != 0 ]; then
		echo "FAIL reliability_record_failed_$name: $left temporary files left beside it"
	else
		echo "PASS reliability_record_failed_$name"
	fi
}
kept no_such_pid "$SFPROF" record -p 999999 -o "$good"
kept bad_cgroup "$SFPROF" record --cgroup /sys/fs/cgroup/sfprof-no-such-group -d 1 -o "$good"
kept command_cannot_start "$SFPROF" record -o "$good" -- /nonexistent/sfprof-no-such-command
if command -v setpriv >/dev/null && hostile_user; then
	chmod 666 "$good"
	chmod 777 "$T"
	kept unprivileged "${AS_HOSTILE[@]}" "$SFPROF" record -o "$good" -- /bin/true
	chmod 755 "$T"
	chmod 600 "$good"
else
	echo "SKIP reliability_record_failed_unprivileged: no setpriv or user"
fi

# a full disk: the capture as far as it went, and a line saying so
mkdir "$T/small"
if mount -t tmpfs -o size=1M sfprof-enospc "$T/small"; then
	"$SFPROF" record -F 999 -o "$T/small/x.sfcap" -d 5 -- "$WL" 4 >/dev/null 2>"$T/enospc.err"; rc=$?
	n=$(samples "$T/small/x.sfcap")
	if [ $rc -eq 0 ]; then
		echo "FAIL reliability_record_enospc_kept: expected a non-zero exit on a full disk, got 0"
	elif [ "$n" -lt 100 ] || ! grep -q 'kept the capture' "$T/enospc.err"; then
		echo "FAIL reliability_record_enospc_kept: expected >= 100 samples kept and a line saying so, got $n: $(head -3 "$T/enospc.err")"
	else
		echo "PASS reliability_record_enospc_kept ($n samples)"
	fi
	umount "$T/small"
else
	echo "SKIP reliability_record_enospc_kept: cannot mount a tmpfs"
fi

# SIGKILL at 5 Hz: the samples of the CPU time the target had, >= 80%
"$SFPROF" record -F 5 -o "$T/k.sfcap" -- "$WL" 30 >/dev/null 2>"$T/kill.err" &
rec=$!
pid=
for _ in $(seq 100); do
	pid=$(pgrep -P $rec -x spin-sframe) && break
	sleep 0.05
done
sleep 6
ticks=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null)
kill -KILL $rec
wait $rec 2>/dev/null
kill -KILL "$pid" 2>/dev/null
tmp=$(ls "$T" | grep '^k\.sfcap\.' | head -1)
want=$(awk -v t="${ticks:-0}" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%d", t / hz * 5 * 0.8 }')
n=0
[ -n "$tmp" ] && n=$(samples "$T/$tmp")
if [ -z "$tmp" ]; then
	echo "FAIL reliability_record_sigkill_5hz: no temporary file left: $(ls "$T")"
elif [ "$want" -lt 8 ]; then
	echo "FAIL reliability_record_sigkill_5hz: the target ran too little to tell ($ticks ticks)"
elif [ "$n" -lt "$want" ]; then
	echo "FAIL reliability_record_sigkill_5hz: expected >= $want samples (80% of 5 Hz x its CPU time), got $n"
else
	echo "PASS reliability_record_sigkill_5hz ($n samples, >= $want wanted)"
fi

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A capture another user owns (issue 23.1, any read of a mapped file):
# root reports it while its owner cuts it short and puts it back, over and
# over. report must never die of a signal (a mapped capture cut under it
# faulted with SIGBUS); it reads the file instead of mapping it.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
SFPROF=${SFPROF:-$BUILD/sfprof}
WL=$BUILD/workloads/uwmix-sframe
. tests/e2e/libhostile.sh
[ -x "$SFPROF" ] || { echo "FAIL reliability_capture_cut: $SFPROF not built"; exit 0; }
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	echo "SKIP reliability_capture_cut: needs root (BPF) and setpriv"
	exit 0
fi
hostile_user || { echo "SKIP reliability_capture_cut: cannot create a user (useradd)"; exit 0; }
T=$(mktemp -d /tmp/sfprof-capcut-XXXXXX)
cutter=
trap '[ -n "$cutter" ] && kill $cutter 2>/dev/null; rm -rf "$T"' EXIT
chmod 755 "$T"
mkdir "$T/u"
"$SFPROF" record -o "$T/u/c.sfcap" -F 999 -d 2 -- "$WL" 3 chain,recurse >/dev/null 2>&1
cp "$T/u/c.sfcap" "$T/u/whole"
chown -R "$HOSTILE_USER" "$T/u"
size=$(stat -c %s "$T/u/whole")
# the owner: cut to a page, put it back, again
"${AS_HOSTILE[@]}" sh -c "while :; do truncate -s 4096 '$T/u/c.sfcap'; cat '$T/u/whole' >'$T/u/c.sfcap'; done" &
cutter=$!
worst=0 runs=0
end=$((SECONDS + 8))
while [ $SECONDS -lt $end ] && [ $runs -lt 100 ]; do
	"$SFPROF" report -o /dev/null "$T/u/c.sfcap" 2>/dev/null; rc=$?
	[ $rc -gt $worst ] && worst=$rc
	[ $rc -ge 128 ] && break
	runs=$((runs + 1))
done
kill $cutter 2>/dev/null
wait $cutter 2>/dev/null
cutter=
if [ "$size" -lt 65536 ]; then
	echo "FAIL reliability_capture_cut: the capture is too small to tell ($size bytes)"
elif [ $worst -ge 128 ]; then
	echo "FAIL reliability_capture_cut: report died of signal $((worst - 128)) in $runs runs"
else
	echo "PASS reliability_capture_cut ($runs reports of a $size-byte capture cut under them, worst exit $worst)"
fi

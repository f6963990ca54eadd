#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The build-id cache (issue 12): record keeps the binaries it saw, so
# report names the frames of a binary deleted after the run, or before
# it (-p of a process whose binary is gone); entries are 0600 in 0700
# directories, and a symlink planted in the cache is never followed.
set -u
cd "$(dirname "$0")/../.."
SFPROF=${SFPROF:-${BUILD:-build}/sfprof}
WL=${BUILD:-build}/workloads/spin-sframe
[ -x "$SFPROF" ] || { echo "FAIL reliability_buildid: $SFPROF not built"; exit 0; }
if [ "$(id -u)" != 0 ]; then
	echo "SKIP reliability_buildid: needs root (BPF)"
	exit 0
fi
T=$(mktemp -d /tmp/sfprof-buildid-XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir "$T/bin"
C="$T/cache"

named() { # folded file: the workload's own function is named
	grep -q 'spin_leaf' "$1"
}

# 1. deleted after record
cp "$WL" "$T/bin/spin-copy"
"$SFPROF" record --buildid-dir "$C" -o "$T/a.cap" -F 199 -d 1 -- "$T/bin/spin-copy" 1 \
	>/dev/null 2>"$T/rec.err"; rc=$?
bid=$(readelf -n "$T/bin/spin-copy" | sed -n 's/.*Build ID: //p')
entry="$C/${bid:0:2}/${bid:2}/elf"
rm "$T/bin/spin-copy"
"$SFPROF" report --no-buildid-cache -o "$T/none.folded" "$T/a.cap" 2>/dev/null
"$SFPROF" report --buildid-dir "$C" --stats -o "$T/a.folded" "$T/a.cap" 2>"$T/rep.err"
if [ $rc -ne 0 ] || [ ! -f "$entry" ]; then
	echo "FAIL reliability_buildid_record_keeps_binary: exit $rc, no $entry: $(cat "$T/rec.err")"
elif [ "$(stat -c %a "$entry")" != 600 ] || [ "$(stat -c %a "$(dirname "$entry")")" != 700 ] ||
	[ "$(stat -c %a "$C/${bid:0:2}")" != 700 ]; then
	echo "FAIL reliability_buildid_record_keeps_binary: modes $(stat -c %a "$entry" "$(dirname "$entry")" "$C/${bid:0:2}")"
else
	echo "PASS reliability_buildid_record_keeps_binary"
fi
if named "$T/none.folded"; then
	echo "FAIL reliability_buildid_deleted_after_run: named without the cache?"
elif ! named "$T/a.folded" || ! grep -q '^open_buildid_cache: [1-9]' "$T/rep.err"; then
	echo "FAIL reliability_buildid_deleted_after_run: not named from the cache: $(grep -v ': [0-9]*$' "$T/rep.err" | head -3)"
else
	echo "PASS reliability_buildid_deleted_after_run"
fi

# 2. deleted before record: -p of a process whose binary is gone
cp "$WL" "$T/bin/spin-gone"
"$T/bin/spin-gone" 4 >/dev/null &
wl=$!
sleep 0.3
rm "$T/bin/spin-gone"
"$SFPROF" record --buildid-dir "$C" -o "$T/b.cap" -F 199 -d 1 -p $wl >/dev/null 2>"$T/rec2.err"; rc=$?
kill $wl 2>/dev/null; wait $wl 2>/dev/null
"$SFPROF" report --buildid-dir "$C" -o "$T/b.folded" "$T/b.cap" 2>"$T/rep2.err"
if [ $rc -ne 0 ] || ! named "$T/b.folded"; then
	echo "FAIL reliability_buildid_deleted_before_run: exit $rc: $(cat "$T/rec2.err" "$T/rep2.err" | head -3)"
else
	echo "PASS reliability_buildid_deleted_before_run"
fi

# 3. a library unlinked while the run goes on (as after an upgrade, or a
# dlclose()d temporary copy), the process gone before record ends
UW=${BUILD:-build}/workloads/uwmix-sframe
mkdir "$T/lib"
cp "$UW" "$T/lib/uwmix"
cp "${BUILD:-build}/workloads/libuwlib.so" "$T/lib/"
"$SFPROF" record --buildid-dir "$C" -o "$T/d.cap" -F 299 -- "$T/lib/uwmix" 3 dlopen \
	>/dev/null 2>"$T/rec4.err" &
rec=$!
# the library is dlopen()ed 1 s into the workload, which starts once
# sfprof has attached: unlinked once it is mapped (10 s at most)
for _ in $(seq 200); do
	uw=$(pgrep -f "^$T/lib/uwmix" | head -1)
	[ -n "$uw" ] && grep -q libuwlib.so "/proc/$uw/maps" 2>/dev/null && break
	sleep 0.05
done
sleep 0.2
rm "$T/lib/libuwlib.so"
wait $rec; rc=$?
"$SFPROF" report --buildid-dir "$C" -o "$T/d.folded" "$T/d.cap" 2>"$T/rep4.err"
if [ $rc -ne 0 ] || ! grep -q 'lib_uw_leaf' "$T/d.folded"; then
	echo "FAIL reliability_buildid_library_unlinked_during_run: exit $rc: $(cat "$T/rec4.err" "$T/rep4.err" | head -3)"
else
	echo "PASS reliability_buildid_library_unlinked_during_run"
fi

# 4. a symlink planted where an entry's directory goes is not followed
cp "$WL" "$T/bin/spin-copy"
C2="$T/cache2"
mkdir -p "$C2" "$T/elsewhere"
ln -s "$T/elsewhere" "$C2/${bid:0:2}"
"$SFPROF" record --buildid-dir "$C2" -o "$T/c.cap" -F 99 -d 0.5 -- "$T/bin/spin-copy" 0.5 \
	>/dev/null 2>"$T/rec3.err"; rc=$?
if [ $rc -ne 0 ] || [ -n "$(ls -A "$T/elsewhere")" ]; then
	echo "FAIL reliability_buildid_no_symlink_followed: exit $rc, elsewhere has: $(ls -A "$T/elsewhere")"
elif ! grep -q "not kept" "$T/rec3.err"; then
	echo "FAIL reliability_buildid_no_symlink_followed: no message: $(cat "$T/rec3.err")"
else
	echo "PASS reliability_buildid_no_symlink_followed"
fi
exit 0

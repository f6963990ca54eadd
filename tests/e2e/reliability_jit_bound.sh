#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# JIT names are bounded (issue 23.13): a hostile target's perf map of 10M
# entries (about 219 MB) once cost sfprof 420 MB of RSS per process, with
# no bound. With the bounds of jitmap.h (64 MiB a process, 256 MiB in
# all) sfprof -p stays under 200 MB, the entries past the bound are
# counted in --stats (stacks_jit_dropped), and the map's first entry still
# names the target's JIT code. (The total bound: test_jitmap_bounds.)
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
SFPROF=${SFPROF:-$BUILD/sfprof}
. tests/e2e/libhostile.sh
NAME=reliability_jit_bound_10m_entry_map
[ -x "$SFPROF" ] || { echo "FAIL $NAME: $SFPROF not built"; exit 0; }
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || [ "$(uname -m)" != x86_64 ]; then
	echo "SKIP $NAME: needs root (BPF), setpriv and x86-64 (the JIT's code)"
	exit 0
fi
[ -x /usr/bin/time ] || { echo "SKIP $NAME: no /usr/bin/time to measure RSS"; exit 0; }
hostile_user || { echo "SKIP $NAME: cannot create a user (useradd)"; exit 0; }
T=$(mktemp -d /tmp/sfprof-jitbound-XXXXXX)
map=
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -f $map; rm -rf "$T"' EXIT
chmod 755 "$T"
if ! gcc -O1 -Wall -Wextra -o "$T/jit" tests/e2e/reliability_jit.c 2>"$T/cc.err"; then
	echo "FAIL $NAME: the JIT does not build: $(head -3 "$T/cc.err")"
	exit 0
fi
"${AS_HOSTILE[@]}" "$T/jit" 30 >"$T/jit.out" &
pid=$!
map=/tmp/perf-$pid.map
# the target's own map: the real entry first, then 10M others
"${AS_HOSTILE[@]}" sh -c "awk 'BEGIN { print \"100000000000 7 bounded_map_first\";
	for (i = 0; i < 10000000; i++) printf \"%x a e%d\\n\", 536870912 + i * 16, i }' >$map"
size=$(stat -c %s "$map")
/usr/bin/time -f "%M" -o "$T/rss" timeout 60 "$SFPROF" -p $pid -d 2 --stats \
	-o "$T/out.folded" 2>"$T/err"
rss_mb=$(( $(tail -1 "$T/rss") / 1024 ))
# an ASan build (make check) carries shadow memory and a quarantine of
# freed blocks: twice the bound there (unbounded, the map cost 511 MB
# without ASan)
limit=200
ldd "$SFPROF" 2>/dev/null | grep -q libasan && limit=400
dropped=$(sed -n 's/^stacks_jit_dropped: //p' "$T/err" | head -1)
entries=$(sed -n 's/^stacks_jit_entries: //p' "$T/err" | head -1)
named=$(grep -s bounded_map_first "$T/out.folded" | awk '{ s += $NF } END { print s + 0 }')
if [ "${named:-0}" -lt 20 ]; then
	echo "FAIL $NAME: expected >= 20 samples named from the map's first entry, got $named: $(grep -v ': ' "$T/err" | head -2)"
elif [ "$rss_mb" -ge "$limit" ]; then
	echo "FAIL $NAME: expected sfprof's peak RSS < $limit MB with a $((size / 1000000)) MB map, got $rss_mb MB"
elif [ "${dropped:-0}" -le 0 ]; then
	echo "FAIL $NAME: expected the entries past the bound counted (stacks_jit_dropped > 0), got '${dropped:-none}'"
else
	echo "PASS $NAME (map $((size / 1000000)) MB, peak RSS $rss_mb MB, $entries entries kept, $dropped dropped, $named samples named)"
fi

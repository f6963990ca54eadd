#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Perf maps opened as the target would (issue 23.2): a JIT target
# (tests/e2e/reliability_jit.c, code at a fixed address) and sfprof -p as
# root.
# - another user's map: the hostile user writes /tmp/perf-<victim>.map for
#   a root victim; its names must not appear (perf requires the map to be
#   the process's user's or root's). The victim's own map still names it.
# - the bind-mounted secret: a hostile target in its own user and mount
#   namespace bind-mounts a root-only 0600 file over its /tmp/perf-PID.map;
#   sfprof, reading it through /proc/PID/root with the target's
#   credentials, must not name a sample from it. (An unprivileged
#   target's own map is still read and used.)
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
SFPROF=${SFPROF:-$BUILD/sfprof}
. tests/e2e/libhostile.sh
[ -x "$SFPROF" ] || { echo "FAIL reliability_perfmap: $SFPROF not built"; exit 0; }
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || [ "$(uname -m)" != x86_64 ]; then
	echo "SKIP reliability_perfmap: needs root (BPF), setpriv and x86-64 (the JIT's code)"
	exit 0
fi
hostile_user || { echo "SKIP reliability_perfmap: cannot create a user (useradd)"; exit 0; }
T=$(mktemp -d /tmp/sfprof-perfmap-XXXXXX)
maps=
trap 'rm -f $maps; rm -rf "$T"' EXIT
chmod 755 "$T"
if ! gcc -O1 -Wall -Wextra -o "$T/jit" tests/e2e/reliability_jit.c 2>"$T/cc.err"; then
	echo "FAIL reliability_perfmap: the JIT does not build: $(head -3 "$T/cc.err")"
	exit 0
fi
AT=100000000000

# profile NAME PID: sfprof -p PID for 1 s into $T/NAME.folded
profile() {
	timeout 30 "$SFPROF" -p "$2" -d 1 -o "$T/$1.folded" 2>"$T/$1.err"
}
named() { grep -s "$2" "$T/$1.folded" | awk '{ s += $NF } END { print s + 0 }'; }
total() { awk '{ s += $NF } END { print s + 0 }' "$T/$1.folded" 2>/dev/null; }

# another user's map for a root victim
"$T/jit" 5 >"$T/victim.out" &
victim=$!
map=/tmp/perf-$victim.map
maps="$maps $map"
"${AS_HOSTILE[@]}" sh -c "echo '$AT 7 forged_by_another_user' >$map"
profile forged $victim
n=$(named forged forged_by_another_user)
if [ "$(stat -c %U "$map")" != "$HOSTILE_USER" ]; then
	echo "FAIL reliability_perfmap_other_users_map: the map is not the other user's: $(stat -c %U "$map")"
elif [ "$(total forged)" -lt 20 ]; then
	echo "FAIL reliability_perfmap_other_users_map: expected >= 20 samples, got $(total forged): $(head -2 "$T/forged.err")"
elif [ "$n" != 0 ]; then
	echo "FAIL reliability_perfmap_other_users_map: expected no sample named from another user's map, got $n of $(total forged)"
else
	echo "PASS reliability_perfmap_other_users_map ($(total forged) samples, none named from it)"
fi
rm -f "$map"
echo "$AT 7 own_map_name" >"$map"
profile own $victim
n=$(named own own_map_name)
if [ "$n" -lt 20 ]; then
	echo "FAIL reliability_perfmap_own_map_used: expected >= 20 samples named from the victim's own map, got $n of $(total own)"
else
	echo "PASS reliability_perfmap_own_map_used ($n of $(total own))"
fi
kill $victim 2>/dev/null
wait $victim 2>/dev/null

# an unprivileged target's own map: read with its credentials, and used
"${AS_HOSTILE[@]}" "$T/jit" 4 >"$T/hown.out" &
pid=$!
maps="$maps /tmp/perf-$pid.map"
"${AS_HOSTILE[@]}" sh -c "echo '$AT 7 hostile_own_name' >/tmp/perf-$pid.map"
profile hown $pid
n=$(named hown hostile_own_name)
if [ "$n" -lt 20 ]; then
	echo "FAIL reliability_perfmap_unprivileged_own_map_used: expected >= 20 samples named, got $n of $(total hown): $(head -2 "$T/hown.err")"
else
	echo "PASS reliability_perfmap_unprivileged_own_map_used ($n of $(total hown))"
fi
kill $pid 2>/dev/null
wait $pid 2>/dev/null

# the bind-mounted secret
if ! "${AS_HOSTILE[@]}" unshare -Urm true 2>/dev/null; then
	echo "SKIP reliability_perfmap_bind_mounted_secret: no unprivileged user namespaces here"
	exit 0
fi
echo "$AT 7 root_only_secret" >"$T/secret"
chmod 600 "$T/secret"
mkdir "$T/h" && chown "$HOSTILE_USER" "$T/h"
# (the mount point is the target's own file, in the shared /tmp)
"${AS_HOSTILE[@]}" unshare -Urm sh -c \
	"touch /tmp/perf-\$\$.map && mount --bind '$T/secret' /tmp/perf-\$\$.map && echo \$\$ >'$T/h/pid' && exec '$T/jit' 4" \
	>"$T/h/out" 2>&1 &
for _ in $(seq 100); do [ -s "$T/h/out" ] && break; sleep 0.05; done
pid=$(cat "$T/h/pid" 2>/dev/null)
maps="$maps /tmp/perf-$pid.map"
if [ -z "$pid" ] || ! grep -q "^$AT " "$T/h/out"; then
	echo "FAIL reliability_perfmap_bind_mounted_secret: the target did not start: $(head -2 "$T/h/out")"
	exit 0
fi
profile secret "$pid"
wait
n=$(named secret root_only_secret)
if [ "$(total secret)" -lt 20 ]; then
	echo "FAIL reliability_perfmap_bind_mounted_secret: expected >= 20 samples, got $(total secret): $(head -2 "$T/secret.err")"
elif [ "$n" != 0 ]; then
	echo "FAIL reliability_perfmap_bind_mounted_secret: expected no sample named from the root-only file, got $n of $(total secret)"
else
	echo "PASS reliability_perfmap_bind_mounted_secret ($(total secret) samples, none named from it)"
fi

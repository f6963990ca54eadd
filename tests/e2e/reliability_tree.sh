#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole command tree ends with sfprof (issue 23.4): SIGKILL of
# `sfprof -- sh -c 'a & b & wait'` ends a and b too, not only sh
# (PR_SET_PDEATHSIG reaches the direct child alone); and so does the end
# of a -d run that the command outlives.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
SFPROF=${SFPROF:-$BUILD/sfprof}
[ -x "$SFPROF" ] || { echo "FAIL reliability_tree: $SFPROF not built"; exit 0; }
if [ "$(id -u)" != 0 ]; then
	echo "SKIP reliability_tree: needs root (BPF)"
	exit 0
fi
T=$(mktemp -d /tmp/sfprof-tree-XXXXXX)
kids=
trap '[ -n "$kids" ] && kill -KILL $kids 2>/dev/null; rm -rf "$T"' EXIT

alive() { local n=0 p; for p in $kids; do kill -0 "$p" 2>/dev/null && n=$((n + 1)); done; echo $n; }

# tree NAME SIGNAL|"" SFPROF-ARGS...: the grandchildren left after sfprof ends
tree() {
	local name=$1 how=$2 rec sh n
	shift 2
	"$SFPROF" -F 99 -o "$T/$name.folded" "$@" -- sh -c 'sleep 300 & sleep 301 & wait' \
		</dev/null >/dev/null 2>"$T/$name.err" &
	rec=$!
	kids=
	for _ in $(seq 100); do
		sh=$(pgrep -P $rec -x sh)
		[ -n "$sh" ] && kids=$(pgrep -P "$sh" -x sleep | tr '\n' ' ')
		[ "$(echo $kids | wc -w)" = 2 ] && break
		sleep 0.05
	done
	if [ "$(echo $kids | wc -w)" != 2 ]; then
		echo "FAIL reliability_tree_$name: the command's children never started"
		kill -KILL $rec 2>/dev/null
		return
	fi
	[ -n "$how" ] && kill "-$how" $rec
	wait $rec 2>/dev/null
	for _ in $(seq 40); do n=$(alive); [ "$n" = 0 ] && break; sleep 0.05; done
	if [ "$n" != 0 ]; then
		echo "FAIL reliability_tree_$name: expected no grandchild left, got $n of 2"
	else
		echo "PASS reliability_tree_$name"
	fi
	kill -KILL $kids 2>/dev/null
	kids=
}
tree sigkill KILL
tree duration "" -d 1

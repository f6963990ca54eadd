#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A record that cannot start touches no file (issue 23.6, the ordering):
# the target (-p), the --cgroup, the command and the privileges are
# checked before -o is opened or even probed, so a failed start leaves the
# output's directory as it was. (Round 1 wrote to a temporary name and
# removed it: the old capture survived, but the directory still saw a
# file made and unlinked.) strace shows every open of the -o path.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
SFPROF=${SFPROF:-$BUILD/sfprof}
. tests/e2e/libhostile.sh
[ -x "$SFPROF" ] || { echo "FAIL reliability_start_order: $SFPROF not built"; exit 0; }
command -v strace >/dev/null || { echo "SKIP reliability_start_order: no strace"; exit 0; }
T=$(mktemp -d /tmp/sfprof-order-XXXXXX)
trap 'rm -rf "$T"' EXIT
chmod 777 "$T"
echo old >"$T/good.sfcap"
chmod 666 "$T/good.sfcap"

# check NAME WANT_RC [RUNNER...] -- ARGS: no open under $T, rc WANT_RC
check() {
	local name=$1 want=$2
	shift 2
	local pre=()
	while [ "$1" != -- ]; do pre+=("$1"); shift; done
	shift
	# (LeakSanitizer cannot run under ptrace: in make check's ASan build
	# it would end the run with exit 1 of its own)
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
	"${pre[@]}" strace -f -qq -e trace=openat,open,creat -o "$T/strace.$name" \
		"$SFPROF" record -o "$T/good.sfcap" "$@" >/dev/null 2>"$T/err.$name"
	local rc=$?
	local opens
	opens=$(grep -c "$T" "$T/strace.$name")
	if [ "$rc" != "$want" ]; then
		echo "FAIL reliability_start_order_$name: expected exit $want, got $rc: $(head -2 "$T/err.$name")"
	elif [ "$opens" != 0 ]; then
		echo "FAIL reliability_start_order_$name: expected no open in the output's directory, got $opens: $(grep "$T" "$T/strace.$name" | head -2)"
	elif [ "$(cat "$T/good.sfcap")" != old ] || [ "$(ls -A "$T" | grep -vc '^\(good.sfcap\|strace\..*\|err\..*\)$')" != 0 ]; then
		echo "FAIL reliability_start_order_$name: the directory changed: $(ls -A "$T")"
	else
		echo "PASS reliability_start_order_$name ($(head -1 "$T/err.$name"))"
	fi
}

if [ "$(id -u)" != 0 ]; then
	echo "SKIP reliability_start_order: needs root (the privileged checks come last)"
	exit 0
fi
check no_such_pid 2 -- -p 999999
check bad_cgroup 2 -- -a --cgroup /sys/fs/cgroup/sfprof-no-such-cgroup
check missing_command 2 -- -- "$T/no-such-command"
check command_not_on_path 2 -- -- sfprof-no-such-command-xyz
if hostile_user; then
	check not_root 1 "${AS_HOSTILE[@]}" -- -- true
else
	echo "SKIP reliability_start_order_not_root: cannot create a user (useradd)"
fi

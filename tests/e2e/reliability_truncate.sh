#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SIGBUS-proof reads (issue 23.1): a target running as an unprivileged user
# truncates its own dlopen()ed -g library after its loaded segments as soon
# as sfprof opens the file. sfprof, root, under -p and -a, must neither die
# nor lose the profile: the run exits 0 with the target's stacks in it
# (named from sfprof's private copy when the cut came after it was read).
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
SFPROF=${SFPROF:-$BUILD/sfprof}
. tests/e2e/libhostile.sh
[ -x "$SFPROF" ] || { echo "FAIL reliability_truncate: $SFPROF not built"; exit 0; }
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	echo "SKIP reliability_truncate: needs root (BPF) and setpriv for the hostile target"
	exit 0
fi
hostile_user || { echo "SKIP reliability_truncate: cannot create a user (useradd)"; exit 0; }
T=$(mktemp -d /tmp/sfprof-trunc-XXXXXX)
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"

# ~900 functions with DWARF well past the loaded segments
{
	echo '#define F(n) __attribute__((noinline)) double f##n(double x) { for (int i = 0; i < 200; i++) x = x * 1.0000001 + (double)i / (n + 1); return x; }'
	echo '#define G(n) F(n##0) F(n##1) F(n##2) F(n##3) F(n##4) F(n##5) F(n##6) F(n##7) F(n##8) F(n##9)'
	echo '#define H(n) G(n##0) G(n##1) G(n##2) G(n##3) G(n##4) G(n##5) G(n##6) G(n##7) G(n##8) G(n##9)'
	echo 'H(1) H(2) H(3) H(4) H(5) H(6) H(7) H(8) H(9)'
	echo '#define C(n) x = f##n(x);'
	echo '#define CG(n) C(n##0) C(n##1) C(n##2) C(n##3) C(n##4) C(n##5) C(n##6) C(n##7) C(n##8) C(n##9)'
	echo '#define CH(n) CG(n##0) CG(n##1) CG(n##2) CG(n##3) CG(n##4) CG(n##5) CG(n##6) CG(n##7) CG(n##8) CG(n##9)'
	echo 'static inline __attribute__((always_inline)) double hostile_inl(double x) { CH(1) CH(2) CH(3) CH(4) CH(5) CH(6) CH(7) CH(8) CH(9) return x; }'
	echo 'double work(double x) { return hostile_inl(x); }'
} >"$T/lib.c"
if ! gcc -g -O1 -fPIC -shared -o "$T/libhostile.so" "$T/lib.c" 2>"$T/cc.err" ||
   ! gcc -O1 -Wall -Wextra -o "$T/hostile" tests/e2e/reliability_truncate.c -ldl 2>>"$T/cc.err"; then
	echo "FAIL reliability_truncate: helpers do not build: $(head -3 "$T/cc.err")"
	exit 0
fi

# run MODE: a fresh private copy of the library per run
run() {
	local mode=$1 d="$T/$1" rc pid n
	mkdir "$d" && cp "$T/libhostile.so" "$d/" && chown -R "$HOSTILE_USER" "$d"
	if [ "$mode" = p ]; then
		"${AS_HOSTILE[@]}" "$T/hostile" "$d/libhostile.so" 4 >"$d/target.out" 2>&1 &
		pid=$!
		for _ in $(seq 50); do grep -q ready "$d/target.out" && break; sleep 0.05; done
		timeout 60 "$SFPROF" -p "$pid" -d 2 --stats -o "$d/out.folded" 2>"$d/err"; rc=$?
	else
		timeout 60 "$SFPROF" -a -d 3 --stats -o "$d/out.folded" 2>"$d/err" &
		pid=$!
		sleep 1
		"${AS_HOSTILE[@]}" "$T/hostile" "$d/libhostile.so" 1.5 >"$d/target.out" 2>&1
		wait $pid; rc=$?
	fi
	wait
	n=$(grep -s -c '^hostile;' "$d/out.folded")
	named=$(grep -s '^hostile;' "$d/out.folded" | grep -c ';work;hostile_inl;f[0-9]')
	if ! grep -q cut "$d/target.out"; then
		echo "FAIL reliability_truncate_$mode: the target never saw its library opened: $(head -3 "$d/target.out")"
	elif [ $rc -ne 0 ]; then
		echo "FAIL reliability_truncate_$mode: expected exit 0, got $rc (signal $((rc - 128)) if > 128): $(tail -2 "$d/err")"
	elif [ "$n" -lt 1 ]; then
		echo "FAIL reliability_truncate_$mode: expected the target's stacks in the profile, got none"
	else
		echo "PASS reliability_truncate_$mode ($n stacks, $named named from the library; $(grep dso_dropped_changed "$d/err"))"
	fi
}
run p
run a

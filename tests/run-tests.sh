#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs every unit test binary, every fuzz replay over its corpus, and every
# end-to-end script; counts the PASS/FAIL/SKIP lines they print and ends
# with "N passed, N failed, N skipped". Exit status 1 if anything failed.
set -u
BUILD=${BUILD:-build}
export BUILD
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
log=$(mktemp)
# record keeps binaries in $XDG_CACHE_HOME/sfprof/buildid: the tests use
# one of their own, not the user's ~/.cache
cache=$(mktemp -d)
export XDG_CACHE_HOME=$cache
trap 'rm -f "$log"; rm -rf "$cache"' EXIT

run() { # name, command...
	local name=$1; shift
	local out rc
	out=$("$@" 2>&1); rc=$?
	printf '%s\n' "$out" | grep -E '^(PASS|FAIL|SKIP) ' | sed "s|^\([A-Z]*\) |\1 $name/|" | tee -a "$log"
	if [ $rc -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^FAIL '; then
		echo "FAIL $name: exited $rc" | tee -a "$log"
		printf '%s\n' "$out" | tail -30 | sed 's/^/    /'
	elif printf '%s\n' "$out" | grep -q '^FAIL '; then
		printf '%s\n' "$out" | grep -v -E '^(PASS|SKIP) ' | tail -40 | sed 's/^/    /'
	fi
}

if [ "$(id -u)" != 0 ]; then
	echo "WARNING: not root: end-to-end tests that load BPF programs will be SKIPPED" >&2
fi

for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	run "$(basename "$t")" "$t"
done
for r in "$BUILD"/tests/replay_*; do
	[ -x "$r" ] || continue
	n=${r##*/replay_}
	if [ -d "tests/fuzz/corpus/$n" ]; then
		run "replay_$n" "$r" "tests/fuzz/corpus/$n"
	fi
done
for e in tests/e2e/*.sh tests/e2e/*.py; do
	[ -f "$e" ] || continue
	case "$e" in */lib*) continue;; esac
	if [ -n "${E2E_FILTER:-}" ] && [[ "$e" != *"$E2E_FILTER"* ]]; then continue; fi
	run "$(basename "$e")" timeout 900 "$e"
done

p=$(grep -c '^PASS ' "$log"); f=$(grep -c '^FAIL ' "$log"); s=$(grep -c '^SKIP ' "$log")
if [ "$s" -gt 0 ]; then
	echo "Skipped:"; grep '^SKIP ' "$log" | sed 's/^/  /'
fi
if [ "$f" -gt 0 ]; then
	echo "Failed:"; grep '^FAIL ' "$log" | sed 's/^/  /'
fi
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ] && [ "$p" -gt 0 ]

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Heap of the symbol tables of the binaries this machine's processes map
# (or the ones named): bench/symtab_mem.c. BASE=DIR (another build
# directory, e.g. an older commit's worktree build) measures it too.
#   usage: bench/symtab_mem.sh [BINARY...]
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
make -s BUILD="$BUILD" "$BUILD/libsfprof.a" >/dev/null
mkdir -p "$BUILD/bench"
build() { # build dir, output
	${CC:-gcc} -std=gnu11 -O2 -g -Wall -Wextra -Iinclude -Isrc -o "$2" \
		bench/symtab_mem.c "$1/libsfprof.a" $(make -s --no-print-directory print-ldlibs)
}
build "$BUILD" "$BUILD/bench/symtab_mem"
if [ $# -eq 0 ]; then
	# shellcheck disable=SC2046
	set -- $(cat /proc/[0-9]*/maps 2>/dev/null | awk '$6 ~ /^\// {print $6}' | sort -u |
		while read -r f; do [ -f "$f" ] && head -c4 "$f" | grep -q ELF && echo "$f"; done)
fi
echo "this ($BUILD):"
"$BUILD/bench/symtab_mem" "$@" | tail -1
if [ -n "${BASE:-}" ]; then
	build "$BASE" "$BUILD/bench/symtab_mem_base"
	echo "base ($BASE):"
	"$BUILD/bench/symtab_mem_base" "$@" | tail -1
fi

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The [cfi] oracle. For binaries assembled with -Wa,--gsframe (the project's
# workloads, and Debian's duktape.c amalgamation, ~100k lines of real C,
# built here twice: -fomit-frame-pointer and -fno-omit-frame-pointer), the
# SFrame table derived from .eh_frame must equal the binary's own .sframe
# function by function, row by row, for every function gas emitted; below
# 100% fails. Stock Debian binaries without .sframe: the conversion must
# succeed and cover every FDE; fallback rows are reported by reason.
set -u
BUILD=${BUILD:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=$BUILD/cfi-oracle
mkdir -p "$out"
CC=${CC:-gcc}

if [ ! -f "$BUILD/libsfprof.a" ]; then
	echo "SKIP cfi_oracle: $BUILD/libsfprof.a not built"
	exit 0
fi
# `make check` builds the library with ASan+UBSan: link the helper the same way.
san=
if nm "$BUILD/libsfprof.a" 2>/dev/null | grep -q __asan_; then
	san="-fsanitize=address,undefined -fno-sanitize-recover=all"
fi
if ! $CC -std=gnu11 -O2 -g -Wall -Wextra -Werror $san -Iinclude -Isrc -o "$out/cfi_oracle" \
	tests/e2e/cfi_oracle.c "$BUILD/libsfprof.a" $(make -s --no-print-directory print-ldlibs) 2>"$out/build.log"; then
	echo "FAIL cfi_oracle: helper does not build: $(head -5 "$out/build.log")"
	exit 1
fi

gas=()
for f in "$BUILD"/workloads/*-sframe "$BUILD"/workloads/lib*.so; do
	case "$f" in *-ehframe.so) continue;; esac
	[ -f "$f" ] && gas+=("$f")
done

# A large real C program from Debian's sources (package duktape-dev).
duk=/usr/share/duktape/duktape.c
if [ -f "$duk" ]; then
	for fp in omit no-omit; do
		so=$out/libduktape-$fp-fp-sframe.so
		if [ ! -f "$so" ] || [ "$duk" -nt "$so" ]; then
			$CC -O2 -g -f$fp-frame-pointer -Wa,--gsframe -shared -fPIC \
				-I"$(dirname "$duk")" -o "$so" "$duk" -lm 2>"$out/duk.log" ||
				{ echo "FAIL cfi_oracle_duktape: does not build: $(tail -3 "$out/duk.log")"; exit 1; }
		fi
		gas+=("$so")
	done
else
	echo "SKIP cfi_oracle_duktape: $duk missing (Debian package duktape-dev; make deps)"
fi

rc=0
if [ ${#gas[@]} -eq 0 ]; then
	echo "SKIP cfi_oracle: no binaries with .sframe (make workloads)"
else
	res=$("$out/cfi_oracle" compare "${gas[@]}"); rc=$?
	printf '%s\n' "$res"
	# Overall rate across every binary.
	printf '%s\n' "$res" | awk '/gas functions match row by row/ {m+=$2; n+=$4}
		END { if (n) printf "    overall: %d of %d gas functions match (%.2f%%)\n", m, n, 100*m/n }'
fi

# `sfprof sframe-dump --from-eh-frame` against `objdump --sframe` of the
# binary's own section: every function block objdump prints (start, size,
# rows' STARTPC/CFA/FP columns) must be in the dump of the derived table.
blocks() { # objdump-format dump on stdin -> one line per function
	awk '/func idx/ { if (b) print b; sub(/.*pc = /, ""); sub(/, attr.*/, ""); b = $0; next }
	     /^    [0-9a-f]+  / { b = b "|" $1 " " $2 " " $3 }
	     END { if (b) print b }' | sort
}
if [ -x "$BUILD/sfprof" ] && command -v objdump >/dev/null && [ ${#gas[@]} -gt 0 ]; then
	for f in "${gas[@]}"; do
		n=$(basename "$f")
		objdump --sframe "$f" | blocks >"$out/$n.gas"
		if ! "$BUILD/sfprof" sframe-dump --from-eh-frame "$f" | blocks >"$out/$n.derived"; then
			echo "FAIL cfi_dump_$n: sframe-dump --from-eh-frame failed"; rc=1; continue
		fi
		missing=$(comm -23 "$out/$n.gas" "$out/$n.derived" | wc -l)
		total=$(wc -l <"$out/$n.gas")
		if [ "$total" -gt 0 ] && [ "$missing" -eq 0 ]; then
			echo "PASS cfi_dump_$n (sframe-dump --from-eh-frame shows all $total of objdump's functions)"
		else
			echo "FAIL cfi_dump_$n: $missing of $total objdump --sframe functions differ in sframe-dump --from-eh-frame"
			comm -23 "$out/$n.gas" "$out/$n.derived" | head -3 | sed 's/^/    /'
			rc=1
		fi
	done
else
	echo "SKIP cfi_dump: needs $BUILD/sfprof, objdump and a binary with .sframe"
fi

stock=()
# (libcrypto: OpenSSL's assembly defines CFAs by DWARF expressions)
for f in /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 \
	/lib64/ld-linux-x86-64.so.2 /usr/bin/python3 /usr/lib/x86_64-linux-gnu/libcrypto.so.3; do
	f=$(readlink -f "$f")
	[ -f "$f" ] && stock+=("$f")
done
"$out/cfi_oracle" coverage "${stock[@]}" || rc=1
exit $rc

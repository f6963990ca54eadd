#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `sfprof sframe-dump` must print exactly what binutils `objdump --sframe`
# prints, for binaries built here with -Wa,--gsframe: the project's
# workloads (build/workloads/*-sframe, lib*.so) and a few programs built
# by this script (PIE and not, -O0 with frame pointers, -O2 without, a
# shared library, one with many functions). The raw form
# (--raw FILE --base ADDR, on the section extracted with objcopy) must
# print the same from "Contents of the SFrame section" on.
set -u
BUILD=${BUILD:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
SFPROF=$BUILD/sfprof

if [ ! -x "$SFPROF" ]; then
	echo "SKIP sframe_dump: $SFPROF not built"
	exit 0
fi
if ! objdump --help 2>/dev/null | grep -q -- '--sframe'; then
	echo "SKIP sframe_dump: objdump has no --sframe (binutils < 2.40)"
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Programs built here, so the test does not depend on other parts' files.
cat >"$tmp/prog.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int depth(int n) { return n ? depth(n - 1) + 1 : 0; }
__attribute__((noinline)) static long mix(long a, long b)
{
	char buf[256];
	memset(buf, (int)a, sizeof(buf));
	return a * 31 + b + buf[b & 255];
}
__attribute__((noinline)) long big_frame(int n)
{
	volatile char v[70000];
	v[n] = (char)n;
	return v[n] + mix(n, n * 2);
}
int main(int argc, char **argv)
{
	long s = 0;
	for (int i = 0; i < argc * 1000; i++)
		s += mix(i, depth(i % 7));
	printf("%ld %ld\n", s, big_frame(argc));
	return 0;
}
EOF
cat >"$tmp/lib.c" <<'EOF'
#include <pthread.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long counter;
long lib_add(long x) { pthread_mutex_lock(&m); counter += x; pthread_mutex_unlock(&m); return counter; }
long lib_twice(long x) { return lib_add(x) + lib_add(x); }
EOF
python3 - "$tmp/many.c" <<'EOF'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(600):
        f.write(f"__attribute__((noinline)) long f{i}(long x) {{ long a[{i % 9 + 1}]; for (int j = 0; j < {i % 9 + 1}; j++) a[j] = x + j; return a[x % {i % 9 + 1}] * {i} + (x > 3 ? f{max(i - 1, 0)}(x - 1) : 1); }}\n")
    f.write("int main(int c, char **v) { (void)v; return (int)f599(c); }\n")
EOF

built=()
build() { # name, cc args...
	local name=$1; shift
	if gcc "$@" -o "$tmp/$name" 2>"$tmp/$name.err"; then
		built+=("$tmp/$name")
	else
		echo "FAIL sframe_dump_build_$name: $(head -3 "$tmp/$name.err")"
	fi
}
build prog-O2-pie -O2 -fomit-frame-pointer -Wa,--gsframe "$tmp/prog.c"
build prog-O0-fp-nopie -O0 -fno-omit-frame-pointer -no-pie -Wa,--gsframe "$tmp/prog.c"
build libtest.so -O2 -shared -fPIC -Wa,--gsframe "$tmp/lib.c" -lpthread
build many -O1 -Wa,--gsframe "$tmp/many.c"

files=("${built[@]}")
for f in "$BUILD"/workloads/*-sframe "$BUILD"/workloads/lib*.so; do
	[ -f "$f" ] || continue
	case "$f" in *-ehframe.so) continue ;; esac
	files+=("$f")
done

for f in "${files[@]}"; do
	name=$(basename "$f")
	if ! objdump --sframe "$f" >"$tmp/want" 2>"$tmp/want.err" ||
	   ! grep -q 'Contents of the SFrame section' "$tmp/want"; then
		echo "SKIP sframe_dump_$name: objdump shows no .sframe section"
		continue
	fi
	if ! "$SFPROF" sframe-dump "$f" >"$tmp/got" 2>"$tmp/got.err"; then
		echo "FAIL sframe_dump_$name: sfprof sframe-dump failed: $(head -3 "$tmp/got.err")"
		continue
	fi
	if diff -u "$tmp/want" "$tmp/got" >"$tmp/diff"; then
		echo "PASS sframe_dump_$name ($(grep -c 'func idx' "$tmp/want") functions)"
	else
		echo "FAIL sframe_dump_$name: differs from objdump --sframe:"
		head -20 "$tmp/diff" | sed 's/^/    /'
	fi

	# The raw form of the same section.
	addr=$(readelf -SW "$f" | awk '$2 == ".sframe" { print $4; exit }
		$3 == ".sframe" { print $5; exit }')
	if [ -z "$addr" ] ||
	   ! objcopy -O binary --only-section=.sframe "$f" "$tmp/raw.bin" 2>/dev/null; then
		echo "FAIL sframe_dump_raw_$name: cannot extract .sframe"
		continue
	fi
	if ! "$SFPROF" sframe-dump --raw "$tmp/raw.bin" --base "0x$addr" >"$tmp/got.raw" 2>"$tmp/got.err"; then
		echo "FAIL sframe_dump_raw_$name: $(head -3 "$tmp/got.err")"
		continue
	fi
	if diff <(sed -n '/^Contents of the SFrame section/,$p' "$tmp/want") \
		<(sed -n '/^Contents of the SFrame section/,$p' "$tmp/got.raw") >/dev/null; then
		echo "PASS sframe_dump_raw_$name"
	else
		echo "FAIL sframe_dump_raw_$name: --raw --base 0x$addr differs from objdump"
	fi
done

# Bad usage and bad input fail with a message, never a crash or exit 0.
"$SFPROF" sframe-dump >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ] && echo "PASS sframe_dump_usage_error" ||
	echo "FAIL sframe_dump_usage_error: exit $rc, expected 2"
head -c 100 /dev/urandom >"$tmp/junk"
"$SFPROF" sframe-dump "$tmp/junk" >/dev/null 2>&1
rc=$?
[ $rc -eq 1 ] && echo "PASS sframe_dump_not_elf" ||
	echo "FAIL sframe_dump_not_elf: exit $rc, expected 1"
printf '\xe2\xde\x09' >"$tmp/badver"
"$SFPROF" sframe-dump --raw "$tmp/badver" --base 0 >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && grep -q 'sframe' "$tmp/err" && echo "PASS sframe_dump_raw_malformed" ||
	echo "FAIL sframe_dump_raw_malformed: exit $rc, stderr: $(cat "$tmp/err")"
exit 0

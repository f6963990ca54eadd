#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A bounded and trusted build-id cache (issue 23.4, 23.5, 23.6):
# - planted: another user's cache (root's run with that user's
#   XDG_CACHE_HOME, as sudo -E keeps HOME) holds a binary with a forged
#   build-id; report must not name a frame from it, and record must not
#   write into that user's tree (here a symlink to a root directory);
# - checksum: a cached copy with one byte changed is not used;
# - sparse: a process maps a 4 GiB sparse ELF file as code; record -d 3
#   must end within 2x of -d, and the cache grow by at most 64 MB (only
#   what the binary holds is copied, holes stay holes).
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
SFPROF=${SFPROF:-$BUILD/sfprof}
. tests/e2e/libhostile.sh
[ -x "$SFPROF" ] || { echo "FAIL reliability_buildid_trust: $SFPROF not built"; exit 0; }
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	echo "SKIP reliability_buildid_trust: needs root (BPF) and setpriv"
	exit 0
fi
hostile_user || { echo "SKIP reliability_buildid_trust: cannot create a user (useradd)"; exit 0; }
T=$(mktemp -d /tmp/sfprof-bidtrust-XXXXXX)
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
mkdir "$T/bin" "$T/home" "$T/rootdir"
chown "$HOSTILE_USER" "$T/home"

# two programs with one build-id: the real one and the planted one
BID=5f0c1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b
for f in real planted; do
	cat >"$T/$f.c" <<EOC
#include <stdlib.h>
#include <time.h>
__attribute__((noinline)) double ${f}_leaf(double x) { for (int i = 0; i < 100000; i++) x = x * 1.000001 + 1; return x; }
int main(int argc, char **argv) { double x = 0; time_t t = time(0) + atoi(argv[1]); while (time(0) < t) x = ${f}_leaf(x); return x == 42; }
EOC
	gcc -O1 -fno-omit-frame-pointer -Wl,--build-id=0x$BID -o "$T/bin/$f" "$T/$f.c" || exit 0
done
H=$T/home/.cache
"${AS_HOSTILE[@]}" sh -c "mkdir -p '$H/sfprof/buildid/${BID:0:2}/${BID:2}' && cp '$T/bin/planted' '$H/sfprof/buildid/${BID:0:2}/${BID:2}/elf'"
XDG_CACHE_HOME=$H "$SFPROF" record -o "$T/p.cap" -F 199 -d 1 -- "$T/bin/real" 2 >/dev/null 2>"$T/p.err"
rm "$T/bin/real"
XDG_CACHE_HOME=$H "$SFPROF" report -o "$T/p.folded" "$T/p.cap" 2>>"$T/p.err"
n=$(grep -c planted_leaf "$T/p.folded")
if [ ! -s "$T/p.cap" ]; then
	echo "FAIL reliability_buildid_trust_planted: no capture: $(head -2 "$T/p.err")"
elif [ "$n" != 0 ]; then
	echo "FAIL reliability_buildid_trust_planted: expected no frame named from the planted binary, got $n stacks"
else
	echo "PASS reliability_buildid_trust_planted"
fi

# the same user's cache as a symlink to a directory of root's
rm -rf "$H"
"${AS_HOSTILE[@]}" sh -c "mkdir -p '$H/sfprof' && ln -s '$T/rootdir' '$H/sfprof/buildid'"
XDG_CACHE_HOME=$H "$SFPROF" record -o "$T/s.cap" -F 199 -d 1 -- "$T/bin/planted" 2 >/dev/null 2>"$T/s.err"
if [ -n "$(ls -A "$T/rootdir")" ]; then
	echo "FAIL reliability_buildid_trust_no_write_through_users_symlink: root wrote $(ls -A "$T/rootdir" | head -3 | tr '\n' ' ')into the directory it points at"
else
	echo "PASS reliability_buildid_trust_no_write_through_users_symlink"
fi

# a copy changed in the cache (one byte flipped) is not used
cp "$T/bin/planted" "$T/bin/p2"
"$SFPROF" record --buildid-dir "$T/c2" -o "$T/c.cap" -F 199 -d 1 -- "$T/bin/p2" 2 >/dev/null 2>"$T/c.err"
rm "$T/bin/p2"
"$SFPROF" report --buildid-dir "$T/c2" -o "$T/c1.folded" "$T/c.cap" 2>>"$T/c.err"
elf="$T/c2/${BID:0:2}/${BID:2}/elf"
off=$(( $(stat -c %s "$elf") / 2 ))
b=$(od -An -tu1 -j $off -N1 "$elf" | tr -d ' ')
printf "\\$(printf %o $(( (b + 1) % 256 )))" | dd of="$elf" bs=1 seek=$off conv=notrunc status=none
"$SFPROF" report --buildid-dir "$T/c2" -o "$T/c2.folded" "$T/c.cap" 2>>"$T/c.err"
if ! grep -q planted_leaf "$T/c1.folded"; then
	echo "FAIL reliability_buildid_trust_checksum: the intact copy was not used: $(head -3 "$T/c.err")"
elif grep -q planted_leaf "$T/c2.folded"; then
	echo "FAIL reliability_buildid_trust_checksum: a copy with a byte changed still named frames"
else
	echo "PASS reliability_buildid_trust_checksum"
fi

# a 4 GiB sparse ELF mapped as code
mkdir "$T/big" && chown "$HOSTILE_USER" "$T/big"
"${AS_HOSTILE[@]}" sh -c "cp '$T/bin/planted' '$T/big/big' && truncate -s 4G '$T/big/big'"
"${AS_HOSTILE[@]}" /usr/bin/python3 -c '
import mmap, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
m = mmap.mmap(fd, 0, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_EXEC)
print("mapped", flush=True)
t = time.time() + 8
while time.time() < t:
    pass
' "$T/big/big" >"$T/big.out" 2>&1 &
py=$!
for _ in $(seq 100); do grep -q mapped "$T/big.out" && break; sleep 0.05; done
start=$(date +%s%N)
timeout 60 "$SFPROF" record --buildid-dir "$T/cache" -o "$T/big.cap" -F 99 -d 3 -p $py >/dev/null 2>"$T/big.err"; rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
kill $py 2>/dev/null
wait $py 2>/dev/null
kb=$(du -sk "$T/cache" 2>/dev/null | cut -f1)
if ! grep -q mapped "$T/big.out"; then
	echo "FAIL reliability_buildid_trust_sparse: the target did not map the file: $(head -2 "$T/big.out")"
elif [ $rc -ne 0 ]; then
	echo "FAIL reliability_buildid_trust_sparse: record exit $rc: $(head -2 "$T/big.err")"
elif [ $ms -gt 6000 ]; then
	echo "FAIL reliability_buildid_trust_sparse: record -d 3 took $ms ms, expected <= 6000"
elif [ "${kb:-0}" -gt 65536 ]; then
	echo "FAIL reliability_buildid_trust_sparse: the cache grew by ${kb} KiB, expected <= 64 MiB"
else
	echo "PASS reliability_buildid_trust_sparse ($ms ms, cache ${kb} KiB)"
fi

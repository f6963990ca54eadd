#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What the page cache's folio sizes cost a report: the capture is mapped
# and populated, the DWARF image mapped, and both unmapped at the end, one
# entry per folio. The same capture bytes in three page-cache states:
#   4k   written in 4 KiB pieces (the writer before 64 KiB blocks), or read
#        back from disk without MADV_HUGEPAGE
#   64k  written in aligned 64 KiB blocks (the writer now)
#   2M   dropped from the page cache (this copy only) and read back by
#        BIN, which asks for 2 MiB folios (MADV_HUGEPAGE)
# and the DWARF image of libc in two (4k: read back by BASE; 2M: read back
# by BIN). Prints per state: folio sizes, the mmap+madvise+munmap time of
# the capture and of the image (perf trace, medians), and task-clock and
# page faults of the whole report (perf stat, single runs interleaved,
# medians and 25th percentiles).
#   CAP=/tmp/rs/caps/shallow.sfp BASE=/work/main/build/sfprof bench/report_pagecache.sh
#   (BUILD=build RUNS=40 TRACE=11)
# Needs root (perf, /proc/kpageflags) and a warm DWARF cache for CAP.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
BIN=$(realpath "$BUILD/sfprof")
BASE=${BASE:-$BIN}
CAP=${CAP:?CAP=capture file}
RUNS=${RUNS:-40}
TRACE=${TRACE:-11}
if [ "$(id -u)" != 0 ]; then echo "report_pagecache: needs root"; exit 0; fi
T=$(mktemp -d /tmp/sfprof-pagecache-XXXXXX)
trap 'rm -rf "$T"' EXIT
CACHE=${SFPROF_DWARF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sfprof/dwarf}

folios() { # FILE: "pages:count" of its page-cache folios
	python3 - "$1" <<'EOF'
import mmap, struct, sys
f = open(sys.argv[1], 'rb')
m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
for i in range(0, len(m), 4096):
    m[i]
base = next(int(l.split('-')[0], 16) for l in open('/proc/self/maps') if sys.argv[1] in l)
pm, kf = open('/proc/self/pagemap', 'rb'), open('/proc/kpageflags', 'rb')
runs, run = {}, 0
for i in range((len(m) + 4095) // 4096):
    pm.seek((base // 4096 + i) * 8)
    kf.seek((struct.unpack('Q', pm.read(8))[0] & ((1 << 55) - 1)) * 8)
    fl = struct.unpack('Q', kf.read(8))[0]
    if fl >> 16 & 1:
        run += 1
        continue
    if run:
        runs[run] = runs.get(run, 0) + 1
    run = 1
runs[run] = runs.get(run, 0) + 1
print(' '.join('%d:%d' % kv for kv in sorted(runs.items())))
EOF
}
drop() { sync "$1"; dd if="$1" iflag=nocache count=0 status=none; }

# the capture in three states
dd if="$CAP" of="$T/4k.sfp" bs=4k status=none
dd if="$CAP" of="$T/64k.sfp" bs=64k status=none
cp "$CAP" "$T/2M.sfp" && drop "$T/2M.sfp" && "$BIN" report "$T/2M.sfp" -o /dev/null
# the DWARF images CAP uses, in two
for s in 4k 2M; do
	mkdir -p "$T/dwarf-$s" && cp -a "$CACHE/." "$T/dwarf-$s/"
	for f in "$T/dwarf-$s"/*/*/dwarf-*; do drop "$f"; done
done
SFPROF_DWARF_CACHE=$T/dwarf-4k "$BASE" report "$T/4k.sfp" -o /dev/null
SFPROF_DWARF_CACHE=$T/dwarf-2M "$BIN" report "$T/2M.sfp" -o /dev/null
IMG=$(SFPROF_DWARF_CACHE=$T/dwarf-2M strace -e trace=openat "$BIN" report "$T/2M.sfp" \
	-o /dev/null 2>&1 | sed -n 's/.*"\(dwarf-[0-9]*-v[0-9]*\)".*/\1/p' | head -1)

states="4k:4k 64k:4k 2M:2M"
for st in $states; do
	c=${st%:*} i=${st#*:}
	img=$(ls "$T/dwarf-$i"/*/*/"$IMG" 2>/dev/null | head -1)
	echo "state $c capture ($(folios "$T/$c.sfp")), $i image (${img:+$(folios "$img")})"
done
for b in "$BASE" "$BIN"; do
	[ "$b" = "$BIN" ] || [ "$BASE" != "$BIN" ] || continue
	for st in $states; do
		c=${st%:*} i=${st#*:}
		csz=$(stat -c %s "$T/$c.sfp")
		img=$(ls "$T/dwarf-$i"/*/*/"$IMG" 2>/dev/null | head -1)
		isz=$([ -n "$img" ] && stat -c %s "$img" || echo 0)
		for n in $(seq "$TRACE"); do
			SFPROF_DWARF_CACHE=$T/dwarf-$i perf trace -e mmap,munmap,madvise -- \
				"$b" report "$T/$c.sfp" -o /dev/null 2>&1 >/dev/null |
				awk -v c="$csz" -v im="$isz" '
				/len(_in)?: / { match($0, /\( *[0-9.]+ ms\)/)
					d = substr($0, RSTART + 1, RLENGTH - 5) + 0
					if ($0 ~ "len(_in)?: " c "[,)]") cap += d
					else if ($0 ~ "len(_in)?: " im "[,)]") img += d }
				END { printf "%.3f %.3f\n", cap, img }'
		done | sort -n | awk -v l="$(basename "$b") $c/$i" \
			'{ a[NR] = $1; b[NR] = $2 } END { m = int((NR + 1) / 2)
			  printf "%-24s mmap+madvise+munmap: capture %.3f ms, image %.3f ms\n", l, a[m], b[m] }'
	done
done
for r in $(seq "$RUNS"); do
	for b in "$BASE" "$BIN"; do
		[ "$b" = "$BIN" ] || [ "$BASE" != "$BIN" ] || continue
		for st in $states; do
			c=${st%:*} i=${st#*:}
			SFPROF_DWARF_CACHE=$T/dwarf-$i perf stat -x, -e task-clock,page-faults \
				"$b" report "$T/$c.sfp" -o /dev/null 2>&1 >/dev/null |
				awk -F, -v k="$(basename "$b") $c/$i" '{ print k, $3, $1 }'
		done
	done
done | awk '{ k = $1 " " $2 " " $3; v[k] = v[k] " " $4 } END { for (k in v) print k, v[k] }' |
	sort | while read -r b s ev vals; do
	echo "$b $s $ev $(echo "$vals" | tr ' ' '\n' | sed '/^$/d' | sort -g |
		awk '{ a[NR] = $1 } END { printf "median %s p25 %s (%d runs)", a[int((NR + 1) / 2)], a[int((NR + 3) / 4)], NR }')"
done

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Output writers: time and peak memory to write each format (folded, SVG,
# pprof) for a synthetic profile of 100k distinct stacks (bench/outputs_gen.c:
# a random call graph, stacks 6-47 frames deep, Zipf-like weights), median of
# RUNS runs; plus the files' sizes and, when chromium is installed, how long
# the browser takes to load the SVG and render it to a PNG.
#   bench/outputs.sh [STACKS]      (default 100000; RUNS=5)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
N=${1:-100000}
RUNS=${RUNS:-5}
out=$BUILD/bench
mkdir -p "$out"
${CC:-cc} -std=gnu11 -O2 -g -D_GNU_SOURCE -Iinclude -Isrc -o "$out/outputs_gen" \
	bench/outputs_gen.c src/profile/profile.c src/profile/strtab.c src/profile/order.c src/profile/folded.c src/output/svg.c src/output/svg_color.c \
	src/output/pprof.c src/output/pprof_func.c src/output/pprof_map.c src/output/protobuf.c src/output/outfile.c \
	src/output/diff.c \
	src/util.c -lz

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }

echo "outputs: $N distinct stacks, median of $RUNS runs ($(nproc) cores, $(uname -r))"
printf '%-7s %9s %12s %9s %12s %13s %12s %8s\n' format build_s build_cpu_s write_s write_cpu_s rss_built_MB peak_rss_MB size_MB
for fmt in folded svg pprof; do
	ext=$fmt; [ $fmt = pprof ] && ext=pb.gz
	f=$out/outputs.$ext
	: >"$out/runs.$fmt"
	for _ in $(seq "$RUNS"); do
		"$out/outputs_gen" -n "$N" -f $fmt -o "$f" >>"$out/runs.$fmt"
	done
	b=$(field build_s <"$out/runs.$fmt" | median)
	bc_=$(field build_cpu_s <"$out/runs.$fmt" | median)
	w=$(field write_s <"$out/runs.$fmt" | median)
	c=$(field write_cpu_s <"$out/runs.$fmt" | median)
	r0=$(field rss_after_build_kb <"$out/runs.$fmt" | median)
	r1=$(field peak_rss_kb <"$out/runs.$fmt" | median)
	printf '%-7s %9s %12s %9s %12s %13.1f %12.1f %8.2f\n' $fmt "$b" "$bc_" "$w" "$c" \
		"$(echo "$r0 / 1024" | bc -l)" "$(echo "$r1 / 1024" | bc -l)" \
		"$(echo "$(stat -c %s "$f") / 1000000" | bc -l)"
done
svg=$out/outputs.svg
echo "svg: $(grep -c '^<g><title>' "$svg") frames drawn; $(sed -n 's/.*class="note"[^>]*>\([0-9,]*\) frames narrower.*/\1/p' "$svg") narrower than 0.1 px left out"
shot() { # SVG -> seconds for headless chromium to load, render and screenshot it
	local t0 t1
	t0=$(date +%s.%N)
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1200,1000 \
		--user-data-dir="$(mktemp -d)" --screenshot="$out/shot.png" "file://$(pwd)/$1" >/dev/null 2>&1
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l | cut -c1-4
}
if command -v chromium >/dev/null; then
	"$out/outputs_gen" -n 1 -f svg -o "$out/tiny.svg" >/dev/null
	base=$(shot "$out/tiny.svg")
	big=$(shot "$svg")
	echo "chromium headless, load + render + screenshot: this SVG ${big} s, a one-frame SVG ${base} s (browser start-up)"
	# Interaction cost in the browser: the SVG's own zoom/unzoom/search,
	# timed by a script appended to a copy (each includes the relayout).
	python3 - "$svg" "$out/probe.svg" <<'PY'
import sys
s=open(sys.argv[1]).read()
inj=r'''<script type="text/ecmascript"><![CDATA[
window.addEventListener('load', function(){ setTimeout(function(){ var res={}, bot=0, deep=null, shallow=null;
try {
 var gs=document.getElementById('frames').children; 
 bot=0; for (var i=0;i<gs.length;i++) bot=Math.max(bot, gs[i].q.y); for (var i=0;i<gs.length;i++){ var q=gs[i].q; if(q.w>3 && q.y<bot-16*5 && (!deep || q.y<deep.q.y)) deep=gs[i]; if(q.y>=bot-16*3 && q.w>100 && q.w<1100 && (!shallow || q.w>shallow.q.w)) shallow=gs[i]; }
 function lay(){document.documentElement.getBoundingClientRect(); return document.getElementById('frames').getBBox().width;}
 lay();
 function t(f){var a=performance.now(); f(); lay(); return Math.round(performance.now()-a);}
 res.zoom_deep_ms=t(function(){deep.getElementsByTagName('rect')[0].dispatchEvent(new MouseEvent('click',{bubbles:true}));});
 res.unzoom1_ms=t(function(){window.dispatchEvent(new KeyboardEvent('keydown',{key:'Escape'}));});
 res.zoom_shallow_ms=t(function(){shallow.getElementsByTagName('rect')[0].dispatchEvent(new MouseEvent('click',{bubbles:true}));});
 res.unzoom2_ms=t(function(){window.dispatchEvent(new KeyboardEvent('keydown',{key:'Escape'}));});
 window.prompt=function(){return 'compute';};
 res.search_ms=t(function(){document.getElementById('search').dispatchEvent(new MouseEvent('click',{bubbles:true}));});
 res.n=gs.length; res.shallow_w=shallow.q.w; res.deep_w=deep.q.w;
} catch(e) { res.error=String(e)+' deep='+deep+' shallow='+shallow+' bot='+bot; }
document.documentElement.setAttribute('data-probe', JSON.stringify(res)); }, 0); });
]]></script>
</svg>'''
open(sys.argv[2],'w').write(s.replace('</svg>',inj))
PY
	chromium --headless --no-sandbox --disable-gpu --virtual-time-budget=30000 \
		--user-data-dir="$(mktemp -d)" --dump-dom "file://$(pwd)/$out/probe.svg" 2>/dev/null |
		sed -n 's/.*data-probe="\([^"]*\)".*/\1/p' | sed 's/&quot;/"/g; s/^/chromium interaction (ms): /'
fi
echo "command: bench/outputs.sh $N  (RUNS=$RUNS)"

// SPDX-License-Identifier: MIT
/*
 * Self-contained interactive flame graph (no Perl, no network).
 *
 * Frames are static <rect>s, so the picture is right in any SVG viewer
 * and a test can check it with an XML parser; a small embedded script
 * adds hover details, click-to-zoom and regexp search in a browser.
 *
 * The tree comes from the stacks merged by name and sorted
 * (prof__named): in that order every subtree is a run of consecutive
 * stacks, so one pass with a stack of open nodes lays it out, as
 * flamegraph.pl's flow() does, without building the tree in memory.
 * Nodes narrower than MIN_PX are not drawn (their weight still counts in
 * their parents), which bounds the file to about (width / MIN_PX) nodes
 * per level however many distinct stacks there are; the header says how
 * many were left out. --minwidth changes MIN_PX (in px, or a share of the
 * total); --width, --subtitle, --countname, --colors and --hash are
 * flamegraph.pl's (colours: svg_color.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "profile/profile.h"
#include "profile/profile_int.h"
#include "util.h"
#include "output/svg_int.h"

#define SVG_WIDTH 1200.0
#define SVG_XPAD 10.0
#define SVG_FRAME_H 16
#define SVG_TOP 74
#define SVG_BOTTOM 34
#define SVG_FONT 12
#define SVG_CHAR_W 7.2 /* monospace advance at 12px: 0.6 em */
#define MIN_PX 0.1

/* Write s as XML character data: escape markup, replace control bytes
 * and invalid UTF-8 with '?', stop after max_bytes input bytes. */
static void xml_puts(FILE *f, const char *s, size_t max_bytes)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (p[i] && i < max_bytes) {
		unsigned char c = p[i];
		size_t len = 1;

		if (c < 0x80) {
			switch (c) {
			case '<': fputs("&lt;", f); break;
			case '>': fputs("&gt;", f); break;
			case '&': fputs("&amp;", f); break;
			case '"': fputs("&quot;", f); break;
			default: putc(c < 0x20 || c == 0x7f ? '?' : c, f);
			}
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			len = 2;
		else if (c >= 0xe0 && c <= 0xef)
			len = 3;
		else if (c >= 0xf0 && c <= 0xf4)
			len = 4;
		else
			len = 0;
		for (size_t k = 1; len && k < len; k++) {
			if (i + k >= max_bytes || (p[i + k] & 0xc0) != 0x80)
				len = 0;
		}
		/* overlong 3/4-byte forms, surrogates, > U+10FFFF */
		if (len == 3 && ((c == 0xe0 && p[i + 1] < 0xa0) || (c == 0xed && p[i + 1] >= 0xa0)))
			len = 0;
		if (len == 4 && ((c == 0xf0 && p[i + 1] < 0x90) || (c == 0xf4 && p[i + 1] >= 0x90)))
			len = 0;
		if (!len) {
			putc('?', f);
			i++;
			continue;
		}
		fwrite(p + i, 1, len, f);
		i += len;
	}
}

static void fmt_ns(char *buf, size_t size, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, size, "%" PRIu64 " ns", ns);
	else if (ns < 1000000)
		snprintf(buf, size, "%.1f \xc2\xb5s", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, size, "%.1f ms", ns / 1e6);
	else
		snprintf(buf, size, "%.2f s", ns / 1e9);
}

static void fmt_weight(const struct profile *p, char *buf, size_t size, uint64_t w)
{
	const char *cn = profile__render(p)->countname;
	char num[32];

	if (cn) { /* --countname: the count as it is, so named */
		util__fmt_count(num, sizeof(num), w);
		snprintf(buf, size, "%s %s", num, cn);
		return;
	}
	if (profile__meta(p)->kind != PROFILE_CPU) {
		fmt_ns(buf, size, w);
		return;
	}
	util__fmt_count(num, sizeof(num), w);
	snprintf(buf, size, "%s %s", num, w == 1 ? "sample" : "samples");
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ull;
	}
	return h ^ (h >> 29);
}

/* flamegraph.pl's palettes (svg_color.c), chosen by what the frame is. */
static void frame_color(const struct profile *p, const char *name, uint32_t depth,
			enum svg_class cls, char *buf, size_t size)
{
	const struct profile_render *rd = profile__render(p);
	uint64_t h = name_hash(name);
	struct svg_color_in in = {
		.palette = rd->palette, .cls = cls, .name = name,
		.off_cpu = profile__meta(p)->kind != PROFILE_CPU,
		.v1 = (h & 0xffff) / 65535.0, .v2 = ((h >> 16) & 0xffff) / 65535.0,
		.v3 = ((h >> 32) & 0xffff) / 65535.0,
	};

	if (depth == 0) { /* "all" */
		snprintf(buf, size, "#c8c8c8");
		return;
	}
	if (rd->hash)
		in.v1 = svg_prefix_hash(name, 0), in.v2 = in.v3 = svg_prefix_hash(name, 1);
	svg_color(&in, buf, size);
}

struct svg_state {
	const struct profile *p;
	FILE *f;	 /* NULL in the counting pass */
	double scale;	 /* px per weight unit */
	uint64_t total;
	double min_px;	 /* narrowest width drawn, px */
	uint32_t height;
	int inverted;	 /* --inverted: root on top */
	int chart;	 /* --flamechart: stacks in time order, not by name */
	struct svg_diff *diff; /* sfprof diff: colour by change against a base */
	double width;	 /* --width, px */
	unsigned top;	 /* y of the first frame row: under the title lines */
	uint8_t *cls;	 /* per display string id: enum svg_class */
	unsigned present[SVGC__COUNT]; /* drawn frames per class (the legend) */
	/* pass 1 results */
	size_t drawn, dropped;
	uint32_t max_depth;
	/* per display string id: 1 + the frame whose file:line its tooltip
	 * shows (0: none known) */
	uint32_t *src;
};

/*
 * sfprof diff: widths follow NEW (st->p); each node's BASE weight is the
 * sum of the BASE stacks it prefixes, found by binary search in BASE's
 * stacks, which prof__named sorts by name element by element (shorter
 * first), so the stacks under one prefix are one run. BASE is scaled to
 * NEW's total (flamegraph.pl's difffolded.pl -n) and the colour is
 * flamegraph.pl's: red for growth, blue for shrinkage, deeper as the
 * change nears the largest one in the graph.
 */
struct svg_diff {
	const struct profile *base;
	struct prof_named nm;
	uint64_t *cum;	 /* cum[i]: weight of BASE stacks [0, i) */
	double scale;	 /* NEW total / BASE total */
	double maxdelta; /* largest |new - scaled base| of a drawn node */
};

/* <0, 0 (s starts with path), >0: s against path[0..n) */
static int diff_cmp(const struct svg_diff *d, size_t i, const struct profile *p,
		    const uint32_t *path, uint32_t n)
{
	const struct prof_named_stack *s = &d->nm.stacks[i];
	uint32_t k;

	for (k = 0; k < n && k < s->n; k++) {
		int c = strcmp(prof__str(d->base, d->nm.ids[s->off + k]), prof__str(p, path[k]));

		if (c)
			return c;
	}
	return k < n ? -1 : 0;
}

static size_t diff_bound(const struct svg_diff *d, const struct profile *p, const uint32_t *path,
			 uint32_t n, int upper)
{
	size_t lo = 0, hi = d->nm.nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = diff_cmp(d, mid, p, path, n);

		if (c < 0 || (upper && c == 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint64_t diff_base_weight(const struct svg_state *st, const uint32_t *path, uint32_t n)
{
	const struct svg_diff *d = st->diff;

	return d->cum[diff_bound(d, st->p, path, n, 1)] - d->cum[diff_bound(d, st->p, path, n, 0)];
}

static void svg_diff__measure(struct svg_state *st, const uint32_t *path, uint32_t n, uint64_t w)
{
	double delta = fabs((double)w - st->diff->scale * (double)diff_base_weight(st, path, n));

	if (delta > st->diff->maxdelta)
		st->diff->maxdelta = delta;
}

/* The colour, and "base 40 samples [44 normalised], +25.00%" for the title */
static void svg_diff__describe(const struct svg_state *st, const uint32_t *path, uint32_t n,
			       uint64_t w, char *color, char *text, size_t size)
{
	uint64_t b = diff_base_weight(st, path, n);
	double scaled = st->diff->scale * (double)b, delta = (double)w - scaled;
	double m = st->diff->maxdelta;
	char bbuf[48], sbuf[48];
	int r = 235, g = 235, bl = 235; /* unchanged */

	if (m > 0 && delta > 0.5) {
		r = 255;
		g = bl = (int)(210 * (m - delta) / m);
	} else if (m > 0 && delta < -0.5) {
		bl = 255;
		r = g = (int)(210 * (m + delta) / m);
	}
	snprintf(color, 8, "#%02x%02x%02x", r, g, bl);
	fmt_weight(st->diff->base, bbuf, sizeof(bbuf), b);
	fmt_weight(st->p, sbuf, sizeof(sbuf), (uint64_t)(scaled + 0.5));
	if (!b)
		snprintf(text, size, "not in BASE");
	else
		snprintf(text, size, "base %s [%s normalised], %+.2f%%", bbuf, sbuf,
			 100.0 * delta / scaled);
}

/*
 * The source position each name's tooltip shows: of all frames printed
 * with that name that have one, the one with the most weight in the
 * profile (where the function's time mostly is). 0 or -ENOMEM.
 */
static int svg_sources(struct svg_state *st)
{
	const struct profile *p = st->p;
	uint32_t nfr, nstr = prof__nr_strs(p);
	const struct prof_frame *fr = prof__frames(p, &nfr);
	const uint32_t *ids = prof__ids(p);
	const struct prof_stack *stk;
	size_t nst, i;
	uint64_t *fw;
	int any = 0;

	for (i = 0; i < nfr && !any; i++)
		any = fr[i].file != 0;
	if (!any)
		return 0;
	stk = prof__stacks(p, &nst);
	fw = calloc(nfr ? nfr : 1, sizeof(*fw));
	st->src = calloc(nstr ? nstr : 1, sizeof(*st->src));
	if (!fw || !st->src) {
		free(fw);
		free(st->src);
		st->src = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < nst; i++)
		for (uint32_t k = 0; k < stk[i].n; k++) {
			uint32_t f = ids[stk[i].off + k];

			fw[f] = fw[f] + stk[i].weight < fw[f] ? UINT64_MAX : fw[f] + stk[i].weight;
		}
	for (i = 0; i < nfr; i++) {
		uint32_t d = fr[i].disp, cur = d < nstr ? st->src[d] : 0;

		if (!fr[i].file || d >= nstr)
			continue;
		if (!cur || fw[i] > fw[cur - 1])
			st->src[d] = (uint32_t)i + 1;
	}
	free(fw);
	return 0;
}

/* Every display string's class (svg_color.c): from the frames printed
 * so, else (roots) from the name alone. 0 or -ENOMEM. */
static int svg_classes(struct svg_state *st)
{
	const struct profile *p = st->p;
	uint32_t nfr, nstr = prof__nr_strs(p);
	const struct prof_frame *fr = prof__frames(p, &nfr);

	st->cls = malloc(nstr ? nstr : 1);
	if (!st->cls)
		return -ENOMEM;
	memset(st->cls, 0xff, nstr ? nstr : 1);
	for (uint32_t i = 0; i < nfr; i++)
		if (fr[i].disp < nstr && st->cls[fr[i].disp] == 0xff)
			st->cls[fr[i].disp] =
				(uint8_t)svg_class__of(p, &fr[i], prof__str(p, fr[i].disp));
	for (uint32_t i = 0; i < nstr; i++)
		if (st->cls[i] == 0xff)
			st->cls[i] = (uint8_t)svg_class__of(p, NULL, prof__str(p, i));
	return 0;
}

/* The runtime palette's legend: when frames of some runtime are drawn. */
static int svg_has_legend(const struct svg_state *st)
{
	if (st->diff || profile__render(st->p)->palette != SVG_PAL_RUNTIME)
		return 0;
	for (int c = 0; c < SVGC__COUNT; c++)
		if (c != SVGC_NATIVE && c != SVGC_MARKER && st->present[c])
			return 1;
	return 0;
}

/* Bytes of name that fit in w px, 0 if not even 3 chars fit. */
static size_t label_fit(const char *name, double w, int *dots)
{
	size_t len = strlen(name), chars;

	*dots = 0;
	if (w < 3 * SVG_CHAR_W + 6)
		return 0;
	chars = (size_t)((w - 6) / SVG_CHAR_W);
	if (len <= chars)
		return len;
	*dots = 1;
	len = chars - 2;
	while (len && ((unsigned char)name[len] & 0xc0) == 0x80)
		len--; /* never cut a UTF-8 sequence */
	return len;
}

/* path: the node's display ids, root first, depth of them */
static void svg_node(struct svg_state *st, const uint32_t *path, uint32_t depth, uint64_t x,
		     uint64_t w)
{
	uint32_t name_id = path[depth - 1];
	const char *name = prof__str(st->p, name_id);
	const struct prof_frame *src = NULL;
	char color[8], wbuf[48], dbuf[160] = "";
	double px, pw, y;
	size_t fit;
	int dots;
	FILE *f = st->f;

	/* in px, not a weight rounded down: (uint64_t)(0.1 * total / 1180)
	 * is 0 below 11,800 samples and would keep every 1-sample node */
	if (!w || (double)w * st->scale < st->min_px) {
		if (!f)
			st->dropped++;
		return;
	}
	if (!f) {
		st->drawn++;
		if (st->cls)
			st->present[st->cls[name_id]]++;
		if (depth > st->max_depth)
			st->max_depth = depth;
		if (st->diff)
			svg_diff__measure(st, path, depth, w);
		return;
	}
	px = SVG_XPAD + x * st->scale;
	pw = w * st->scale;
	y = st->inverted ? st->top + (double)depth * SVG_FRAME_H
			 : st->height - SVG_BOTTOM - (depth + 1.0) * SVG_FRAME_H;
	fmt_weight(st->p, wbuf, sizeof(wbuf), w);
	if (st->diff)
		svg_diff__describe(st, path, depth, w, color, dbuf, sizeof(dbuf));
	else
		frame_color(st->p, name, depth, st->cls ? st->cls[name_id] : SVGC_NATIVE, color,
			    sizeof(color));
	if (st->src && st->src[name_id]) {
		uint32_t nfr;

		src = &prof__frames(st->p, &nfr)[st->src[name_id] - 1];
	}
	fputs("<g><title>", f);
	xml_puts(f, name, SIZE_MAX);
	fprintf(f, " (%s%s, %.2f%%%s%s)", st->diff ? "new " : "", wbuf, 100.0 * w / st->total,
		dbuf[0] ? ", " : "", dbuf);
	if (src) {
		/* "NAME (WEIGHT, PCT%) FILE:LINE" */
		fputc(' ', f);
		xml_puts(f, prof__str(st->p, src->file), SIZE_MAX);
		if (src->line)
			fprintf(f, ":%u", src->line);
	}
	fprintf(f, "</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>",
		px, y, pw, SVG_FRAME_H - 1, color);
	fit = label_fit(name, pw, &dots);
	if (fit) {
		fprintf(f, "<text x=\"%.2f\" y=\"%.1f\">", px + 3, y + 11.5);
		xml_puts(f, name, fit);
		if (dots)
			fputs("..", f);
		fputs("</text>", f);
	}
	fputs("</g>\n", f);
}

/* One pass over the sorted stacks: open/close nodes as prefixes change. */
static int svg_walk(struct svg_state *st, const struct prof_named *nm)
{
	uint64_t *open_x, cum = 0;
	const uint32_t *prev = NULL;
	uint32_t prev_n = 0;

	open_x = malloc(((size_t)nm->max_depth + 1) * sizeof(*open_x));
	if (!open_x)
		return -ENOMEM;
	for (size_t i = 0; i < nm->nr; i++) {
		const struct prof_named_stack *s = &nm->stacks[i];
		const uint32_t *ids = nm->ids + s->off;
		uint32_t common = 0;

		while (common < prev_n && common < s->n && prev[common] == ids[common])
			common++;
		for (uint32_t d = prev_n; d-- > common;)
			svg_node(st, prev, d + 1, open_x[d], cum - open_x[d]);
		for (uint32_t d = common; d < s->n; d++)
			open_x[d] = cum;
		cum += s->weight;
		prev = ids;
		prev_n = s->n;
	}
	for (uint32_t d = prev_n; d-- > 0;)
		svg_node(st, prev, d + 1, open_x[d], cum - open_x[d]);
	free(open_x);
	return 0;
}

static const char svg_style[] =
	"<style type=\"text/css\">\n"
	"text{font-family:monospace;font-size:12px;fill:#000}\n"
	"#frames text{pointer-events:none}\n"
	"#frames rect{rx:2px;ry:2px}\n"
	"#frames g:hover rect{stroke:#000;stroke-width:0.5}\n"
	"#frames.z>g{display:none}\n"
	"#frames.z>g.v{display:inline}\n"
	".title{font-size:17px;text-anchor:middle}\n"
	".sub{text-anchor:middle;fill:#333}\n"
	".note{text-anchor:middle;fill:#777;font-size:11px}\n"
	".legend{font-size:11px;fill:#333}\n"
	".btn{cursor:pointer;fill:#1a5fb4}\n"
	".btn:hover{text-decoration:underline}\n"
	".btn.off{fill:#999;cursor:default;text-decoration:none}\n"
	"</style>\n";

/*
 * Hover: the frame's title goes to the details line. Click: zoom so the
 * frame fills the width; its ancestors stretch (faded), everything else
 * hides. Search (button, Ctrl-F or '/'): a regexp, matches turn magenta
 * and the share of the zoomed frame (else of all) they cover is shown;
 * "Ignore case" toggles the regexp's i flag. Escape resets zoom and
 * search. The view lives in the address: ?s=REGEX&f=FRAME&fx=X&i=1 are
 * read at load and rewritten (history.replaceState) at every change, so a
 * link reproduces it. f picks the frame at x=fx, else the widest so named.
 */
static const char svg_script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"\"use strict\";\n"
	"var W=%.1f,XP=%.1f,CW=%.2f,INV=%d,NS='http://www.w3.org/2000/svg';\n"
	"var fr=[],det,unz,sbtn,icb,mat,zoomed=null,term=null,icase=false;\n"
	"function init(){\n"
	" det=document.getElementById('details').firstChild;\n"
	" unz=document.getElementById('unzoom');sbtn=document.getElementById('search');\n"
	" icb=document.getElementById('icase');mat=document.getElementById('matched').firstChild;\n"
	" var gs=document.getElementById('frames').children;\n"
	" for(var i=0;i<gs.length;i++){var g=gs[i],r=g.getElementsByTagName('rect')[0],\n"
	"  tt=g.getElementsByTagName('title')[0].textContent,t=g.getElementsByTagName('text')[0]||null;\n"
	"  var q={g:g,r:r,t:t,tt:tt,name:tt.substring(0,tt.lastIndexOf(' (')),x:+r.getAttribute('x'),\n"
	"   w:+r.getAttribute('width'),y:+r.getAttribute('y'),fill:r.getAttribute('fill'),m:false};\n"
	"  g.q=q;fr.push(q);}\n"
	" var fg=document.getElementById('frames');\n"
	" fg.addEventListener('mouseover',function(e){var g=up(e.target);if(g)det.nodeValue=g.q.tt;});\n"
	" fg.addEventListener('mouseout',function(){det.nodeValue=' ';});\n"
	" fg.addEventListener('click',function(e){var g=up(e.target);if(g){zoom(g.q);sync();}});\n"
	" unz.addEventListener('click',function(){unzoom();sync();});\n"
	" sbtn.addEventListener('click',function(){if(term===null)search();else{clear();sync();}});\n"
	" icb.addEventListener('click',function(){icase=!icase;showic();if(term!==null)match(term,0);sync();});\n"
	" window.addEventListener('keydown',function(e){\n"
	"  if((e.ctrlKey&&e.keyCode===70)||e.key==='/'){e.preventDefault();search();}\n"
	"  else if(e.key==='Escape'){unzoom();clear();sync();}});\n"
	" fromurl();\n"
	"}\n"
	"function up(n){while(n&&n.parentNode&&n.parentNode.id!=='frames')n=n.parentNode;\n"
	" return n&&n.parentNode?n:null;}\n"
	"function fromurl(){var u;try{u=new URLSearchParams(location.search);}catch(e){return;}\n"
	" if(u.get('i')==='1'){icase=true;showic();}\n"
	" var f=u.get('f'),fx=u.get('fx'),best=null;\n"
	" if(f!==null){for(var i=0;i<fr.length;i++){var q=fr[i];if(q.name!==f)continue;\n"
	"  if(fx!==null&&Math.abs(q.x-(+fx))<0.01){best=q;break;}if(!best||q.w>best.w)best=q;}\n"
	"  if(best)zoom(best);}\n"
	" var s=u.get('s');if(s)match(s,0);}\n"
	"function sync(){try{var u=new URL(location.href),p=u.searchParams;\n"
	" if(term!==null)p.set('s',term);else p.delete('s');\n"
	" if(zoomed){p.set('f',zoomed.name);p.set('fx',zoomed.x.toFixed(2));}else{p.delete('f');p.delete('fx');}\n"
	" if(icase)p.set('i','1');else p.delete('i');\n"
	" history.replaceState(null,'',u.href);}catch(e){}}\n"
	"function showic(){icb.textContent=(icase?'[x]':'[ ]')+' Ignore case';}\n"
	"function label(q,x,w){var n=q.name,c=Math.floor((w-6)/CW),s='';\n"
	" if(w>=3*CW+6)s=n.length<=c?n:n.substring(0,c-2)+'..';\n"
	" if(!q.t){if(!s)return;q.t=document.createElementNS(NS,'text');q.t.setAttribute('y',q.y+11.5);q.g.appendChild(q.t);}\n"
	" q.t.setAttribute('x',x+3);q.t.textContent=s;}\n"
	"function place(q,x,w,op){q.r.setAttribute('x',x);q.r.setAttribute('width',w);\n"
	" q.g.style.opacity=op;label(q,x,w);}\n"
	/*
	 * Zoom touches as few elements as it can: hide the minority. Few
	 * frames stay visible (the usual deep zoom): #frames gets class z,
	 * which hides all but those marked v. Else hide the others one by
	 * one. Unzoom restores only what zoom touched.
	 */
	"var shown=[],hid=[];\n"
	"function restore(){for(var i=0;i<shown.length;i++){var q=shown[i];q.g.classList.remove('v');\n"
	" place(q,q.x,q.w,1);}for(var k=0;k<hid.length;k++)hid[k].g.style.display='';\n"
	" shown=[];hid=[];document.getElementById('frames').classList.remove('z');}\n"
	"function zoom(z){var s=(W-2*XP)/z.w,e=1e-6,inv=[];restore();zoomed=z;unz.classList.remove('off');\n"
	" for(var i=0;i<fr.length;i++){var q=fr[i];\n"
	"  if(INV?q.y<z.y:q.y>z.y){if(q.x<=z.x+e&&q.x+q.w>=z.x+z.w-e){place(q,XP,W-2*XP,0.55);shown.push(q);}else inv.push(q);}\n"
	"  else if(q.x>=z.x-e&&q.x+q.w<=z.x+z.w+e){place(q,XP+(q.x-z.x)*s,q.w*s,1);shown.push(q);}\n"
	"  else inv.push(q);}\n"
	" if(inv.length<shown.length){for(var k=0;k<inv.length;k++)inv[k].g.style.display='none';hid=inv;}\n"
	" else{for(var k=0;k<shown.length;k++)shown[k].g.classList.add('v');\n"
	"  document.getElementById('frames').classList.add('z');}\n"
	" percent();}\n"
	"function unzoom(){zoomed=null;unz.classList.add('off');restore();percent();}\n"
	/* the share of the zoomed frame's span (else of all) that matches */
	"function percent(){if(term===null){mat.nodeValue=' ';return;}\n"
	" var lo=zoomed?zoomed.x:XP,hi=zoomed?zoomed.x+zoomed.w:W-XP,iv=[],sum=0,end=-1;\n"
	" for(var i=0;i<fr.length;i++){var q=fr[i],a=Math.max(q.x,lo),b=Math.min(q.x+q.w,hi);\n"
	"  if(q.m&&b>a)iv.push([a,b]);}\n"
	" iv.sort(function(a,b){return a[0]-b[0];});\n"
	" for(var k=0;k<iv.length;k++){var a=Math.max(iv[k][0],end);if(iv[k][1]>a){sum+=iv[k][1]-a;end=iv[k][1];}}\n"
	" mat.nodeValue='Matched: '+(100*sum/(hi-lo)).toFixed(2)+'%%';}\n"
	"function match(t,ui){var re;try{re=new RegExp(t,icase?'i':'');}\n"
	" catch(err){if(ui)alert('bad regular expression: '+err.message);return false;}\n"
	" term=t;for(var i=0;i<fr.length;i++){var q=fr[i];q.m=re.test(q.name);\n"
	"  q.r.setAttribute('fill',q.m?'#e040e0':q.fill);}\n"
	" sbtn.textContent='Reset Search';percent();return true;}\n"
	"function search(){var t=prompt('Search frames (regular expression):',term||'');\n"
	" if(t===null)return;if(t===''){clear();sync();return;}if(match(t,1))sync();}\n"
	"function clear(){term=null;for(var i=0;i<fr.length;i++){fr[i].m=false;fr[i].r.setAttribute('fill',fr[i].fill);}\n"
	" mat.nodeValue=' ';sbtn.textContent='Search';}\n"
	"]]></script>\n";

static void svg_header(struct svg_state *st)
{
	const struct profile *p = st->p;
	const struct profile_meta *m = profile__meta(p);
	FILE *f = st->f;
	char buf[64], num[32];
	unsigned y = 44;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		   "<svg version=\"1.1\" width=\"%.0f\" height=\"%u\" viewBox=\"0 0 %.0f %u\" "
		   "xmlns=\"http://www.w3.org/2000/svg\" onload=\"init(evt)\">\n",
		st->width, st->height, st->width, st->height);
	fputs("<!-- Flame graph written by sfprof. Each box is a function; its width is its share "
	      "of the total, its parent is below it. -->\n", f);
	fputs(svg_style, f);
	fprintf(f, svg_script, st->width, SVG_XPAD, SVG_CHAR_W, st->inverted);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%u\" fill=\"#f8f8f4\"/>\n",
		st->width, st->height);

	fprintf(f, "<text class=\"title\" x=\"%.0f\" y=\"24\">", st->width / 2);
	if (st->chart && !profile__render(p)->title)
		fputs("Flame chart: ", f);
	if (profile__render(p)->title)
		xml_puts(f, profile__render(p)->title, SIZE_MAX);
	else if (m->kind == PROFILE_FUTEX)
		fputs("Futex wait time (off-CPU: lock contention and other waits)", f);
	else if (m->kind == PROFILE_OFFCPU)
		fputs("Off-CPU time (blocked, sleeping or preempted)", f);
	else if (m->kind == PROFILE_WALL)
		fputs("Wall-clock time per thread (on CPU and off)", f);
	else if (m->hz)
		fprintf(f, "On-CPU samples at %u Hz", m->hz);
	else
		fputs("On-CPU samples", f);
	fputs("</text>\n", f);
	if (profile__render(p)->subtitle) { /* --subtitle: its own line */
		fprintf(f, "<text class=\"sub\" x=\"%.0f\" y=\"%u\">", st->width / 2, y);
		xml_puts(f, profile__render(p)->subtitle, SIZE_MAX);
		fputs("</text>\n", f);
		y += 18;
	}

	fprintf(f, "<text class=\"sub\" x=\"%.0f\" y=\"%u\">", st->width / 2, y);
	if (m->target_comm || m->target_pid || m->target_cmdline) {
		fputs("target: ", f);
		if (m->target_comm)
			xml_puts(f, m->target_comm, SIZE_MAX);
		if (m->target_pid)
			fprintf(f, "%spid %u%s", m->target_comm ? " (" : "", m->target_pid,
				m->target_comm ? ")" : "");
		if (m->target_cmdline) {
			fputs(" \xc2\xb7 ", f);
			xml_puts(f, m->target_cmdline, 120);
			if (strlen(m->target_cmdline) > 120)
				fputs("...", f);
		}
		fputs(" \xc2\xb7 ", f);
	}
	if (m->duration_ns) {
		fmt_ns(buf, sizeof(buf), m->duration_ns);
		fprintf(f, "duration %s \xc2\xb7 ", buf);
	}
	fmt_weight(p, buf, sizeof(buf), st->total);
	fprintf(f, "total %s", buf);
	if (m->kind != PROFILE_CPU) {
		util__fmt_count(num, sizeof(num), profile__nr_events(p));
		fprintf(f, " in %s %s", num, m->kind == PROFILE_FUTEX ? "waits" :
			m->kind == PROFILE_WALL ? "samples and blocks" : "blocks");
	}
	fputs("</text>\n", f);

	y += 18;
	fprintf(f, "<text class=\"note\" x=\"%.0f\" y=\"%u\">", st->width / 2, y);
	if (st->dropped) {
		util__fmt_count(num, sizeof(num), st->dropped);
		if (profile__render(p)->min_pct > 0)
			fprintf(f, "%s frames under %g%% of the total not drawn (their time counts "
				   "in their callers) \xc2\xb7 ", num, profile__render(p)->min_pct);
		else
			fprintf(f, "%s frames narrower than %g px not drawn (their time counts in "
				   "their callers) \xc2\xb7 ", num, st->min_px);
	}
	if (st->diff)
		fputs("red: more than in BASE, blue: less (BASE scaled to this total) \xc2\xb7 ", f);
	if (st->chart) {
		fputs("time runs left to right \xc2\xb7 ", f);
		if (profile__order_cut(p)) {
			fmt_weight(p, buf, sizeof(buf), profile__order_cut(p));
			fprintf(f, "the last %s not drawn (past the runs kept) \xc2\xb7 ", buf);
		}
	}
	fputs("click to zoom, Ctrl-F or / to search, Esc to reset; the address keeps the view</text>\n", f);
	if (svg_has_legend(st)) /* the runtime palette: which hue is what */
		svg_legend(f, st->present, SVG_XPAD, y + 17);
	fputs("<text id=\"unzoom\" class=\"btn off\" x=\"10\" y=\"24\">Reset Zoom</text>\n", f);
	fprintf(f, "<text id=\"search\" class=\"btn\" x=\"%.0f\" y=\"24\" text-anchor=\"end\">Search</text>\n",
		st->width - SVG_XPAD);
	fprintf(f, "<text id=\"icase\" class=\"btn\" x=\"%.0f\" y=\"24\" text-anchor=\"end\">[ ] Ignore case</text>\n",
		st->width - SVG_XPAD - 110);
	fprintf(f, "<text id=\"details\" x=\"10\" y=\"%u\"> </text>\n", st->height - 12);
	fprintf(f, "<text id=\"matched\" x=\"%.0f\" y=\"%u\" text-anchor=\"end\"> </text>\n",
		st->width - SVG_XPAD, st->height - 12);
}

int profile__write_svg(const struct profile *p, FILE *f)
{
	struct svg_state st = { .p = p };
	struct prof_named nm;
	int err;

	struct svg_diff diff = { .base = profile__render(p)->diff_base };

	if (!p || !f)
		return -EINVAL;
	st.inverted = profile__render(p)->inverted;
	st.width = profile__render(p)->width > 0 ? profile__render(p)->width : SVG_WIDTH;
	/* a flame chart of a diff has no meaning: the diff's flame graph */
	st.chart = profile__render(p)->flamechart && profile__keeps_order(p) && !diff.base;
	err = st.chart ? prof__named_order(p, profile__render(p)->reverse, &nm)
		       : prof__named_rev(p, profile__render(p)->reverse, &nm);
	if (err)
		return err;
	if (diff.base) {
		err = prof__named_rev(diff.base, profile__render(p)->reverse, &diff.nm);
		if (err)
			goto out;
		diff.cum = malloc((diff.nm.nr + 1) * sizeof(*diff.cum));
		err = -ENOMEM;
		if (!diff.cum)
			goto out;
		diff.cum[0] = 0;
		for (size_t i = 0; i < diff.nm.nr; i++)
			diff.cum[i + 1] = diff.cum[i] + diff.nm.stacks[i].weight;
		st.diff = &diff;
	}
	for (size_t i = 0; i < nm.nr; i++) /* saturating, like the profile's */
		st.total = st.total + nm.stacks[i].weight < st.total ? UINT64_MAX
								      : st.total + nm.stacks[i].weight;
	st.scale = st.total ? (st.width - 2 * SVG_XPAD) / st.total : 0;
	st.min_px = profile__render(p)->min_px > 0 ? profile__render(p)->min_px : MIN_PX;
	if (profile__render(p)->min_pct > 0) /* --minwidth N%: that share, in px */
		st.min_px = profile__render(p)->min_pct / 100.0 * (st.width - 2 * SVG_XPAD);

	if (st.diff && diff.cum[diff.nm.nr])
		diff.scale = (double)st.total / (double)diff.cum[diff.nm.nr];
	err = svg_sources(&st);
	if (!err)
		err = svg_classes(&st);
	if (err)
		goto out;
	err = svg_walk(&st, &nm); /* pass 1: count and measure */
	if (err)
		goto out;
	/* title, subtitle, target, note and legend rows above the frames */
	st.top = SVG_TOP + (profile__render(p)->subtitle ? 18 : 0) + (svg_has_legend(&st) ? 18 : 0);
	st.height = st.top + (st.max_depth + 1) * SVG_FRAME_H + SVG_BOTTOM;
	st.f = f;
	svg_header(&st);

	if (!st.total)
		fprintf(f, "<text class=\"sub\" x=\"%.0f\" y=\"%u\">no samples</text>\n",
			st.width / 2, st.height - SVG_BOTTOM - 4);
	fputs("<g id=\"frames\">\n", f);
	if (st.total) {
		unsigned all_y = st.inverted ? st.top : st.height - SVG_BOTTOM - SVG_FRAME_H;
		char wbuf[112];

		fmt_weight(p, wbuf, sizeof(wbuf), st.total);
		if (st.diff) {
			char bbuf[48];

			fmt_weight(diff.base, bbuf, sizeof(bbuf), diff.cum[diff.nm.nr]);
			snprintf(wbuf + strlen(wbuf), sizeof(wbuf) - strlen(wbuf), ", base %s", bbuf);
		}
		fprintf(f, "<g><title>all (%s, 100%%)</title><rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" "
			   "height=\"%d\" fill=\"#c8c8c8\"/><text x=\"%.2f\" y=\"%.1f\">all</text></g>\n",
			wbuf, SVG_XPAD, all_y, st.width - 2 * SVG_XPAD, SVG_FRAME_H - 1, SVG_XPAD + 3,
			all_y + 11.5);
	}
	err = svg_walk(&st, &nm); /* pass 2: write */
	if (err)
		goto out;
	fputs("</g>\n</svg>\n", f);
	if (fflush(f))
		err = errno ? -errno : -EIO; /* ENOSPC, not a bare EIO */
	else if (ferror(f))
		err = -EIO;
out:
	free(st.src);
	free(st.cls);
	prof_named__release(&nm);
	prof_named__release(&diff.nm);
	free(diff.cum);
	return err;
}

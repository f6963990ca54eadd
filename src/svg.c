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
 * many were left out.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "profile_int.h"
#include "util.h"

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
	char num[32];

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

/* flamegraph.pl's palettes, chosen by what the frame is. */
static void frame_color(const struct profile *p, const char *name, uint32_t depth,
			char *buf, size_t size)
{
	uint64_t h = name_hash(name);
	double v1 = (h & 0xffff) / 65535.0, v2 = ((h >> 16) & 0xffff) / 65535.0,
	       v3 = ((h >> 32) & 0xffff) / 65535.0;
	size_t len = strlen(name);
	int r, g, b;

	if (depth == 0) { /* "all" */
		r = g = b = 200;
	} else if (!strncmp(name, "lock:", 5)) {
		r = 170 + (int)(40 * v1), g = 110 + (int)(40 * v1), b = 220;
	} else if (name[0] == '[') { /* markers: [truncated] ... */
		r = g = b = 150 + (int)(50 * v1);
	} else if (len > 4 && !strcmp(name + len - 4, "_[k]")) {
		r = 220 + (int)(35 * v1), g = 120 + (int)(70 * v2), b = (int)(40 * v3);
	} else if (profile__meta(p)->kind != PROFILE_CPU) {
		r = 70 + (int)(60 * v1), g = 110 + (int)(70 * v2), b = 190 + (int)(60 * v3);
	} else {
		r = 205 + (int)(50 * v3), g = (int)(230 * v1), b = (int)(55 * v2);
	}
	snprintf(buf, size, "#%02x%02x%02x", r, g, b);
}

struct svg_state {
	const struct profile *p;
	FILE *f;	 /* NULL in the counting pass */
	double scale;	 /* px per weight unit */
	uint64_t total;
	uint64_t min_w;	 /* narrowest weight drawn */
	uint32_t height;
	/* pass 1 results */
	size_t drawn, dropped;
	uint32_t max_depth;
};

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

static void svg_node(struct svg_state *st, const char *name, uint32_t depth, uint64_t x,
		     uint64_t w)
{
	char color[8], wbuf[48];
	double px, pw, y;
	size_t fit;
	int dots;
	FILE *f = st->f;

	if (w < st->min_w || !w) {
		if (!f)
			st->dropped++;
		return;
	}
	if (!f) {
		st->drawn++;
		if (depth > st->max_depth)
			st->max_depth = depth;
		return;
	}
	px = SVG_XPAD + x * st->scale;
	pw = w * st->scale;
	y = st->height - SVG_BOTTOM - (depth + 1.0) * SVG_FRAME_H;
	frame_color(st->p, name, depth, color, sizeof(color));
	fmt_weight(st->p, wbuf, sizeof(wbuf), w);
	fputs("<g><title>", f);
	xml_puts(f, name, SIZE_MAX);
	fprintf(f, " (%s, %.2f%%)</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>",
		wbuf, 100.0 * w / st->total, px, y, pw, SVG_FRAME_H - 1, color);
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
	const struct profile *p = st->p;
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
			svg_node(st, prof__str(p, prev[d]), d + 1, open_x[d], cum - open_x[d]);
		for (uint32_t d = common; d < s->n; d++)
			open_x[d] = cum;
		cum += s->weight;
		prev = ids;
		prev_n = s->n;
	}
	for (uint32_t d = prev_n; d-- > 0;)
		svg_node(st, prof__str(p, prev[d]), d + 1, open_x[d], cum - open_x[d]);
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
	".btn{cursor:pointer;fill:#1a5fb4}\n"
	".btn:hover{text-decoration:underline}\n"
	"</style>\n";

/*
 * Hover: the frame's title goes to the details line. Click: zoom so the
 * frame fills the width; its ancestors stretch (faded), everything else
 * hides. Search (button, Ctrl-F or '/'): a regexp, matches turn magenta
 * and the share of all weight they cover is shown. Escape resets zoom.
 */
static const char svg_script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"\"use strict\";\n"
	"var W=%.1f,XP=%.1f,CW=%.2f,NS='http://www.w3.org/2000/svg';\n"
	"var fr=[],det,unz,sbtn,mat,zoomed=null,term=null;\n"
	"function init(){\n"
	" det=document.getElementById('details').firstChild;\n"
	" unz=document.getElementById('unzoom');sbtn=document.getElementById('search');\n"
	" mat=document.getElementById('matched').firstChild;\n"
	" var gs=document.getElementById('frames').children;\n"
	" for(var i=0;i<gs.length;i++){var g=gs[i],r=g.getElementsByTagName('rect')[0],\n"
	"  tt=g.getElementsByTagName('title')[0].textContent,t=g.getElementsByTagName('text')[0]||null;\n"
	"  var q={g:g,r:r,t:t,tt:tt,name:tt.substring(0,tt.lastIndexOf(' (')),x:+r.getAttribute('x'),\n"
	"   w:+r.getAttribute('width'),y:+r.getAttribute('y'),fill:r.getAttribute('fill')};\n"
	"  g.q=q;fr.push(q);}\n"
	" var fg=document.getElementById('frames');\n"
	" fg.addEventListener('mouseover',function(e){var g=up(e.target);if(g)det.nodeValue=g.q.tt;});\n"
	" fg.addEventListener('mouseout',function(){det.nodeValue=' ';});\n"
	" fg.addEventListener('click',function(e){var g=up(e.target);if(g)zoom(g.q);});\n"
	" unz.addEventListener('click',unzoom);sbtn.addEventListener('click',function(){term===null?search():clear();});\n"
	" window.addEventListener('keydown',function(e){\n"
	"  if((e.ctrlKey&&e.keyCode===70)||e.key==='/'){e.preventDefault();search();}\n"
	"  else if(e.key==='Escape')unzoom();});\n"
	"}\n"
	"function up(n){while(n&&n.parentNode&&n.parentNode.id!=='frames')n=n.parentNode;\n"
	" return n&&n.parentNode?n:null;}\n"
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
	"function zoom(z){var s=(W-2*XP)/z.w,e=1e-6,inv=[];restore();zoomed=z;unz.style.display='';\n"
	" for(var i=0;i<fr.length;i++){var q=fr[i];\n"
	"  if(q.y>z.y){if(q.x<=z.x+e&&q.x+q.w>=z.x+z.w-e){place(q,XP,W-2*XP,0.55);shown.push(q);}else inv.push(q);}\n"
	"  else if(q.x>=z.x-e&&q.x+q.w<=z.x+z.w+e){place(q,XP+(q.x-z.x)*s,q.w*s,1);shown.push(q);}\n"
	"  else inv.push(q);}\n"
	" if(inv.length<shown.length){for(var k=0;k<inv.length;k++)inv[k].g.style.display='none';hid=inv;}\n"
	" else{for(var k=0;k<shown.length;k++)shown[k].g.classList.add('v');\n"
	"  document.getElementById('frames').classList.add('z');}}\n"
	"function unzoom(){zoomed=null;unz.style.display='none';restore();}\n"
	"function search(){var t=prompt('Search frames (regular expression):',term||'');\n"
	" if(t===null)return;if(t===''){clear();return;}\n"
	" var re;try{re=new RegExp(t);}catch(err){alert('bad regular expression: '+err.message);return;}\n"
	" term=t;var iv=[];\n"
	" for(var i=0;i<fr.length;i++){var q=fr[i];\n"
	"  if(re.test(q.name)){q.r.setAttribute('fill','#e040e0');iv.push([q.x,q.x+q.w]);}\n"
	"  else q.r.setAttribute('fill',q.fill);}\n"
	" iv.sort(function(a,b){return a[0]-b[0];});var sum=0,end=-1;\n"
	" for(var k=0;k<iv.length;k++){var a=Math.max(iv[k][0],end);if(iv[k][1]>a){sum+=iv[k][1]-a;end=iv[k][1];}}\n"
	" mat.nodeValue='Matched: '+(100*sum/(W-2*XP)).toFixed(2)+'%%';sbtn.textContent='Reset Search';}\n"
	"function clear(){term=null;for(var i=0;i<fr.length;i++)fr[i].r.setAttribute('fill',fr[i].fill);\n"
	" mat.nodeValue=' ';sbtn.textContent='Search';}\n"
	"]]></script>\n";

static void svg_header(struct svg_state *st)
{
	const struct profile *p = st->p;
	const struct profile_meta *m = profile__meta(p);
	FILE *f = st->f;
	char buf[64], num[32];

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		   "<svg version=\"1.1\" width=\"%.0f\" height=\"%u\" viewBox=\"0 0 %.0f %u\" "
		   "xmlns=\"http://www.w3.org/2000/svg\" onload=\"init(evt)\">\n",
		SVG_WIDTH, st->height, SVG_WIDTH, st->height);
	fputs("<!-- Flame graph written by sfprof. Each box is a function; its width is its share "
	      "of the total, its parent is below it. -->\n", f);
	fputs(svg_style, f);
	fprintf(f, svg_script, SVG_WIDTH, SVG_XPAD, SVG_CHAR_W);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%u\" fill=\"#f8f8f4\"/>\n",
		SVG_WIDTH, st->height);

	fprintf(f, "<text class=\"title\" x=\"%.0f\" y=\"24\">", SVG_WIDTH / 2);
	if (m->kind == PROFILE_FUTEX)
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

	fprintf(f, "<text class=\"sub\" x=\"%.0f\" y=\"44\">", SVG_WIDTH / 2);
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

	fprintf(f, "<text class=\"note\" x=\"%.0f\" y=\"62\">", SVG_WIDTH / 2);
	if (st->dropped) {
		util__fmt_count(num, sizeof(num), st->dropped);
		fprintf(f, "%s frames narrower than %.1f px not drawn (their time counts in their "
			   "callers) \xc2\xb7 ", num, MIN_PX);
	}
	fputs("click to zoom, Ctrl-F or / to search, Esc to reset</text>\n", f);
	fputs("<text id=\"unzoom\" class=\"btn\" x=\"10\" y=\"24\" style=\"display:none\">Reset Zoom</text>\n", f);
	fprintf(f, "<text id=\"search\" class=\"btn\" x=\"%.0f\" y=\"24\" text-anchor=\"end\">Search</text>\n",
		SVG_WIDTH - SVG_XPAD);
	fprintf(f, "<text id=\"details\" x=\"10\" y=\"%u\"> </text>\n", st->height - 12);
	fprintf(f, "<text id=\"matched\" x=\"%.0f\" y=\"%u\" text-anchor=\"end\"> </text>\n",
		SVG_WIDTH - SVG_XPAD, st->height - 12);
}

int profile__write_svg(const struct profile *p, FILE *f)
{
	struct svg_state st = { .p = p };
	struct prof_named nm;
	int err;

	if (!p || !f)
		return -EINVAL;
	err = prof__named(p, &nm);
	if (err)
		return err;
	for (size_t i = 0; i < nm.nr; i++) /* saturating, like the profile's */
		st.total = st.total + nm.stacks[i].weight < st.total ? UINT64_MAX
								      : st.total + nm.stacks[i].weight;
	st.scale = st.total ? (SVG_WIDTH - 2 * SVG_XPAD) / st.total : 0;
	/* narrowest drawn: MIN_PX, i.e. MIN_PX / scale weight units */
	st.min_w = st.total ? (uint64_t)(MIN_PX * st.total / (SVG_WIDTH - 2 * SVG_XPAD)) : 1;
	if (!st.min_w)
		st.min_w = 1;

	err = svg_walk(&st, &nm); /* pass 1: count and measure */
	if (err)
		goto out;
	st.height = SVG_TOP + (st.max_depth + 1) * SVG_FRAME_H + SVG_BOTTOM;
	st.f = f;
	svg_header(&st);

	if (!st.total)
		fprintf(f, "<text class=\"sub\" x=\"%.0f\" y=\"%u\">no samples</text>\n",
			SVG_WIDTH / 2, st.height - SVG_BOTTOM - 4);
	fputs("<g id=\"frames\">\n", f);
	if (st.total) {
		char wbuf[48];

		fmt_weight(p, wbuf, sizeof(wbuf), st.total);
		fprintf(f, "<g><title>all (%s, 100%%)</title><rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" "
			   "height=\"%d\" fill=\"#c8c8c8\"/><text x=\"%.2f\" y=\"%.1f\">all</text></g>\n",
			wbuf, SVG_XPAD, st.height - SVG_BOTTOM - SVG_FRAME_H, SVG_WIDTH - 2 * SVG_XPAD,
			SVG_FRAME_H - 1, SVG_XPAD + 3, st.height - SVG_BOTTOM - SVG_FRAME_H + 11.5);
	}
	err = svg_walk(&st, &nm); /* pass 2: write */
	if (err)
		goto out;
	fputs("</g>\n</svg>\n", f);
	if (fflush(f) || ferror(f))
		err = -EIO;
out:
	prof_named__release(&nm);
	return err;
}

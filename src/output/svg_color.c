// SPDX-License-Identifier: MIT
/*
 * The flame graph's colours (svg_int.h): flamegraph.pl's palettes by
 * name (--colors hot, mem, io, java, js, perl, python, red...), and
 * sfprof's default, "runtime", which gives the frames of each runtime
 * their own hue so they stand apart in a mixed stack: native code red
 * (blue off-CPU), kernel orange, Python green, JIT aqua, Go yellow, locks
 * purple. What a frame is comes from the profile's
 * frame (its kind and binary) where there is one, else from its name
 * (a profile read from folded text): flamegraph.pl's annotations _[k]
 * (kernel) and _[j] (JIT), Python's "name (file.py:N)", Go's
 * package.Func.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/svg_int.h"
#include "profile/profile_int.h"

static const char *const palette_names[SVG_PAL__COUNT] = {
	[SVG_PAL_RUNTIME] = "runtime", [SVG_PAL_HOT] = "hot",	  [SVG_PAL_MEM] = "mem",
	[SVG_PAL_IO] = "io",	       [SVG_PAL_JAVA] = "java",	  [SVG_PAL_JS] = "js",
	[SVG_PAL_PERL] = "perl",       [SVG_PAL_PYTHON] = "python", [SVG_PAL_RED] = "red",
	[SVG_PAL_GREEN] = "green",     [SVG_PAL_BLUE] = "blue",	  [SVG_PAL_AQUA] = "aqua",
	[SVG_PAL_YELLOW] = "yellow",   [SVG_PAL_PURPLE] = "purple", [SVG_PAL_ORANGE] = "orange",
};

int svg_palette__parse(const char *name)
{
	for (int i = 0; i < SVG_PAL__COUNT; i++)
		if (name && !strcmp(name, palette_names[i]))
			return i;
	return -1;
}

const char *svg_palette__names(void)
{
	return "runtime (default), hot, mem, io, java, js, perl, python, red, green, blue, aqua, "
	       "yellow, purple, orange";
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

/* Lock and wait code: glibc's mutexes and futexes, kernel futexes. */
static int lock_name(const char *n)
{
	static const char *const parts[] = { "pthread_mutex_", "pthread_rwlock_", "pthread_cond_",
					     "__lll_lock", "futex", "mutex_lock", "spin_lock",
					     "sem_wait", "rwsem" };

	if (!strncmp(n, "lock:", 5))
		return 1;
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (strstr(n, parts[i]))
			return 1;
	return 0;
}

/* "qualname (file.py:12)": how a Python frame is printed */
static int python_name(const char *n)
{
	const char *p = strstr(n, ".py:");

	return p && strstr(n, " (") && ends_with(n, ")");
}

/*
 * Go's symbols are import/path.Func, pkg.(*T).Method, pkg.Func.func1:
 * a lower-case package, a dot, no C++ "::" nor spaces. GCC's clones
 * (f.cold, f.isra.0, f.part.1, f.constprop.0) are C.
 */
static int go_name(const char *n)
{
	static const char *const clones[] = { ".cold", ".isra.", ".part.", ".constprop.",
					      ".lto_priv.", ".localalias", ".plt" };
	const char *dot = strchr(n, '.');

	if (!dot || dot == n || n[0] < 'a' || n[0] > 'z' || strstr(n, "::") || strchr(n, ' ') ||
	    !(dot[1] == '(' || (dot[1] >= 'A' && dot[1] <= 'Z') || (dot[1] >= 'a' && dot[1] <= 'z')))
		return 0;
	for (size_t i = 0; i < sizeof(clones) / sizeof(clones[0]); i++)
		if (strstr(n, clones[i]))
			return 0;
	for (const char *p = n; p < dot; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '/' ||
		      *p == '-' || *p == '.'))
			return 0;
	return 1;
}

/* JIT code lives in anonymous memory (perf maps, jitdump name it). */
static int jit_dso(const char *d)
{
	return !strcmp(d, "[anon]") || !strncmp(d, "memfd:", 6) || !strncmp(d, "/memfd:", 7) ||
	       strstr(d, "/perf-") || strstr(d, "jitted-") || !strcmp(d, "//anon");
}

enum svg_class svg_class__of(const struct profile *p, const struct prof_frame *f, const char *name)
{
	if (f && f->kind == PROFILE_FRAME_KERNEL)
		return lock_name(name) ? SVGC_LOCK : SVGC_KERNEL;
	if (f && f->kind == PROFILE_FRAME_PYTHON)
		return SVGC_PYTHON;
	if (lock_name(name))
		return SVGC_LOCK;
	if (ends_with(name, "_[k]"))
		return SVGC_KERNEL;
	if (name[0] == '[')
		return SVGC_MARKER;
	if (f && f->kind == PROFILE_FRAME_MARKER)
		return SVGC_MARKER;
	if (ends_with(name, "_[j]") || (f && f->dso && jit_dso(prof__str(p, f->dso))))
		return SVGC_JIT;
	if (python_name(name))
		return SVGC_PYTHON;
	if (go_name(name))
		return SVGC_GO;
	return SVGC_NATIVE;
}

/* A hue scaled by v in [0, 1] (flamegraph.pl's named colours). */
static void hue(const char *h, double v, int *r, int *g, int *b)
{
	if (!strcmp(h, "red"))
		*r = 200 + (int)(55 * v), *g = *b = 50 + (int)(80 * v);
	else if (!strcmp(h, "green"))
		*g = 200 + (int)(55 * v), *r = *b = 50 + (int)(60 * v);
	else if (!strcmp(h, "blue"))
		*b = 205 + (int)(50 * v), *r = *g = 80 + (int)(60 * v);
	else if (!strcmp(h, "yellow"))
		*r = *g = 175 + (int)(55 * v), *b = 50 + (int)(20 * v);
	else if (!strcmp(h, "purple"))
		*r = *b = 190 + (int)(65 * v), *g = 80 + (int)(60 * v);
	else if (!strcmp(h, "aqua"))
		*r = 50 + (int)(60 * v), *g = *b = 165 + (int)(55 * v);
	else if (!strcmp(h, "orange"))
		*r = 225 + (int)(30 * v), *g = 130 + (int)(50 * v), *b = (int)(30 * v);
	else /* grey */
		*r = *g = *b = 150 + (int)(50 * v);
}

/* What each class looks like in the runtime palette, and its legend. */
static const struct {
	const char *hue; /* NULL: hot */
	const char *label;
} runtime_hues[SVGC__COUNT] = {
	[SVGC_NATIVE] = { NULL, "native" }, [SVGC_KERNEL] = { "orange", "kernel" },
	[SVGC_LOCK] = { "purple", "lock" }, [SVGC_PYTHON] = { "green", "Python" },
	[SVGC_JIT] = { "aqua", "JIT" },	    [SVGC_GO] = { "yellow", "Go" },
	[SVGC_MARKER] = { "grey", "marker" },
};

/* flamegraph.pl's language palettes: which hue a name gets. */
static const char *language_hue(enum svg_palette pal, enum svg_class c, const char *n)
{
	if (c == SVGC_KERNEL || ends_with(n, "_[k]"))
		return "orange";
	if (c == SVGC_MARKER)
		return "grey";
	switch (pal) {
	case SVG_PAL_JAVA: /* JIT-compiled green, inlined aqua, C++ yellow, JVM/system red */
		if (ends_with(n, "_[i]"))
			return "aqua";
		if (ends_with(n, "_[j]") || c == SVGC_JIT || strchr(n, '/') ||
		    (strchr(n, '.') && !strstr(n, "::") && c != SVGC_GO))
			return "green";
		return strstr(n, "::") ? "yellow" : "red";
	case SVG_PAL_JS: /* JavaScript green, C++ yellow, system red */
		if (ends_with(n, "_[j]") || c == SVGC_JIT || strstr(n, ".js") || strchr(n, '/') ||
		    n[0] == ' ')
			return "green";
		return strstr(n, "::") ? "yellow" : "red";
	case SVG_PAL_PERL: /* Perl green, its packages' subs yellow, system red */
		if (strstr(n, "Perl") || strstr(n, ".pl"))
			return "green";
		return strstr(n, "::") ? "yellow" : "red";
	case SVG_PAL_PYTHON: /* Python green, the interpreter yellow, system red */
		if (c == SVGC_PYTHON)
			return "green";
		return !strncmp(n, "_Py", 3) || !strncmp(n, "Py", 2) ? "yellow" : "red";
	default:
		return NULL;
	}
}

void svg_color(const struct svg_color_in *in, char *buf, size_t size)
{
	const double v1 = in->v1, v2 = in->v2, v3 = in->v3;
	const char *h = NULL;
	int r, g, b;

	switch (in->palette) {
	case SVG_PAL_RUNTIME:
		h = runtime_hues[in->cls].hue;
		if (!h && in->off_cpu) /* waits: blue, as before */
			r = 70 + (int)(60 * v1), g = 110 + (int)(70 * v2), b = 190 + (int)(60 * v3);
		else if (!h) /* hot, kept red of the kernel's orange and Go's yellow */
			r = 200 + (int)(55 * v3), g = 40 + (int)(80 * v1), b = 20 + (int)(40 * v2);
		else
			hue(h, v1, &r, &g, &b);
		break;
	case SVG_PAL_HOT:
		r = 205 + (int)(50 * v3), g = (int)(230 * v1), b = (int)(55 * v2);
		break;
	case SVG_PAL_MEM:
		r = 0, g = 190 + (int)(50 * v2), b = (int)(210 * v1);
		break;
	case SVG_PAL_IO:
		r = g = 80 + (int)(60 * v1), b = 190 + (int)(55 * v2);
		break;
	case SVG_PAL_JAVA:
	case SVG_PAL_JS:
	case SVG_PAL_PERL:
	case SVG_PAL_PYTHON:
		hue(language_hue(in->palette, in->cls, in->name), v1, &r, &g, &b);
		break;
	default:
		hue(palette_names[in->palette < SVG_PAL__COUNT ? in->palette : 0], v1, &r, &g, &b);
	}
	snprintf(buf, size, "#%02x%02x%02x", r & 0xff, g & 0xff, b & 0xff);
}

/*
 * --hash: like flamegraph.pl's, a value that the first characters weigh
 * most, so similar names (one package, one prefix) get similar colours.
 * Without it the colour is a uniform hash of the whole name (still the
 * same for one name in every graph).
 */
double svg_prefix_hash(const char *s, int reverse)
{
	size_t n = strlen(s);
	double v = 0, w = 1, max = 1;

	for (size_t k = 0; k < n && k < 3; k++) {
		unsigned char c = (unsigned char)s[reverse ? n - 1 - k : k];
		unsigned mod = 10 + (unsigned)k;

		v += (double)(c % mod) / (double)(mod - 1) * w;
		max += w;
		w *= 0.7;
	}
	return 1 - v / max;
}

void svg_legend(FILE *f, const unsigned *present, double x, double y)
{
	for (int c = 0; c < SVGC__COUNT; c++) {
		struct svg_color_in in = { .palette = SVG_PAL_RUNTIME, .cls = (enum svg_class)c,
					   .v1 = 0.5, .v2 = 0.5, .v3 = 0.5, .name = "" };
		char color[8];

		if (!present[c] || c == SVGC_MARKER)
			continue;
		svg_color(&in, color, sizeof(color));
		fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"10\" height=\"10\" fill=\"%s\"/>"
			   "<text class=\"legend\" x=\"%.0f\" y=\"%.0f\">%s</text>\n",
			x, y - 9, color, x + 14, y, runtime_hues[c].label);
		x += 14 + 7.2 * (double)strlen(runtime_hues[c].label) + 16;
	}
}

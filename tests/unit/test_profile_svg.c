// SPDX-License-Identifier: MIT
/* The SVG flame graph writer: content, geometry, escaping, size bounds. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/output.h"
#include "profile/profile.h"
#include "testlib.h"

TEST_MAIN();

#define WIDTH_PX 1180.0 /* 1200 minus two 10 px margins */

static char *svg_of(const struct profile *p, size_t *len_out)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (profile__write_svg(p, f)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	if (len_out)
		*len_out = len;
	return buf;
}

static struct profile *from_folded(uint32_t kind, const char *text)
{
	struct profile_meta m = { .kind = kind, .hz = 99, .target_pid = 1234,
				  .target_comm = "server", .duration_ns = 10000000000ull };
	struct profile *p = profile__new(&m);
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	if (!p || !f || profile__read_folded(p, f, NULL)) {
		profile__free(p);
		p = NULL;
	}
	if (f)
		fclose(f);
	return p;
}

/* Width of the rect that follows "<title>NAME (" at depth y, or -1. */
static double frame_width(const char *svg, const char *name, int nth)
{
	char key[256];
	const char *s = svg, *r;
	double w = -1;

	snprintf(key, sizeof(key), "<title>%s (", name);
	for (int i = 0; i <= nth; i++) {
		s = strstr(s, key);
		if (!s)
			return -1;
		s += strlen(key);
	}
	r = strstr(s, "width=\"");
	if (r && sscanf(r, "width=\"%lf\"", &w) != 1)
		w = -1;
	return w;
}

static int near(double a, double b)
{
	return a - b < 0.011 && b - a < 0.011;
}

TEST(svg_should_draw_every_frame_with_a_width_proportional_to_its_weight)
{
	struct profile *p = from_folded(PROFILE_CPU, "server;main;parse 30\n"
						     "server;main;parse;lex 10\n"
						     "server;main;eval 55\n"
						     "server;gc 5\n");
	char *svg = svg_of(p, NULL);

	CHECK(svg);
	CHECK(near(frame_width(svg, "all", 0), WIDTH_PX));
	CHECK(near(frame_width(svg, "server", 0), WIDTH_PX));
	CHECK(near(frame_width(svg, "main", 0), WIDTH_PX * 95 / 100));
	CHECK(near(frame_width(svg, "parse", 0), WIDTH_PX * 40 / 100));
	CHECK(near(frame_width(svg, "lex", 0), WIDTH_PX * 10 / 100));
	CHECK(near(frame_width(svg, "eval", 0), WIDTH_PX * 55 / 100));
	CHECK(near(frame_width(svg, "gc", 0), WIDTH_PX * 5 / 100));
	CHECK(strstr(svg, "<title>parse (40 samples, 40.00%)</title>"));
	CHECK(strstr(svg, "<title>all (100 samples, 100%)</title>"));
	free(svg);
	profile__free(p);
}

TEST(svg_title_should_say_what_was_measured_for_whom_and_how_long)
{
	struct profile *p = from_folded(PROFILE_CPU, "server;main 1\n");
	struct profile *q = from_folded(PROFILE_FUTEX, "server;main;pthread_mutex_lock 2500\n");
	char *a = svg_of(p, NULL), *b = svg_of(q, NULL);

	CHECK(a && b);
	CHECK(strstr(a, ">On-CPU samples at 99 Hz</text>"));
	CHECK(strstr(a, "target: server (pid 1234)"));
	CHECK(strstr(a, "duration 10.00 s"));
	CHECK(strstr(b, ">Futex wait time"));
	/* 2500 us of wait shows as time, not as a count */
	CHECK(strstr(b, "<title>pthread_mutex_lock (2.5 ms, 100.00%)</title>"));
	CHECK(strstr(b, "in 1 waits"));
	free(a);
	free(b);
	profile__free(p);
	profile__free(q);
}

TEST(svg_should_escape_markup_and_replace_invalid_utf8)
{
	struct profile_meta m = { .kind = PROFILE_CPU, .target_comm = "a<b" };
	struct profile *p = profile__new(&m);
	struct profile_frame fr[] = {
		{ .name = "std::vector<int, std::allocator<int> >::push_back(int&&)" },
		{ .name = "bad\xff\xfe utf8 \xe2\x82" },
		{ .name = "caf\xc3\xa9 \"quoted\"" },
	};
	char *svg;

	CHECK_INT(profile__add(p, "a<b", fr, 3, 1), 0);
	svg = svg_of(p, NULL);
	CHECK(svg);
	CHECK(strstr(svg, "std::vector&lt;int, std::allocator&lt;int&gt; &gt;::push_back(int&amp;&amp;)"));
	CHECK(strstr(svg, "bad?? utf8 ??"));
	CHECK(strstr(svg, "caf\xc3\xa9 &quot;quoted&quot;"));
	CHECK(!strstr(svg, "a<b"));
	free(svg);
	profile__free(p);
}

TEST(svg_should_drop_frames_narrower_than_a_tenth_of_a_pixel_and_say_so)
{
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 99 };
	struct profile *p = profile__new(&m);
	struct profile_frame fr[2] = { { .name = "main" } };
	char name[32], *svg;

	/* one wide leaf and 2000 leaves of 1/100000 of the total each */
	fr[1].name = "wide";
	CHECK_INT(profile__add(p, "app", fr, 2, 98000), 0);
	for (int i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "narrow_%d", i);
		fr[1].name = name;
		CHECK_INT(profile__add(p, "app", fr, 2, 1), 0);
	}
	svg = svg_of(p, NULL);
	CHECK(svg);
	CHECK(frame_width(svg, "wide", 0) > 1000);
	CHECK(!strstr(svg, "narrow_"));
	CHECK(strstr(svg, "2,000 frames narrower than 0.1 px not drawn"));
	/* their weight still counts in main */
	CHECK(near(frame_width(svg, "main", 0), WIDTH_PX));
	free(svg);
	profile__free(p);
}

TEST(svg_of_an_empty_profile_should_say_no_samples)
{
	struct profile_meta m = { .kind = PROFILE_CPU };
	struct profile *p = profile__new(&m);
	char *svg = svg_of(p, NULL);

	CHECK(svg);
	CHECK(strstr(svg, ">no samples</text>"));
	CHECK(strstr(svg, "</svg>\n"));
	free(svg);
	profile__free(p);
}

TEST(svg_should_stay_small_for_many_distinct_stacks)
{
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 999 };
	struct profile *p = profile__new(&m);
	struct profile_frame fr[8];
	char names[8][32];
	size_t len = 0;
	char *svg;

	for (int i = 0; i < 50000; i++) {
		for (int k = 0; k < 8; k++) {
			/* level k has 8^(k/2) distinct names under each parent */
			snprintf(names[k], sizeof(names[k]), "f%d_%d", k, (i >> (3 * (7 - k))) & 7);
			fr[k] = (struct profile_frame){ .name = names[k] };
		}
		CHECK_INT(profile__add(p, "app", fr, 8, 1 + (i % 7 == 0) * 20), 0);
	}
	svg = svg_of(p, &len);
	CHECK(svg);
	/* bounded by width / 0.1 px per level, not by the number of stacks */
	CHECK_MSG(len < 4 * 1024 * 1024, "svg is %zu bytes", len);
	free(svg);
	profile__free(p);
}

/* The real XML parser check: Python's, when it is installed. */
TEST(svg_should_be_well_formed_xml)
{
	struct profile_meta m = { .kind = PROFILE_FUTEX, .target_comm = "x&y",
				  .target_cmdline = "./x --flag=\"<1>\"" };
	struct profile *p = profile__new(&m);
	struct profile_frame fr[] = { { .name = "a<b>&c" }, { .name = "\x01\x7f ctl" },
				      { .name = "\xc3\x28 bad" }, { .dso = "/lib/libz.so", .rel_addr = 0x10 } };
	char path[] = "/tmp/sfprof-svg-XXXXXX", cmd[512];
	FILE *f;
	int fd, rc;

	if (system("python3 -c 'import xml.dom.minidom' >/dev/null 2>&1") != 0)
		SKIP("python3 with xml.dom.minidom not installed");
	CHECK_INT(profile__add(p, "x&y-1/2", fr, 4, 123456789), 0);
	CHECK_INT(profile__add(p, "lock:0x1234", fr, 2, 1000), 0);
	fd = mkstemp(path);
	CHECK(fd >= 0);
	f = fdopen(fd, "w");
	CHECK_INT(profile__write_svg(p, f), 0);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "python3 -c 'import sys, xml.dom.minidom as m; "
				   "d = m.parse(sys.argv[1]); "
				   "sys.exit(0 if d.documentElement.tagName == \"svg\" else 3)' %s", path);
	rc = system(cmd);
	unlink(path);
	CHECK_INT(rc, 0);
	profile__free(p);
}

TEST(svg_tooltip_should_show_the_file_and_line_where_the_function_spends_most)
{
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 99 };
	struct profile *p = profile__new(&m);
	/* work at two lines: 7 samples at :12, 3 at :15; main has no line */
	struct profile_frame a[] = {
		{ .name = "main", .dso = "/bin/x", .rel_addr = 0x10 },
		{ .name = "work", .dso = "/bin/x", .rel_addr = 0x20, .file = "/src/w.c", .line = 12 },
	};
	struct profile_frame b[] = {
		{ .name = "main", .dso = "/bin/x", .rel_addr = 0x10 },
		{ .name = "work", .dso = "/bin/x", .rel_addr = 0x28, .file = "/src/w.c", .line = 15 },
	};
	char *svg;

	CHECK(p);
	CHECK_INT(profile__add(p, "x", a, 2, 7), 0);
	CHECK_INT(profile__add(p, "x", b, 2, 3), 0);
	svg = svg_of(p, NULL);
	CHECK(svg);
	CHECK_MSG(strstr(svg, "<title>work (10 samples, 100.00%) /src/w.c:12</title>"),
		  "no work title with /src/w.c:12");
	CHECK(strstr(svg, "<title>main (10 samples, 100.00%)</title>"));
	free(svg);
	profile__free(p);
}

TEST(svg_flamechart_should_draw_the_kept_order_merging_neighbours_and_count_the_cut)
{
	struct profile_meta m = { .kind = PROFILE_CPU, .hz = 99 };
	struct profile *p = profile__new(&m);
	struct profile_render r = { .flamechart = 1 };
	static const char *const seq[] = { "a", "a", "b", "a", "c", "d" };
	char *svg;

	CHECK(p);
	CHECK_INT(profile__keep_order(p, 0), -EINVAL);
	CHECK_INT(profile__keep_order(p, 3), 0);
	CHECK(profile__keeps_order(p));
	for (size_t i = 0; i < 6; i++) {
		struct profile_frame f[2] = { { .name = "main" }, { .name = seq[i] } };

		CHECK_INT(profile__add(p, "app", f, 2, 1), 0);
		CHECK_INT(profile__order_push(p, profile__last_stack(p), 1), 0);
	}
	CHECK_INT(profile__order_push(p, 99, 1), -EINVAL);
	/* runs a(2), b, a: c and d are past the bound */
	CHECK_U64(profile__order_cut(p), 2);
	CHECK_INT(profile__set_render(p, &r), 0);
	svg = svg_of(p, NULL);
	CHECK(svg);
	if (svg) {
		CHECK(strstr(svg, "Flame chart: On-CPU samples at 99 Hz") != NULL);
		CHECK(strstr(svg, "the last 2 samples not drawn") != NULL);
		/* in order, a twice: 2 of the 4 drawn samples, then 1 */
		CHECK(near(frame_width(svg, "a", 0), WIDTH_PX / 2));
		CHECK(near(frame_width(svg, "b", 0), WIDTH_PX / 4));
		CHECK(near(frame_width(svg, "a", 1), WIDTH_PX / 4));
		CHECK(!strstr(svg, "<title>c ("));
		/* main and app span all four, once each */
		CHECK(near(frame_width(svg, "main", 0), WIDTH_PX));
		CHECK(frame_width(svg, "main", 1) < 0);
		free(svg);
	}
	/* without --flamechart: the flame graph of all six */
	r.flamechart = 0;
	CHECK_INT(profile__set_render(p, &r), 0);
	svg = svg_of(p, NULL);
	CHECK(svg && near(frame_width(svg, "a", 0), WIDTH_PX / 2) && frame_width(svg, "a", 1) < 0 &&
	      near(frame_width(svg, "c", 0), WIDTH_PX / 6));
	free(svg);
	profile__free(p);
}

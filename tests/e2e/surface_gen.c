// SPDX-License-Identifier: MIT
/*
 * Test helper for the surface end-to-end tests (compiled by them, not by
 * the Makefile): reads folded stacks on stdin into a profile and writes
 * it in one format, so the SVG and pprof writers can be checked in a
 * browser and by `go tool pprof` without a live capture.
 *
 *   surface_gen [-e cpu|futex] [-F HZ] [-p PID] [-c COMM] [-d SEC] [-t TITLE] [-I] [-R]
 *               [-W PX] [-S SUBTITLE] [-C COUNTNAME] [-M PX|PCT%] [-P PALETTE] [-H]
 *               -f FMT -o OUT < FOLDED
 * -t, -I and -R are sfprof's --title, --inverted and --reverse; -W, -S,
 * -C, -M, -P and -H its --width, --subtitle, --countname, --minwidth,
 * --colors and --hash.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "profile/profile.h"

int main(int argc, char **argv)
{
	struct profile_meta m = { .kind = PROFILE_CPU };
	struct profile_render rd = { 0 };
	const char *out = NULL, *fmt = NULL;
	struct profile *p;
	size_t bad = 0;
	int c, f, err;

	while ((c = getopt(argc, argv, "e:F:p:c:d:f:o:t:IRW:S:C:M:P:H")) != -1) {
		switch (c) {
		case 'e': m.kind = strcmp(optarg, "futex") ? PROFILE_CPU : PROFILE_FUTEX; break;
		case 'F': m.hz = (uint32_t)atoi(optarg); break;
		case 'p': m.target_pid = (uint32_t)atoi(optarg); break;
		case 'c': m.target_comm = optarg; break;
		case 'd': m.duration_ns = (uint64_t)(atof(optarg) * 1e9); break;
		case 'f': fmt = optarg; break;
		case 'o': out = optarg; break;
		case 't': rd.title = optarg; break;
		case 'I': rd.inverted = 1; break;
		case 'R': rd.reverse = 1; break;
		case 'W': rd.width = atof(optarg); break;
		case 'S': rd.subtitle = optarg; break;
		case 'C': rd.countname = optarg; break;
		case 'M':
			if (strchr(optarg, '%'))
				rd.min_pct = atof(optarg);
			else
				rd.min_px = atof(optarg);
			break;
		case 'P':
			rd.palette = svg_palette__parse(optarg);
			if (rd.palette < 0)
				return 2;
			break;
		case 'H': rd.hash = 1; break;
		default: return 2;
		}
	}
	f = fmt ? profile_format__parse(fmt) : PROFILE_FMT_AUTO;
	if (f < 0 || !out) {
		fprintf(stderr, "usage: surface_gen [-e cpu|futex] [-F HZ] [-p PID] [-c COMM] [-d SEC] -f FMT -o OUT < FOLDED\n");
		return 2;
	}
	p = profile__new(&m);
	if (!p)
		return 1;
	err = profile__read_folded(p, stdin, &bad);
	if (err) {
		fprintf(stderr, "surface_gen: stdin:%zu: %s\n", bad, strerror(-err));
		return 1;
	}
	err = profile__set_render(p, &rd);
	if (!err)
		err = profile__write(p, (enum profile_format)f, out);
	if (err) {
		fprintf(stderr, "surface_gen: %s: %s\n", out, strerror(-err));
		return 1;
	}
	profile__free(p);
	return 0;
}

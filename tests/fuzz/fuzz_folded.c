// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: folded text (profile__read_folded) through every
 * writer. Arbitrary bytes become frame names, so this also drives the SVG
 * writer's XML escaping and UTF-8 repair and the pprof encoder. Checks
 * one invariant: folded output read back and written again is unchanged
 * (the writer's output is always valid reader input).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "profile/profile.h"

static char *folded_of(const struct profile *p, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		abort();
	if (profile__write_folded(p, f))
		abort();
	fclose(f);
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (int kind = PROFILE_CPU; kind <= PROFILE_FUTEX; kind++) {
		struct profile_meta m = { .kind = (uint32_t)kind, .hz = 99, .target_comm = "fuzz" };
		struct profile *p = profile__new(&m), *q = profile__new(&m);
		FILE *in = fmemopen((void *)data, size, "r"), *null = fopen("/dev/null", "w");
		char *a, *b;
		size_t alen, blen;

		if (!p || !q || !null)
			abort();
		if (in && size) {
			(void)profile__read_folded(p, in, NULL);
			fclose(in);
		}
		if (profile__write_svg(p, null) || profile__write_pprof(p, null))
			abort();
		a = folded_of(p, &alen);
		in = fmemopen(a, alen, "r");
		if (alen && (!in || profile__read_folded(q, in, NULL)))
			abort(); /* the writer's own output must parse */
		if (in)
			fclose(in);
		b = folded_of(q, &blen);
		if (alen != blen || memcmp(a, b, alen))
			abort();
		free(a);
		free(b);
		fclose(null);
		profile__free(p);
		profile__free(q);
	}
	return 0;
}

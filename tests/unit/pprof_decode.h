/* SPDX-License-Identifier: MIT */
/*
 * A small reader of sfprof's pprof output for the unit tests: gunzip
 * with zlib, then the profile.proto fields the writer emits, into plain
 * arrays (struct decoded). Static functions: include it once per test.
 */
#ifndef SFPROF_TEST_PPROF_DECODE_H
#define SFPROF_TEST_PPROF_DECODE_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "output/output.h"
#include "profile/profile.h"

#define MAXN 256

struct dec_loc { uint64_t id, mapping, address, function, functions[4]; int nlines; };
struct dec_func { uint64_t id, name, system_name, filename, start_line; };
struct dec_map {
	uint64_t id, start, limit, offset, filename, build_id;
	uint64_t has_functions, has_filenames, has_line_numbers, has_inline_frames;
};
struct dec_label { uint64_t key, str, num; };
struct dec_sample {
	uint64_t locs[64];
	int nlocs;
	uint64_t value, values[4]; /* value: the first */
	int nvalues;
	struct dec_label labels[8];
	int nlabels;
};

struct decoded {
	char *strs[MAXN];
	int nstrs;
	struct dec_loc locs[MAXN];
	int nlocs;
	struct dec_func funcs[MAXN];
	int nfuncs;
	struct dec_map maps[16];
	int nmaps;
	struct dec_sample samples[MAXN];
	int nsamples;
	uint64_t st_type, st_unit, nsample_types, pt_type, pt_unit, period, duration, time_nanos;
	uint64_t st_types[4], st_units[4]; /* st_type/st_unit: the first */
	uint64_t default_type, comment;
	int bad;
};

static int varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (*p >= end)
			return -1;
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
	}
	return -1;
}

/* Calls fn(field, wiretype, varint value, bytes, len) for each field. */
static int fields(const uint8_t *p, const uint8_t *end,
		  void (*fn)(void *, uint32_t, uint64_t, const uint8_t *, size_t), void *ctx)
{
	while (p < end) {
		uint64_t key, v = 0;

		if (varint(&p, end, &key))
			return -1;
		if ((key & 7) == 0) {
			if (varint(&p, end, &v))
				return -1;
			fn(ctx, (uint32_t)(key >> 3), v, NULL, 0);
		} else if ((key & 7) == 2) {
			if (varint(&p, end, &v) || v > (uint64_t)(end - p))
				return -1;
			fn(ctx, (uint32_t)(key >> 3), v, p, v);
			p += v;
		} else {
			return -1;
		}
	}
	return 0;
}

struct two { uint64_t a, b; };
static void valuetype_fn(void *c, uint32_t f, uint64_t v, const uint8_t *b, size_t n)
{
	(void)b, (void)n;
	if (f == 1)
		((struct two *)c)->a = v;
	if (f == 2)
		((struct two *)c)->b = v;
}

static void line_fn(void *c, uint32_t f, uint64_t v, const uint8_t *b, size_t n)
{
	(void)b, (void)n;
	if (f == 1)
		*(uint64_t *)c = v;
}

static void loc_fn(void *c, uint32_t f, uint64_t v, const uint8_t *b, size_t n)
{
	struct dec_loc *l = c;

	if (f == 1) l->id = v;
	if (f == 2) l->mapping = v;
	if (f == 3) l->address = v;
	if (f == 4) {
		uint64_t fn = 0;

		fields(b, b + n, line_fn, &fn);
		if (!l->nlines)
			l->function = fn;
		if (l->nlines < 4)
			l->functions[l->nlines] = fn;
		l->nlines++;
	}
}

static void func_fn(void *c, uint32_t f, uint64_t v, const uint8_t *b, size_t n)
{
	struct dec_func *fu = c;

	(void)b, (void)n;
	if (f == 1) fu->id = v;
	if (f == 2) fu->name = v;
	if (f == 3) fu->system_name = v;
	if (f == 4) fu->filename = v;
	if (f == 5) fu->start_line = v;
}

static void map_fn(void *c, uint32_t f, uint64_t v, const uint8_t *b, size_t n)
{
	struct dec_map *m = c;

	(void)b, (void)n;
	if (f == 1) m->id = v;
	if (f == 2) m->start = v;
	if (f == 3) m->limit = v;
	if (f == 4) m->offset = v;
	if (f == 5) m->filename = v;
	if (f == 6) m->build_id = v;
	if (f == 7) m->has_functions = v;
	if (f == 8) m->has_filenames = v;
	if (f == 9) m->has_line_numbers = v;
	if (f == 10) m->has_inline_frames = v;
}

static void label_fn(void *c, uint32_t f, uint64_t v, const uint8_t *b, size_t n)
{
	struct dec_label *l = c;

	(void)b, (void)n;
	if (f == 1) l->key = v;
	if (f == 2) l->str = v;
	if (f == 3) l->num = v;
}

static void sample_fn(void *c, uint32_t f, uint64_t v, const uint8_t *b, size_t n)
{
	struct dec_sample *s = c;
	const uint8_t *end = b + n;

	(void)v;
	if (f == 1) {
		while (b < end && s->nlocs < 64 && !varint(&b, end, &s->locs[s->nlocs]))
			s->nlocs++;
	}
	if (f == 2) {
		uint64_t x;

		while (b < end && !varint(&b, end, &x)) {
			if (s->nvalues < 4)
				s->values[s->nvalues] = x;
			s->nvalues++;
		}
		s->value = s->values[0];
	}
	if (f == 3 && s->nlabels < 8)
		fields(b, b + n, label_fn, &s->labels[s->nlabels++]);
}

static void profile_fn(void *c, uint32_t f, uint64_t v, const uint8_t *b, size_t n)
{
	struct decoded *d = c;
	struct two t = { 0, 0 };

	switch (f) {
	case 1:
		fields(b, b + n, valuetype_fn, &t);
		if (!d->nsample_types)
			d->st_type = t.a, d->st_unit = t.b;
		if (d->nsample_types < 4)
			d->st_types[d->nsample_types] = t.a, d->st_units[d->nsample_types] = t.b;
		d->nsample_types++;
		break;
	case 2:
		if (d->nsamples < MAXN)
			fields(b, b + n, sample_fn, &d->samples[d->nsamples++]);
		break;
	case 3:
		if (d->nmaps < 16)
			fields(b, b + n, map_fn, &d->maps[d->nmaps++]);
		break;
	case 4:
		if (d->nlocs < MAXN)
			fields(b, b + n, loc_fn, &d->locs[d->nlocs++]);
		break;
	case 5:
		if (d->nfuncs < MAXN)
			fields(b, b + n, func_fn, &d->funcs[d->nfuncs++]);
		break;
	case 6:
		if (d->nstrs < MAXN)
			d->strs[d->nstrs++] = strndup((const char *)b, n);
		break;
	case 9: d->time_nanos = v; break;
	case 10: d->duration = v; break;
	case 11:
		fields(b, b + n, valuetype_fn, &t);
		d->pt_type = t.a, d->pt_unit = t.b;
		break;
	case 12: d->period = v; break;
	case 13: d->comment = v; break;
	case 14: d->default_type = v; break;
	}
}

static int decode(const struct profile *p, struct decoded *d)
{
	char *gz = NULL;
	size_t gzlen = 0, cap = 1 << 20;
	uint8_t *raw = malloc(cap);
	FILE *f = open_memstream(&gz, &gzlen);
	z_stream z = { 0 };
	int rc;

	memset(d, 0, sizeof(*d));
	if (!raw || !f || profile__write_pprof(p, f))
		return -1;
	fclose(f);
	if ((unsigned char)gz[0] != 0x1f || (unsigned char)gz[1] != 0x8b)
		return -2;
	inflateInit2(&z, 15 + 16);
	z.next_in = (Bytef *)gz;
	z.avail_in = (uInt)gzlen;
	z.next_out = raw;
	z.avail_out = (uInt)cap;
	rc = inflate(&z, Z_FINISH);
	inflateEnd(&z);
	free(gz);
	if (rc != Z_STREAM_END)
		return -3;
	rc = fields(raw, raw + z.total_out, profile_fn, d);
	free(raw);
	return rc;
}

static void release(struct decoded *d)
{
	for (int i = 0; i < d->nstrs; i++)
		free(d->strs[i]);
}

static const char *str(const struct decoded *d, uint64_t i)
{
	return i < (uint64_t)d->nstrs ? d->strs[i] : "<out of range>";
}

static const struct dec_loc *loc(const struct decoded *d, uint64_t id)
{
	for (int i = 0; i < d->nlocs; i++)
		if (d->locs[i].id == id)
			return &d->locs[i];
	return NULL;
}

static const char *loc_name(const struct decoded *d, uint64_t id)
{
	const struct dec_loc *l = loc(d, id);

	if (!l)
		return "<no location>";
	for (int i = 0; i < d->nfuncs; i++)
		if (d->funcs[i].id == l->function)
			return str(d, d->funcs[i].name);
	return "<no function>";
}

#endif

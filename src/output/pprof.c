// SPDX-License-Identifier: MIT
/*
 * pprof output: a gzip-compressed profile.proto (github.com/google/pprof,
 * proto/profile.proto), encoded by hand and streamed through zlib.
 *
 * Mapping of the profile onto profile.proto:
 *  - string_table: the profile's interned strings in id order (id 0 is
 *    "", as the format requires), then a few constants.
 *  - one Mapping per (binary path, build-id); has_functions is set
 *    because sfprof symbolizes itself. Mappings get disjoint synthetic
 *    address ranges (we only know file-relative addresses): a location's
 *    address is memory_start + rel_addr, so the address a consumer
 *    normalises (address - memory_start + file_offset) is rel_addr again.
 *    Kernel frames keep their own addresses in a "[kernel.kallsyms]"
 *    mapping.
 *  - one Location per distinct frame (address level), one Function per
 *    (name, user|kernel). Unnamed frames are named "binary+0xOFF".
 *  - the root frame (comm, comm-pid/tid, lock:SYMBOL) is the outermost
 *    location of each sample, a function with no mapping, so pprof's
 *    flame graph groups like the folded output does.
 *  - samples: one per distinct stack, locations leaf first; the value is
 *    samples (cpu) or nanoseconds (futex).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "output.h"
#include "profile.h"
#include "profile/profile_int.h"

enum { WT_VARINT = 0, WT_LEN = 2 };

/* profile.proto field numbers */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUETYPE_TYPE = 1, VALUETYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3, LABEL_KEY = 1, LABEL_STR = 2,
	MAPPING_ID = 1, MAPPING_START = 2, MAPPING_LIMIT = 3, MAPPING_OFFSET = 4,
	MAPPING_FILENAME = 5, MAPPING_BUILD_ID = 6, MAPPING_HAS_FUNCTIONS = 7,
	LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1,
	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3,
};

struct pbuf {
	uint8_t *d;
	size_t len, cap;
	int err;
};

static void pb_raw(struct pbuf *b, const void *p, size_t n)
{
	if (b->err)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		uint8_t *d;

		while (cap < b->len + n)
			cap *= 2;
		d = realloc(b->d, cap);
		if (!d) {
			b->err = -ENOMEM;
			return;
		}
		b->d = d;
		b->cap = cap;
	}
	memcpy(b->d + b->len, p, n);
	b->len += n;
}

static void pb_varint(struct pbuf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	pb_raw(b, tmp, n);
}

static void pb_tag(struct pbuf *b, uint32_t field, uint32_t wt)
{
	pb_varint(b, (uint64_t)field << 3 | wt);
}

/* proto3: zero is the default and is not written */
static void pb_uint(struct pbuf *b, uint32_t field, uint64_t v)
{
	if (!v)
		return;
	pb_tag(b, field, WT_VARINT);
	pb_varint(b, v);
}

static void pb_bytes(struct pbuf *b, uint32_t field, const void *p, size_t n)
{
	pb_tag(b, field, WT_LEN);
	pb_varint(b, n);
	pb_raw(b, p, n);
}

/* Streams the top-level message through gzip into a FILE. */
struct pb_gz {
	z_stream z;
	FILE *f;
	struct pbuf buf; /* pending uncompressed bytes */
	int err;
	uint8_t out[64 * 1024];
};

static void gz_deflate(struct pb_gz *g, int flush)
{
	int ret;

	if (g->err)
		return;
	g->z.next_in = g->buf.d;
	g->z.avail_in = (uInt)g->buf.len;
	do {
		g->z.next_out = g->out;
		g->z.avail_out = sizeof(g->out);
		ret = deflate(&g->z, flush);
		if (ret == Z_STREAM_ERROR) {
			g->err = -EIO;
			return;
		}
		if (fwrite(g->out, 1, sizeof(g->out) - g->z.avail_out, g->f) !=
		    sizeof(g->out) - g->z.avail_out) {
			g->err = errno ? -errno : -EIO;
			return;
		}
	} while (g->z.avail_out == 0 || (flush == Z_FINISH && ret != Z_STREAM_END));
	g->buf.len = 0;
}

/* Append a length-delimited field (a sub-message or string). */
static void gz_field(struct pb_gz *g, uint32_t field, const void *p, size_t n)
{
	pb_bytes(&g->buf, field, p, n);
	if (g->buf.err && !g->err)
		g->err = g->buf.err;
	if (g->buf.len >= 256 * 1024)
		gz_deflate(g, Z_NO_FLUSH);
}

static void gz_varint_field(struct pb_gz *g, uint32_t field, uint64_t v)
{
	pb_uint(&g->buf, field, v);
}

static void gz_msg(struct pb_gz *g, uint32_t field, struct pbuf *m)
{
	if (m->err && !g->err)
		g->err = m->err;
	gz_field(g, field, m->d, m->len);
	m->len = 0;
}

struct pp_mapping {
	uint32_t dso, build_id;
	uint32_t next; /* next mapping (index + 1) with the same dso, 0 = none */
	uint32_t kernel;
	uint32_t identity; /* locations keep rel_addr as their address */
	uint64_t max_rel, min_rel;
	uint64_t start, limit;
};

struct pp_state {
	const struct profile *p;
	uint32_t nstr;
	/* extra strings appended after the profile's */
	const char **extra;
	uint32_t nr_extra, cap_extra;
	int diff; /* a prof__diff_merged profile: marked roots are BASE's */
	struct pp_mapping *maps;
	uint32_t nr_maps;
	uint32_t *map_of_dso; /* dso string id -> mapping index + 1 (chain head) */
	uint32_t *frame_map;  /* frame index -> mapping index + 1, 0 = none */
	uint32_t *func_user;  /* string id -> function id, user frames */
	uint32_t *func_kernel;
	uint32_t *root_loc;   /* root string id -> location id */
	uint32_t nr_funcs;
};

static uint32_t pp_str(struct pp_state *st, const char *s)
{
	for (uint32_t i = 0; i < st->nr_extra; i++) {
		if (!strcmp(st->extra[i], s))
			return st->nstr + i;
	}
	if (st->nr_extra == st->cap_extra) {
		uint32_t cap = st->cap_extra ? 2 * st->cap_extra : 16;
		const char **e = realloc(st->extra, cap * sizeof(*e));

		if (!e)
			return 0;
		st->extra = e;
		st->cap_extra = cap;
	}
	st->extra[st->nr_extra] = s;
	return st->nstr + st->nr_extra++;
}

static uint32_t frame_kernel(const struct prof_frame *f)
{
	return f->kind == PROFILE_FRAME_KERNEL;
}

/* Assign every frame its mapping; lay mappings out disjointly. */
static int pp_mappings(struct pp_state *st, const struct prof_frame *fr, uint32_t nfr)
{
	size_t cap = 0;
	uint32_t kernel_map = 0;
	uint64_t cursor = 1ull << 32;

	for (uint32_t i = 0; i < nfr; i++) {
		const struct prof_frame *f = &fr[i];
		uint32_t m = 0;

		if (frame_kernel(f) && !f->dso) {
			m = kernel_map;
		} else if (f->dso) {
			for (m = st->map_of_dso[f->dso]; m; m = st->maps[m - 1].next) {
				if (st->maps[m - 1].build_id == f->build_id)
					break;
			}
		} else {
			continue; /* marker: no mapping */
		}
		if (!m) {
			if (st->nr_maps + 1 > cap) {
				size_t ncap = cap ? cap * 2 : 16;
				void *n = realloc(st->maps, ncap * sizeof(*st->maps));

				if (!n)
					return -ENOMEM;
				st->maps = n;
				cap = ncap;
			}
			st->maps[st->nr_maps] = (struct pp_mapping){
				.dso = f->dso, .build_id = f->build_id,
				.kernel = frame_kernel(f) && !f->dso, .min_rel = UINT64_MAX };
			m = ++st->nr_maps;
			if (st->maps[m - 1].kernel) {
				kernel_map = m;
			} else {
				st->maps[m - 1].next = st->map_of_dso[f->dso];
				st->map_of_dso[f->dso] = m;
			}
		}
		if (f->rel_addr > st->maps[m - 1].max_rel)
			st->maps[m - 1].max_rel = f->rel_addr;
		if (f->rel_addr < st->maps[m - 1].min_rel)
			st->maps[m - 1].min_rel = f->rel_addr;
		st->frame_map[i] = m;
	}
	for (uint32_t m = 0; m < st->nr_maps; m++) {
		struct pp_mapping *mp = &st->maps[m];

		/* kernel-like addresses (a module's, or garbage) keep their own */
		if (mp->max_rel >= 1ull << 47)
			mp->identity = 1;
		if (mp->kernel || mp->identity) {
			mp->identity = 1;
			mp->start = mp->min_rel & ~0xfffull;
			mp->limit = (mp->max_rel | 0xfff) + 1;
			if (!mp->limit)
				mp->limit = UINT64_MAX;
			continue;
		}
		mp->start = cursor;
		mp->limit = cursor + ((mp->max_rel | 0xfff) + 1);
		/* next range on a 4 GiB boundary past this one */
		cursor = (mp->limit + (1ull << 32)) & ~((1ull << 32) - 1);
	}
	return 0;
}

static void pp_value_type(struct pp_state *st, struct pb_gz *g, uint32_t field, struct pbuf *m,
			  const char *type, const char *unit)
{
	pb_uint(m, VALUETYPE_TYPE, pp_str(st, type));
	pb_uint(m, VALUETYPE_UNIT, pp_str(st, unit));
	gz_msg(g, field, m);
}

static int pp_write(struct pp_state *st, struct pb_gz *g)
{
	const struct profile *p = st->p;
	const struct profile_meta *meta = profile__meta(p);
	const struct prof_stack *stacks;
	const struct prof_frame *fr;
	const uint32_t *ids = prof__ids(p);
	struct pbuf m = { 0 }, packed = { 0 }, sub = { 0 };
	uint32_t nfr, next_loc;
	size_t nst;
	char comment[512];
	uint32_t comment_id = 0;
	int cpu = meta->kind == PROFILE_CPU;
	/* the sample type off-CPU profilers use (async-profiler, Parca) */
	const char *wait = meta->kind == PROFILE_OFFCPU ? "offcpu" :
			   meta->kind == PROFILE_WALL ? "wall" : "wait";

	fr = prof__frames(p, &nfr);
	stacks = prof__stacks(p, &nst);

	/* sample_type, then the samples */
	if (cpu)
		pp_value_type(st, g, PROFILE_SAMPLE_TYPE, &m, "samples", "count");
	else
		pp_value_type(st, g, PROFILE_SAMPLE_TYPE, &m, wait, "nanoseconds");

	next_loc = nfr + 1; /* root locations come after the frames' */
	for (size_t i = 0; i < nst && !g->err; i++) {
		const struct prof_stack *s = &stacks[i];

		const char *root = prof__str(p, s->root);
		int is_base = st->diff && root[0] == PROF_DIFF_BASE_MARK[0];

		packed.len = 0;
		for (uint32_t k = s->n; k-- > 0;)
			pb_varint(&packed, (uint64_t)ids[s->off + k] + 1);
		if (s->root && !(is_base && !root[1])) {
			if (!st->root_loc[s->root])
				st->root_loc[s->root] = next_loc++;
			pb_varint(&packed, st->root_loc[s->root]);
		}
		if (packed.len)
			pb_bytes(&m, SAMPLE_LOCATION_ID, packed.d, packed.len);
		sub.len = 0;
		/* BASE negated and labelled, as pprof -diff_base does it */
		pb_varint(&sub, is_base ? (uint64_t)-(int64_t)s->weight : s->weight);
		pb_bytes(&m, SAMPLE_VALUE, sub.d, sub.len);
		if (is_base) {
			sub.len = 0;
			pb_uint(&sub, LABEL_KEY, pp_str(st, "pprof::base"));
			pb_uint(&sub, LABEL_STR, pp_str(st, "true"));
			pb_bytes(&m, SAMPLE_LABEL, sub.d, sub.len);
		}
		if (packed.err || sub.err)
			m.err = -ENOMEM;
		gz_msg(g, PROFILE_SAMPLE, &m);
	}

	for (uint32_t i = 0; i < st->nr_maps && !g->err; i++) {
		const struct pp_mapping *mp = &st->maps[i];

		pb_uint(&m, MAPPING_ID, i + 1);
		pb_uint(&m, MAPPING_START, mp->start);
		pb_uint(&m, MAPPING_LIMIT, mp->limit);
		pb_uint(&m, MAPPING_FILENAME, mp->kernel ? pp_str(st, "[kernel.kallsyms]") : mp->dso);
		pb_uint(&m, MAPPING_BUILD_ID, mp->build_id);
		pb_uint(&m, MAPPING_HAS_FUNCTIONS, 1);
		gz_msg(g, PROFILE_MAPPING, &m);
	}

	/* locations and functions of real frames */
	for (uint32_t i = 0; i < nfr && !g->err; i++) {
		const struct prof_frame *f = &fr[i];
		uint32_t name = f->name ? f->name : f->disp;
		uint32_t *fid = frame_kernel(f) ? &st->func_kernel[name] : &st->func_user[name];
		uint32_t map = st->frame_map[i];

		if (!*fid) {
			*fid = ++st->nr_funcs;
			pb_uint(&m, FUNCTION_ID, *fid);
			pb_uint(&m, FUNCTION_NAME, name);
			pb_uint(&m, FUNCTION_SYSTEM_NAME, name);
			gz_msg(g, PROFILE_FUNCTION, &m);
		}
		pb_uint(&m, LOCATION_ID, (uint64_t)i + 1);
		if (map) {
			const struct pp_mapping *mp = &st->maps[map - 1];

			pb_uint(&m, LOCATION_MAPPING_ID, map);
			pb_uint(&m, LOCATION_ADDRESS, mp->identity ? f->rel_addr : mp->start + f->rel_addr);
		}
		sub.len = 0;
		pb_uint(&sub, LINE_FUNCTION_ID, *fid);
		pb_bytes(&m, LOCATION_LINE, sub.d, sub.len);
		gz_msg(g, PROFILE_LOCATION, &m);
	}
	/* roots: a location and a function each, no mapping */
	for (uint32_t sid = 1; sid < st->nstr && !g->err; sid++) {
		uint32_t fid;

		if (!st->root_loc[sid])
			continue;
		fid = st->func_user[sid];
		if (!fid) {
			const char *name = prof__str(p, sid);
			uint32_t nid = st->diff && name[0] == PROF_DIFF_BASE_MARK[0]
					       ? pp_str(st, name + 1) : sid;

			fid = st->func_user[sid] = ++st->nr_funcs;
			pb_uint(&m, FUNCTION_ID, fid);
			pb_uint(&m, FUNCTION_NAME, nid);
			pb_uint(&m, FUNCTION_SYSTEM_NAME, nid);
			gz_msg(g, PROFILE_FUNCTION, &m);
		}
		pb_uint(&m, LOCATION_ID, st->root_loc[sid]);
		sub.len = 0;
		pb_uint(&sub, LINE_FUNCTION_ID, fid);
		pb_bytes(&m, LOCATION_LINE, sub.d, sub.len);
		gz_msg(g, PROFILE_LOCATION, &m);
	}

	/* comment: what and whom, as the SVG title says it */
	{
		int n = snprintf(comment, sizeof(comment), "sfprof %s%s%s",
				 cpu ? "on-CPU samples" :
				 meta->kind == PROFILE_OFFCPU ? "off-CPU time" :
				 meta->kind == PROFILE_WALL ? "wall-clock time" : "futex wait time",
				 meta->target_comm ? " of " : "",
				 meta->target_comm ? meta->target_comm : "");

		if (cpu && meta->hz && n > 0 && (size_t)n < sizeof(comment))
			n += snprintf(comment + n, sizeof(comment) - n, " at %u Hz", meta->hz);
		if (meta->target_pid && n > 0 && (size_t)n < sizeof(comment))
			snprintf(comment + n, sizeof(comment) - n, " (pid %u)", meta->target_pid);
		comment_id = pp_str(st, comment);
	}
	if (cpu)
		pp_value_type(st, g, PROFILE_PERIOD_TYPE, &m, "cpu", "nanoseconds");
	else
		pp_value_type(st, g, PROFILE_PERIOD_TYPE, &m, wait, "nanoseconds");

	/* the string table: the profile's, then the constants used above */
	for (uint32_t i = 0; i < st->nstr && !g->err; i++) {
		const char *s = prof__str(p, i);

		gz_field(g, PROFILE_STRING_TABLE, s, strlen(s));
	}
	for (uint32_t i = 0; i < st->nr_extra && !g->err; i++)
		gz_field(g, PROFILE_STRING_TABLE, st->extra[i], strlen(st->extra[i]));

	gz_varint_field(g, PROFILE_TIME_NANOS, meta->start_unix_ns);
	gz_varint_field(g, PROFILE_DURATION_NANOS, meta->duration_ns);
	gz_varint_field(g, PROFILE_PERIOD, cpu ? (meta->hz ? 1000000000ull / meta->hz : 0) : 1);
	gz_varint_field(g, PROFILE_COMMENT, comment_id);
	gz_varint_field(g, PROFILE_DEFAULT_SAMPLE_TYPE, pp_str(st, cpu ? "samples" : wait));
	if (g->buf.err && !g->err)
		g->err = g->buf.err;

	free(m.d);
	free(packed.d);
	free(sub.d);
	return g->err;
}

static int write_pprof(const struct profile *p, int diff, FILE *f);

int profile__write_pprof(const struct profile *p, FILE *f)
{
	struct profile *m;
	int err;

	if (!p || !f)
		return -EINVAL;
	if (!profile__render(p)->diff_base)
		return write_pprof(p, 0, f);
	m = prof__diff_merged(p);
	if (!m)
		return -errno;
	err = write_pprof(m, 1, f);
	profile__free(m);
	return err;
}

static int write_pprof(const struct profile *p, int diff, FILE *f)
{
	struct pp_state st = { .p = p, .diff = diff };
	struct pb_gz *g = NULL;
	const struct prof_frame *fr;
	uint32_t nfr;
	int err = -ENOMEM, z_ok = 0;

	if (!p || !f)
		return -EINVAL;
	fr = prof__frames(p, &nfr);
	st.nstr = prof__nr_strs(p);
	st.map_of_dso = calloc(st.nstr, sizeof(*st.map_of_dso));
	st.func_user = calloc(st.nstr, sizeof(*st.func_user));
	st.func_kernel = calloc(st.nstr, sizeof(*st.func_kernel));
	st.root_loc = calloc(st.nstr, sizeof(*st.root_loc));
	st.frame_map = calloc(nfr ? nfr : 1, sizeof(*st.frame_map));
	g = calloc(1, sizeof(*g));
	if (!st.map_of_dso || !st.func_user || !st.func_kernel || !st.root_loc ||
	    !st.frame_map || !g)
		goto err_out;
	err = pp_mappings(&st, fr, nfr);
	if (err)
		goto err_out;

	g->f = f;
	/*
	 * windowBits 15 + 16: the gzip wrapper pprof expects. Level 1: half
	 * the time of the default level 6 for 5% more bytes on a 100k-stack
	 * profile (BENCHMARKS.md, outputs).
	 */
	if (deflateInit2(&g->z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		err = -ENOMEM;
		goto err_out;
	}
	z_ok = 1;
	err = pp_write(&st, g);
	if (!err) {
		gz_deflate(g, Z_FINISH);
		err = g->err;
	}
	if (!err && fflush(f))
		err = errno ? -errno : -EIO; /* ENOSPC, not a bare EIO */
	else if (!err && ferror(f))
		err = -EIO;

err_out:
	if (z_ok)
		deflateEnd(&g->z);
	if (g)
		free(g->buf.d);
	free(g);
	free(st.maps);
	free(st.map_of_dso);
	free(st.func_user);
	free(st.func_kernel);
	free(st.root_loc);
	free(st.frame_map);
	free(st.extra);
	return err;
}

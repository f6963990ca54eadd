// SPDX-License-Identifier: MIT
/* Protocol Buffers wire encoding and its gzip stream (protobuf_int.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/protobuf_int.h"

void pb_raw(struct pbuf *b, const void *p, size_t n)
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

void pb_varint(struct pbuf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	pb_raw(b, tmp, n);
}

void pb_tag(struct pbuf *b, uint32_t field, uint32_t wt)
{
	pb_varint(b, (uint64_t)field << 3 | wt);
}

void pb_uint(struct pbuf *b, uint32_t field, uint64_t v)
{
	if (!v)
		return;
	pb_tag(b, field, WT_VARINT);
	pb_varint(b, v);
}

void pb_bytes(struct pbuf *b, uint32_t field, const void *p, size_t n)
{
	pb_tag(b, field, WT_LEN);
	pb_varint(b, n);
	pb_raw(b, p, n);
}

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

struct pb_gz *pb_gz_new(FILE *f)
{
	struct pb_gz *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->f = f;
	/*
	 * windowBits 15 + 16: the gzip wrapper pprof expects. Level 1: half
	 * the time of the default level 6 for 5% more bytes on a 100k-stack
	 * profile (BENCHMARKS.md, outputs).
	 */
	if (deflateInit2(&g->z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		errno = ENOMEM;
		return NULL;
	}
	return g;
}

int pb_gz_finish(struct pb_gz *g)
{
	if (g->buf.err && !g->err)
		g->err = g->buf.err;
	gz_deflate(g, Z_FINISH);
	return g->err;
}

void pb_gz_free(struct pb_gz *g)
{
	if (!g)
		return;
	deflateEnd(&g->z);
	free(g->buf.d);
	free(g);
}

void gz_field(struct pb_gz *g, uint32_t field, const void *p, size_t n)
{
	pb_bytes(&g->buf, field, p, n);
	if (g->buf.err && !g->err)
		g->err = g->buf.err;
	if (g->buf.len >= 256 * 1024)
		gz_deflate(g, Z_NO_FLUSH);
}

void gz_varint_field(struct pb_gz *g, uint32_t field, uint64_t v)
{
	pb_uint(&g->buf, field, v);
}

void gz_msg(struct pb_gz *g, uint32_t field, struct pbuf *m)
{
	if (m->err && !g->err)
		g->err = m->err;
	gz_field(g, field, m->d, m->len);
	m->len = 0;
}

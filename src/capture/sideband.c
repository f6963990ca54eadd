// SPDX-License-Identifier: MIT
/* The mmap/exec side-band from per-CPU perf dummy events. See src/capture/sideband.h. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "capture/sideband.h"
#include "util.h"

/* sample_id_all with sample_type TID|TIME: {u32 pid, tid; u64 time} ends
 * every non-sample record */
#define SAMPLE_ID_SIZE 16u
#define HDR_SIZE 8u
#define MMAP2_FIXED 72u /* header .. flags; the filename follows */

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* A NUL-terminated string in [off, end), or NULL. */
static const char *str_in(const uint8_t *b, size_t off, size_t end)
{
	if (off >= end || !memchr(b + off, 0, end - off))
		return NULL;
	return (const char *)b + off;
}

int sideband__parse(const void *rec, size_t len, struct sideband_rec *out)
{
	const uint8_t *b = rec;
	size_t body_end;
	uint32_t type;
	uint16_t misc, size;

	memset(out, 0, sizeof(*out));
	if (!rec || len < HDR_SIZE + SAMPLE_ID_SIZE)
		return -EINVAL;
	type = rd32(b);
	memcpy(&misc, b + 4, 2);
	memcpy(&size, b + 6, 2);
	if (size != len)
		return -EINVAL;
	body_end = len - SAMPLE_ID_SIZE;
	out->ts_ns = rd64(b + len - 8);
	out->kind = SIDEBAND_OTHER;
	switch (type) {
	case PERF_RECORD_MMAP2:
		if (body_end < MMAP2_FIXED + 1)
			return -EINVAL;
		out->kind = SIDEBAND_MMAP;
		out->pid = rd32(b + 8);
		out->tid = rd32(b + 12);
		out->start = rd64(b + 16);
		out->len = rd64(b + 24);
		out->pgoff = rd64(b + 32);
		if (out->len == 0 || out->start + out->len < out->start)
			return -EINVAL;
		/*
		 * Always maj/min/ino: sfprof never sets attr.build_id, and the
		 * kernel (6.18: perf_event_mmap_output() sets the misc bit in
		 * the record it shares between events and never clears it)
		 * can leave PERF_RECORD_MISC_MMAP_BUILD_ID on a record written
		 * in the inode layout for an event that did not ask for it.
		 */
		out->dev_major = rd32(b + 40);
		out->dev_minor = rd32(b + 44);
		out->inode = rd64(b + 48);
		out->prot = rd32(b + 64);
		out->flags = rd32(b + 68);
		out->path = str_in(b, MMAP2_FIXED, body_end);
		return out->path ? 0 : -EINVAL;
	case PERF_RECORD_COMM:
		if (body_end < HDR_SIZE + 8 + 1)
			return -EINVAL;
		out->pid = rd32(b + 8);
		out->tid = rd32(b + 12);
		out->path = str_in(b, HDR_SIZE + 8, body_end);
		if (!out->path)
			return -EINVAL;
		if (misc & PERF_RECORD_MISC_COMM_EXEC)
			out->kind = SIDEBAND_EXEC;
		return 0;
	case PERF_RECORD_LOST:
		if (body_end < HDR_SIZE + 16)
			return -EINVAL;
		out->kind = SIDEBAND_LOST;
		out->lost = rd64(b + 16);
		return 0;
	default:
		out->pid = rd32(b + body_end);
		out->tid = rd32(b + body_end + 4);
		return 0;
	}
}

/* ---- the per-CPU rings ---- */

struct sb_ring {
	int fd;
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	uint64_t size;	/* data bytes, a power of two */
	uint64_t tail;	/* consumed up to here */
	uint64_t head;	/* last head read */
	/* the record at tail, once looked at */
	int peeked;
	uint16_t peek_len;
	uint64_t peek_ts;
	const uint8_t *peek;
	uint8_t bounce[8192]; /* a record that wraps around the end (MMAP2 with
				 a PATH_MAX path is under 4.2 KiB) */
};

struct sideband {
	struct sb_ring *rings;
	int nr;
	size_t map_len;
	struct sideband_stats st;
};

static int sb_open_cpu(int cpu)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	attr.sample_id_all = 1;
	attr.mmap = 1;
	attr.mmap2 = 1;
	attr.comm = 1;
	attr.comm_exec = 1;
	/*
	 * No attr.build_id, though it would name each file as perf does:
	 * on this kernel one event with it sets PERF_RECORD_MISC_MMAP_BUILD_ID
	 * on the MMAP2 records every other perf session then receives in
	 * the inode layout, and perf 6.1 aborts reading them (measured:
	 * `perf report` dies in util/build-id.c while sfprof runs). The
	 * inode and device identify the file instead (proc.c same_file()).
	 */
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	/* never woken: the capture drains it on its timer */
	attr.watermark = 1;
	attr.wakeup_watermark = 1u << 30;
	return syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

struct sideband *sideband__open(size_t pages, FILE *err)
{
	long psz = sysconf(_SC_PAGESIZE);
	int ncpu = (int)sysconf(_SC_NPROCESSORS_CONF), i, ret = 0, opened = 0;
	struct sideband *sb;

	if (!pages)
		pages = 64;
	if (pages & (pages - 1) || psz <= 0 || ncpu <= 0) {
		errno = EINVAL;
		return NULL;
	}
	sb = calloc(1, sizeof(*sb));
	if (!sb)
		return NULL;
	sb->rings = calloc((size_t)ncpu, sizeof(*sb->rings));
	if (!sb->rings) {
		free(sb);
		errno = ENOMEM;
		return NULL;
	}
	sb->nr = ncpu;
	sb->map_len = (pages + 1) * (size_t)psz;
	for (i = 0; i < ncpu; i++)
		sb->rings[i].fd = -1;
	for (i = 0; i < ncpu; i++) {
		struct sb_ring *r = &sb->rings[i];
		void *m;

		r->fd = sb_open_cpu(i);
		if (r->fd < 0) {
			if (errno == ENODEV) /* offline CPU */
				continue;
			ret = -errno;
			if (err)
				fprintf(err, "sfprof: perf_event_open(dummy side-band, cpu %d): %s\n",
					i, strerror(-ret));
			goto err_out;
		}
		m = mmap(NULL, sb->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
		if (m == MAP_FAILED) {
			ret = -errno;
			if (err)
				fprintf(err, "sfprof: mapping the side-band ring of cpu %d: %s\n", i,
					strerror(-ret));
			goto err_out;
		}
		r->meta = m;
		r->data = (uint8_t *)m + psz;
		r->size = pages * (uint64_t)psz;
		opened++;
	}
	if (!opened) {
		ret = -ENODEV;
		goto err_out;
	}
	return sb;

err_out:
	sideband__close(sb);
	errno = -ret;
	return NULL;
}

void sideband__close(struct sideband *sb)
{
	if (!sb)
		return;
	for (int i = 0; i < sb->nr; i++) {
		struct sb_ring *r = &sb->rings[i];

		if (r->meta)
			munmap(r->meta, sb->map_len);
		if (r->fd >= 0)
			close(r->fd);
	}
	free(sb->rings);
	free(sb);
}

static void ring_skip(struct sb_ring *r, uint64_t n)
{
	r->tail += n;
	r->peeked = 0;
	__atomic_store_n(&r->meta->data_tail, r->tail, __ATOMIC_RELEASE);
}

/*
 * Look at the record at r's tail: 1 when there is one (peek fields set),
 * 0 when the ring is empty, -EINVAL when the ring holds garbage (then
 * everything in it is dropped).
 */
static int ring_peek(struct sb_ring *r)
{
	uint64_t avail, off;
	uint16_t size;

	if (r->peeked)
		return 1;
	if (!r->meta)
		return 0;
	if (r->tail == r->head)
		r->head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	avail = r->head - r->tail;
	if (!avail)
		return 0;
	off = r->tail & (r->size - 1);
	if (avail < HDR_SIZE)
		goto bad;
	/* the size field may itself wrap */
	if (off + HDR_SIZE <= r->size) {
		memcpy(&size, r->data + off + 6, 2);
	} else {
		uint8_t hdr[HDR_SIZE];
		uint64_t first = r->size - off;

		memcpy(hdr, r->data + off, first);
		memcpy(hdr + first, r->data, HDR_SIZE - first);
		memcpy(&size, hdr + 6, 2);
	}
	if (size < HDR_SIZE + SAMPLE_ID_SIZE || size > avail || size % 8)
		goto bad;
	if (off + size <= r->size) {
		r->peek = r->data + off;
	} else {
		uint64_t first = r->size - off;

		if (size > sizeof(r->bounce)) {
			ring_skip(r, size);
			return -EINVAL;
		}
		memcpy(r->bounce, r->data + off, first);
		memcpy(r->bounce + first, r->data, size - first);
		r->peek = r->bounce;
	}
	r->peek_len = size;
	memcpy(&r->peek_ts, r->peek + size - 8, 8);
	r->peeked = 1;
	return 1;
bad:
	ring_skip(r, avail);
	return -EINVAL;
}

static void ring_pop(struct sb_ring *r)
{
	ring_skip(r, r->peek_len);
}

int sideband__deliver(struct sideband *sb, uint64_t until, sideband_fn fn, void *ctx)
{
	int n = 0;

	for (;;) {
		struct sb_ring *best = NULL;
		struct sideband_rec rec;
		int ret;

		for (int i = 0; i < sb->nr; i++) {
			struct sb_ring *r = &sb->rings[i];

			ret = ring_peek(r);
			if (ret < 0)
				sb->st.bad++;
			if (ret == 1 && (!best || r->peek_ts < best->peek_ts))
				best = r;
		}
		if (!best || best->peek_ts > until)
			return n;
		ret = sideband__parse(best->peek, best->peek_len, &rec);
		if (ret) {
			sb->st.bad++;
			ring_pop(best);
			continue;
		}
		sb->st.records++;
		if (rec.kind == SIDEBAND_MMAP)
			sb->st.mmaps++;
		else if (rec.kind == SIDEBAND_EXEC)
			sb->st.execs++;
		else if (rec.kind == SIDEBAND_LOST)
			sb->st.lost += rec.lost;
		ret = rec.kind == SIDEBAND_OTHER ? 0 : fn(ctx, &rec);
		ring_pop(best);
		if (ret < 0)
			return ret;
		n++;
	}
}

void sideband__stats(const struct sideband *sb, struct sideband_stats *st)
{
	*st = sb->st;
}

// SPDX-License-Identifier: MIT
/*
 * Capture file reader (the writer is src/capfile/capfile_write.c); the format is
 * described in src/capfile/capfile.h. The reader treats the file as hostile:
 * every length is checked before it is used; a stretch that fails its
 * checksum is skipped and reported, and impossible contents end the read
 * with a message that names the offset.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capfile/capfile.h"
#include "capfile/capfile_int.h"
#include "util.h"

const char *capfile_strerror(int err)
{
	switch (-err) {
	case CAPFILE_E_MAGIC:
		return "not an sfprof capture file (bad magic)";
	case CAPFILE_E_VERSION:
		return "unsupported capture file version";
	case CAPFILE_E_TRUNCATED:
		return "capture file is truncated";
	case CAPFILE_E_CORRUPT:
		return "capture file is corrupt";
	case CAPFILE_E_NO_META:
		return "capture file has no META record";
	case CAPFILE_E_DAMAGED:
		return "capture file is damaged";
	default:
		return strerror(-err);
	}
}

/* ------------------------------------------------------------ reader */

#define CAPFILE_READ_BUF (1u << 20) /* a stream's stdio buffer */

struct capfile_reader {
	FILE *f;		  /* file source, or NULL */
	char *iobuf;		  /* f's buffer (freed after fclose), or NULL */
	const uint8_t *mem;	  /* memory source */
	size_t mem_len, mem_pos;
	void *map;		  /* mmap()ed file, or NULL */
	size_t map_len;
	const uint8_t *payload;	  /* current record's bytes (buf or mem) */
	uint64_t pos;		  /* file offset of the next byte */
	uint8_t *buf;		  /* current payload (+1 for a NUL) */
	size_t cap;
	char *meta_buf;		  /* META payload, kept */
	struct capfile_kv meta_kv[CAPFILE_KV_MAX];
	size_t nr_meta_kv;
	struct capfile_meta meta;
	uint64_t records;
	uint32_t version, hs;	  /* file version; record header size */
	uint8_t pending[CAPFILE_REC_HDR]; /* a header found by resync() */
	int have_pending;
	uint64_t damaged, damaged_bytes;
	char why[160];		  /* the last damaged record's reason */
	int ended, failed, complete;
	char err[256];
};

static size_t r_read(struct capfile_reader *r, void *dst, size_t n)
{
	size_t got;

	if (r->f) {
		got = fread(dst, 1, n, r->f);
	} else {
		got = r->mem_len - r->mem_pos;
		if (got > n)
			got = n;
		if (got)
			memcpy(dst, r->mem + r->mem_pos, got);
		r->mem_pos += got;
	}
	r->pos += got;
	return got;
}

static int r_fail(struct capfile_reader *r, int err, uint64_t off,
		  const char *fmt, ...)
{
	char detail[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	snprintf(r->err, sizeof(r->err),
		 "%s at offset %" PRIu64 " (after %" PRIu64 " records): %s",
		 capfile_strerror(err), off, r->records, detail);
	r->failed = err;
	return err;
}

/* Parse "k\0v\0..." into kv (pointers into p, which must end in NUL). */
static int kv_parse(const char *p, size_t len, struct capfile_kv *kv,
		    size_t *nr)
{
	size_t off = 0, n = 0;

	*nr = 0;
	if (len == 0)
		return 0;
	if (p[len - 1] != '\0')
		return -1;
	while (off < len) {
		const char *k = p + off, *v;
		off += strlen(k) + 1;
		if (off >= len)
			return -1; /* key without a value */
		v = p + off;
		off += strlen(v) + 1;
		if (n < CAPFILE_KV_MAX) {
			kv[n].key = k;
			kv[n].value = v;
			n++;
		}
	}
	*nr = n;
	return 0;
}

static const char *kv_get(const struct capfile_kv *kv, size_t nr,
			  const char *key)
{
	for (size_t i = 0; i < nr; i++)
		if (strcmp(kv[i].key, key) == 0)
			return kv[i].value;
	return "";
}

static uint64_t num(const char *s)
{
	return strtoull(s, NULL, 10);
}

static int reserve(struct capfile_reader *r, size_t n)
{
	uint8_t *nb;

	if (n + 1 <= r->cap)
		return 0;
	nb = realloc(r->buf, n + 1);
	if (!nb)
		return -ENOMEM;
	r->buf = nb;
	r->cap = n + 1;
	return 0;
}

static int hdr_ok(const uint8_t *h)
{
	return util__get32(h + 12) == util__crc32c(0, h, 12);
}

/* A damaged stretch [off, r->pos): counted, described, returned as 2. */
static int damaged(struct capfile_reader *r, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	r->damaged++;
	r->damaged_bytes += r->pos - off;
	return 2;
}

/*
 * A record header at off failed its checksum: its length cannot be
 * trusted. Slide 8 bytes at a time (records are 8-aligned) to the next
 * header whose checksum holds, kept in r->pending for read_raw(); the
 * bytes before it are the damage. Works on streams too: nothing is read
 * twice.
 */
static int resync(struct capfile_reader *r, uint8_t *h, uint64_t off)
{
	for (;;) {
		size_t got;

		memmove(h, h + 8, CAPFILE_REC_HDR - 8);
		got = r_read(r, h + CAPFILE_REC_HDR - 8, 8);
		if (got < 8)
			return damaged(r, off, "record header checksum mismatch; "
				       "nothing valid after it");
		if (hdr_ok(h) && util__get32(h + 4) <= CAPFILE_REC_MAX) {
			memcpy(r->pending, h, CAPFILE_REC_HDR);
			r->have_pending = 1;
			/* the found header's 16 bytes are not damage */
			r->pos -= CAPFILE_REC_HDR;
			damaged(r, off, "record header checksum mismatch");
			r->pos += CAPFILE_REC_HDR;
			return 2;
		}
	}
}

/*
 * Read one record into r->buf: 1 with type/len/offset, 0 at EOF on a
 * record boundary, 2 for a damaged stretch (version 2: a checksum
 * failed; *off and r->pos bound it, r->why says what), or a negative
 * error.
 */
static int read_raw(struct capfile_reader *r, uint32_t *type, uint32_t *len,
		    uint64_t *off)
{
	uint8_t hdr[CAPFILE_REC_HDR], pad[8];
	size_t got, p;

	*off = r->pos;
	if (r->have_pending) {
		memcpy(hdr, r->pending, CAPFILE_REC_HDR);
		r->have_pending = 0;
		*off = r->pos - CAPFILE_REC_HDR;
	} else {
		got = r_read(r, hdr, r->hs);
		if (got == 0)
			return 0;
		if (got < r->hs)
			return r_fail(r, -CAPFILE_E_TRUNCATED, *off,
				      "record header cut after %zu of %u bytes",
				      got, r->hs);
		if (r->version >= 2 && !hdr_ok(hdr))
			return resync(r, hdr, *off);
	}
	*type = util__get32(hdr);
	*len = util__get32(hdr + 4);
	if (*len > CAPFILE_REC_MAX)
		return r_fail(r, -CAPFILE_E_CORRUPT, *off,
			      "record length %u exceeds %u", *len,
			      CAPFILE_REC_MAX);
	/* (events that lie whole and aligned in a mapping are read in place
	 * by next_event_in_place(); what gets here is copied) */
	if (reserve(r, *len))
		return r_fail(r, -ENOMEM, *off, "no memory for %u bytes", *len);
	r->payload = r->buf;
	got = r_read(r, r->buf, *len);
	if (got < *len)
		return r_fail(r, -CAPFILE_E_TRUNCATED, *off,
			      "record type %u cut after %zu of %u bytes",
			      *type, got, *len);
	r->buf[*len] = 0;
	p = pad8(*len);
	if (p && r_read(r, pad, p) < p) {
		/* a file cut inside the padding still holds the whole record */
	}
	if (r->version >= 2 &&
	    util__get32(hdr + 8) !=
		    util__crc32c(util__crc32c(0, hdr, 8), r->buf, *len))
		return damaged(r, *off, "checksum mismatch in a record of type %u, %u bytes",
			       *type, *len);
	return 1;
}

static int parse_meta(struct capfile_reader *r, uint32_t len, uint64_t off)
{
	const struct capfile_kv *kv = r->meta_kv;
	size_t n;

	r->meta_buf = malloc(len + 1);
	if (!r->meta_buf)
		return r_fail(r, -ENOMEM, off, "no memory");
	memcpy(r->meta_buf, r->buf, len + 1);
	if (kv_parse(r->meta_buf, len, r->meta_kv, &r->nr_meta_kv))
		return r_fail(r, -CAPFILE_E_CORRUPT, off,
			      "META is not a list of key/value strings");
	n = r->nr_meta_kv;
	r->meta.host = kv_get(kv, n, "host");
	r->meta.kernel = kv_get(kv, n, "kernel");
	r->meta.clock = kv_get(kv, n, "clock");
	r->meta.event = kv_get(kv, n, "event");
	r->meta.command = kv_get(kv, n, "command");
	r->meta.arch = kv_get(kv, n, "arch");
	r->meta.sfprof_version = kv_get(kv, n, "sfprof_version");
	r->meta.start_mono_ns = num(kv_get(kv, n, "start_mono_ns"));
	r->meta.start_unix_ns = num(kv_get(kv, n, "start_unix_ns"));
	r->meta.hz = (uint32_t)num(kv_get(kv, n, "hz"));
	r->meta.stack_size = (uint32_t)num(kv_get(kv, n, "stack_size"));
	r->meta.pid = (uint32_t)num(kv_get(kv, n, "pid"));
	r->meta.event_hdr_size = (uint32_t)num(kv_get(kv, n, "event_hdr_size"));
	r->meta.kernel_stacks = (uint32_t)num(kv_get(kv, n, "kernel_stacks"));
	if (r->meta.event_hdr_size &&
	    r->meta.event_hdr_size != SFPROF_EVENT_HDR_SIZE)
		return r_fail(r, -CAPFILE_E_VERSION, off,
			      "event header of %u bytes, this sfprof reads %u",
			      r->meta.event_hdr_size, SFPROF_EVENT_HDR_SIZE);
	return 0;
}

static int reader_start(struct capfile_reader *r, int *errp)
{
	uint8_t hdr[CAPFILE_HDR_SIZE];
	uint32_t type, len;
	uint64_t off;
	size_t got;
	int err;

	got = r_read(r, hdr, sizeof(hdr));
	if (got < 8 || memcmp(hdr, CAPFILE_MAGIC, 8) != 0) {
		err = r_fail(r, -CAPFILE_E_MAGIC, 0, "expected \"%s\"",
			     CAPFILE_MAGIC);
		goto err_out;
	}
	if (got < sizeof(hdr)) {
		err = r_fail(r, -CAPFILE_E_TRUNCATED, 0, "file header cut");
		goto err_out;
	}
	r->version = util__get32(hdr + 8);
	if (r->version != CAPFILE_VERSION && r->version != 1) {
		err = r_fail(r, -CAPFILE_E_VERSION, 8,
			     "version %u, this sfprof reads 1 and %u", r->version,
			     CAPFILE_VERSION);
		goto err_out;
	}
	/* version 1: 8-byte record headers without checksums */
	r->hs = r->version == 1 ? 8 : CAPFILE_REC_HDR;
	err = read_raw(r, &type, &len, &off);
	if (err == 0)
		err = r_fail(r, -CAPFILE_E_NO_META, off, "no records");
	if (err == 2)
		err = r_fail(r, -CAPFILE_E_DAMAGED, off, "META: %s", r->why);
	if (err < 0)
		goto err_out;
	if (type != CAPFILE_REC_META) {
		err = r_fail(r, -CAPFILE_E_NO_META, off,
			     "first record has type %u", type);
		goto err_out;
	}
	err = parse_meta(r, len, off);
	if (err)
		goto err_out;
	r->records = 1;
	return 0;

err_out:
	if (errp)
		*errp = err;
	return err;
}

static struct capfile_reader *reader_finish(struct capfile_reader *r, int *err)
{
	int e = reader_start(r, err);

	if (e == 0)
		return r;
	capfile_reader__free(r);
	errno = e <= -2000 ? EINVAL : -e;
	return NULL;
}

struct capfile_reader *capfile_reader__open(const char *path, int *err)
{
	struct capfile_reader *r = calloc(1, sizeof(*r));
	struct stat st;
	int fd, e;

	if (!r) {
		if (err)
			*err = -ENOMEM;
		return NULL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto err_out;
	/* A regular file is mapped (events are then read in place); a pipe
	 * or a file that cannot be mapped is streamed. So is a file another
	 * user could change: truncated while mapped, it would kill the
	 * reader with SIGBUS (root reporting a user's capture); read, it is
	 * only a capture cut short. */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    st.st_uid == geteuid() && !(st.st_mode & 022)) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);

		if (m != MAP_FAILED) {
			/*
			 * Pages not in the page cache yet are read as 2 MiB
			 * folios, mapped (and unmapped at the end) as one
			 * entry each instead of 512: an 8 MB capture read
			 * back this way costs 0.07-0.1 ms of mmap+munmap,
			 * in 4 KiB pages 1.0-1.2 ms (BENCHMARKS.md). Then
			 * populated at once, one pass over the page cache
			 * instead of a fault every few events (what
			 * MAP_POPULATE did; it would populate before the
			 * advice). Both are advice: without them the pages
			 * fault in as events are read.
			 */
			(void)madvise(m, (size_t)st.st_size, MADV_HUGEPAGE);
			(void)madvise(m, (size_t)st.st_size, MADV_POPULATE_READ);
			r->map = m;
			r->map_len = (size_t)st.st_size;
			r->mem = m;
			r->mem_len = r->map_len;
			close(fd);
			return reader_finish(r, err);
		}
	}
	r->f = fdopen(fd, "rb");
	if (!r->f) {
		close(fd);
		goto err_out;
	}
	/* (setvbuf(f, NULL, ...) would keep glibc's 4 KiB: one read() per
	 * 4 KiB of a pipe) */
	r->iobuf = malloc(CAPFILE_READ_BUF);
	if (r->iobuf)
		setvbuf(r->f, r->iobuf, _IOFBF, CAPFILE_READ_BUF);
	return reader_finish(r, err);

err_out:
	e = errno;
	if (err)
		*err = -e;
	free(r);
	errno = e;
	return NULL;
}

struct capfile_reader *capfile_reader__new_mem(const void *data, size_t len,
					       int *err)
{
	struct capfile_reader *r = calloc(1, sizeof(*r));

	if (!r) {
		if (err)
			*err = -ENOMEM;
		return NULL;
	}
	r->mem = data;
	r->mem_len = data ? len : 0;
	return reader_finish(r, err);
}

void capfile_reader__free(struct capfile_reader *r)
{
	if (!r)
		return;
	if (r->f)
		fclose(r->f);
	free(r->iobuf); /* the stream's buffer, after fclose() */
	if (r->map)
		munmap(r->map, r->map_len);
	free(r->buf);
	free(r->meta_buf);
	free(r);
}

const struct capfile_meta *capfile_reader__meta(const struct capfile_reader *r)
{
	return &r->meta;
}

const struct capfile_kv *capfile_reader__meta_kv(const struct capfile_reader *r,
						 size_t *nr)
{
	*nr = r->nr_meta_kv;
	return r->meta_kv;
}

const char *capfile_reader__error(const struct capfile_reader *r)
{
	return r->err;
}

int capfile_reader__complete(const struct capfile_reader *r)
{
	return r->complete;
}

uint64_t capfile_reader__records(const struct capfile_reader *r)
{
	return r->records;
}

uint64_t capfile_reader__damaged(const struct capfile_reader *r,
				 uint64_t *bytes)
{
	if (bytes)
		*bytes = r->damaged_bytes;
	return r->damaged;
}

static int parse_mapping(struct capfile_reader *r, uint32_t len, uint64_t off,
			 struct capfile_record *rec)
{
	const uint8_t *b = r->buf;
	struct proc_mapping_rec *m = &rec->mapping.m;
	uint32_t blen, plen;

	if (len < MAPPING_FIXED)
		return r_fail(r, -CAPFILE_E_CORRUPT, off,
			      "MAPPING of %u bytes, fixed part is %u", len,
			      MAPPING_FIXED);
	memset(m, 0, sizeof(*m));
	rec->mapping.pid = util__get32(b);
	m->prot = util__get32(b + 4);
	rec->mapping.ts_ns = util__get64(b + 8);
	m->start = util__get64(b + 16);
	m->end = util__get64(b + 24);
	m->offset = util__get64(b + 32);
	m->inode = util__get64(b + 40);
	m->dev_major = util__get32(b + 48);
	m->dev_minor = util__get32(b + 52);
	blen = util__get32(b + 56);
	plen = util__get32(b + 60);
	if (blen > ELFREAD_BUILD_ID_MAX)
		return r_fail(r, -CAPFILE_E_CORRUPT, off,
			      "build-id of %u bytes", blen);
	if (plen == 0 || plen > PATH_MAX_LEN ||
	    (uint64_t)MAPPING_FIXED + blen + plen != len)
		return r_fail(r, -CAPFILE_E_CORRUPT, off,
			      "MAPPING lengths disagree (build-id %u, path %u, record %u)",
			      blen, plen, len);
	if (m->start >= m->end)
		return r_fail(r, -CAPFILE_E_CORRUPT, off,
			      "mapping start 0x%" PRIx64 " >= end 0x%" PRIx64,
			      m->start, m->end);
	m->build_id_len = blen;
	memcpy(m->build_id, b + MAPPING_FIXED, blen);
	m->path = (const char *)b + MAPPING_FIXED + blen; /* NUL at buf[len] */
	if (memchr(m->path, '\0', plen))
		return r_fail(r, -CAPFILE_E_CORRUPT, off, "NUL inside a path");
	return 0;
}

static int parse_event(struct capfile_reader *r, uint32_t len, uint64_t off,
		       struct capfile_record *rec)
{
	const struct sfprof_event *e = (const void *)r->payload;

	if (len < SFPROF_EVENT_HDR_SIZE)
		return r_fail(r, -CAPFILE_E_CORRUPT, off,
			      "EVENT of %u bytes, header is %u", len,
			      SFPROF_EVENT_HDR_SIZE);
	if (e->size != len || e->stack_len > SFPROF_STACK_MAX ||
	    SFPROF_EVENT_HDR_SIZE + e->stack_len > len)
		return r_fail(r, -CAPFILE_E_CORRUPT, off,
			      "EVENT size %u, stack %u, record %u disagree",
			      e->size, e->stack_len, len);
	rec->event.e = e;
	return 0;
}

/* PYFRAME: 28 fixed bytes, qualname NUL, file (NUL at buf[len]). */
static int parse_pyframe(struct capfile_reader *r, uint32_t len, uint64_t off,
			 struct capfile_record *rec)
{
	const char *str = (const char *)r->buf + 28;
	uint32_t ql, sl;

	if (len < 30)
		return r_fail(r, -CAPFILE_E_CORRUPT, off, "PYFRAME of %u bytes", len);
	sl = len - 28;
	ql = util__get32(r->buf + 20);
	if (ql == 0 || ql >= sl || str[ql] != 0 || memchr(str, 0, ql) ||
	    memchr(str + ql + 1, 0, sl - ql - 1))
		return r_fail(r, -CAPFILE_E_CORRUPT, off, "PYFRAME names are malformed");
	rec->pyframe.pid = util__get32(r->buf);
	rec->pyframe.instr = (int32_t)util__get32(r->buf + 4);
	rec->pyframe.code = util__get64(r->buf + 8);
	/* CPython's lines are C ints: past INT32_MAX is a forgery, unknown */
	rec->pyframe.line = util__get32(r->buf + 16);
	if (rec->pyframe.line > INT32_MAX)
		rec->pyframe.line = 0;
	rec->pyframe.firstlineno = util__get32(r->buf + 24);
	if (rec->pyframe.firstlineno > INT32_MAX)
		rec->pyframe.firstlineno = 0;
	rec->pyframe.qualname = str;
	rec->pyframe.file = str + ql + 1;
	return 0;
}

/*
 * The next record when it is an event that lies whole and aligned in the
 * mapping (nearly every record of a report): read in place, checked as
 * read_raw() and parse_event() check it. false leaves everything to them.
 */
static inline bool next_event_in_place(struct capfile_reader *r,
				       struct capfile_record *rec)
{
	size_t left = r->mem_len - r->mem_pos, adv, hs = r->hs;
	const struct sfprof_event *e;
	const uint8_t *p;
	uint32_t len;

	/* (a stream has no mapping: r->mem is NULL) */
	if (r->f || !r->mem)
		return false;
	p = r->mem + r->mem_pos;
	if (r->have_pending || left < hs || ((uintptr_t)p & 7) ||
	    util__get32(p) != CAPFILE_REC_EVENT)
		return false;
	len = util__get32(p + 4);
	e = (const void *)(p + hs);
	if (len > CAPFILE_REC_MAX || len > left - hs || len < SFPROF_EVENT_HDR_SIZE ||
	    e->size != len || e->stack_len > SFPROF_STACK_MAX ||
	    SFPROF_EVENT_HDR_SIZE + e->stack_len > len)
		return false;
	/* a checksum that fails goes the slow way, which reports it */
	if (hs == CAPFILE_REC_HDR &&
	    (!hdr_ok(p) || util__get32(p + 8) !=
				   util__crc32c(util__crc32c(0, p, 8), e, len)))
		return false;
	rec->type = CAPFILE_REC_EVENT;
	rec->offset = r->pos;
	rec->event.e = e;
	r->payload = (const uint8_t *)e;
	adv = hs + len + pad8(len);
	if (adv > left)
		adv = left; /* a file cut inside the padding */
	r->mem_pos += adv;
	r->pos += adv;
	r->records++;
	/* The next record is cold: fetch its header and the top of its
	 * stack while this one is unwound (the walk's own prefetching of
	 * this record came too late to help). 1 KiB: the hardware
	 * prefetcher follows the walk up the rest, and more requests at
	 * once only wait for fill buffers (2 KiB and 4 KiB cost 2-6% more
	 * CPU time, none at all 8%). */
	p = r->mem + r->mem_pos;
	if (r->mem_len - r->mem_pos >= 1024) {
#pragma GCC unroll 16
		for (size_t k = 0; k < 1024; k += 64)
			__builtin_prefetch(p + k);
	} else {
		for (size_t k = 0; k < r->mem_len - r->mem_pos; k += 64)
			__builtin_prefetch(p + k);
	}
	return true;
}

int capfile_reader__next(struct capfile_reader *r, struct capfile_record *rec)
{
	uint32_t type, len;
	uint64_t off;
	int rc;

	if (r->failed)
		return r->failed;
	if (r->ended)
		return 0;
	if (next_event_in_place(r, rec))
		return 1;
	for (;;) {
		rc = read_raw(r, &type, &len, &off);
		if (rc <= 0) {
			if (rc == 0)
				r->ended = 1;
			return rc;
		}
		if (rc == 2) {
			/* skipped: the caller says so, the rest is kept */
			rec->type = CAPFILE_REC_DAMAGED;
			rec->offset = off;
			rec->damaged.len = r->pos - off -
					   (r->have_pending ? CAPFILE_REC_HDR : 0);
			rec->damaged.why = r->why;
			return 1;
		}
		/* only the member of rec->type is set: clearing the whole
		 * record (1 KiB of key/value slots) per event costs more than
		 * the rest of reading it */
		if (type != CAPFILE_REC_EVENT)
			memset(rec, 0, sizeof(*rec));
		rec->type = type;
		rec->offset = off;
		switch (type) {
		case CAPFILE_REC_META:
			return r_fail(r, -CAPFILE_E_CORRUPT, off,
				      "a second META record");
		case CAPFILE_REC_MAPPING:
			rc = parse_mapping(r, len, off, rec);
			break;
		case CAPFILE_REC_EVENT:
			rc = parse_event(r, len, off, rec);
			break;
		case CAPFILE_REC_KSTACK:
			if (len < 8 || util__get32(r->buf + 4) > CAPFILE_KSTACK_MAX ||
			    len != 8 + 8 * util__get32(r->buf + 4)) {
				rc = r_fail(r, -CAPFILE_E_CORRUPT, off,
					    "KSTACK length %u disagrees", len);
				break;
			}
			rec->kstack.id = (int32_t)util__get32(r->buf);
			rec->kstack.nr = util__get32(r->buf + 4);
			rec->kstack.ips = (const uint64_t *)(r->buf + 8);
			break;
		case CAPFILE_REC_TASK:
			if (len != TASK_SIZE) {
				rc = r_fail(r, -CAPFILE_E_CORRUPT, off, "TASK of %u bytes", len);
				break;
			}
			rec->task.what = util__get32(r->buf);
			rec->task.pid = util__get32(r->buf + 4);
			rec->task.ppid = util__get32(r->buf + 8);
			rec->task.ts_ns = util__get64(r->buf + 16);
			if ((rec->task.what != CAPFILE_TASK_RESET &&
			     rec->task.what != CAPFILE_TASK_FORK &&
			     rec->task.what != CAPFILE_TASK_EXIT) || !rec->task.pid ||
			    (rec->task.what == CAPFILE_TASK_FORK) != (rec->task.ppid != 0))
				rc = r_fail(r, -CAPFILE_E_CORRUPT, off,
					    "TASK %u of process %u (parent %u) is impossible",
					    rec->task.what, rec->task.pid, rec->task.ppid);
			break;
		case CAPFILE_REC_KSYM:
			if (len <= 8 || memchr(r->buf + 8, '\0', len - 8)) {
				rc = r_fail(r, -CAPFILE_E_CORRUPT, off,
					    "bad KSYM record");
				break;
			}
			rec->ksym.addr = util__get64(r->buf);
			rec->ksym.name = (const char *)r->buf + 8;
			break;
		case CAPFILE_REC_PYFRAME:
			rc = parse_pyframe(r, len, off, rec);
			break;
		case CAPFILE_REC_JIT:
			if (len <= JIT_FIXED || len - JIT_FIXED > PATH_MAX_LEN ||
			    memchr(r->buf + JIT_FIXED, '\0', len - JIT_FIXED)) {
				rc = r_fail(r, -CAPFILE_E_CORRUPT, off, "bad JIT record");
				break;
			}
			rec->jit.pid = util__get32(r->buf);
			rec->jit.start = util__get64(r->buf + 8);
			rec->jit.size = util__get64(r->buf + 16);
			rec->jit.name = (const char *)r->buf + JIT_FIXED;
			if (!rec->jit.pid || !rec->jit.size ||
			    rec->jit.start + rec->jit.size < rec->jit.start)
				rc = r_fail(r, -CAPFILE_E_CORRUPT, off,
					    "JIT record of process %u: an empty or wrapping range",
					    rec->jit.pid);
			break;
		case CAPFILE_REC_PYTRAMP:
			if (len <= PYTRAMP_FIXED || len - PYTRAMP_FIXED > CAPFILE_PYTRAMP_MAX ||
			    util__get32(r->buf + 4) != len - PYTRAMP_FIXED || !util__get32(r->buf)) {
				rc = r_fail(r, -CAPFILE_E_CORRUPT, off, "bad PYTRAMP record");
				break;
			}
			rec->pytramp.pid = util__get32(r->buf);
			rec->pytramp.len = len - PYTRAMP_FIXED;
			rec->pytramp.code = r->buf + PYTRAMP_FIXED;
			break;
		case CAPFILE_REC_RUNTIME:
			if (len <= RUNTIME_FIXED || len - RUNTIME_FIXED > CAPFILE_RUNTIME_MAX ||
			    util__get32(r->buf + 8) != len - RUNTIME_FIXED ||
			    !util__get32(r->buf) || !util__get32(r->buf + 4) ||
			    util__get32(r->buf + 12)) {
				rc = r_fail(r, -CAPFILE_E_CORRUPT, off, "bad RUNTIME record");
				break;
			}
			rec->runtime.kind = util__get32(r->buf);
			rec->runtime.pid = util__get32(r->buf + 4);
			rec->runtime.len = len - RUNTIME_FIXED;
			rec->runtime.data = r->buf + RUNTIME_FIXED;
			break;
		case CAPFILE_REC_STATS:
			if (kv_parse((const char *)r->buf, len, rec->kv.kv,
				     &rec->kv.nr_kv))
				rc = r_fail(r, -CAPFILE_E_CORRUPT, off,
					    "STATS is not a list of key/value strings");
			break;
		case CAPFILE_REC_END:
			if (len != 16) {
				rc = r_fail(r, -CAPFILE_E_CORRUPT, off,
					    "END of %u bytes", len);
				break;
			}
			rec->end.nr_records = util__get64(r->buf);
			rec->end.nr_events = util__get64(r->buf + 8);
			r->complete = 1;
			r->ended = 1;
			break;
		default:
			/* a newer record type: skip it */
			r->records++;
			continue;
		}
		if (rc < 0)
			return rc;
		r->records++;
		return 1;
	}
}

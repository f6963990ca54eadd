// SPDX-License-Identifier: MIT
/* jitdump bytes -> perfmap entries and source lines (src/runtimes/jit/jitdump.h). */
#include "runtimes/jit/jitdump.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#define REC_HDR 16u
#define LOAD_FIXED (REC_HDR + 40u)  /* pid, tid, vma, code_addr, size, index */
#define MOVE_SIZE (REC_HDR + 48u)   /* pid, tid, vma, old, new, size, index */
#define DEBUG_FIXED (REC_HDR + 16u) /* code_addr, nr_entry */
#define DEBUG_ENTRY_MIN 17u	    /* addr, line, discrim, "" */
#define UNWIND_FIXED (REC_HDR + 24u)
#define FILE_BLOCK (64u << 10)
#define READ_CHUNK (256u << 10)

struct jd_line {
	uint64_t addr;
	const char *file;
	uint32_t line;
	uint32_t seq; /* arrival order: ties in addr keep the later */
};

struct jd_block {
	struct jd_block *next;
	size_t used;
	char data[];
};

struct jitdump {
	struct perfmap *map;
	uint64_t offset;     /* bytes consumed */
	uint64_t skip;	     /* of the current record, not needed */
	bool have_header;
	uint32_t pid;
	const char *error;   /* set: the dump is broken */
	struct jitdump_stats st;
	struct jd_line *lines;
	size_t nr_lines, cap_lines;
	bool lines_sorted;
	struct jd_block *files;
	size_t want;	     /* bytes the last feed needed */
};

struct jitdump *jitdump__new(struct perfmap *into)
{
	struct jitdump *d;

	if (!into) {
		errno = EINVAL;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->map = into;
	d->want = JITDUMP_HEADER_MIN;
	d->lines_sorted = true;
	return d;
}

void jitdump__free(struct jitdump *d)
{
	struct jd_block *b, *n;

	if (!d)
		return;
	for (b = d->files; b; b = n) {
		n = b->next;
		free(b);
	}
	free(d->lines);
	free(d);
}

uint64_t jitdump__skip_pending(const struct jitdump *d)
{
	return d->skip;
}

void jitdump__skip(struct jitdump *d, uint64_t n)
{
	if (n > d->skip)
		n = d->skip;
	d->skip -= n;
	d->offset += n;
}

size_t jitdump__want(const struct jitdump *d)
{
	return d->skip ? 1 : d->want;
}

uint64_t jitdump__offset(const struct jitdump *d)
{
	return d->offset;
}

uint32_t jitdump__pid(const struct jitdump *d)
{
	return d->pid;
}

const char *jitdump__error(const struct jitdump *d)
{
	return d->error;
}

void jitdump__stats(const struct jitdump *d, struct jitdump_stats *out)
{
	*out = d->st;
}

static const char *file_copy(struct jitdump *d, const char *s, size_t len)
{
	struct jd_block *b = d->files;
	char *p;

	if (len + 1 > FILE_BLOCK)
		return NULL;
	if (!b || FILE_BLOCK - b->used < len + 1) {
		b = malloc(sizeof(*b) + FILE_BLOCK);
		if (!b)
			return NULL;
		b->used = 0;
		b->next = d->files;
		d->files = b;
	}
	p = b->data + b->used;
	memcpy(p, s, len);
	p[len] = 0;
	b->used += len + 1;
	return p;
}

/* The NUL-terminated string at p[0..len): its length, or -1 when no NUL. */
static long str_len(const uint8_t *p, size_t len)
{
	const uint8_t *z = memchr(p, 0, len);

	return z ? (long)(z - p) : -1;
}

/* LOAD, p[0..n) its needed prefix (header, fixed fields, name). */
static int rec_load(struct jitdump *d, const uint8_t *p, size_t n)
{
	uint64_t code_addr = util__get64(p + REC_HDR + 16);
	uint64_t code_size = util__get64(p + REC_HDR + 24);
	long nl = str_len(p + LOAD_FIXED, n - LOAD_FIXED);
	int rc;

	if (nl <= 0 || (size_t)nl != n - LOAD_FIXED - 1)
		return -EINVAL; /* the name must end just before the code */
	rc = perfmap__add(d->map, code_addr, code_size, (const char *)p + LOAD_FIXED,
			  (size_t)nl);
	if (rc)
		return rc;
	d->st.loads++;
	return 0;
}

static int rec_move(struct jitdump *d, const uint8_t *p)
{
	uint64_t old_addr = util__get64(p + REC_HDR + 16);
	uint64_t new_addr = util__get64(p + REC_HDR + 24);
	uint64_t size = util__get64(p + REC_HDR + 32);
	const char *name;
	uint64_t start;
	int rc;

	/* the code that moved is the entry starting at old_addr */
	if (perfmap__lookup(d->map, old_addr, &name, &start) || start != old_addr)
		return -EINVAL;
	rc = perfmap__add(d->map, new_addr, size, name, strlen(name));
	if (rc)
		return rc;
	d->st.moves++;
	return 0;
}

static int rec_debug(struct jitdump *d, const uint8_t *p, size_t n)
{
	uint64_t nr = util__get64(p + REC_HDR + 8);
	size_t pos = DEBUG_FIXED, added = 0;
	const char *prev = NULL;
	uint32_t seq = (uint32_t)d->st.debug_infos;

	if (nr > (n - DEBUG_FIXED) / DEBUG_ENTRY_MIN)
		return -EINVAL;
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t addr;
		uint32_t line;
		long fl;
		const char *file;

		if (n - pos < DEBUG_ENTRY_MIN)
			return -EINVAL;
		addr = util__get64(p + pos);
		line = util__get32(p + pos + 8);
		pos += 16;
		fl = str_len(p + pos, n - pos);
		if (fl < 0)
			return -EINVAL;
		if (fl == 1 && p[pos] == 0xff) {
			file = prev; /* the same as the entry before */
			if (!file)
				return -EINVAL;
		} else {
			file = NULL;
		}
		if (!file && d->nr_lines + added < JITDUMP_LINES_MAX) {
			file = file_copy(d, (const char *)p + pos, (size_t)fl);
			if (!file)
				return -ENOMEM;
		}
		pos += (size_t)fl + 1;
		prev = file;
		if (!file || d->nr_lines >= JITDUMP_LINES_MAX)
			continue;
		if (d->nr_lines == d->cap_lines &&
		    util__grow((void **)&d->lines, &d->cap_lines, d->nr_lines + 1,
			       sizeof(*d->lines)))
			return -ENOMEM;
		if (d->nr_lines && d->lines[d->nr_lines - 1].addr > addr)
			d->lines_sorted = false;
		d->lines[d->nr_lines++] = (struct jd_line){ addr, file, line, seq };
		added++;
	}
	d->st.lines += added;
	d->st.debug_infos++;
	return 0;
}

/*
 * How many bytes of the record at p[0..avail) the parser needs: 0 with
 * *need (and *bad when a field already shows it impossible: only the
 * header is consumed), 1 when more bytes must come first to tell (*need
 * of them), or -EINVAL (a record size that ends the parse).
 */
static int rec_need(struct jitdump *d, const uint8_t *p, size_t avail, size_t *need,
		    bool *bad)
{
	uint32_t id = util__get32(p), total = util__get32(p + 4);
	uint64_t code_size;

	*bad = false;
	if (total < REC_HDR || total > JITDUMP_RECORD_MAX) {
		d->error = "a record size below 16 bytes or above 256 MiB";
		return -EINVAL;
	}
	switch (id) {
	case JITDUMP_CODE_LOAD:
		if (total < LOAD_FIXED + 2) {
			*bad = true;
			break;
		}
		/* only what precedes the code: its size is at a fixed place */
		if (avail < LOAD_FIXED) {
			*need = LOAD_FIXED;
			return 1;
		}
		code_size = util__get64(p + REC_HDR + 24);
		if (code_size > total - LOAD_FIXED - 2) {
			*bad = true; /* no room for a name */
			break;
		}
		*need = (size_t)(total - code_size);
		break;
	case JITDUMP_CODE_MOVE:
		*bad = total != MOVE_SIZE;
		*need = total;
		break;
	case JITDUMP_CODE_DEBUG_INFO:
		*bad = total < DEBUG_FIXED;
		*need = total;
		break;
	case JITDUMP_CODE_UNWINDING_INFO:
		*bad = total < UNWIND_FIXED;
		*need = UNWIND_FIXED;
		break;
	default: /* CLOSE and unknown ids: the header is enough */
		*need = REC_HDR;
		break;
	}
	if (*bad || *need > JITDUMP_PREFIX_MAX) {
		*bad = true;
		*need = REC_HDR;
	}
	return 0;
}

/* The record at p[0..need) (its sizes checked by rec_need()), total
 * bytes long. 0, -EINVAL (bad: skipped, counted), -ENOMEM. */
static int rec_parse(struct jitdump *d, const uint8_t *p, size_t need, uint32_t total)
{
	uint32_t id = util__get32(p);

	switch (id) {
	case JITDUMP_CODE_LOAD:
		return rec_load(d, p, need);
	case JITDUMP_CODE_MOVE:
		return rec_move(d, p);
	case JITDUMP_CODE_DEBUG_INFO:
		return rec_debug(d, p, need);
	case JITDUMP_CODE_UNWINDING_INFO: {
		uint64_t usize, hsize, msize;

		usize = util__get64(p + REC_HDR);
		hsize = util__get64(p + REC_HDR + 8);
		msize = util__get64(p + REC_HDR + 16);
		if (usize > total - UNWIND_FIXED || hsize > usize || msize > usize)
			return -EINVAL;
		d->st.unwinding_infos++;
		return 0;
	}
	case JITDUMP_CODE_CLOSE:
		d->st.closes++;
		return 0;
	default:
		d->st.unknown++;
		return 0;
	}
}

static long feed_header(struct jitdump *d, const uint8_t *data, size_t len)
{
	uint32_t magic, version, total;

	if (len < JITDUMP_HEADER_MIN) {
		d->want = JITDUMP_HEADER_MIN;
		return 0;
	}
	magic = util__get32(data);
	version = util__get32(data + 4);
	total = util__get32(data + 8);
	if (magic == __builtin_bswap32(JITDUMP_MAGIC))
		d->error = "written in the other byte order";
	else if (magic != JITDUMP_MAGIC)
		d->error = "not a jitdump (bad magic)";
	else if (version != 1)
		d->error = "a jitdump version other than 1";
	else if (total < JITDUMP_HEADER_MIN || total > JITDUMP_HEADER_MAX)
		d->error = "a header size outside 40..4096";
	if (d->error)
		return -EINVAL;
	if (len < total) {
		d->want = total;
		return 0;
	}
	d->pid = util__get32(data + 20);
	d->have_header = true;
	d->offset += total;
	return total;
}

long jitdump__feed(struct jitdump *d, const uint8_t *data, size_t len)
{
	size_t pos = 0;
	long h;

	if (d->error)
		return -EINVAL;
	if (d->skip) {
		uint64_t n = d->skip < len ? d->skip : len;

		jitdump__skip(d, n);
		pos = (size_t)n;
	}
	if (!d->have_header && !d->skip) {
		h = feed_header(d, data + pos, len - pos);
		if (h <= 0)
			return pos ? (long)pos : h;
		pos += (size_t)h;
	}
	while (!d->skip && len - pos >= REC_HDR) {
		const uint8_t *p = data + pos;
		uint32_t total = util__get32(p + 4);
		size_t need;
		bool bad;
		int rc = rec_need(d, p, len - pos, &need, &bad);

		if (rc < 0)
			return pos ? (long)pos : -EINVAL;
		if (rc == 1 || len - pos < need) {
			d->want = need;
			return (long)pos;
		}
		rc = bad ? -EINVAL : rec_parse(d, p, need, total);
		if (rc == -ENOMEM)
			return pos ? (long)pos : -ENOMEM; /* this record again */
		if (rc)
			d->st.bad++;
		pos += need;
		d->offset += need;
		d->skip = total - need;
		d->want = REC_HDR;
		if (d->skip) {
			uint64_t n = d->skip < len - pos ? d->skip : len - pos;

			jitdump__skip(d, n);
			pos += (size_t)n;
		}
	}
	d->want = REC_HDR;
	return (long)pos;
}
static int line_cmp(const void *a, const void *b)
{
	const struct jd_line *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int jitdump__line(struct jitdump *d, uint64_t addr, const char **file, uint32_t *line)
{
	size_t lo = 0, hi;
	const char *name;
	uint64_t start, end;

	if (!d->nr_lines)
		return -ENOENT;
	if (!d->lines_sorted) {
		qsort(d->lines, d->nr_lines, sizeof(*d->lines), line_cmp);
		d->lines_sorted = true;
	}
	hi = d->nr_lines;
	while (lo < hi) { /* the first line above addr */
		size_t mid = lo + (hi - lo) / 2;

		if (d->lines[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -ENOENT;
	/* only a line inside the code that holds addr */
	if (perfmap__lookup_range(d->map, addr, &name, &start, &end) ||
	    d->lines[lo - 1].addr < start)
		return -ENOENT;
	*file = d->lines[lo - 1].file;
	*line = d->lines[lo - 1].line;
	return 0;
}

int jitdump__read_fd(struct jitdump *d, int fd, uint64_t max_size)
{
	uint64_t end;
	uint8_t *buf = NULL;
	size_t cap = 0;
	int err = util__regular_end(fd, max_size, &end);

	if (err && err != -EFBIG)
		return err;
	while (!d->error && d->offset < end) {
		uint64_t off = d->offset, left = end - off;
		size_t want = jitdump__want(d), got = 0;
		long used;

		if (d->skip) { /* code past the bytes in hand: stepped over */
			jitdump__skip(d, d->skip < left ? d->skip : left);
			continue;
		}
		if (want > left)
			break; /* the JIT is still writing that record */
		if (want < READ_CHUNK)
			want = left < READ_CHUNK ? (size_t)left : READ_CHUNK;
		if (want > cap) {
			uint8_t *nb = realloc(buf, want);

			if (!nb) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
			cap = want;
		}
		while (got < want) {
			ssize_t n = pread(fd, buf + got, want - got, (off_t)(off + got));

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				err = -errno;
				break;
			}
			if (n == 0)
				break;
			got += (size_t)n;
		}
		if (err || !got)
			break;
		used = jitdump__feed(d, buf, got);
		if (used < 0) {
			err = (int)used;
			break;
		}
		if (used == 0)
			break; /* a short read: the file shrank under us */
	}
	free(buf);
	return err ? err : d->error ? -EINVAL : 0;
}

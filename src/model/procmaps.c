// SPDX-License-Identifier: MIT
/* /proc/PID/maps parser and reader. See src/model/procmaps.h. */
#include "model/procmaps.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char DELETED_SUFFIX[] = " (deleted)";
/* Absurd for a maps file: refuse it (-EFBIG) rather than parse it. */
#define PROCMAPS_MAX_BYTES (512u << 20)

/* Parse hex digits at *p (no prefix), at least one, at most 16. */
static int parse_hex(const char **p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	int n = 0;

	while (*p < end) {
		char c = **p;
		unsigned d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		if (++n > 16)
			return -EINVAL;
		v = v << 4 | d;
		(*p)++;
	}
	if (!n)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_dec(const char **p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	int n = 0;

	while (*p < end && **p >= '0' && **p <= '9') {
		unsigned d = **p - '0';

		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
		n++;
		(*p)++;
	}
	if (!n)
		return -EINVAL;
	*out = v;
	return 0;
}

static int expect(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

static void skip_spaces(const char **p, const char *end)
{
	while (*p < end && (**p == ' ' || **p == '\t'))
		(*p)++;
}

/* One line, without its newline. Path bytes: *path, *path_len. */
static int parse_line(const char *p, const char *end, struct procmaps_entry *e,
		      const char **path, size_t *path_len)
{
	uint64_t v;

	memset(e, 0, sizeof(*e));
	if (parse_hex(&p, end, &e->start) || expect(&p, end, '-') ||
	    parse_hex(&p, end, &e->end) || expect(&p, end, ' '))
		return -EINVAL;
	if (e->start >= e->end)
		return -EINVAL;
	if (end - p < 4)
		return -EINVAL;
	if (p[0] == 'r')
		e->prot |= PROCMAPS_PROT_READ;
	else if (p[0] != '-')
		return -EINVAL;
	if (p[1] == 'w')
		e->prot |= PROCMAPS_PROT_WRITE;
	else if (p[1] != '-')
		return -EINVAL;
	if (p[2] == 'x')
		e->prot |= PROCMAPS_PROT_EXEC;
	else if (p[2] != '-')
		return -EINVAL;
	if (p[3] == 's')
		e->shared = 1;
	else if (p[3] != 'p')
		return -EINVAL;
	p += 4;
	if (expect(&p, end, ' ') || parse_hex(&p, end, &e->offset) ||
	    expect(&p, end, ' '))
		return -EINVAL;
	if (parse_hex(&p, end, &v) || v > UINT32_MAX)
		return -EINVAL;
	e->dev_major = v;
	if (expect(&p, end, ':') || parse_hex(&p, end, &v) || v > UINT32_MAX)
		return -EINVAL;
	e->dev_minor = v;
	if (expect(&p, end, ' ') || parse_dec(&p, end, &e->inode))
		return -EINVAL;
	if (p < end && *p != ' ' && *p != '\t')
		return -EINVAL;
	skip_spaces(&p, end);
	*path = p;
	*path_len = end - p;
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct procmaps_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

int procmaps__parse(const char *text, size_t len, struct procmaps **out,
		    size_t *bad_line)
{
	struct procmaps *m = NULL;
	size_t nlines = 0, cap_str = 0, used_str = 0, i, lineno = 0;
	const char *p, *end = text + len;
	char *strs = NULL;
	size_t *path_off = NULL;
	int err, sorted = 1;

	*out = NULL;
	if (bad_line)
		*bad_line = 0;
	if (!text && len)
		return -EINVAL;
	/* Upper bound on entries and path bytes: one entry per line. */
	for (p = text; p < end; p++)
		if (*p == '\n')
			nlines++;
	if (len && end[-1] != '\n')
		nlines++;
	cap_str = len + nlines + 1;

	m = calloc(1, sizeof(*m));
	strs = malloc(cap_str);
	path_off = calloc(nlines ? nlines : 1, sizeof(*path_off));
	if (!m || !strs || !path_off) {
		err = -ENOMEM;
		goto err_out;
	}
	if (nlines) {
		m->entries = calloc(nlines, sizeof(*m->entries));
		if (!m->entries) {
			err = -ENOMEM;
			goto err_out;
		}
	}

	for (p = text; p < end;) {
		const char *nl = memchr(p, '\n', end - p);
		const char *le = nl ? nl : end;
		struct procmaps_entry *e = &m->entries[m->nr];
		const char *path;
		size_t plen;

		lineno++;
		if (le == p) { /* empty line: tolerated */
			p = le + 1;
			continue;
		}
		if (parse_line(p, le, e, &path, &plen)) {
			if (bad_line)
				*bad_line = lineno;
			err = -EINVAL;
			goto err_out;
		}
		if (memchr(path, '\0', plen)) {
			if (bad_line)
				*bad_line = lineno;
			err = -EINVAL;
			goto err_out;
		}
		if (e->inode && plen >= sizeof(DELETED_SUFFIX) - 1 &&
		    !memcmp(path + plen - (sizeof(DELETED_SUFFIX) - 1),
			    DELETED_SUFFIX, sizeof(DELETED_SUFFIX) - 1)) {
			e->deleted = 1;
			plen -= sizeof(DELETED_SUFFIX) - 1;
		}
		if (!e->inode && plen >= 2 && path[0] == '[' &&
		    path[plen - 1] == ']')
			e->pseudo = 1;
		memcpy(strs + used_str, path, plen);
		path_off[m->nr] = used_str;
		used_str += plen;
		strs[used_str++] = '\0';
		if (m->nr && e->start < m->entries[m->nr - 1].start)
			sorted = 0;
		m->nr++;
		p = nl ? nl + 1 : end;
	}
	/*
	 * Paths point into one block, stored after the entries so one free()
	 * of the entries releases them too: re-pack entries + strings.
	 */
	{
		size_t esz = m->nr * sizeof(*m->entries);
		char *blk = malloc(esz + used_str + 1);

		if (!blk) {
			err = -ENOMEM;
			goto err_out;
		}
		if (esz)
			memcpy(blk, m->entries, esz);
		if (used_str)
			memcpy(blk + esz, strs, used_str);
		blk[esz + used_str] = '\0';
		free(m->entries);
		m->entries = (struct procmaps_entry *)blk;
		for (i = 0; i < m->nr; i++)
			m->entries[i].path = blk + esz + path_off[i];
	}
	/* A maps file read in several chunks can see the list change. */
	if (!sorted)
		qsort(m->entries, m->nr, sizeof(*m->entries), entry_cmp);
	free(strs);
	free(path_off);
	*out = m;
	return 0;

err_out:
	free(strs);
	free(path_off);
	procmaps__free(m);
	return err;
}

void procmaps__free(struct procmaps *m)
{
	if (!m)
		return;
	free(m->entries);
	free(m);
}

int procmaps__read_file(const char *path, struct procmaps **out)
{
	uint8_t *buf;
	size_t len;
	int err;

	*out = NULL;
	err = util__read_file(path, PROCMAPS_MAX_BYTES, &buf, &len);
	if (err)
		return err;
	err = procmaps__parse((const char *)buf, len, out, NULL);
	free(buf);
	return err;
}

int procmaps__read(uint32_t pid, struct procmaps **out)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	return procmaps__read_file(path, out);
}

const struct procmaps_entry *procmaps__find(const struct procmaps *m,
					    uint64_t addr)
{
	size_t lo = 0, hi;

	if (!m)
		return NULL;
	hi = m->nr;
	/* Largest start <= addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->entries[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= m->entries[lo - 1].end)
		return NULL;
	return &m->entries[lo - 1];
}

/* "Key:\tvalue" at the start of a line: the value, or NULL. */
static const char *status_value(const char *line, size_t n, const char *key)
{
	size_t k = strlen(key);

	if (n <= k || memcmp(line, key, k))
		return NULL;
	line += k;
	n -= k;
	while (n && (*line == ' ' || *line == '\t'))
		line++, n--;
	return n ? line : NULL;
}

static int status_u32(const char *v, const char *end, uint32_t *out)
{
	uint64_t x = 0;

	if (!v || v >= end || *v < '0' || *v > '9')
		return -EINVAL;
	for (; v < end && *v >= '0' && *v <= '9'; v++) {
		x = x * 10 + (uint64_t)(*v - '0');
		if (x > UINT32_MAX)
			return -EINVAL;
	}
	*out = (uint32_t)x;
	return 0;
}

int procmaps__parse_status(const char *text, size_t len, struct procmaps_status *out)
{
	const char *p = text, *end = text + len;

	memset(out, 0, sizeof(*out));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *v;
		size_t n = (size_t)(le - p);
		uint32_t x;

		if ((v = status_value(p, n, "Tgid:"))) {
			if (status_u32(v, le, &out->tgid))
				return -EINVAL;
		} else if ((v = status_value(p, n, "State:"))) {
			if (*v < 'A' || *v > 'Z')
				return -EINVAL;
			out->state = *v;
		} else if ((v = status_value(p, n, "Threads:"))) {
			if (status_u32(v, le, &out->threads))
				return -EINVAL;
		} else if ((v = status_value(p, n, "Kthread:"))) {
			if (status_u32(v, le, &x) || x > 1)
				return -EINVAL;
			out->kthread = (int)x;
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
}

int procmaps__read_status(uint32_t pid, struct procmaps_status *out)
{
	char path[64];
	uint8_t *buf = NULL;
	size_t len = 0;
	int err;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	err = util__read_file(path, 64 << 10, &buf, &len);
	if (err)
		return err;
	err = procmaps__parse_status((const char *)buf, len, out);
	free(buf);
	return err;
}

// SPDX-License-Identifier: MIT
/* perf-PID.map text: bytes -> entries, lookup by address (src/runtimes/jit/perfmap.h). */
#include "runtimes/jit/perfmap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Names live in blocks that never move, so a returned name stays put. */
#define NAME_BLOCK (64u << 10)
/* Entries that may cover one address, looked at backwards from it. */
#define LOOKBACK 64

struct pm_block {
	struct pm_block *next;
	size_t used;
	char data[];
};

struct pm_entry {
	uint64_t start, end; /* [start, end) */
	uint64_t t;	     /* valid from (perfmap__set_time()) */
	const char *name;
	const char *file;    /* (perfmap__add_src(): its source, else NULL) */
	uint32_t line;
	const char *inl;     /* (perfmap__add_src(): its inlined frames, else NULL) */
};

struct perfmap {
	struct pm_entry *e; /* in file order: a later one wins */
	size_t nr, cap;
	uint32_t *idx;	    /* entries sorted by (start, file order) */
	size_t idx_nr;	    /* entries idx covers (nr when not stale) */
	struct pm_block *blocks;
	uint64_t offset;    /* bytes consumed */
	uint64_t t;	    /* what new entries are valid from */
	uint64_t bad;
	uint64_t bytes;	    /* what the entries cost (perfmap__entry_cost) */
	uint64_t limit;	    /* the most bytes (0: no bound) */
	uint64_t dropped;   /* entries past limit */
	bool skipping;	    /* inside an over-long line: drop to its newline */
};

struct perfmap *perfmap__new(void)
{
	return calloc(1, sizeof(struct perfmap));
}

void perfmap__free(struct perfmap *m)
{
	struct pm_block *b, *n;

	if (!m)
		return;
	for (b = m->blocks; b; b = n) {
		n = b->next;
		free(b);
	}
	free(m->e);
	free(m->idx);
	free(m);
}

uint64_t perfmap__offset(const struct perfmap *m)
{
	return m->offset;
}

size_t perfmap__nr(const struct perfmap *m)
{
	return m->nr;
}

uint64_t perfmap__bad_lines(const struct perfmap *m)
{
	return m->bad;
}

uint64_t perfmap__bytes(const struct perfmap *m)
{
	return m->bytes;
}

uint64_t perfmap__dropped(const struct perfmap *m)
{
	return m->dropped;
}

void perfmap__set_limit(struct perfmap *m, uint64_t bytes)
{
	m->limit = bytes;
}

/* An entry's share of the memory: itself, its index slot, its name. */
static uint64_t entry_cost(size_t len)
{
	return sizeof(struct pm_entry) + sizeof(uint32_t) + len + 1;
}

static const char *name_copy(struct perfmap *m, const char *s, size_t len)
{
	struct pm_block *b = m->blocks;
	char *p;

	if (!b || NAME_BLOCK - b->used < len + 1) {
		b = malloc(sizeof(*b) + NAME_BLOCK);
		if (!b)
			return NULL;
		b->used = 0;
		b->next = m->blocks;
		m->blocks = b;
	}
	p = b->data + b->used;
	memcpy(p, s, len);
	p[len] = 0;
	b->used += len + 1;
	return p;
}

/* A hex number of 1 to 16 digits (after an optional 0x) ending at a
 * space: 0 with *out and *pos past it, or -EINVAL. */
static int hex_field(const char *s, size_t len, size_t *pos, uint64_t *out)
{
	size_t i = *pos, digits = 0;
	uint64_t v = 0;

	if (len - i >= 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X'))
		i += 2;
	for (; i < len && s[i] != ' '; i++, digits++) {
		char c = s[i];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return -EINVAL;
		if (digits >= 16)
			return -EINVAL;
		v = v << 4 | d;
	}
	if (!digits || i >= len)
		return -EINVAL; /* no digits, or no space after them */
	*pos = i + 1;
	*out = v;
	return 0;
}

/* One line without its newline: 1 added, 0 bad, -ENOMEM. */
static int parse_line(struct perfmap *m, const char *s, size_t len)
{
	uint64_t start, size;
	size_t pos = 0;
	int rc;

	if (len && s[len - 1] == '\r')
		len--;
	if (memchr(s, 0, len) || hex_field(s, len, &pos, &start) ||
	    hex_field(s, len, &pos, &size))
		return 0;
	if (pos >= len)
		return 0;
	rc = perfmap__add(m, start, size, s + pos, len - pos);
	return rc == -EINVAL ? 0 : rc < 0 ? rc : 1;
}

int perfmap__add(struct perfmap *m, uint64_t start, uint64_t size, const char *name,
		 size_t len)
{
	return perfmap__add_src(m, start, size, name, len, NULL, 0, NULL);
}

int perfmap__add_src(struct perfmap *m, uint64_t start, uint64_t size, const char *name,
		     size_t len, const char *file, uint32_t line, const char *inl)
{
	const char *copy, *fcopy = NULL, *icopy = NULL;
	size_t flen = file ? strnlen(file, PERFMAP_LINE_MAX + 1) : 0;
	size_t ilen = inl ? strnlen(inl, PERFMAP_LINE_MAX + 1) : 0;
	uint64_t cost = entry_cost(len) + (flen ? entry_cost(flen) : 0) +
			(ilen ? entry_cost(ilen) : 0);

	if (!size || start + size < start || !len || len > PERFMAP_LINE_MAX ||
	    memchr(name, 0, len) || flen > PERFMAP_LINE_MAX || ilen > PERFMAP_LINE_MAX)
		return -EINVAL;
	if (m->limit && m->bytes + cost > m->limit) {
		m->dropped++; /* a bound, not an error: counted (--stats) */
		return 0;
	}
	if (m->nr == m->cap &&
	    util__grow((void **)&m->e, &m->cap, m->nr + 1, sizeof(*m->e)))
		return -ENOMEM;
	copy = name_copy(m, name, len);
	if (!copy || (flen && !(fcopy = name_copy(m, file, flen))) ||
	    (ilen && !(icopy = name_copy(m, inl, ilen))))
		return -ENOMEM;
	m->e[m->nr++] = (struct pm_entry){ .start = start, .end = start + size, .t = m->t,
					   .name = copy, .file = fcopy, .line = line,
					   .inl = icopy };
	m->bytes += cost;
	return 0;
}

void perfmap__set_time(struct perfmap *m, uint64_t t)
{
	if (t > m->t)
		m->t = t; /* (never back: file order is time order) */
}

long perfmap__feed(struct perfmap *m, const char *data, size_t len)
{
	size_t pos = 0;
	int err = 0;

	if (len > (size_t)0x7fffffff)
		len = 0x7fffffff; /* the rest at the next feed */
	while (pos < len) {
		const char *nl = memchr(data + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - data) : len;
		int r;

		if (m->skipping) {
			if (!nl) {
				pos = len; /* still inside it */
				break;
			}
			m->skipping = false;
			pos = end + 1;
			continue;
		}
		if (end - pos > PERFMAP_LINE_MAX) {
			m->bad++;
			if (!nl) {
				m->skipping = true;
				pos = len;
				break;
			}
			pos = end + 1;
			continue;
		}
		if (!nl)
			break; /* a partial line: wait for the rest */
		r = parse_line(m, data + pos, end - pos);
		if (r < 0) {
			err = r; /* retried from this line next time */
			break;
		}
		if (r == 0 && end > pos)
			m->bad++;
		pos = end + 1;
	}
	m->offset += pos;
	if (err && !pos)
		return err;
	return (long)pos;
}

/* idx order: by start, then file order. */
static const struct pm_entry *sort_entries;

static int idx_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct pm_entry *ex = &sort_entries[x], *ey = &sort_entries[y];

	if (ex->start != ey->start)
		return ex->start < ey->start ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * Entries are only appended: the ones past idx_nr are sorted alone and
 * merged into idx (old first on a tie: their indices are lower), the
 * order a whole sort gives at O(n) rather than O(n log n) comparisons. A
 * VM's live names come one entry per lookup, each lookup a reindex: on a
 * JVM of 100,000 entries the whole sort was most of a capture's CPU.
 */
static int reindex(struct perfmap *m)
{
	size_t old = m->idx_nr, add = m->nr - old, i, j, k;
	uint32_t *idx, *tail;

	if (m->nr >= UINT32_MAX) /* (seq = index + 1) */
		return -ENOMEM;
	idx = realloc(m->idx, (m->nr ? m->nr : 1) * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	m->idx = idx;
	tail = idx + old;
	for (i = 0; i < add; i++)
		tail[i] = (uint32_t)(old + i);
	sort_entries = m->e;
	if (add > 1)
		qsort(tail, add, sizeof(*idx), idx_cmp);
	sort_entries = NULL;
	/* the common case: every new entry starts at or past the last old */
	if (old && add && m->e[idx[old - 1]].start > m->e[tail[0]].start) {
		uint32_t *n = malloc(add * sizeof(*n));

		if (!n)
			return -ENOMEM;
		memcpy(n, tail, add * sizeof(*n));
		/* from the back: the larger start goes last, the new one on
		 * a tie (its index is higher) */
		i = old;
		j = add;
		k = m->nr;
		while (j) {
			if (i && m->e[idx[i - 1]].start > m->e[n[j - 1]].start)
				idx[--k] = idx[--i];
			else
				idx[--k] = n[--j];
		}
		free(n);
	}
	m->idx_nr = m->nr;
	return 0;
}

int perfmap__lookup(struct perfmap *m, uint64_t addr, const char **name,
		    uint64_t *start)
{
	return perfmap__lookup_range(m, addr, name, start, NULL);
}

int perfmap__lookup_range(struct perfmap *m, uint64_t addr, const char **name,
			  uint64_t *start, uint64_t *end)
{
	struct perfmap_hit hit;

	if (perfmap__lookup_at(m, addr, UINT64_MAX, &hit))
		return -ENOENT;
	*name = hit.name;
	if (start)
		*start = hit.start;
	if (end)
		*end = hit.end;
	return 0;
}

static void hit_fill(const struct perfmap *m, uint32_t i, struct perfmap_hit *hit)
{
	const struct pm_entry *e = &m->e[i];

	hit->name = e->name;
	hit->start = e->start;
	hit->end = e->end;
	hit->seq = i + 1;
	hit->file = e->file;
	hit->line = e->line;
	hit->inl = e->inl;
}

int perfmap__lookup_at(struct perfmap *m, uint64_t addr, uint64_t t, struct perfmap_hit *hit)
{
	size_t lo = 0, hi, k;
	bool valid = false, any = false;
	uint32_t best = 0;

	if (m->idx_nr != m->nr && reindex(m))
		return -ENOENT;
	hi = m->idx_nr;
	while (lo < hi) { /* first entry starting above addr */
		size_t mid = lo + (hi - lo) / 2;

		if (m->e[m->idx[mid]].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the newest entry valid at t; where none is yet (a JIT writes its
	 * line after the code runs), the oldest: the first name it had */
	for (k = 0; k < LOOKBACK && lo > k; k++) {
		uint32_t i = m->idx[lo - 1 - k];
		const struct pm_entry *e = &m->e[i];

		if (addr >= e->end)
			continue;
		if (e->t <= t) {
			if (!valid || i > best)
				best = i;
			valid = true;
		} else if (!valid && (!any || i < best)) {
			best = i;
		}
		any = true;
	}
	if (!any)
		return -ENOENT;
	hit_fill(m, best, hit);
	return 0;
}

int perfmap__entry(const struct perfmap *m, uint32_t seq, struct perfmap_hit *hit)
{
	if (!seq || seq > m->nr)
		return -ENOENT;
	hit_fill(m, seq - 1, hit);
	return 0;
}

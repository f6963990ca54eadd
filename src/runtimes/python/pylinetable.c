// SPDX-License-Identifier: MIT
/*
 * The CPython 3.11+ location table (co_linetable) -> runs of code units
 * with their start line (src/runtimes/python/pyreader.h). The format, from CPython's
 * Objects/locations.md: a sequence of entries, each a first byte
 *   bit 7 set | bits 3-6: code | bits 0-2: length - 1 (code units)
 * followed by bytes with bit 7 clear:
 *   code 0-9   short form: same line; one byte of columns
 *   code 10-12 one-line form: line += code - 10; two column bytes
 *   code 13    no columns: line += svarint
 *   code 14    long form: line += svarint; end line, column, end column
 *              varints
 *   code 15    no location (the line stays for the next entry)
 * varint: 6-bit chunks, least significant first, bit 6 = more follow.
 * svarint: varint v; v >> 1, negated when v & 1.
 * Only start lines matter to a profiler; columns are skipped.
 */
#include <errno.h>
#include <stdlib.h>

#include "runtimes/python/pyreader.h"

struct cursor {
	const uint8_t *p, *end;
};

static int varint(struct cursor *c, uint32_t *out)
{
	uint32_t v = 0;

	for (unsigned shift = 0;; shift += 6) {
		if (c->p >= c->end || shift > 30)
			return -EINVAL;
		uint8_t b = *c->p;
		if (b & 0x80) /* the next entry began: truncated */
			return -EINVAL;
		c->p++;
		if (shift == 30 && (b & 0x3f) > 3)
			return -EINVAL; /* past 32 bits */
		v |= (uint32_t)(b & 0x3f) << shift;
		if (!(b & 0x40))
			break;
	}
	*out = v;
	return 0;
}

static int svarint(struct cursor *c, int64_t *out)
{
	uint32_t u;

	if (varint(c, &u) < 0)
		return -EINVAL;
	*out = (u & 1) ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
	return 0;
}

static int skip_bytes(struct cursor *c, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (c->p >= c->end || (*c->p & 0x80))
			return -EINVAL;
		c->p++;
	}
	return 0;
}

static int add_run(struct pylinetable *t, uint32_t *cap, uint32_t end,
		   int32_t line)
{
	if (t->nr_runs && t->runs[t->nr_runs - 1].line == line) {
		t->runs[t->nr_runs - 1].end = end; /* same line: extend */
		return 0;
	}
	if (t->nr_runs == *cap) {
		uint32_t ncap = *cap ? *cap * 2 : 16;
		struct pylinetable_run *n = reallocarray(t->runs, ncap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->runs = n;
		*cap = ncap;
	}
	t->runs[t->nr_runs++] = (struct pylinetable_run){ end, line };
	return 0;
}

int pylinetable_decode(const uint8_t *tab, size_t len, int32_t firstlineno,
		       struct pylinetable *t)
{
	struct cursor c = { tab, tab + len };
	int64_t line = firstlineno;
	uint32_t end = 0, cap = 0;
	int err = 0;

	t->runs = NULL;
	t->nr_runs = 0;
	if (len > PYREADER_LINETABLE_MAX)
		return -E2BIG;
	if (len && !tab)
		return -EINVAL;
	while (c.p < c.end) {
		uint8_t first = *c.p++;
		unsigned code = (first >> 3) & 15, units = (first & 7) + 1;
		int64_t delta = 0;
		int32_t this_line;
		uint32_t skip;

		if (!(first & 0x80)) {
			err = -EINVAL;
			break;
		}
		if (code <= 9) {
			err = skip_bytes(&c, 1);
		} else if (code <= 12) {
			delta = code - 10;
			err = skip_bytes(&c, 2);
		} else if (code == 13) {
			err = svarint(&c, &delta);
		} else if (code == 14) {
			err = svarint(&c, &delta);
			for (int i = 0; i < 3 && !err; i++)
				err = varint(&c, &skip);
		}
		if (err)
			break;
		if (code != 15) {
			line += delta;
			if (line < 0 || line > INT32_MAX) {
				err = -EINVAL;
				break;
			}
		}
		/* a line of 0 cannot be told from "none": CPython never emits one
		 * for real code, and 0 is what the caller shows for "none" */
		this_line = code == 15 ? 0 : (int32_t)line;
		if (end > UINT32_MAX - units) {
			err = -EINVAL;
			break;
		}
		end += units;
		err = add_run(t, &cap, end, this_line);
		if (err)
			break;
	}
	if (err) {
		pylinetable_free(t);
		return err;
	}
	return 0;
}

int32_t pylinetable_line(const struct pylinetable *t, uint32_t instr_offset)
{
	uint32_t cu = instr_offset / 2, lo = 0, hi = t->nr_runs;

	/* the first run whose end is past cu */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->runs[mid].end > cu)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo < t->nr_runs ? t->runs[lo].line : 0;
}

void pylinetable_free(struct pylinetable *t)
{
	free(t->runs);
	t->runs = NULL;
	t->nr_runs = 0;
}

// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: jitdump bytes through jitdump.h, fed whole and again
 * in pieces split where the input says (as a growing file is read, code
 * bytes stepped over), with lookups and line queries at addresses the
 * input holds. Both feeds must agree on every count.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/jit/jitdump.h"
#include "runtimes/jit/perfmap.h"

static volatile uint64_t sink;

static void probe(struct perfmap *m, struct jitdump *d, uint64_t a)
{
	const char *name, *file;
	uint64_t start, end;
	uint32_t line;

	if (!perfmap__lookup_range(m, a, &name, &start, &end)) {
		if (start > a || a >= end || !name[0] || strlen(name) > PERFMAP_LINE_MAX)
			abort();
		sink += start + strlen(name);
	}
	if (!jitdump__line(d, a, &file, &line))
		sink += strlen(file) + line;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap *mw = perfmap__new(), *mp = perfmap__new();
	struct jitdump *whole = mw ? jitdump__new(mw) : NULL;
	struct jitdump *parts = mp ? jitdump__new(mp) : NULL;
	struct jitdump_stats sw, sp;
	size_t off = 0, step = size ? data[0] % 97 + 1 : 1;
	long used;

	if (!whole || !parts)
		goto out;
	used = jitdump__feed(whole, data, size);
	if (used == -ENOMEM)
		goto out;
	if (used > (long)size || (used >= 0 && jitdump__offset(whole) != (uint64_t)used))
		abort();
	/* pieces: what the last feed left plus `step` more; skippable bytes
	 * stepped over unread when the input's first bit says so */
	for (size_t end = 0; end < size && !jitdump__error(parts);) {
		uint64_t skip = jitdump__skip_pending(parts);

		if (skip && (data[0] & 1)) {
			if (skip > size - off)
				skip = size - off;
			jitdump__skip(parts, skip);
			off += (size_t)skip;
			end = end > off ? end : off;
			continue;
		}
		end = end + step < size ? end + step : size;
		used = jitdump__feed(parts, data + off, end - off);
		if (used < 0)
			break;
		off += (size_t)used;
		if (jitdump__offset(parts) != off)
			abort();
	}
	jitdump__stats(whole, &sw);
	jitdump__stats(parts, &sp);
	if (!jitdump__error(whole) != !jitdump__error(parts) ||
	    (!jitdump__error(whole) && jitdump__offset(whole) != jitdump__offset(parts)) ||
	    memcmp(&sw, &sp, sizeof(sw)) || perfmap__nr(mw) != perfmap__nr(mp))
		abort();
	for (size_t i = 0; i + 8 <= size && i < 4096; i += 8) {
		uint64_t a;

		memcpy(&a, data + i, 8);
		probe(mw, whole, a);
		probe(mw, whole, a + 1);
	}
	probe(mw, whole, 0);
	probe(mw, whole, UINT64_MAX);
out:
	jitdump__free(whole);
	jitdump__free(parts);
	perfmap__free(mw);
	perfmap__free(mp);
	return 0;
}

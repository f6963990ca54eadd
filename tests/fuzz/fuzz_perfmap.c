// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: perf-PID.map text through perfmap, fed whole and
 * again in pieces split where the input says (as a growing file is read),
 * with lookups at every entry's edges. Both feeds must agree. The pieces
 * are fed at rising times: a lookup at a time names an entry that covers
 * the address, the entry its seq gives back.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/jit/perfmap.h"

static volatile uint64_t sink;

static void probe(struct perfmap *m, uint64_t a)
{
	const char *name;
	uint64_t start;

	if (!perfmap__lookup(m, a, &name, &start)) {
		if (start > a || !name[0] || strlen(name) > PERFMAP_LINE_MAX)
			abort();
		sink += start + strlen(name);
	}
}

static void probe_at(struct perfmap *m, uint64_t a, uint64_t t)
{
	struct perfmap_hit h, e;

	if (perfmap__lookup_at(m, a, t, &h))
		return;
	if (h.start > a || a >= h.end || !h.seq || h.seq > perfmap__nr(m) ||
	    perfmap__entry(m, h.seq, &e) || e.name != h.name || e.start != h.start ||
	    e.end != h.end)
		abort();
	sink += h.seq;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap *whole = perfmap__new(), *parts = perfmap__new();
	const char *text = (const char *)data;
	size_t off = 0, step = size ? data[0] % 61 + 1 : 1;

	if (!whole || !parts)
		goto out;
	if (perfmap__feed(whole, text, size) < 0)
		goto out;
	/* pieces: each feed gets what the last one left plus `step` more */
	for (size_t end = 0; end < size;) {
		long used;

		end = end + step < size ? end + step : size;
		perfmap__set_time(parts, end);
		used = perfmap__feed(parts, text + off, end - off);
		if (used < 0)
			goto out;
		off += (size_t)used;
		if (perfmap__offset(parts) != off)
			abort();
	}
	if (perfmap__offset(whole) > size || perfmap__offset(parts) != perfmap__offset(whole) ||
	    perfmap__nr(parts) != perfmap__nr(whole) ||
	    perfmap__bad_lines(parts) != perfmap__bad_lines(whole))
		abort();
	for (size_t i = 0; i + 8 <= size && i < 4096; i += 8) {
		uint64_t a;

		memcpy(&a, data + i, 8);
		probe(whole, a);
		probe_at(parts, a, i);
	}
	probe(whole, 0);
	probe(whole, UINT64_MAX);
out:
	perfmap__free(whole);
	perfmap__free(parts);
	return 0;
}

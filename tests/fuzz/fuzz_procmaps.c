// SPDX-License-Identifier: MIT
/* libFuzzer target: /proc/PID/maps text through procmaps__parse, with
 * the invariants every accepted parse must keep. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct procmaps *m = NULL;
	volatile size_t sink = 0;
	size_t i, bad = 0;

	if (procmaps__parse((const char *)data, size, &m, &bad)) {
		if (m || !bad)
			abort(); /* a failure names its line and returns nothing */
		return 0;
	}
	for (i = 0; i < m->nr; i++) {
		const struct procmaps_entry *e = &m->entries[i];

		if (e->start >= e->end || !e->path)
			abort();
		if (i && e->start < m->entries[i - 1].start)
			abort(); /* sorted */
		sink += strlen(e->path);
		if (procmaps__find(m, e->start) == NULL ||
		    procmaps__find(m, e->end - 1) == NULL)
			abort();
	}
	sink += procmaps__find(m, 0) != NULL;
	sink += procmaps__find(m, UINT64_MAX) != NULL;
	procmaps__free(m);
	(void)sink;
	return 0;
}

// SPDX-License-Identifier: MIT
/* libFuzzer target: /proc/PID/maps text through procmaps__parse, with
 * the invariants every accepted parse must keep. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct procmaps *m = NULL;
	volatile size_t sink = 0;
	size_t i, bad = 0;

	struct procmaps_status st;

	/* the same bytes as /proc/PID/status: -p's checks */
	if (!procmaps__parse_status((const char *)data, size, &st) &&
	    st.state && (st.state < 'A' || st.state > 'Z'))
		abort();
	if (procmaps__parse((const char *)data, size, &m, &bad)) {
		if (m || !bad)
			abort(); /* a failure names its line and returns nothing */
		return 0;
	}
	for (i = 0; i < m->nr; i++) {
		const struct procmaps_entry *e = &m->entries[i], *f;
		/* Overlapping lines (a maps file read while it changed) are
		 * kept; find() then answers with the later-starting one. */
		int overlap = i && e->start < m->entries[i - 1].end;
		uint64_t probes[2] = { e->start, e->end - 1 };
		int k;

		if (e->start >= e->end || !e->path)
			abort();
		if (i && e->start < m->entries[i - 1].start)
			abort(); /* sorted */
		sink += strlen(e->path);
		for (k = 0; k < 2; k++) {
			f = procmaps__find(m, probes[k]);
			if (f && (probes[k] < f->start || probes[k] >= f->end))
				abort(); /* an answer holds the address */
			if (!f && !overlap && (i + 1 == m->nr ||
			    m->entries[i + 1].start >= e->end))
				abort(); /* an isolated entry is found */
		}
	}
	sink += procmaps__find(m, 0) != NULL;
	sink += procmaps__find(m, UINT64_MAX) != NULL;
	procmaps__free(m);
	(void)sink;
	return 0;
}

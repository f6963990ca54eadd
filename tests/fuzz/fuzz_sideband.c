// SPDX-License-Identifier: MIT
/* libFuzzer target: perf side-band records (MMAP2, COMM, LOST...) through
 * sideband__parse, with the invariants every accepted record keeps. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "capture/sideband.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sideband_rec r;
	volatile size_t sink = 0;

	if (sideband__parse(data, size, &r))
		return 0;
	if (r.kind < SIDEBAND_MMAP || r.kind > SIDEBAND_OTHER)
		abort();
	if (r.kind == SIDEBAND_MMAP || r.kind == SIDEBAND_EXEC) {
		/* the string lies inside the record, NUL included */
		const uint8_t *p = (const uint8_t *)r.path;

		if (!p || p < data || p >= data + size)
			abort();
		sink += strlen(r.path);
		if ((const uint8_t *)r.path + strlen(r.path) >= data + size)
			abort();
	}
	if (r.kind == SIDEBAND_MMAP &&
	    (!r.len || r.start + r.len < r.start))
		abort();
	(void)sink;
	return 0;
}

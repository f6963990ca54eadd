// SPDX-License-Identifier: MIT
/* libFuzzer target: a .go.buildinfo section's bytes through the version
 * parser: an accepted version fits the buffer and the bytes, and looking
 * it up in the offsets table never reads past it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/go/gooffsets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char ver[64];
	struct sfprof_go_proc p;
	uint8_t *copy;

	if (size > 1 << 16)
		return 0;
	/* an exact-size copy: ASan sees a read past the bytes */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (!go_offsets__buildinfo_version(copy, size, ver, sizeof(ver))) {
		size_t n = strlen(ver);

		if (n >= sizeof(ver) || n + 33 > size)
			abort();
		if (!go_offsets__from_version(ver, &p) && p.g_sched != 56)
			abort(); /* the one table entry, go1.19 */
	}
	free(copy);
	return 0;
}

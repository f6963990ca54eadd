// SPDX-License-Identifier: MIT
/* Helpers shared by several modules. See src/util.h. */
#include "util.h"

#include <inttypes.h>
#include <stdio.h>

void util__fmt_count(char *buf, size_t size, uint64_t v)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%" PRIu64, v), o = 0;

	for (int i = 0; i < n && (size_t)o + 2 < size; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = 0;
}

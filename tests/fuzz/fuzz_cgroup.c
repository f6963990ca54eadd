// SPDX-License-Identifier: MIT
/* libFuzzer target: /proc/PID/cgroup text and cgroup v2 paths through the
 * agent's parsers (src/agent/cgroup.c), with the invariants of a parse:
 * ids of exactly 64 hex digits, units ending in .service or .scope, both
 * found inside the path. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"

static int hex64(const char *s)
{
	if (strlen(s) != AGENT_CONTAINER_MAX)
		return 0;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return 0;
	return 1;
}

static int ends_with(const char *s, const char *suf)
{
	size_t l = strlen(s), k = strlen(suf);

	return l >= k && !strcmp(s + l - k, suf);
}

static void check_path(const char *p, size_t len)
{
	struct cgroup_ids ids;
	char *copy;

	if (cgroup_path__parse(p, len, &ids)) {
		if (ids.container[0] || ids.unit[0])
			abort(); /* a refusal finds nothing */
		return;
	}
	if (ids.container[0] && (!hex64(ids.container) || !ids.runtime))
		abort();
	if (ids.unit[0] && !ends_with(ids.unit, ".service") && !ends_with(ids.unit, ".scope"))
		abort();
	copy = malloc(len + 1);
	if (!copy)
		return;
	memcpy(copy, p, len);
	copy[len] = 0;
	if ((ids.container[0] && !strstr(copy, ids.container)) ||
	    (ids.unit[0] && !strstr(copy, ids.unit)))
		abort(); /* both are read from the path */
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[1024];

	/* the bytes as a path, and as /proc/PID/cgroup text */
	check_path((const char *)data, size);
	if (!proc_cgroup__v2_path((const char *)data, size, path, sizeof(path))) {
		if (strlen(path) >= sizeof(path))
			abort();
		check_path(path, strlen(path));
	}
	return 0;
}

// SPDX-License-Identifier: MIT
/* A record's Go section (src/runtimes/go/gosection.h). */
#include "runtimes/go/gosection.h"

#include <stddef.h>

const struct sfprof_go_section *go_section__of(const struct sfprof_event *e,
					       const uint8_t **stack, int *bad)
{
	const struct sfprof_go_section *sec;
	uint64_t off;

	if (!(e->flags & SFPROF_EVF_GO))
		return NULL;
	off = SFPROF_PY_SECTION_OFF((uint64_t)e->stack_len);
	if ((e->flags & SFPROF_EVF_PYTHON) || e->stack_len > SFPROF_STACK_MAX ||
	    e->size < SFPROF_EVENT_HDR_SIZE || off + SFPROF_GO_SECTION_HDR > e->size) {
		*bad = 1;
		return NULL;
	}
	sec = (const void *)((const uint8_t *)e + off);
	if (sec->len > SFPROF_STACK_MAX || off + SFPROF_GO_SECTION_HDR + sec->len > e->size) {
		*bad = 1;
		return NULL;
	}
	*stack = (const uint8_t *)sec + SFPROF_GO_SECTION_HDR;
	return sec;
}

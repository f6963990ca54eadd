// SPDX-License-Identifier: MIT
/* libFuzzer target: an event record as a capture file holds it (its
 * lengths checked as the reader checks them), through the Go section's
 * parser: an accepted section and its stack lie within the record. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/go/gosection.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t buf[(SFPROF_EVENT_HDR_SIZE + 2 * SFPROF_STACK_MAX + 4096) / 8 + 1];
	struct sfprof_event *e = (struct sfprof_event *)buf;
	const struct sfprof_go_section *sec;
	const uint8_t *stack = NULL, *end;
	volatile uint8_t sum = 0;
	int bad = 0;

	if (size < SFPROF_EVENT_HDR_SIZE || size > sizeof(buf))
		return 0;
	memcpy(buf, data, size);
	e->size = (uint32_t)size; /* the reader's checks: size, stack */
	if (e->stack_len > SFPROF_STACK_MAX || SFPROF_EVENT_HDR_SIZE + e->stack_len > size)
		return 0;
	sec = go_section__of(e, &stack, &bad);
	if (!sec)
		return 0;
	end = (const uint8_t *)e + size;
	if (bad || !stack || (const uint8_t *)sec < e->stack + e->stack_len ||
	    stack + sec->len > end || (e->flags & SFPROF_EVF_PYTHON))
		abort();
	for (uint32_t i = 0; i < sec->len; i++)
		sum += stack[i]; /* every byte readable (ASan) */
	(void)sum;
	return 0;
}

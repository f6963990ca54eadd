/* SPDX-License-Identifier: MIT */
/*
 * A record's Go section (include/sfprof_event.h, bpf/go.bpf.h): the user
 * goroutine a sample on g0 switched from, and its stack.
 */
#ifndef SFPROF_GOSECTION_H
#define SFPROF_GOSECTION_H

#include <stdint.h>

#include "sfprof_event.h"

/*
 * The section of e and its stack bytes (*stack, sec->len of them): NULL
 * when e has none, or when it is malformed (does not fit e->size, a
 * stack longer than SFPROF_STACK_MAX, beside a Python section): then
 * *bad is set. Never reads past e->size bytes of e.
 */
const struct sfprof_go_section *go_section__of(const struct sfprof_event *e,
					       const uint8_t **stack, int *bad);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Small helpers more than one module needs. Internal to libsfprof: not
 * installed, not a contract.
 */
#ifndef SFPROF_UTIL_H
#define SFPROF_UTIL_H

#include <stddef.h>
#include <stdint.h>

/*
 * v in decimal with thousands separators (1234567 -> "1,234,567"),
 * truncated to fit buf (size >= 1).
 */
void util__fmt_count(char *buf, size_t size, uint64_t v);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Small helpers more than one module needs. Internal to libsfprof: not
 * installed, not a contract.
 */
#ifndef SFPROF_UTIL_H
#define SFPROF_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * The whole of `path` in a malloc()ed buffer (*out, *out_len; the caller
 * frees *out). Files that report no size (procfs) are read in growing
 * chunks. With limit nonzero, a file of `limit` bytes or more fails with
 * -EFBIG. 0 or -errno; on error *out is NULL.
 */
int util__read_file(const char *path, size_t limit, uint8_t **out,
		    size_t *out_len);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t util__now_ns(void);
/* Nanoseconds of clock `clk` (CLOCK_REALTIME, CLOCK_PROCESS_CPUTIME_ID...). */
uint64_t util__clock_ns(int clk);

/*
 * Grow the array *arr (elements of `elem` bytes, *cap of them) to hold at
 * least `need`, doubling from 16 with every size overflow-checked.
 * 0 or -ENOMEM (then *arr and *cap are unchanged).
 */
int util__grow(void **arr, size_t *cap, size_t need, size_t elem);

/*
 * v in decimal with thousands separators (1234567 -> "1,234,567"),
 * truncated to fit buf (size >= 1).
 */
void util__fmt_count(char *buf, size_t size, uint64_t v);

/*
 * Unaligned host-order loads and stores (capture records, .eh_frame_hdr
 * tables): memcpy, so no alignment or aliasing assumptions.
 */
static inline uint32_t util__get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t util__get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline void util__put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static inline void util__put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The profile's interned strings and the table helpers its frame and stack
 * tables share (strtab.c). Internal to src/profile/.
 */
#ifndef SFPROF_PROFILE_STRTAB_H
#define SFPROF_PROFILE_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct arena_block;

/* Strings by dense id; id 0 is the empty string (a NULL input). */
struct strtab {
	struct arena_block *blocks;
	const char **strs;
	uint64_t *hashes;
	uint32_t nr, cap;
	uint32_t *slots;
	uint32_t mask; /* slots - 1; slots is a power of two */
};

/* Intern len bytes at s (or a C string; NULL is id 0); returns the id or
 * a negative errno. */
int64_t strtab__intern(struct strtab *t, const char *s, size_t len);
int64_t strtab__intern_str(struct strtab *t, const char *s);
void strtab__release(struct strtab *t);

/* Grow *ptr (elem-sized, *cap entries) to hold need; 0 or -ENOMEM. */
int grow32(void **ptr, uint32_t *cap, size_t need, size_t elem);
uint64_t hash_bytes(const void *data, size_t len, uint64_t seed);
/* Rebuild a slot array of 2 * need (power of two) from per-entry hashes
 * (each entry stride bytes, its hash at hash_off). */
int slots__rebuild(uint32_t **slots, uint32_t *mask, size_t nr,
		   const void *entries, size_t stride, size_t hash_off);

#endif

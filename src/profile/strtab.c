// SPDX-License-Identifier: MIT
/*
 * The profile's string table (strtab.h): strings copied into 64 KiB arena
 * blocks and interned by an open-addressing table of id + 1 slots, with
 * the full hash kept per string; and the growth and rehash helpers the
 * frame and stack tables in profile.c share.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/strtab.h"
#include "util.h"

#define ARENA_BLOCK (64 * 1024)

struct arena_block {
	struct arena_block *next;
	size_t used, size;
	char data[];
};

int grow32(void **ptr, uint32_t *cap, size_t need, size_t elem)
{
	size_t c = *cap;
	int err;

	if (need > UINT32_MAX - 1)
		return -ENOMEM;
	err = util__grow(ptr, &c, need, elem);
	if (err)
		return err;
	*cap = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
	return 0;
}

/* Eight bytes a step: interning hashes every frame name of every event. */
uint64_t hash_bytes(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *s = data;
	uint64_t h = 0xcbf29ce484222325ull ^ seed ^ (len * 0x9e3779b97f4a7c15ull), w;

	for (; len >= 8; s += 8, len -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, s, len);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 32);
}

static char *arena_alloc(struct arena_block **head, size_t n)
{
	struct arena_block *b = *head;

	if (!b || b->size - b->used < n) {
		size_t size = n > ARENA_BLOCK ? n : ARENA_BLOCK;

		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->size = size;
		b->used = 0;
		b->next = *head;
		*head = b;
	}
	b->used += n;
	return b->data + b->used - n;
}

void strtab__release(struct strtab *t)
{
	struct arena_block *b = t->blocks, *next;

	for (; b; b = next) {
		next = b->next;
		free(b);
	}
	free(t->strs);
	free(t->hashes);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/* Rebuild a slot array of 2 * need (power of two) from per-entry hashes. */
int slots__rebuild(uint32_t **slots, uint32_t *mask, size_t nr,
			  const void *entries, size_t stride, size_t hash_off)
{
	size_t size = 64;
	uint32_t *s;

	while (size < 2 * (nr + 1)) {
		if (size > (1u << 30))
			return -ENOMEM;
		size *= 2;
	}
	s = calloc(size, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		uint64_t h;
		size_t j;

		memcpy(&h, (const char *)entries + i * stride + hash_off, sizeof(h));
		for (j = h & (size - 1); s[j]; j = (j + 1) & (size - 1))
			;
		s[j] = (uint32_t)i + 1;
	}
	free(*slots);
	*slots = s;
	*mask = (uint32_t)(size - 1);
	return 0;
}

/* Intern len bytes at s; returns the id (> 0) or a negative errno. */
int64_t strtab__intern(struct strtab *t, const char *s, size_t len)
{
	uint32_t j, old_cap = t->cap;
	uint64_t h;
	char *copy;

	if (!len)
		return 0;
	h = hash_bytes(s, len, 0);
	if (t->slots) {
		for (j = h & t->mask; t->slots[j]; j = (j + 1) & t->mask) {
			uint32_t id = t->slots[j] - 1;

			if (t->hashes[id] == h && !strncmp(t->strs[id], s, len) &&
			    t->strs[id][len] == 0)
				return id;
		}
	}
	/* entry 0 is the empty string; it is never in the slots */
	if (grow32((void **)&t->strs, &t->cap, (size_t)t->nr + 2, sizeof(*t->strs)))
		return -ENOMEM;
	if (t->cap != old_cap) {
		void *nh = realloc(t->hashes, (size_t)t->cap * sizeof(*t->hashes));

		if (!nh) {
			t->cap = old_cap; /* strs is larger; harmless */
			return -ENOMEM;
		}
		t->hashes = nh;
	}
	copy = arena_alloc(&t->blocks, len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s, len);
	copy[len] = 0;
	if (t->nr == 0) {
		t->strs[0] = "";
		t->hashes[0] = 0;
		t->nr = 1;
	}
	if (!t->slots || 2 * ((size_t)t->nr + 1) > (size_t)t->mask) {
		size_t size = t->slots ? ((size_t)t->mask + 1) * 2 : 64;
		uint32_t *ns = calloc(size, sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		for (uint32_t i = 1; i < t->nr; i++) {
			for (j = t->hashes[i] & (size - 1); ns[j]; j = (j + 1) & (size - 1))
				;
			ns[j] = i + 1;
		}
		free(t->slots);
		t->slots = ns;
		t->mask = (uint32_t)(size - 1);
	}
	t->strs[t->nr] = copy;
	t->hashes[t->nr] = h;
	for (j = h & t->mask; t->slots[j]; j = (j + 1) & t->mask)
		;
	t->slots[j] = t->nr + 1;
	return t->nr++;
}

int64_t strtab__intern_str(struct strtab *t, const char *s)
{
	return s ? strtab__intern(t, s, strlen(s)) : 0;
}

// SPDX-License-Identifier: MIT
/*
 * CPU samples aggregated by raw stack (stacks_int.h, struct agg_entry):
 * the key (process, mapping generation, unwound frames, kernel PCs,
 * Python frames, stop, root), its hash and table, and the hand-over of
 * each distinct stack to the profile at stacks__flush().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

#include "stacks/stacks.h"
#include "stacks/stacks_int.h"
#include "util.h"

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + HASH_K + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

/* Make room for one more entry: the array, and an index at most half full. */
static int agg_reserve(struct stacks *s)
{
	size_t n, j;
	uint32_t *slots;

	if (s->agg_nr >= UINT32_MAX - 1 ||
	    util__grow((void **)&s->agg, &s->agg_cap, s->agg_nr + 1, sizeof(*s->agg)))
		return -ENOMEM;
	if ((s->agg_nr + 1) * 2 <= s->agg_nslots)
		return 0;
	n = s->agg_nslots ? s->agg_nslots * 2 : 1024;
	slots = calloc(n, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < s->agg_nr; i++) {
		for (j = s->agg[i].hash & (n - 1); slots[j]; j = (j + 1) & (n - 1))
			;
		slots[j] = (uint32_t)(i + 1);
	}
	free(s->agg_slots);
	s->agg_slots = slots;
	s->agg_nslots = n;
	return 0;
}

#define FRAME_WORD(f) (((f).pc ^ ((uint64_t)(f).flags << 59)) * HASH_K)

#if defined(__x86_64__)
/*
 * frames_hash()'s job with the CPU's CRC32C, one instruction a word (pc, then
 * flags and pad) in four lanes, where the CPU has it (SSE4.2: every x86-64
 * CPU since 2008). A CRC is linear, so the lanes are mixed at the end;
 * equal keys are still compared in full.
 */
__attribute__((target("sse4.2")))
static uint64_t frames_hash_crc(uint64_t h, const struct unwind_frame *f, size_t n)
{
	uint64_t c0 = h, c1 = 0x6a09e667f3bcc908ull, c2 = 0xbb67ae8584caa73bull;
	uint64_t c3 = 0x3c6ef372fe94f82bull;
	typedef uint64_t __attribute__((may_alias)) word;
	const word *w = (const word *)f; /* two words a frame */
	size_t i = 0;

	for (; i + 2 <= n; i += 2, w += 4) {
		c0 = _mm_crc32_u64(c0, w[0]);
		c1 = _mm_crc32_u64(c1, w[1]);
		c2 = _mm_crc32_u64(c2, w[2]);
		c3 = _mm_crc32_u64(c3, w[3]);
	}
	if (i < n) {
		c0 = _mm_crc32_u64(c0, w[0]);
		c1 = _mm_crc32_u64(c1, w[1]);
	}
	return mix(mix(mix(mix(h, c0), c1), c2), c3);
}
#endif

/* The key's frames, one multiply a frame (flags are 3 bits, PCs 47), in
 * four lanes: each step waits for the one before in its lane only. */
static uint64_t frames_hash(uint64_t h, const struct unwind_frame *f, size_t n)
{
	uint64_t h1 = 0x6a09e667f3bcc908ull, h2 = 0xbb67ae8584caa73bull;
	uint64_t h3 = 0x3c6ef372fe94f82bull;
	size_t i = 0;

	for (; i + 4 <= n; i += 4) {
		h = ROTL(h, 29) ^ FRAME_WORD(f[i]);
		h1 = ROTL(h1, 29) ^ FRAME_WORD(f[i + 1]);
		h2 = ROTL(h2, 29) ^ FRAME_WORD(f[i + 2]);
		h3 = ROTL(h3, 29) ^ FRAME_WORD(f[i + 3]);
	}
	for (; i < n; i++)
		h = ROTL(h, 29) ^ FRAME_WORD(f[i]);
	return mix(mix(mix(h, h1), h2), h3);
}

/* Count the stats of one sample of an aggregated stack. */
void stacks_count_sample(struct stacks *s, const struct agg_entry *a)
{
	s->st.frames += a->n;
	s->st.frames_unnamed += a->unnamed;
	if (a->complete)
		s->st.complete++;
	else
		s->st.truncated++;
	if (a->at_entry)
		s->st.entry_by_symbol++;
}

/* Keep a new distinct stack: its key and root copied, its profile ids. */
static int agg_insert(struct stacks *s, uint64_t h, const char *root,
		      const uint64_t *kips, const uint32_t *ids, size_t np,
		      struct agg_entry *tmpl)
{
	struct agg_entry *a;
	size_t j, nkey = 2 * (size_t)tmpl->n + tmpl->nk + 2 * (size_t)tmpl->npy;

	if (agg_reserve(s))
		return -ENOMEM;
	for (j = h & (s->agg_nslots - 1); s->agg_slots[j]; j = (j + 1) & (s->agg_nslots - 1))
		;
	a = &s->agg[s->agg_nr];
	*a = *tmpl;
	a->hash = h;
	a->np = (uint32_t)np;
	/* one block: the key, the ids, the root */
	a->key = malloc(nkey * sizeof(*a->key) + np * sizeof(*a->ids) +
			strlen(root) + 1);
	if (!a->key) {
		memset(a, 0, sizeof(*a));
		return -ENOMEM;
	}
	a->ids = (uint32_t *)(a->key + nkey);
	a->root = (char *)(a->ids + np);
	strcpy(a->root, root);
	memcpy(a->key, s->frames, (size_t)tmpl->n * sizeof(*s->frames));
	if (tmpl->nk)
		memcpy(a->key + 2 * tmpl->n, kips, tmpl->nk * sizeof(*kips));
	if (tmpl->npy)
		memcpy(a->key + 2 * tmpl->n + tmpl->nk, s->py->frames,
		       tmpl->npy * sizeof(*s->py->frames));
	memcpy(a->ids, ids, np * sizeof(*ids));
	s->agg_slots[j] = (uint32_t)(s->agg_nr + 1);
	s->agg_nr++;
	return 0;
}

#define STACKS_ORDER_FLUSH 65536u

/* --flamechart: the sample of entry i, after the ones before it. */
static int agg_order_add(struct stacks *s, size_t i, uint64_t weight)
{
	struct agg_run *r = s->agg_order_nr ? &s->agg_order[s->agg_order_nr - 1] : NULL;

	if (r && r->entry == i) {
		r->weight += weight;
		return 0;
	}
	if (util__grow((void **)&s->agg_order, &s->agg_order_cap, s->agg_order_nr + 1,
		       sizeof(*s->agg_order)))
		return -ENOMEM;
	s->agg_order[s->agg_order_nr++] = (struct agg_run){ weight, (uint32_t)i };
	/* a steady process repeats few stacks: the runs, not the entries,
	 * are what grows, so they bound the table too */
	if (s->agg_order_nr >= STACKS_ORDER_FLUSH) {
		s->st.agg_flushes++;
		return stacks__flush(s);
	}
	return 0;
}

/* A CPU sample: counted into its raw stack's entry, or a new entry. */
int stacks_agg_add(struct stacks *s, const struct sfprof_event *e, const uint64_t *kips, size_t nk,
		   int stop, struct agg_entry *acc, bool comm_root, char *root)
{
	size_t n = acc->n, np, nkey, npy = 0;
	const struct sfprof_py_frame *pyf = NULL;
	const uint32_t *ids;
	uint64_t h;

	_Static_assert(sizeof(struct sfprof_py_frame) == 16, "a Python frame is two key words");
	if (s->py) {
		npy = s->py->nframes;
		pyf = s->py->frames;
		acc->npy = (uint32_t)npy;
		/* (a section with no frames still differs from none) */
		acc->pyflags = s->py->flags | 0x80000000u;
	}

	/* (a generation names one proc's maps: see proc__generation) */
	h = mix(s->cur_gen, (uint64_t)n | (uint64_t)nk << 32 |
				    (uint64_t)stop << 48);
	h = mix(h, (uint64_t)e->pid << 32 | e->tid);
	/* The key is the frames as they are (pc, then flags and a zero
	 * pad: two words each), then the kernel PCs, then the Python
	 * frames (code, then instruction and flags). */
	nkey = 2 * n + nk + 2 * npy;
#if defined(__x86_64__)
	if (s->crc32)
		h = frames_hash_crc(h, s->frames, n);
	else
#endif
		h = frames_hash(h, s->frames, n);
	for (size_t i = 0; i < nk; i++)
		h = ROTL(h, 29) ^ (kips[i] * HASH_K);
	for (size_t i = 0; i < npy; i++)
		h = ROTL(h, 29) ^ ((pyf[i].code ^ ((uint64_t)(uint32_t)pyf[i].instr << 40) ^
				    ((uint64_t)pyf[i].flags << 36)) * HASH_K);
	h = mix(h, acc->pyflags);
	/* the root a word at a time (its NUL and what follows it in
	 * the last word are left out) */
	h = ROTL(h, 7) ^ (acc->comm[0] * HASH_K);
	h = ROTL(h, 7) ^ (acc->comm[1] * HASH_K);
	if (!comm_root) {
		for (size_t i = 0, len = strlen(root); i < len; i += 8) {
			uint64_t w = 0;

			memcpy(&w, root + i, len - i < 8 ? len - i : 8);
			h = ROTL(h, 7) ^ (w * HASH_K);
		}
	}
	h = mix(h, nkey);
	for (size_t j = s->agg_nslots ? h & (s->agg_nslots - 1) : 0;
	     s->agg_nslots && s->agg_slots[j]; j = (j + 1) & (s->agg_nslots - 1)) {
		struct agg_entry *a = &s->agg[s->agg_slots[j] - 1];

		if (a->hash == h && a->proc == acc->proc && a->gen == acc->gen &&
		    a->n == acc->n && a->nk == acc->nk && a->stop == stop &&
		    !memcmp(a->key, s->frames, n * sizeof(*s->frames)) &&
		    (!nk || !memcmp(a->key + 2 * n, kips, nk * sizeof(*kips))) &&
		    a->npy == acc->npy && a->pyflags == acc->pyflags &&
		    (!npy || !memcmp(a->key + 2 * n + nk, pyf, npy * sizeof(*pyf))) &&
		    a->pid == acc->pid && a->tid == acc->tid &&
		    a->comm[0] == acc->comm[0] && a->comm[1] == acc->comm[1] &&
		    (comm_root || !strcmp(a->root, root))) {
			a->weight += e->weight;
			a->samples++;
			stacks_count_sample(s, a);
			if (s->keep_order)
				return agg_order_add(s, (size_t)(a - s->agg), e->weight);
			return 0;
		}
	}
	if (comm_root)
		stacks_copy_comm(root, e->comm);
	ids = stacks_build_ids(s, n, stop, kips, nk, true, &np, acc);
	acc->weight = e->weight;
	acc->samples = 1;
	stacks_count_sample(s, acc);
	if (!ids || agg_insert(s, h, root, kips, ids, np, acc) ||
	    (s->keep_order && agg_order_add(s, s->agg_nr - 1, e->weight))) {
		s->st.add_errors++;
		return -ENOMEM;
	}
	/*
	 * A raw stack is kept per address-space version, so a churn of
	 * short processes adds entries that will never be seen again:
	 * past a bound they go to the profile (which merges them by
	 * name) and the table starts afresh.
	 */
	if (s->agg_nr >= (s->opts.agg_max ? s->opts.agg_max : STACKS_AGG_MAX)) {
		s->st.agg_flushes++;
		return stacks__flush(s);
	}
	return 0;
}

/*
 * Name a kept stack's frames again, from the maps as they are now: a JIT
 * writes its map late (V8 buffers it), so a stack first seen before its
 * code's entry reached the file is named at the end. So is one with an
 * interpreter frame whose name read failed: the stack is kept by its raw
 * frames and named once, so one failed read (a PHP-FPM request's code
 * freed at its end, read late) would otherwise mark every later sample of
 * it, 123 of 508 in one loaded php_fpm run. The namer reads it again (at
 * most every INAME_RETRY_NS). The Python counters count each sample's
 * frames once: the naming again is counted apart (renamed).
 */
static void agg_rename(struct stacks *s, struct agg_entry *a)
{
	struct pymerge_stats pyst = s->pyst;
	struct agg_entry tmp = { 0 };
	struct proc *live = proc_cache__lookup(s->pc, a->pid);
	const uint32_t *ids;
	size_t np = 0;

	/* Only while the stack's process is still in the cache: a->proc
	 * may have been reaped (freed) since, and another proc made at the
	 * same address (a birth is unique, so an equal one is this proc).
	 * Its maps may have changed meanwhile (a JIT maps code all the
	 * time): the frames are named from the maps as they are now. */
	if (!live || live != a->proc || proc__birth(live) != a->proc_birth) {
		s->st.agg_rename_stale++;
		return;
	}
	s->cur = live;
	s->cur_gen = a->gen;
	memcpy(s->frames, a->key, (size_t)a->n * sizeof(*s->frames));
	s->py = NULL;
	if (a->pyflags) {
		struct sfprof_py_section *sec = (struct sfprof_py_section *)s->pybuf;

		sec->nframes = a->npy;
		sec->flags = a->pyflags & ~0x80000000u;
		memcpy(sec->frames, a->key + 2 * (size_t)a->n + a->nk, a->npy * sizeof(*sec->frames));
		s->py = sec;
		s->py_pid = a->pid;
	}
	s->jit_final = 1;
	ids = stacks_build_ids(s, a->n, a->stop, a->key + 2 * (size_t)a->n, a->nk, true, &np, &tmp);
	s->jit_final = 0;
	s->py = NULL;
	s->pyst = pyst;
	if (ids && np == a->np) {
		memcpy(a->ids, ids, np * sizeof(*ids));
		if (a->name_pending && !tmp.name_pending)
			s->pyst.renamed++;
		a->name_pending = tmp.name_pending;
	}
}

int stacks__flush(struct stacks *s)
{
	int64_t *at = NULL;
	int err = 0;

	/* --flamechart: each entry's profile stack, for the order's runs */
	if (s->agg_order_nr && !(at = malloc((s->agg_nr ? s->agg_nr : 1) * sizeof(*at))))
		err = -ENOMEM;

	for (size_t i = 0; i < s->agg_nr; i++) {
		struct agg_entry *a = &s->agg[i];
		char comm[sizeof(a->comm) + 1];
		struct profile_labels labels = { .pid = a->pid, .tid = a->tid, .thread = comm };

		if (a->jit_pending || a->name_pending)
			agg_rename(s, a);
		memcpy(comm, a->comm, sizeof(a->comm));
		comm[sizeof(a->comm)] = 0;
		if (s->labeler)
			s->labeler(s->labeler_ctx, a->pid, &labels);
		if (!err && profile__add_sample(s->prof, a->root, &labels, a->ids, a->np, a->samples,
						a->weight))
			err = -ENOMEM;
		if (at)
			at[i] = err ? -1 : profile__last_stack(s->prof);
		free(a->key); /* (and its ids and root) */
		memset(a, 0, sizeof(*a));
	}
	for (size_t r = 0; at && r < s->agg_order_nr && !err; r++)
		if (at[s->agg_order[r].entry] >= 0)
			err = profile__order_push(s->prof, at[s->agg_order[r].entry],
						  s->agg_order[r].weight);
	free(at);
	s->agg_order_nr = 0;
	s->agg_nr = 0;
	if (s->agg_slots)
		memset(s->agg_slots, 0, s->agg_nslots * sizeof(*s->agg_slots));
	if (err)
		s->st.add_errors++;
	return err;
}


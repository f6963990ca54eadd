// SPDX-License-Identifier: MIT
/*
 * Events -> unwound, symbolized stacks -> profile (include/stacks.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

#include "stacks.h"
#include "stacks_int.h"
#include "lockname.h"
#include "jitmap.h"
#include "wakers.h"
#include "util.h"

_Static_assert(sizeof(struct unwind_frame) == 16,
	       "an aggregation key holds unwind_frames as two words each");

struct stacks *stacks__new(struct proc_cache *pc, struct profile *prof,
			   const struct stacks_opts *opts)
{
	struct stacks *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->pc = pc;
	s->prof = prof;
	s->opts = *opts;
	if (!s->opts.max_depth || s->opts.max_depth > STACKS_MAX_DEPTH)
		s->opts.max_depth = STACKS_MAX_DEPTH;
	s->cache_bits = CACHE_BITS_MIN;
	s->cache = calloc(1u << CACHE_BITS_MIN, sizeof(*s->cache));
	s->rows = aligned_alloc(64, (1u << CACHE_BITS_MIN) * sizeof(*s->rows));
	if (s->rows)
		memset(s->rows, 0, (1u << CACHE_BITS_MIN) * sizeof(*s->rows));
	s->ucache.bits = CACHE_BITS_MIN;
	s->ucache.e = calloc(1u << CACHE_BITS_MIN, sizeof(*s->ucache.e));
	s->frames = calloc(STACKS_MAX_DEPTH, sizeof(*s->frames));
	/* user frames + marker + kernel frames */
	/* user frames (inline levels included) + marker + kernel frames;
	 * twice, and a few markers: a block joined to its waker's stack */
	s->pids = calloc(2 * (USER_FRAMES_MAX + 1 + 128) + 4, sizeof(*s->pids));
	s->marker_id = -1;
#if defined(__x86_64__)
	s->crc32 = __builtin_cpu_supports("sse4.2");
#endif
	if (!s->cache || !s->rows || !s->ucache.e || !s->frames || !s->pids) {
		stacks__free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

void stacks__forget_binaries(struct stacks *s)
{
	size_t n = (size_t)1 << s->cache_bits;

	memset(s->cache, 0, n * sizeof(*s->cache));
	memset(s->rows, 0, n * sizeof(*s->rows));
	memset(s->ucache.e, 0, ((size_t)1 << s->ucache.bits) * sizeof(*s->ucache.e));
	s->nr_entries = 0;
	lockname__free(s->locks);
	s->locks = NULL;
	s->cur = NULL;
}

void stacks__free(struct stacks *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->agg_nr; i++) {
		free(s->agg[i].key); /* (and its ids and root) */
	}
	free(s->agg);
	free(s->agg_slots);
	free(s->cache);
	free(s->rows);
	free(s->ucache.e);
	free(s->frames);
	free(s->pids);
	lockname__free(s->locks);
	jitmaps__free(s->jit);
	wakers__free(s->wakers);
	free(s);
}

void stacks__set_thread_top(struct stacks *s, stacks_thread_top_fn fn, void *ctx)
{
	s->thread_top = fn;
	s->thread_top_ctx = ctx;
}

void stacks__set_ksym(struct stacks *s, stacks_ksym_fn fn, void *ctx)
{
	s->ksym = fn;
	s->ksym_ctx = ctx;
}

/*
 * Between events (nothing points into the caches then): grow them 4x once
 * they have missed 4 times as often as they have entries. Keeps the old
 * ones when there is no memory.
 */
static void caches_fit(struct stacks *s)
{
	unsigned bits = s->cache_bits + 2;
	struct pc_entry *cache;
	struct row_entry *rows;
	struct unwind_cache_entry *memo;

	if (s->cache_misses <= (4ull << s->cache_bits) || s->cache_bits >= CACHE_BITS_MAX)
		return;
	s->cache_misses = 0;
	cache = calloc(1u << bits, sizeof(*cache));
	rows = aligned_alloc(64, (1u << bits) * sizeof(*rows));
	memo = calloc(1u << bits, sizeof(*memo));
	if (!cache || !rows || !memo) {
		free(cache);
		free(rows);
		free(memo);
		return;
	}
	memset(rows, 0, (1u << bits) * sizeof(*rows));
	free(s->cache);
	free(s->rows);
	free(s->ucache.e);
	s->cache = cache;
	s->rows = rows;
	s->ucache.e = memo;
	s->ucache.bits = bits;
	s->cache_bits = bits;
}

/* The slot of (current proc, pc) in the PC and row caches. */
static size_t cache_slot(const struct stacks *s, uint64_t pc)
{
	return ((pc ^ ((uintptr_t)s->cur >> 4)) * HASH_K) >> (64 - s->cache_bits);
}

struct pc_entry *stacks_cache_get(struct stacks *s, uint64_t pc)
{
	struct pc_entry *e = &s->cache[cache_slot(s, pc)];

	if (e->proc == s->cur && e->pc == pc && e->gen == s->cur_gen && e->have) {
		s->st.cache_hits++;
		return e;
	}
	s->st.cache_misses++;
	s->cache_misses++;
	e->proc = s->cur;
	e->pc = pc;
	e->gen = s->cur_gen;
	e->have = 0;
	return e;
}

/* find_row_cb()'s miss: look the row up and fill the entry. */
static __attribute__((noinline)) void row_fill(struct stacks *s,
					       struct row_entry *e, uint64_t pc)
{
	struct sframe_func f;

	s->st.cache_misses++;
	s->cache_misses++;
	f.flags = 0;
	e->rc = (int16_t)proc__find_row(s->cur, pc, &e->row, &f, NULL);
	/* a miss may have re-read the maps: later lookups of this walk are
	 * answered from the new ones */
	if (proc__generation(s->cur) != s->cur_gen) {
		s->cur_gen = proc__generation(s->cur);
		s->ucache.tag = s->cur_gen;
	}
	e->pc = pc;
	e->proc = s->cur;
	e->gen = (uint32_t)s->cur_gen;
	e->func_flags = e->rc == 0 ? f.flags : 0;
	e->valid = 1;
}

static int find_row_cb(void *ctx, uint64_t pc, struct sframe_row *row,
		       struct sframe_func *fn)
{
	struct stacks *s = ctx;
	struct row_entry *e = &s->rows[cache_slot(s, pc)];

	if (e->valid && e->pc == pc && e->proc == s->cur &&
	    e->gen == (uint32_t)s->cur_gen)
		s->st.cache_hits++;
	else
		row_fill(s, e, pc);
	/* the unwinder reads only the row and func->flags */
	*row = e->row;
	fn->flags = e->func_flags;
	return e->rc;
}

/* The PC cache's entry for pc, symbolized. */
struct pc_entry *stacks_symbolized(struct stacks *s, uint64_t pc)
{
	struct pc_entry *e = stacks_cache_get(s, pc);

	if (!(e->have & HAVE_SYM)) {
		e->sym_rc = proc__symbolize(s->cur, pc, &e->sym);
		e->have |= HAVE_SYM;
	}
	return e;
}

static void copy_comm(char *dst, const char *comm)
{
	size_t n = strnlen(comm, SFPROF_COMM_LEN);
	memcpy(dst, comm, n);
	dst[n] = 0;
}

/*
 * The comm's bytes up to its first NUL in two words, the rest zeroed: the
 * usual root (copy_comm()'s string), hashed and compared without a copy.
 */
static void comm_words(const char *comm, uint64_t w[2])
{
	_Static_assert(SFPROF_COMM_LEN == 16, "a comm is two words");
	memcpy(w, comm, 16);
	for (int i = 0; i < 2; i++) {
		/* the lowest flagged byte is the first zero byte */
		uint64_t z = (w[i] - 0x0101010101010101ull) & ~w[i] &
			     0x8080808080808080ull;

		if (z) {
			unsigned bytes = (unsigned)__builtin_ctzll(z) / 8;

			w[i] &= bytes ? ~0ull >> (64 - 8 * bytes) : 0;
			if (i == 0)
				w[1] = 0;
			break;
		}
	}
}

static size_t unwind_event(struct stacks *s, const struct sfprof_event *e,
			   int *stop)
{
	const struct unwind_ops ops = { find_row_cb, stacks_is_sigtramp, s,
					&s->ucache };
	unsigned slot = e->pid % 64;

	caches_fit(s);

	/*
	 * exec gives the process a new comm and a new address space: re-read
	 * its maps at once (a started COMMAND is attached before its exec, so
	 * its first events come from sfprof's own image).
	 */
	if (s->comms[slot].pid != e->pid ||
	    memcmp(s->comms[slot].comm, e->comm, SFPROF_COMM_LEN) != 0) {
		if (s->comms[slot].pid == e->pid)
			proc_cache__note_exec(s->pc, e->pid);
		s->comms[slot].pid = e->pid;
		memcpy(s->comms[slot].comm, e->comm, SFPROF_COMM_LEN);
	}
	s->cur = proc_cache__get(s->pc, e->pid);
	if (!s->cur) {
		*stop = UNWIND_STOP_NO_MAPPING;
		return 0;
	}
	s->cur_gen = proc__generation(s->cur);
	s->ucache.tag = s->cur_gen;
	if (e->flags & SFPROF_EVF_NO_USER_REGS) {
		*stop = UNWIND_STOP_NO_REGS;
		s->st.unwind.stacks++;
		s->st.unwind.stop[UNWIND_STOP_NO_REGS]++;
		return 0;
	}
	uint64_t outer = 0;
	size_t n = unwind_stack(&e->regs, e->stack, e->stack_len, &ops, s->frames,
				s->opts.max_depth, stop, &s->st.unwind,
				s->thread_top ? &outer : NULL);

	/* the snapshot went on past the entry frame's CFA (SP + 8) and the
	 * slack the capture keeps: the capture's top for this thread was the
	 * thread pointer, above its TLS */
	if (s->thread_top && outer && *stop == UNWIND_STOP_COMPLETE && e->tid != e->pid &&
	    outer > e->regs.sp && e->stack_len > outer - e->regs.sp + 16)
		s->thread_top(s->thread_top_ctx, e->tid, outer);
	return n;
}

struct proc *stacks__resolve_event(struct stacks *s, const struct sfprof_event *e)
{
	int stop;

	unwind_event(s, e, &stop);
	return s->cur;
}

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
static void count_sample(struct stacks *s, const struct agg_entry *a)
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

/*
 * Symbolize frames[0..n), name the kernel PCs, and fill the entry's
 * accounting fields. With `ids`, also put the stack's profile frame ids
 * (outermost first, the marker and kernel frames included) into s->pids
 * and return them with their count in *np_out; NULL then means no memory.
 * Without, returns s->pids untouched.
 */
static uint32_t *build_ids(struct stacks *s, size_t n, int stop,
			   const uint64_t *kips, size_t nk, bool ids,
			   size_t *np_out, struct agg_entry *acc)
{
	uint32_t *out = s->pids + 1; /* slot 0: the marker */
	struct sym_result outer_sr = { 0 }; /* (a copy: the PC cache's entry
					       may be reused in the loop) */
	const char *outer = NULL;
	size_t np = 0;
	int complete;

	s->jit_missed = 0;
	/* frames[n-1] is the outermost: it goes first */
	for (size_t i = n; i-- > 0;) {
		const struct unwind_frame *f = &s->frames[i];
		uint64_t look = (f->flags & UNWIND_FRAME_CALLER) ? f->pc - 1 : f->pc;
		struct pc_entry *e = stacks_symbolized(s, look);

		if (ids) {
			int k = stacks_frame_ids(s, e, look, out + np, USER_FRAMES_MAX - np - i);

			if (k < 0)
				return NULL;
			np += (size_t)k;
		} else {
			np++;
		}
		if (!e->sym.name)
			acc->unnamed++;
		if (i == n - 1) {
			outer = e->sym.name;
			outer_sr = e->sym;
		}
	}

	complete = stop == UNWIND_STOP_COMPLETE;
	if (!complete && (stacks__is_entry_symbol(outer) ||
			  (n && stacks_at_elf_entry(s, &outer_sr)))) {
		complete = 1;
		acc->at_entry = 1;
	}
	acc->complete = complete;
	acc->jit_pending = s->jit_missed;
	if (!ids)
		return s->pids;
	if (!complete) {
		if (s->marker_id < 0) {
			struct profile_frame pf = { .name = STACKS_TRUNCATED,
						    .kind = PROFILE_FRAME_MARKER };

			s->marker_id = profile__frame_id(s->prof, &pf);
			if (s->marker_id < 0)
				return NULL;
		}
		out--;
		np++;
		out[0] = (uint32_t)s->marker_id;
	}

	for (size_t i = nk; i-- > 0;) {
		const char *name = s->ksym ? s->ksym(s->ksym_ctx, kips[i]) : NULL;
		struct profile_frame pf = { .kind = PROFILE_FRAME_KERNEL,
					    .rel_addr = kips[i] };
		char hex[24];
		int64_t id;

		if (!name) {
			snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)kips[i]);
			name = hex;
		}
		pf.name = name;
		id = profile__frame_id(s->prof, &pf);
		if (id < 0)
			return NULL;
		out[np++] = (uint32_t)id;
	}
	*np_out = np;
	return out;
}

/*
 * A futex's lock: "SYMBOL" or "SYMBOL+0xOFF" when the address lies in a
 * binary's data (a global or static lock), else "0xADDR". Into buf.
 */
static void lock_label(struct stacks *s, const struct sfprof_event *e, char *buf, size_t size)
{
	char root[PROFILE_ROOT_MAX];
	struct sym_result lr;
	const char *lname;
	uint64_t loff;

	if (s->cur && !s->locks)
		s->locks = lockname__new(proc_cache__dsos(s->pc));
	if (s->cur && s->locks && !lockname__resolve(s->locks, s->cur, e->futex_addr, &lname, &loff))
		profile_root__lock(root, sizeof(root), lname, loff, e->futex_addr);
	else if (s->cur && proc__symbolize(s->cur, e->futex_addr, &lr) == 0 && lr.name)
		profile_root__lock(root, sizeof(root), lr.name, lr.offset, e->futex_addr);
	else
		profile_root__lock(root, sizeof(root), NULL, 0, e->futex_addr);
	snprintf(buf, size, "%s", root + strlen("lock:"));
}

/* lock: lock_label()'s, for a futex event (else unused). */
static void make_root(struct stacks *s, const struct sfprof_event *e, const char *lock,
		      char *root, size_t size)
{
	char comm[SFPROF_COMM_LEN + 1];

	if (!s->opts.per_thread && !s->opts.per_process &&
	    !(s->opts.by_lock && e->kind == SFPROF_EV_FUTEX)) {
		copy_comm(root, e->comm); /* size > comm's 17 */
		return;
	}
	copy_comm(comm, e->comm);
	if (s->opts.by_lock && e->kind == SFPROF_EV_FUTEX && s->cur)
		snprintf(root, size, "lock:%s", lock);
	else if (s->opts.per_thread)
		profile_root__thread(root, size, comm, e->pid, e->tid);
	else if (s->opts.per_process)
		profile_root__process(root, size, comm, e->pid);
	else
		memcpy(root, comm, strlen(comm) + 1); /* (by_lock, no proc) */
}

/* Keep a new distinct stack: its key and root copied, its profile ids. */
static int agg_insert(struct stacks *s, uint64_t h, const char *root,
		      const uint64_t *kips, const uint32_t *ids, size_t np,
		      struct agg_entry *tmpl)
{
	struct agg_entry *a;
	size_t j, nkey = 2 * (size_t)tmpl->n + tmpl->nk;

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
	memcpy(a->ids, ids, np * sizeof(*ids));
	s->agg_slots[j] = (uint32_t)(s->agg_nr + 1);
	s->agg_nr++;
	return 0;
}

int stacks__frame_ids(struct stacks *s, const struct sfprof_event *e, const uint64_t *kips,
		      size_t nk, int user, const uint32_t **ids)
{
	struct agg_entry acc;
	size_t n = 0, np = 0;
	int stop = UNWIND_STOP_COMPLETE;

	memset(&acc, 0, sizeof(acc));
	if (user && !(e->flags & SFPROF_EVF_NO_USER_REGS))
		n = unwind_event(s, e, &stop);
	*ids = build_ids(s, n, stop, kips, nk > 128 ? 128 : nk, true, &np, &acc);
	return *ids ? (int)np : -ENOMEM;
}

/* -e wall: the stack under its state, weighted in nanoseconds. ids lies
 * in s->pids, which has room for one more. */
static int wall_add(struct stacks *s, const struct sfprof_event *e, const char *root,
		    const struct profile_labels *labels, uint32_t *ids, size_t np)
{
	uint32_t st = e->kind == SFPROF_EV_OFFCPU ? e->futex_op : 0;
	struct profile_frame pf = {
		.name = !st ? "[running]" : st == SFPROF_OFFCPU_S ? "[sleep]" :
			st == SFPROF_OFFCPU_D ? "[uninterruptible]" :
			st == SFPROF_OFFCPU_R ? "[preempted]" : "[stopped]",
		.kind = PROFILE_FRAME_MARKER,
	};
	int64_t id = profile__frame_id(s->prof, &pf);

	if (id < 0)
		return -ENOMEM;
	memmove(ids + 1, ids, np * sizeof(*ids));
	ids[0] = (uint32_t)id;
	if (profile__add_sample(s->prof, root, labels, ids, np + 1, 1,
				e->kind == SFPROF_EV_CPU ? s->opts.period_ns : e->weight)) {
		s->st.add_errors++;
		return -ENOMEM;
	}
	return 0;
}

int stacks__add_event(struct stacks *s, const struct sfprof_event *e,
		      const uint64_t *kips, size_t nk)
{
	char root[PROFILE_ROOT_MAX], lock[PROFILE_ROOT_MAX] = "", comm[SFPROF_COMM_LEN + 1];
	struct profile_labels labels;
	const uint32_t *ids;
	struct agg_entry acc;
	size_t n, np, nkey = 0;
	int stop = UNWIND_STOP_NONE;
	bool comm_root;
	uint64_t h;

	s->st.events++;
	if (e->kind == SFPROF_EV_FORK || e->kind == SFPROF_EV_EXIT) {
		/* lifecycle records change the model, they are not samples */
		s->st.events_skipped++;
		return 0;
	}
	if (e->kind == SFPROF_EV_WAKER && s->opts.kind != PROFILE_CPU && !s->opts.no_profile) {
		if (!s->wakers && !(s->wakers = wakers__new()))
			return -ENOMEM;
		s->st.wakers++;
		return wakers__add_record(s->wakers, s, s->prof, s->ksym, s->ksym_ctx, e, kips, nk);
	}
	if ((s->opts.kind == PROFILE_CPU && e->kind != SFPROF_EV_CPU) ||
	    (s->opts.kind == PROFILE_FUTEX && e->kind != SFPROF_EV_FUTEX) ||
	    (s->opts.kind == PROFILE_OFFCPU && e->kind != SFPROF_EV_OFFCPU) ||
	    (s->opts.kind == PROFILE_WALL && e->kind != SFPROF_EV_CPU &&
	     e->kind != SFPROF_EV_OFFCPU)) {
		s->st.events_skipped++;
		return 0;
	}
	if (e->flags & SFPROF_EVF_NO_USER_REGS)
		s->st.no_user_regs++;
	n = unwind_event(s, e, &stop);
	if (!s->opts.kernel)
		nk = 0;
	if (nk > 128)
		nk = 128;
	/* a CPU sample's root is its comm, unless per thread */
	comm_root = s->opts.kind == PROFILE_CPU && !s->opts.per_thread && !s->opts.per_process;
	memset(&acc, 0, sizeof(acc));
	comm_words(e->comm, acc.comm);
	acc.pid = e->pid;
	acc.tid = e->tid;
	if (!comm_root && s->opts.kind == PROFILE_CPU)
		make_root(s, e, NULL, root, sizeof(root));
	acc.proc = s->cur;
	acc.gen = s->cur_gen;
	acc.n = (uint32_t)n;
	acc.nk = (uint32_t)nk;
	acc.stop = stop;

	if (s->opts.kind == PROFILE_CPU && !s->opts.no_profile) {
		/* (a generation names one proc's maps: see proc__generation) */
		h = mix(s->cur_gen, (uint64_t)n | (uint64_t)nk << 32 |
					    (uint64_t)stop << 48);
		h = mix(h, (uint64_t)e->pid << 32 | e->tid);
		/* The key is the frames as they are (pc, then flags and a zero
		 * pad: two words each), then the kernel PCs. */
		nkey = 2 * n + nk;
#if defined(__x86_64__)
		if (s->crc32)
			h = frames_hash_crc(h, s->frames, n);
		else
#endif
			h = frames_hash(h, s->frames, n);
		for (size_t i = 0; i < nk; i++)
			h = ROTL(h, 29) ^ (kips[i] * HASH_K);
		/* the root a word at a time (its NUL and what follows it in
		 * the last word are left out) */
		h = ROTL(h, 7) ^ (acc.comm[0] * HASH_K);
		h = ROTL(h, 7) ^ (acc.comm[1] * HASH_K);
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

			if (a->hash == h && a->proc == acc.proc && a->gen == acc.gen &&
			    a->n == acc.n && a->nk == acc.nk && a->stop == stop &&
			    !memcmp(a->key, s->frames, n * sizeof(*s->frames)) &&
			    (!nk || !memcmp(a->key + 2 * n, kips, nk * sizeof(*kips))) &&
			    a->pid == acc.pid && a->tid == acc.tid &&
			    a->comm[0] == acc.comm[0] && a->comm[1] == acc.comm[1] &&
			    (comm_root || !strcmp(a->root, root))) {
				a->weight += e->weight;
				a->samples++;
				count_sample(s, a);
				return 0;
			}
		}
		if (comm_root)
			copy_comm(root, e->comm);
		ids = build_ids(s, n, stop, kips, nk, true, &np, &acc);
		acc.weight = e->weight;
		acc.samples = 1;
		count_sample(s, &acc);
		if (!ids || agg_insert(s, h, root, kips, ids, np, &acc)) {
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

	ids = build_ids(s, n, stop, kips, nk, !s->opts.no_profile, &np, &acc);
	count_sample(s, &acc);
	if (s->opts.no_profile)
		return 0;
	/* after the frames: naming the lock may re-read the maps */
	if (e->kind == SFPROF_EV_FUTEX)
		lock_label(s, e, lock, sizeof(lock));
	make_root(s, e, lock, root, sizeof(root));
	copy_comm(comm, e->comm);
	labels = (struct profile_labels){ .pid = e->pid, .tid = e->tid, .thread = comm };
	if (e->kind == SFPROF_EV_FUTEX) {
		labels.lock = lock;
		labels.lock_addr = e->futex_addr;
	}
	if (ids && s->opts.kind == PROFILE_WALL)
		return wall_add(s, e, root, &labels, (uint32_t *)ids, np);
	if (ids && s->wakers && (e->kind == SFPROF_EV_OFFCPU || e->kind == SFPROF_EV_FUTEX)) {
		/* (ids lies in s->pids, which has room for a second stack) */
		size_t nt = wakers__take(s->wakers, e->tid, e->ts_ns - e->weight,
					 (uint32_t *)ids + np, USER_FRAMES_MAX + 1 + 128 + 3);

		np += nt;
		s->st.wakers_joined += nt != 0;
	}
	if (!ids || profile__add_sample(s->prof, root, &labels, ids, np, 1, e->weight)) {
		s->st.add_errors++;
		return -ENOMEM;
	}
	return 0;
}

/*
 * Name a kept stack's JIT frames again, from the maps as they are now: a
 * JIT writes its map late (V8 buffers it), so a stack first seen before
 * its code's entry reached the file is named at the end.
 */
static void agg_rename(struct stacks *s, struct agg_entry *a)
{
	struct agg_entry tmp = { 0 };
	const uint32_t *ids;
	size_t np = 0;

	s->cur = (struct proc *)a->proc; /* (the cache's, alive until it is freed) */
	s->cur_gen = a->gen;
	memcpy(s->frames, a->key, (size_t)a->n * sizeof(*s->frames));
	s->jit_final = 1;
	ids = build_ids(s, a->n, a->stop, a->key + 2 * (size_t)a->n, a->nk, true, &np, &tmp);
	s->jit_final = 0;
	if (ids && np == a->np)
		memcpy(a->ids, ids, np * sizeof(*ids));
}

int stacks__flush(struct stacks *s)
{
	int err = 0;

	for (size_t i = 0; i < s->agg_nr; i++) {
		struct agg_entry *a = &s->agg[i];
		char comm[sizeof(a->comm) + 1];
		struct profile_labels labels = { .pid = a->pid, .tid = a->tid, .thread = comm };

		if (a->jit_pending)
			agg_rename(s, a);
		memcpy(comm, a->comm, sizeof(a->comm));
		comm[sizeof(a->comm)] = 0;
		if (!err && profile__add_sample(s->prof, a->root, &labels, a->ids, a->np, a->samples,
						a->weight))
			err = -ENOMEM;
		free(a->key); /* (and its ids and root) */
		memset(a, 0, sizeof(*a));
	}
	s->agg_nr = 0;
	if (s->agg_slots)
		memset(s->agg_slots, 0, s->agg_nslots * sizeof(*s->agg_slots));
	if (err)
		s->st.add_errors++;
	return err;
}

void stacks__stats(const struct stacks *s, struct stacks_stats *out)
{
	*out = s->st;
	out->memo_hits = s->ucache.hits;
	out->memo_misses = s->ucache.misses;
}

void stacks_stats__print(const struct stacks_stats *st, FILE *f)
{
#define P(name, v) fprintf(f, "%s: %llu\n", name, (unsigned long long)(v))
	P("stacks_events", st->events);
	P("stacks_events_other_kind", st->events_skipped);
	P("stacks_no_user_regs", st->no_user_regs);
	P("stacks_complete", st->complete);
	P("stacks_truncated", st->truncated);
	P("stacks_complete_at_entry", st->entry_by_symbol);
	P("stacks_frames", st->frames);
	P("stacks_frames_unnamed", st->frames_unnamed);
	P("stacks_cache_hits", st->cache_hits);
	P("stacks_cache_misses", st->cache_misses);
	P("stacks_row_memo_hits", st->memo_hits);
	P("stacks_row_memo_misses", st->memo_misses);
	P("stacks_agg_flushes", st->agg_flushes);
	if (st->add_errors)
		P("stacks_add_errors", st->add_errors);
	if (st->wakers) {
		P("stacks_wakers", st->wakers);
		P("stacks_wakers_joined", st->wakers_joined);
	}
#undef P
	unwind_stats__print(&st->unwind, f);
}

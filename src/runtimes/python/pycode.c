// SPDX-License-Identifier: MIT
/*
 * CPython code objects -> names and lines, from a target's memory, with a
 * bounded per-(pid, code object) cache (src/runtimes/python/pyreader.h).
 *
 * The cache: a fixed pool of entries, chained in a hash table of twice as
 * many buckets, and on an LRU list (most recent first); a miss takes a
 * free entry or evicts the least recently used one.
 */
#include "runtimes/python/pyreader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "runtimes/python/pyoffsets.h"
#include "runtimes/python/pystr.h"

#define NIL UINT32_MAX
/* x86_64 user space ends below 2^47 (2^56 with 5-level paging) */
#define USER_ADDR_END (1ull << 56)
/* The largest object header read: a PyCodeObject's fields up to
 * co_linetable are ~0x90 bytes in 3.11-3.13. */
#define HDR_MAX 512u

struct fingerprint {
	uint64_t type, filename, name, qualname, linetable;
	int32_t firstlineno;
	uint32_t pad;
};

struct entry {
	uint64_t code;
	uint32_t pid;
	uint32_t hnext;		   /* bucket chain, or the free list */
	uint32_t prev, next;	   /* LRU list */
	uint32_t used;
	uint32_t flags;		   /* enum pycode_frame_flag */
	uint64_t checked_tick;	   /* last decoded or re-validated */
	struct fingerprint fp;
	char *strs;		   /* qualname, name, filename, one block */
	const char *qualname, *name, *filename;
	struct pylinetable lines;
};

struct target {
	uint32_t pid;
	struct pyreader_target t;
	struct pyoffsets off;
	uint32_t hdr_len; /* bytes of a code object's header we read */
	uint32_t nr_cached; /* its entries in the cache (drop_entries_of) */
};

struct pyreader {
	unsigned flags;
	uint64_t tick;
	uint32_t nr_entries, nr_buckets; /* nr_buckets: a power of 2 */
	struct entry *entries;
	uint32_t *buckets;
	uint32_t free_head, lru_head, lru_tail;
	struct target *targets;
	uint32_t nr_targets, cap_targets, last_target;
	struct pyreader_stats st;
	/* scratch for one decode */
	uint8_t chars[4 * PYREADER_STR_MAX];
	char q[PYREADER_STR_MAX], n[PYREADER_STR_MAX], f[PYREADER_STR_MAX];
};

/* ---- memory --------------------------------------------------------- */

static int vm_read(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return errno == ESRCH ? -ESRCH : -EFAULT;
	return (size_t)n == len ? 0 : -EFAULT;
}

static int mem_read(const struct target *tg, uint64_t addr, void *buf, size_t len)
{
	if (!addr || addr >= USER_ADDR_END || len > USER_ADDR_END - addr)
		return -EFAULT;
	if (!len)
		return 0;
	if (tg->t.read) {
		int ret = tg->t.read(tg->t.read_ctx, addr, buf, len);

		return ret == 0 ? 0 : ret == -ESRCH ? -ESRCH : -EFAULT;
	}
	return vm_read(tg->pid, addr, buf, len);
}

static uint64_t get_u64(const uint8_t *p, uint32_t off)
{
	uint64_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

/* ---- one object each ---------------------------------------------------- */

/* An object pointer: non-NULL, 8-aligned (CPython's allocators give 16). */
static int obj_ptr_ok(uint64_t p)
{
	return p && !(p & 7) && p < USER_ADDR_END;
}

/* A str at addr -> UTF-8 in buf[PYREADER_STR_MAX]. 0, -EFAULT, -EINVAL
 * (and *type_bad on a wrong ob_type). */
static int read_str(struct pyreader *r, const struct target *tg, uint64_t addr,
		    char *buf, uint32_t *flags, int *type_bad)
{
	const struct pyoffsets *o = &tg->off;
	uint8_t hdr[128];
	struct pystr_shape sh;
	int trunc, n;

	if (!obj_ptr_ok(addr))
		return -EFAULT;
	if (o->unicode_compact_data > sizeof(hdr) || o->unicode_ascii_data > o->unicode_compact_data)
		return -EINVAL;
	if ((n = mem_read(tg, addr, hdr, o->unicode_ascii_data)) < 0)
		return n;
	if (tg->t.unicode_type && get_u64(hdr, o->obj_type) != tg->t.unicode_type) {
		*type_bad = 1;
		return -EINVAL;
	}
	if (pystr_shape(o, hdr, o->unicode_ascii_data, &sh) < 0)
		return -EINVAL;
	if (!sh.ascii &&
	    (n = mem_read(tg, addr + o->unicode_ascii_data, hdr + o->unicode_ascii_data,
			  o->unicode_compact_data - o->unicode_ascii_data)) < 0)
		return n;
	/* each code point is at least one byte of UTF-8: more cannot fit */
	uint64_t nchars = sh.length < PYREADER_STR_MAX - 1 ? sh.length : PYREADER_STR_MAX - 1;
	if ((n = mem_read(tg, addr + sh.data_off, r->chars, nchars * sh.kind)) < 0)
		return n;
	n = pystr_utf8(r->chars, nchars, sh.kind, (int)sh.ascii, buf, PYREADER_STR_MAX, &trunc);
	if (n < 0)
		return -EINVAL;
	if (trunc || nchars < sh.length) {
		*flags |= PYCODE_F_TRUNCATED;
		r->st.truncated++;
	}
	return 0;
}

/* co_linetable (a bytes object) -> decoded runs. 0, or -errno (the caller
 * keeps the frame without lines). */
static int read_lines(const struct target *tg, uint64_t addr, int32_t firstlineno,
		      struct pylinetable *lt)
{
	const struct pyoffsets *o = &tg->off;
	uint8_t hdr[64];
	int64_t size;
	uint8_t *tab;
	int ret;

	if (!obj_ptr_ok(addr))
		return -EFAULT;
	if (o->bytes_sval > sizeof(hdr) || o->var_size + 8 > o->bytes_sval ||
	    o->obj_type + 8 > o->bytes_sval)
		return -EINVAL;
	if (mem_read(tg, addr, hdr, o->bytes_sval) < 0)
		return -EFAULT;
	if (tg->t.bytes_type && get_u64(hdr, o->obj_type) != tg->t.bytes_type)
		return -EINVAL;
	memcpy(&size, hdr + o->var_size, sizeof(size));
	if (size < 0)
		return -EINVAL;
	if ((uint64_t)size > PYREADER_LINETABLE_MAX)
		return -E2BIG;
	tab = malloc(size ? (size_t)size : 1);
	if (!tab)
		return -ENOMEM;
	ret = mem_read(tg, addr + o->bytes_sval, tab, (size_t)size);
	if (ret == 0)
		ret = pylinetable_decode(tab, (size_t)size, firstlineno, lt);
	free(tab);
	return ret;
}

/* The fingerprint of the code object at code: 0, -EFAULT, -EINVAL (not a
 * code object by its type). */
static int read_fingerprint(const struct target *tg, uint64_t code,
			    struct fingerprint *fp)
{
	const struct pyoffsets *o = &tg->off;
	uint8_t hdr[HDR_MAX];
	int32_t first;
	int ret;

	if (!obj_ptr_ok(code))
		return -EFAULT;
	if ((ret = mem_read(tg, code, hdr, tg->hdr_len)) < 0)
		return ret;
	memset(fp, 0, sizeof(*fp));
	fp->type = get_u64(hdr, o->obj_type);
	fp->filename = get_u64(hdr, o->code_filename);
	fp->name = get_u64(hdr, o->code_name);
	fp->qualname = get_u64(hdr, o->code_qualname);
	fp->linetable = get_u64(hdr, o->code_linetable);
	memcpy(&first, hdr + o->code_firstlineno, sizeof(first));
	fp->firstlineno = first;
	if (tg->t.code_type && fp->type != tg->t.code_type)
		return -EINVAL;
	return 0;
}

static void entry_clear(struct entry *e)
{
	free(e->strs);
	pylinetable_free(&e->lines);
	e->strs = NULL;
	e->qualname = e->name = e->filename = NULL;
	e->flags = 0;
}

/* Reads everything of the code object into e (cleared first). */
static int decode(struct pyreader *r, const struct target *tg, uint64_t code,
		  const struct fingerprint *fp, struct entry *e)
{
	char *q = r->q, *n = r->n, *f = r->f;
	int type_bad = 0, ret;
	uint32_t flags = 0;

	entry_clear(e);
	ret = read_str(r, tg, fp->qualname, q, &flags, &type_bad);
	if (!ret)
		ret = read_str(r, tg, fp->name, n, &flags, &type_bad);
	if (!ret)
		ret = read_str(r, tg, fp->filename, f, &flags, &type_bad);
	if (ret) {
		if (ret == -EFAULT || ret == -ESRCH)
			r->st.err_read++;
		else if (type_bad)
			r->st.err_type++;
		else
			r->st.err_string++;
		return ret;
	}
	size_t lq = strlen(q) + 1, ln = strlen(n) + 1, lf = strlen(f) + 1;
	e->strs = malloc(lq + ln + lf);
	if (!e->strs) {
		r->st.err_nomem++;
		return -ENOMEM;
	}
	memcpy(e->strs, q, lq);
	memcpy(e->strs + lq, n, ln);
	memcpy(e->strs + lq + ln, f, lf);
	e->qualname = e->strs;
	e->name = e->strs + lq;
	e->filename = e->strs + lq + ln;
	ret = read_lines(tg, fp->linetable, fp->firstlineno, &e->lines);
	if (ret == -ENOMEM) {
		entry_clear(e);
		r->st.err_nomem++;
		return ret;
	}
	if (ret) {
		flags |= PYCODE_F_NO_LINES;
		r->st.bad_linetable++;
	}
	e->fp = *fp;
	e->code = code;
	e->pid = tg->pid;
	e->flags = flags;
	return 0;
}

/* ---- the cache --------------------------------------------------------- */

static struct target *target_find(struct pyreader *r, uint32_t pid);

/* An entry of pid in the cache, or out (its target's count; an entry's
 * pid is a target's while it is cached: targets go after their entries) */
static void count_cached(struct pyreader *r, uint32_t pid, int delta)
{
	struct target *tg = target_find(r, pid);

	if (tg && (delta > 0 || tg->nr_cached))
		tg->nr_cached += (uint32_t)delta;
}

static uint32_t bucket_of(const struct pyreader *r, uint32_t pid, uint64_t code)
{
	uint64_t h = (code >> 3) ^ ((uint64_t)pid << 40) ^ pid;

	h *= 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 32) & (r->nr_buckets - 1);
}

static void lru_unlink(struct pyreader *r, uint32_t i)
{
	struct entry *e = &r->entries[i];

	if (e->prev != NIL)
		r->entries[e->prev].next = e->next;
	else
		r->lru_head = e->next;
	if (e->next != NIL)
		r->entries[e->next].prev = e->prev;
	else
		r->lru_tail = e->prev;
	e->prev = e->next = NIL;
}

static void lru_push_front(struct pyreader *r, uint32_t i)
{
	struct entry *e = &r->entries[i];

	e->prev = NIL;
	e->next = r->lru_head;
	if (r->lru_head != NIL)
		r->entries[r->lru_head].prev = i;
	r->lru_head = i;
	if (r->lru_tail == NIL)
		r->lru_tail = i;
}

static uint32_t cache_find(const struct pyreader *r, uint32_t pid, uint64_t code)
{
	for (uint32_t i = r->buckets[bucket_of(r, pid, code)]; i != NIL;
	     i = r->entries[i].hnext)
		if (r->entries[i].code == code && r->entries[i].pid == pid)
			return i;
	return NIL;
}

/* Out of its bucket and the LRU list, cleared, onto the free list. */
static void cache_remove(struct pyreader *r, uint32_t i)
{
	struct entry *e = &r->entries[i];
	uint32_t *link = &r->buckets[bucket_of(r, e->pid, e->code)];

	while (*link != NIL && *link != i)
		link = &r->entries[*link].hnext;
	if (*link == i)
		*link = e->hnext;
	if (e->used)
		count_cached(r, e->pid, -1);
	lru_unlink(r, i);
	entry_clear(e);
	e->used = 0;
	e->hnext = r->free_head;
	r->free_head = i;
}

static uint32_t cache_take(struct pyreader *r)
{
	uint32_t i;

	if (r->free_head == NIL) {
		cache_remove(r, r->lru_tail);
		r->st.evictions++;
	}
	i = r->free_head;
	r->free_head = r->entries[i].hnext;
	return i;
}

static void cache_insert(struct pyreader *r, uint32_t i)
{
	struct entry *e = &r->entries[i];
	uint32_t b = bucket_of(r, e->pid, e->code);

	e->used = 1;
	count_cached(r, e->pid, 1);
	e->hnext = r->buckets[b];
	r->buckets[b] = i;
	lru_push_front(r, i);
}

/* ---- the API -------------------------------------------------------------- */

struct pyreader *pyreader__new(unsigned max_entries, unsigned flags)
{
	struct pyreader *r;

	if (!max_entries)
		max_entries = PYREADER_ENTRIES_DEFAULT;
	if (max_entries > (1u << 24) ||
	    (flags & ~(PYREADER_F_TRUST_CACHE | PYREADER_F_VERIFY_PER_TICK))) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->flags = flags;
	r->nr_entries = max_entries;
	r->nr_buckets = 1;
	while (r->nr_buckets < 2 * max_entries)
		r->nr_buckets <<= 1;
	r->entries = calloc(max_entries, sizeof(*r->entries));
	r->buckets = malloc(r->nr_buckets * sizeof(*r->buckets));
	if (!r->entries || !r->buckets) {
		pyreader__free(r);
		errno = ENOMEM;
		return NULL;
	}
	memset(r->buckets, 0xff, r->nr_buckets * sizeof(*r->buckets));
	for (uint32_t i = 0; i < max_entries; i++) {
		r->entries[i].hnext = i + 1 < max_entries ? i + 1 : NIL;
		r->entries[i].prev = r->entries[i].next = NIL;
	}
	r->free_head = 0;
	r->lru_head = r->lru_tail = NIL;
	r->last_target = NIL;
	return r;
}

void pyreader__free(struct pyreader *r)
{
	if (!r)
		return;
	if (r->entries)
		for (uint32_t i = 0; i < r->nr_entries; i++)
			entry_clear(&r->entries[i]);
	free(r->entries);
	free(r->buckets);
	free(r->targets);
	free(r);
}

static struct target *target_find(struct pyreader *r, uint32_t pid)
{
	if (r->last_target < r->nr_targets && r->targets[r->last_target].pid == pid)
		return &r->targets[r->last_target];
	for (uint32_t i = 0; i < r->nr_targets; i++) {
		if (r->targets[i].pid == pid) {
			r->last_target = i;
			return &r->targets[i];
		}
	}
	return NULL;
}

/* Every fork, exec and exit of a Python process forgets it, and a new
 * child has no entries: it alone is not worth a pass over the whole
 * cache (PYREADER_ENTRIES_DEFAULT entries), nor the rest of one once its
 * last entry is gone. */
static void drop_entries_of(struct pyreader *r, uint32_t pid)
{
	struct target *tg = target_find(r, pid);

	for (uint32_t i = 0; i < r->nr_entries && (!tg || tg->nr_cached); i++)
		if (r->entries[i].used && r->entries[i].pid == pid)
			cache_remove(r, i);
}

/* The largest field end of the code header we read, or 0 when too big. */
static uint32_t code_hdr_len(const struct pyoffsets *o)
{
	const uint32_t ends[] = {
		o->obj_type + 8, o->code_filename + 8, o->code_name + 8,
		o->code_qualname + 8, o->code_linetable + 8, o->code_firstlineno + 4,
	};
	uint32_t m = 0;

	for (unsigned i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		if (ends[i] < 8) /* wrapped: a PYOFF_NONE field */
			return 0;
		m = ends[i] > m ? ends[i] : m;
	}
	return m <= HDR_MAX ? m : 0;
}

int pyreader__add_target(struct pyreader *r, uint32_t pid,
			 const struct pyreader_target *t)
{
	struct target *tg;
	uint32_t hdr_len;

	if (!r || !t || !t->offsets)
		return -EINVAL;
	hdr_len = code_hdr_len(t->offsets);
	if (!hdr_len)
		return -EINVAL;
	tg = target_find(r, pid);
	if (tg) {
		drop_entries_of(r, pid);
	} else {
		if (r->nr_targets == r->cap_targets) {
			uint32_t ncap = r->cap_targets ? r->cap_targets * 2 : 8;
			struct target *n;

			if (r->cap_targets >= PYREADER_TARGETS_MAX)
				return -ENOSPC;
			n = reallocarray(r->targets, ncap, sizeof(*n));
			if (!n)
				return -ENOMEM;
			r->targets = n;
			r->cap_targets = ncap;
		}
		tg = &r->targets[r->nr_targets++];
	}
	tg->pid = pid;
	tg->nr_cached = 0; /* (none: dropped above, or a new slot) */
	tg->t = *t;
	tg->off = *t->offsets;
	tg->t.offsets = &tg->off;
	tg->hdr_len = hdr_len;
	return 0;
}

void pyreader__tick(struct pyreader *r)
{
	if (r)
		r->tick++;
}

void pyreader__forget_pid(struct pyreader *r, uint32_t pid)
{
	struct target *tg = r ? target_find(r, pid) : NULL;

	if (!tg)
		return;
	drop_entries_of(r, pid);
	*tg = r->targets[--r->nr_targets];
	r->last_target = NIL;
}

static void fill_out(const struct entry *e, uint32_t instr_offset,
		     struct pycode_frame *out)
{
	out->qualname = e->qualname;
	out->name = e->name;
	out->filename = e->filename;
	out->firstlineno = e->fp.firstlineno;
	/* a frame that has not started: 3.11 sets prev_instr to the first
	 * instruction - 1, an offset of -2; CPython says co_firstlineno */
	if ((int32_t)instr_offset < 0)
		out->line = e->fp.firstlineno > 0 ? e->fp.firstlineno : 0;
	else
		out->line = e->lines.nr_runs ? pylinetable_line(&e->lines, instr_offset) : 0;
	out->flags = e->flags;
}

int pycode_name(struct pyreader *r, uint32_t pid, uint64_t code_ptr,
		uint32_t instr_offset, struct pycode_frame *out)
{
	struct fingerprint fp;
	struct target *tg;
	uint32_t i;
	int ret;

	if (!r || !out)
		return -EINVAL;
	r->st.lookups++;
	tg = target_find(r, pid);
	if (!tg) {
		r->st.err_no_target++;
		return -ENOENT;
	}
	i = cache_find(r, pid, code_ptr);
	if (i != NIL) {
		struct entry *e = &r->entries[i];

		lru_unlink(r, i);
		lru_push_front(r, i);
		if ((r->flags & PYREADER_F_TRUST_CACHE) ||
		    ((r->flags & PYREADER_F_VERIFY_PER_TICK) && e->checked_tick == r->tick)) {
			r->st.hits++;
			fill_out(e, instr_offset, out);
			return 0;
		}
		ret = read_fingerprint(tg, code_ptr, &fp);
		if (ret == -EFAULT || ret == -ESRCH) { /* gone: what we read while it ran stands */
			r->st.hits++;
			r->st.hits_unverified++;
			fill_out(e, instr_offset, out);
			return 0;
		}
		if (ret == 0 && memcmp(&fp, &e->fp, sizeof(fp)) == 0) {
			e->checked_tick = r->tick;
			r->st.hits++;
			fill_out(e, instr_offset, out);
			return 0;
		}
		/* another object lives there now */
		r->st.stale++;
		cache_remove(r, i);
		if (ret < 0) {
			r->st.err_type++;
			return ret;
		}
	} else {
		ret = read_fingerprint(tg, code_ptr, &fp);
		if (ret < 0) {
			if (ret == -EFAULT || ret == -ESRCH)
				r->st.err_read++;
			else
				r->st.err_type++;
			return ret;
		}
	}
	i = cache_take(r);
	ret = decode(r, tg, code_ptr, &fp, &r->entries[i]);
	if (ret < 0) {
		struct entry *e = &r->entries[i];

		entry_clear(e);
		e->hnext = r->free_head;
		r->free_head = i;
		return ret;
	}
	r->st.misses++;
	r->entries[i].checked_tick = r->tick;
	cache_insert(r, i);
	fill_out(&r->entries[i], instr_offset, out);
	return 0;
}

void pyreader__stats(const struct pyreader *r, struct pyreader_stats *out)
{
	if (r && out)
		*out = r->st;
}

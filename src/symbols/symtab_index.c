// SPDX-License-Identifier: MIT
/*
 * A symtab's index (src/symbols/symbolize.h), finished lazily: finishing
 * drops the symbols into buckets by address in one linear pass, and a
 * bucket is sorted, its aliases grouped and its labels checked by the
 * first lookup that lands in it. A report looks up a few hundred
 * addresses of a table of ten thousand symbols.
 *
 * What a lookup sees is what a fully sorted table gives: the entries are
 * the distinct starts (one symbol chosen among the aliases at each), less
 * the labels that lie inside a sized symbol that starts before them; a
 * sized entry ends at start + size, a size-0 one at the next entry's
 * start, never past its section.
 */
#include "symbols/symbolize.h"
#include "symbols/symtab_int.h"
#include "util.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Marks "tried: not a mangled name" in symtab_ent.shown. */
static char not_mangled[1];

/* The entries of finished bucket b, and their starts (NULL for an empty
 * bucket: the arrays may not exist yet, and NULL + 0 is undefined). */
static struct symtab_ent *bucket_ent(const struct symtab *s, size_t b)
{
	return s->bk[b].nr ? s->ent + s->bk[b].pos : NULL;
}

static const uint64_t *bucket_starts(const struct symtab *s, size_t b)
{
	return s->bk[b].nr ? s->starts + s->bk[b].pos : NULL;
}

static void drop_names(struct symtab *s)
{
	size_t i;

	for (i = 0; i < s->nr_ent; i++) {
		if (s->ent[i].shown != not_mangled)
			free(s->ent[i].shown);
		s->ent[i].shown = NULL;
	}
}

void symtab__unfinish(struct symtab *s)
{
	drop_names(s);
	free(s->ord);
	free(s->bstart);
	free(s->bk);
	free(s->cover);
	free(s->ent);
	free(s->starts);
	s->ord = s->bstart = NULL;
	s->bk = NULL;
	s->cover = s->starts = NULL;
	s->ent = NULL;
	s->nr_ent = s->ent_cap = s->starts_cap = 0;
	s->nb = 0;
	s->finished = 0;
}

void symtab__set_full_names(struct symtab *s, int full_names)
{
	drop_names(s);
	s->full_names = full_names;
}

/*
 * Length of the name shown for a symbol: .symtab spells versioned symbols
 * "name@@VER" or "name@VER" (glibc's __libc_start_main@@GLIBC_2.34); a
 * profile shows the function, as perf does, so the version goes (not
 * from a name that starts with '@', nor from names added by hand, such
 * as "memcpy@plt").
 */
static size_t shown_len(const struct symtab *s, const struct symtab_sym *y)
{
	const char *n = s->strs + y->name;

	if (!y->elf || n[0] == '@')
		return strlen(n);
	return (size_t)(strchrnul(n, '@') - n);
}

static int has_prefix(const char *n, size_t len, const char *p, size_t plen)
{
	return len >= plen && !memcmp(n, p, plen);
}

/*
 * glibc's internal aliases of public functions (__GI___lll_lock_wait for
 * __lll_lock_wait, __libc_recv and __GI___recv for recv, _IO_fwrite for
 * fwrite): a profile shows the name a user calls.
 */
static int is_internal_alias(const char *n, size_t len)
{
	if (n[0] == '_' && n[1] == '_')
		return has_prefix(n, len, "__GI_", 5) ||
		       has_prefix(n, len, "__libc_", 7);
	return has_prefix(n, len, "_IO_", 4);
}

static size_t leading_underscores(const char *n, size_t len)
{
	size_t k = 0;

	while (k < len && n[k] == '_')
		k++;
	return k;
}

static int bind_rank(uint8_t bind)
{
	return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
}

/*
 * <0 when a is the better of two symbols at one address: a sized one,
 * a function over a label, a public name over a glibc-internal alias,
 * then global over weak over local, then perf's choose_best_symbol()
 * order (fewer leading underscores, then the longer name).
 */
static int sym_better(const struct symtab *s, const struct symtab_sym *a,
		      const struct symtab_sym *b)
{
	const char *na = s->strs + a->name, *nb = s->strs + b->name;
	size_t la, lb, ua, ub;
	int ia, ib;

	if (!!a->size != !!b->size)
		return a->size ? -1 : 1;
	if (a->label != b->label)
		return a->label ? 1 : -1;
	la = shown_len(s, a);
	lb = shown_len(s, b);
	ia = is_internal_alias(na, la);
	ib = is_internal_alias(nb, lb);
	if (ia != ib)
		return ia ? 1 : -1;
	if (bind_rank(a->bind) != bind_rank(b->bind))
		return bind_rank(a->bind) < bind_rank(b->bind) ? -1 : 1;
	ua = leading_underscores(na, la);
	ub = leading_underscores(nb, lb);
	if (ua != ub)
		return ua < ub ? -1 : 1;
	if (la != lb)
		return la > lb ? -1 : 1;
	return memcmp(na, nb, la);
}

/* Keep the best symbol of an entry's group (the first of the best in
 * the order they were added): it becomes the only one. */
static void choose(struct symtab *s, struct symtab_ent *en)
{
	uint32_t *m = s->ord + en->first;
	uint32_t k, best = 0;

	for (k = 1; k < en->nr; k++)
		if (sym_better(s, &s->syms[m[k]], &s->syms[m[best]]) < 0)
			best = k;
	m[0] = m[best];
	en->nr = 1;
}

struct sym_key {
	uint64_t start;
	uint32_t idx;
};

/* Stable sort of the indices ord[m] by start (they come in the order the
 * symbols were added): insertion for a few, else an LSD radix sort of
 * (start, index) keys, 11 bits a pass, skipping digits all keys share. */
static void sort_slice(const struct symtab *s, uint32_t *ord, size_t m)
{
	struct sym_key *k = NULL, *tmp = NULL, *t;
	size_t i, j, cnt[2048];
	uint64_t diff = 0;
	unsigned shift;

	if (m > 32) {
		k = malloc(m * sizeof(*k));
		tmp = malloc(m * sizeof(*tmp));
	}
	if (!k || !tmp) { /* (or no memory: slow, still right) */
		free(k);
		free(tmp);
		for (i = 1; i < m; i++) {
			uint32_t x = ord[i];
			uint64_t a = s->syms[x].start;

			for (j = i; j > 0 && s->syms[ord[j - 1]].start > a; j--)
				ord[j] = ord[j - 1];
			ord[j] = x;
		}
		return;
	}
	for (i = 0; i < m; i++) {
		k[i].start = s->syms[ord[i]].start;
		k[i].idx = ord[i];
		diff |= k[i].start ^ k[0].start;
	}
	for (shift = 0; shift < 64; shift += 11) {
		size_t sum = 0, d;

		if (!((diff >> shift) & 0x7ff))
			continue;
		memset(cnt, 0, sizeof(cnt));
		for (i = 0; i < m; i++)
			cnt[(k[i].start >> shift) & 0x7ff]++;
		for (d = 0; d < 2048; d++) {
			size_t c = cnt[d];

			cnt[d] = sum;
			sum += c;
		}
		for (i = 0; i < m; i++)
			tmp[cnt[(k[i].start >> shift) & 0x7ff]++] = k[i];
		t = k;
		k = tmp;
		tmp = t;
	}
	for (i = 0; i < m; i++)
		ord[i] = k[i].idx;
	free(k);
	free(tmp);
}

/* End of a size-0 symbol: the next entry's start, never past its
 * section. */
static uint64_t open_end(const struct symtab_sym *y, uint64_t next)
{
	uint64_t end = next;

	if (y->limit && y->limit < end)
		end = y->limit;
	return end == UINT64_MAX ? y->start + 1 : end;
}

/*
 * Sort bucket b, group equal starts (choosing the best now only when the
 * group's symbols differ in what bounds them), drop each label that
 * starts inside a sized symbol, and end each size-0 symbol at the next
 * start (the last one's end waits for the next bucket: open). 0, or
 * -ENOMEM (the bucket stays as it was: its lookups find nothing).
 */
static __attribute__((noinline)) int finish_bucket_slow(struct symtab *s,
							  size_t b)
{
	uint32_t o = s->bstart[b], m = s->bstart[b + 1] - o, i, out = 0;
	const struct symtab_sym *prev = NULL;
	uint64_t *starts, cover = s->cover[b];
	struct symtab_ent *ent;

	if (!m) { /* an empty bucket: nothing to grow or sort */
		s->bk[b].pos = (uint32_t)s->nr_ent;
		s->bk[b].nr = 0;
		return 0;
	}
	if (util__grow((void **)&s->ent, &s->ent_cap, s->nr_ent + m,
		       sizeof(*s->ent)) ||
	    util__grow((void **)&s->starts, &s->starts_cap, s->nr_ent + m,
		       sizeof(*s->starts)))
		return -ENOMEM;
	ent = s->ent + s->nr_ent;
	starts = s->starts + s->nr_ent;
	sort_slice(s, s->ord + o, m);
	for (i = o; i < o + m;) {
		const struct symtab_sym *y = &s->syms[s->ord[i]];
		struct symtab_ent *en = &ent[out];
		uint64_t gend = y->size ? y->start + y->size : 0;
		uint32_t j = i + 1;
		int same = 1;

		for (; j < o + m && s->syms[s->ord[j]].start == y->start; j++) {
			const struct symtab_sym *x = &s->syms[s->ord[j]];

			same &= x->size == y->size && x->limit == y->limit &&
				x->label == y->label;
			if (x->size && x->start + x->size > gend)
				gend = x->start + x->size;
		}
		en->first = i;
		en->nr = j - i;
		i = j;
		if (!same) {
			choose(s, en);
			y = &s->syms[s->ord[en->first]];
		}
		if (y->label && y->start < cover) {
			cover = gend > cover ? gend : cover;
			continue;
		}
		cover = gend > cover ? gend : cover;
		if (prev && !prev->size)
			ent[out - 1].end = open_end(prev, y->start);
		en->end = y->start + y->size;
		en->shown = NULL;
		en->open = 0;
		starts[out++] = y->start;
		prev = y;
	}
	if (prev && !prev->size)
		ent[out - 1].open = 1;
	s->bk[b].pos = (uint32_t)s->nr_ent;
	s->nr_ent += out;
	s->bk[b].nr = out;
	return 0;
}

static inline int finish_bucket(struct symtab *s, size_t b)
{
	return s->bk[b].nr == BUCKET_RAW ? finish_bucket_slow(s, b) : 0;
}

/*
 * One linear pass: count the symbols of each bucket (about two a bucket)
 * and the largest end of a sized symbol in it, then drop their indices
 * in, in the order they were added. 0 or -ENOMEM.
 */
int symtab__finish(struct symtab *s)
{
	size_t n = s->nr, nb = 64, i, b;
	uint64_t lo, hi, c = 0;
	unsigned shift = 0;
	uint32_t sum = 0;

	symtab__unfinish(s);
	if (!n) {
		s->finished = 1;
		return 0;
	}
	lo = hi = s->syms[0].start;
	for (i = 1; i < n; i++) {
		uint64_t a = s->syms[i].start;

		lo = a < lo ? a : lo;
		hi = a > hi ? a : hi;
	}
	while (nb < n / 2)
		nb <<= 1;
	while (((hi - lo) >> shift) >= nb)
		shift++;
	s->ord = malloc(n * sizeof(*s->ord));
	s->bstart = calloc(nb + 1, sizeof(*s->bstart));
	s->bk = malloc(nb * sizeof(*s->bk));
	s->cover = calloc(nb, sizeof(*s->cover));
	if (!s->ord || !s->bstart || !s->bk || !s->cover) {
		s->nb = 0;
		symtab__unfinish(s);
		return -ENOMEM;
	}
	s->lo = lo;
	s->shift = shift;
	s->nb = nb;
	for (b = 0; b < nb; b++)
		s->bk[b].nr = BUCKET_RAW;
	for (i = 0; i < n; i++) {
		const struct symtab_sym *y = &s->syms[i];

		b = (y->start - lo) >> shift;
		s->bstart[b]++;
		if (y->size && y->start + y->size > s->cover[b])
			s->cover[b] = y->start + y->size;
	}
	/* counts -> offsets (one past: the drop below advances them);
	 * largest ends -> the largest end before each bucket */
	for (b = 0; b < nb; b++) {
		uint32_t k = s->bstart[b];
		uint64_t e = s->cover[b];

		s->bstart[b] = sum;
		sum += k;
		s->cover[b] = c;
		c = e > c ? e : c;
	}
	s->bstart[nb] = sum;
	for (i = 0; i < n; i++)
		s->ord[s->bstart[(s->syms[i].start - lo) >> shift]++] =
			(uint32_t)i;
	/* each offset now points at the next bucket's: shift back */
	memmove(s->bstart + 1, s->bstart, nb * sizeof(*s->bstart));
	s->bstart[0] = 0;
	s->finished = 1;
	return 0;
}

size_t symtab__nr(const struct symtab *s_)
{
	struct symtab *s = (struct symtab *)s_;
	size_t b, nr = 0;

	if (!s->finished)
		return s->nr;
	for (b = 0; b < s->nb; b++)
		if (!finish_bucket(s, b))
			nr += s->bk[b].nr;
	return nr;
}

/* The end of open entry i of bucket b: the next bucket's first start. */
static __attribute__((noinline)) uint64_t open_entry_end(struct symtab *s,
							 size_t b, uint32_t i)
{
	struct symtab_ent *en;
	uint64_t next = UINT64_MAX;
	size_t k;

	for (k = b + 1; k < s->nb; k++) {
		if (finish_bucket(s, k))
			continue; /* (no memory: as if empty) */
		if (s->bk[k].nr) {
			next = bucket_starts(s, k)[0];
			break;
		}
	}
	en = &bucket_ent(s, b)[i]; /* (finishing may move the entries) */
	en->end = open_end(&s->syms[s->ord[en->first]], next);
	en->open = 0;
	return en->end;
}

/* The end of entry i of bucket b. */
static inline uint64_t entry_end(struct symtab *s, size_t b, uint32_t i)
{
	const struct symtab_ent *en = &bucket_ent(s, b)[i];

	return en->open ? open_entry_end(s, b, i) : en->end;
}

/* The name entry en shows: its best symbol's, without a version,
 * demangled unless off; made once. */
static __attribute__((noinline)) const char *
entry_name_slow(struct symtab *s, struct symtab_ent *en)
{
	const struct symtab_sym *y;
	const char *raw;
	char *base = NULL, *d = NULL;
	size_t len;

	if (en->nr > 1)
		choose(s, en);
	y = &s->syms[s->ord[en->first]];
	raw = s->strs + y->name;
	if (en->shown)
		return en->shown == not_mangled ? raw : en->shown;
	len = shown_len(s, y);
	if (raw[len]) {
		base = strndup(raw, len);
		if (!base)
			return raw; /* (no memory: the version stays) */
	}
	if (!s->no_demangle)
		d = symbolize__demangle(base ? base : raw);
	if (d) {
		free(base);
		if (!s->full_names)
			symbolize__cxx_short(d);
	} else {
		d = base;
	}
	en->shown = d ? d : not_mangled;
	return d ? d : raw;
}

static inline const char *entry_name(struct symtab *s,
				     struct symtab_ent *en)
{
	if (en->shown && en->nr == 1)
		return en->shown != not_mangled ? en->shown :
			s->strs + s->syms[s->ord[en->first]].name;
	return entry_name_slow(s, en);
}

/* Step (b, i) back to the last entry of an earlier bucket; 0, or -1 when
 * there is none. */
static __attribute__((noinline)) int step_back_bucket(struct symtab *s,
						      size_t *b, uint32_t *i)
{
	while (*b > 0) {
		(*b)--;
		if (s->bstart[*b] == s->bstart[*b + 1] || finish_bucket(s, *b))
			continue; /* empty (or no memory) */
		if (s->bk[*b].nr) {
			*i = s->bk[*b].nr - 1;
			return 0;
		}
	}
	return -1;
}

/* Step (b, i) back to the entry before it; 0, or -1 at the first. */
static inline int step_back(struct symtab *s, size_t *b, uint32_t *i)
{
	if (*i > 0) {
		(*i)--;
		return 0;
	}
	return step_back_bucket(s, b, i);
}

/* The name as the binary spells it, where it differs from the name
 * entry_name() gave (a demangled C++ name), else NULL. A versioned one
 * ("_ZN...@@GLIBCXX_3.4") has no copy without its version: NULL too. */
static const char *entry_sys_name(const struct symtab *s, const struct symtab_ent *en)
{
	const struct symtab_sym *y = &s->syms[s->ord[en->first]];
	const char *raw = s->strs + y->name;

	if (!en->shown || en->shown == not_mangled || raw[shown_len(s, y)])
		return NULL;
	return raw;
}

int symtab__lookup(struct symtab *s, uint64_t vaddr, const char **name,
		   uint64_t *offset, uint64_t *start)
{
	return symtab__lookup_sys(s, vaddr, name, NULL, offset, start);
}

int symtab__lookup_sys(struct symtab *s, uint64_t vaddr, const char **name,
		       const char **sys_name, uint64_t *offset, uint64_t *start)
{
	const uint64_t *base, *st;
	size_t b, n, k;
	uint32_t i;

	if (!s->finished || !s->nr || vaddr < s->lo)
		return -ENOENT;
	b = (vaddr - s->lo) >> s->shift;
	if (b >= s->nb)
		b = s->nb - 1;
	if (finish_bucket(s, b))
		return -ENOENT; /* (no memory) */
	/*
	 * The largest start <= vaddr in the bucket: a branch-free binary
	 * search (the compiler emits cmov; the address is random, so a
	 * branchy one mispredicts at half its steps). None there: the last
	 * entry of an earlier bucket.
	 */
	st = bucket_starts(s, b);
	n = s->bk[b].nr;
	i = 0;
	if (n && st[0] <= vaddr) {
		base = st;
		while (n > 1) {
			size_t half = n / 2;

			base = base[half] <= vaddr ? base + half : base;
			n -= half;
		}
		i = (uint32_t)(base - st) + 1;
	}
	if (step_back(s, &b, &i))
		return -ENOENT;
	/*
	 * (b, i) is the largest start <= vaddr. If it ends before vaddr, an
	 * enclosing symbol a few entries back may still cover it (nested
	 * local labels inside a large function).
	 */
	for (k = 0; k < 4; k++) {
		if (vaddr < entry_end(s, b, i)) {
			uint64_t at = bucket_starts(s, b)[i];

			*name = entry_name(s, &bucket_ent(s, b)[i]);
			if (sys_name)
				*sys_name = entry_sys_name(s, &bucket_ent(s, b)[i]);
			*offset = vaddr - at;
			if (start)
				*start = at;
			return 0;
		}
		if (step_back(s, &b, &i))
			break;
	}
	return -ENOENT;
}

// SPDX-License-Identifier: MIT
/* Symbol tables and debug-file lookup. See include/symbolize.h. */
#include "symbolize.h"
#include "util.h"

#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfread.h"
#include "goruntime.h"

/* MiniDebugInfo images are small (symbols only); refuse bombs. */
#define MINIDEBUG_MAX (64u << 20)

/* One symbol as added; symtab__finish() sorts an index of them. */
struct symtab_sym {
	uint64_t start;
	uint64_t size;
	uint64_t limit; /* 0 or section end */
	uint32_t name;	/* offset in strs */
	uint8_t bind;
	uint8_t label;	/* STT_NOTYPE in code: a label, not a function */
	uint8_t elf;	/* an ELF name: "name@VER" shows as "name" */
};

/*
 * One start address of the finished table: the symbols added at it are
 * ord[first .. first + nr). All of them have the same size, section end
 * and label flag (else the best was chosen at finish and nr is 1), so
 * the name is chosen at the first lookup that needs it: a report looks
 * up a few hundred addresses of a table of ten thousand.
 */
struct symtab_ent {
	uint64_t end;	/* exclusive */
	uint32_t first;
	uint32_t nr;
};

/* Marks "tried: not a mangled name" in symtab.dem[]. */
static char not_mangled[1];

struct symtab {
	struct symtab_sym *syms;
	size_t nr, cap;
	char *strs;
	size_t strs_len, strs_cap;
	/* after symtab__finish(): */
	uint32_t *ord;	/* syms[] indices by start */
	struct symtab_ent *ent;
	uint64_t *starts; /* ent[i]'s start, dense for the binary search */
	char **dem;	/* shown names, lazily; NULL = not made yet */
	size_t nr_ent;
	int no_demangle;
	int full_names;	/* demangled names keep parameters, return type */
	int finished;
	unsigned sources;
};

struct symtab *symtab__new(int no_demangle)
{
	struct symtab *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->no_demangle = no_demangle;
	return s;
}

static void symtab__drop_dem(struct symtab *s)
{
	size_t i;

	if (!s->dem)
		return;
	for (i = 0; i < s->nr_ent; i++)
		if (s->dem[i] != not_mangled)
			free(s->dem[i]);
	free(s->dem);
	s->dem = NULL;
}

/* Back to a table being filled (names are indexed by entry). */
static void symtab__unfinish(struct symtab *s)
{
	symtab__drop_dem(s);
	free(s->ord);
	free(s->ent);
	free(s->starts);
	s->ord = NULL;
	s->ent = NULL;
	s->starts = NULL;
	s->nr_ent = 0;
	s->finished = 0;
}

void symtab__free(struct symtab *s)
{
	if (!s)
		return;
	symtab__unfinish(s);
	free(s->syms);
	free(s->strs);
	free(s);
}

/* Room for n more symbols and len more string bytes. 0 or -ENOMEM. */
static int symtab__reserve(struct symtab *s, uint64_t n, uint64_t len)
{
	if (n > UINT32_MAX - 1 - s->nr || len > UINT32_MAX - s->strs_len ||
	    util__grow((void **)&s->syms, &s->cap, s->nr + n, sizeof(*s->syms)) ||
	    util__grow((void **)&s->strs, &s->strs_cap, s->strs_len + len, 1))
		return -ENOMEM;
	if (s->finished)
		symtab__unfinish(s);
	return 0;
}

/* Append a symbol whose name is at strs + name (room reserved). */
static void symtab__push(struct symtab *s, uint32_t name, uint64_t start,
			 uint64_t size, uint64_t limit, uint8_t bind,
			 uint8_t label, uint8_t elf)
{
	struct symtab_sym *sym = &s->syms[s->nr++];

	sym->start = start;
	/* A size that wraps is a lie: treat it as unknown. */
	sym->size = start + size < start ? 0 : size;
	sym->limit = limit > start ? limit : 0;
	sym->name = name;
	sym->bind = bind;
	sym->label = label;
	sym->elf = elf;
}

int symtab__add(struct symtab *s, const char *name, uint64_t start,
		uint64_t size, uint64_t limit, uint8_t bind)
{
	size_t len = strlen(name);
	uint32_t off;

	if (symtab__reserve(s, 1, (uint64_t)len + 1))
		return -ENOMEM;
	off = (uint32_t)s->strs_len;
	memcpy(s->strs + off, name, len + 1);
	s->strs_len += len + 1;
	symtab__push(s, off, start, size, limit, bind, 0, 0);
	return 0;
}

void symtab__set_full_names(struct symtab *s, int full_names)
{
	symtab__drop_dem(s);
	s->full_names = full_names;
	if (s->finished && s->nr_ent)
		s->dem = calloc(s->nr_ent, sizeof(*s->dem)); /* NULL: raw names */
}

/* Per section index: sh_addr + sh_size (or 0), and SHF_EXECINSTR. */
struct sec_info {
	uint64_t *end;
	uint8_t *exec;
	size_t nr;
};

static int sec_info__load(struct sec_info *si, const struct elfread *e)
{
	size_t i;

	si->nr = elfread__nr_sections(e);
	if (si->nr > 65536) /* more sections than any real binary */
		si->nr = 65536;
	si->end = calloc(si->nr ? si->nr : 1, sizeof(*si->end));
	si->exec = calloc(si->nr ? si->nr : 1, 1);
	if (!si->end || !si->exec) {
		free(si->end);
		free(si->exec);
		return -ENOMEM;
	}
	for (i = 0; i < si->nr; i++) {
		struct elfread_section sec;

		if (elfread__section_at(e, i, &sec))
			continue;
		/* NOBITS sections of debug files keep their addresses. */
		if (sec.vaddr + sec.size > sec.vaddr)
			si->end[i] = sec.vaddr + sec.size;
		si->exec[i] = !!(sec.flags & SHF_EXECINSTR);
	}
	return 0;
}

/* One entry of a symbol table, the fields symtab__add_elf() reads. */
struct raw_sym {
	uint64_t value, size;
	uint32_t name;
	uint16_t shndx;
	uint8_t info;
};

/* What symtab__add_elf() reads one table with. */
struct add_ctx {
	struct sec_info si;
	const char *strs;
	uint64_t strs_len;
	uint32_t base;		/* of the copied string table in s->strs */
	struct symtab_sym *out;	/* the next free slot of s->syms */
};

/* Append r when it is a function (or a code label) with a valid name. */
static inline void add_raw(struct add_ctx *c, const struct raw_sym *r)
{
	uint8_t type = ELF64_ST_TYPE(r->info), label = 0;
	struct symtab_sym *y;
	const char *n;

	if (type == STT_NOTYPE) {
		label = 1;
	} else if (type != STT_FUNC && type != STT_GNU_IFUNC) {
		return;
	}
	if (r->name >= c->strs_len || r->shndx == SHN_UNDEF || !r->value)
		return;
	n = c->strs + r->name;
	if (!n[0])
		return;
	/*
	 * A label in code (hand-written assembly such as ld.so's _start and
	 * _dl_start_user) names the code up to the next symbol, as perf's
	 * elf_sym__is_label() has it. Not ARM/RISC-V mapping symbols ($x,
	 * $d) or assembler locals (.L).
	 */
	if (label && (r->shndx >= c->si.nr || !c->si.exec[r->shndx] ||
		      n[0] == '$' || (n[0] == '.' && n[1] == 'L')))
		return;
	y = c->out++;
	y->start = r->value;
	/* A size that wraps is a lie: treat it as unknown. */
	y->size = r->value + r->size < r->value ? 0 : r->size;
	y->limit = r->shndx < c->si.nr ? c->si.end[r->shndx] : 0;
	if (y->limit <= r->value)
		y->limit = 0;
	y->name = c->base + r->name;
	y->bind = ELF64_ST_BIND(r->info);
	y->label = label;
	y->elf = 1;
}

/*
 * The function symbols of one table, read straight from its entries (the
 * bounds were checked by elfread__symbol_table(); names below strs_len
 * are terminated). The string table is copied whole, once: its offsets
 * stay the symbols' name offsets. Version suffixes are cut when a name
 * is shown (symtab__name()), not here.
 */
int symtab__add_elf(struct symtab *s, const struct elfread *e, uint32_t sht)
{
	struct elfread_symtab t;
	struct add_ctx c;
	struct raw_sym r;
	uint64_t i;
	size_t added;

	if (elfread__symbol_table(e, sht, &t))
		return -ENOENT;
	if (!t.strs_len || !t.nr)
		return 0;
	if (t.nr > INT_MAX || symtab__reserve(s, t.nr, t.strs_len) ||
	    sec_info__load(&c.si, e))
		return -ENOMEM;
	c.strs = t.strs;
	c.strs_len = t.strs_len;
	c.base = (uint32_t)s->strs_len;
	c.out = s->syms + s->nr;
	memcpy(s->strs + c.base, t.strs, t.strs_len);
	s->strs_len += t.strs_len;
	if (t.is_64) {
		for (i = 0; i < t.nr; i++) {
			Elf64_Sym es;

			memcpy(&es, t.syms + i * sizeof(es), sizeof(es));
			r.value = es.st_value;
			r.size = es.st_size;
			r.name = es.st_name;
			r.shndx = es.st_shndx;
			r.info = es.st_info;
			add_raw(&c, &r);
		}
	} else {
		for (i = 0; i < t.nr; i++) {
			Elf32_Sym es;

			memcpy(&es, t.syms + i * sizeof(es), sizeof(es));
			r.value = es.st_value;
			r.size = es.st_size;
			r.name = es.st_name;
			r.shndx = es.st_shndx;
			r.info = es.st_info;
			add_raw(&c, &r);
		}
	}
	added = (size_t)(c.out - (s->syms + s->nr));
	s->nr += added;
	free(c.si.end);
	free(c.si.exec);
	return (int)added;
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
static void symtab__choose(struct symtab *s, struct symtab_ent *en)
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
	size_t idx;
};

/* Stable LSD radix sort of k[n] by start, 11 bits a pass, skipping the
 * passes where every key has the same digit; tmp[n] is scratch. The
 * sorted array (k or tmp). */
static struct sym_key *radix_sort(struct sym_key *k, struct sym_key *tmp,
				  size_t n, uint64_t diff)
{
	size_t i, cnt[2048];
	unsigned shift;

	for (shift = 0; shift < 64; shift += 11) {
		size_t sum = 0, d;
		struct sym_key *t;

		if (!((diff >> shift) & 0x7ff))
			continue;
		memset(cnt, 0, sizeof(cnt));
		for (i = 0; i < n; i++)
			cnt[(k[i].start >> shift) & 0x7ff]++;
		for (d = 0; d < 2048; d++) {
			size_t c = cnt[d];

			cnt[d] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			tmp[cnt[(k[i].start >> shift) & 0x7ff]++] = k[i];
		t = k;
		k = tmp;
		tmp = t;
	}
	return k;
}

/* Any table: (start, index) keys, radix-sorted. 0 or -ENOMEM. */
static int sort_wide(const struct symtab *s, uint32_t *ord)
{
	size_t n = s->nr, i;
	struct sym_key *k, *tmp, *out;
	uint64_t diff = 0;

	k = malloc(n * sizeof(*k));
	tmp = malloc(n * sizeof(*tmp));
	if (!k || !tmp) {
		free(k);
		free(tmp);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		k[i].start = s->syms[i].start;
		k[i].idx = i;
		diff |= k[i].start ^ k[0].start;
	}
	out = radix_sort(k, tmp, n, diff);
	for (i = 0; i < n; i++)
		ord[i] = (uint32_t)out[i].idx;
	free(k);
	free(tmp);
	return 0;
}

static unsigned bits_of(uint64_t v)
{
	return v ? 64 - (unsigned)__builtin_clzll(v) : 0;
}

#define PACK_PASSES 3 /* of up to 11 bits: starts within 8 GiB */

/*
 * s->syms[] indices by start, the order of addition kept among equal
 * starts, into ord[n]. A binary's symbols lie within a few MiB, so each
 * is one 64-bit key, (start - lowest) above its index, and an LSD radix
 * sort of those keys takes one pass to count every digit and one pass a
 * digit (two for glibc) to move them. Wider tables take (start, index)
 * pairs. 0 or -ENOMEM.
 */
static int sort_by_start(const struct symtab *s, uint32_t *ord)
{
	uint32_t cnt[PACK_PASSES][2048];
	size_t n = s->nr, i;
	uint64_t lo, hi, *k, *tmp, imask;
	unsigned ib, rb, passes, d, p;

	lo = hi = s->syms[0].start;
	for (i = 1; i < n; i++) {
		uint64_t a = s->syms[i].start;

		lo = a < lo ? a : lo;
		hi = a > hi ? a : hi;
	}
	ib = bits_of(n - 1);
	rb = bits_of(hi - lo);
	if (rb > 11 * PACK_PASSES || rb + ib > 64)
		return sort_wide(s, ord);
	passes = (rb + 10) / 11;
	d = passes ? (rb + passes - 1) / passes : 0;
	imask = ib ? ~0ull >> (64 - ib) : 0;
	k = malloc(n * sizeof(*k));
	tmp = malloc(n * sizeof(*tmp));
	if (!k || !tmp) {
		free(k);
		free(tmp);
		return -ENOMEM;
	}
	memset(cnt, 0, passes * sizeof(cnt[0]));
	for (i = 0; i < n; i++) {
		uint64_t key = ((s->syms[i].start - lo) << ib) | i;

		k[i] = key;
		for (p = 0; p < passes; p++)
			cnt[p][(key >> (ib + p * d)) & ((1u << d) - 1)]++;
	}
	for (p = 0; p < passes; p++) {
		uint32_t sum = 0, c, *t = cnt[p];
		unsigned shift = ib + p * d;
		uint64_t *sw;

		for (i = 0; i < (1u << d); i++) {
			c = t[i];
			t[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			tmp[t[(k[i] >> shift) & ((1u << d) - 1)]++] = k[i];
		sw = k;
		k = tmp;
		tmp = sw;
	}
	for (i = 0; i < n; i++)
		ord[i] = (uint32_t)(k[i] & imask);
	free(k);
	free(tmp);
	return 0;
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
 * One pass over the sorted keys: group equal starts (choosing the best
 * now only when the group's symbols differ in what bounds them), drop a
 * label inside a sized function (a local entry point of assembly code
 * must not cut the function's name short), and end each size-0 symbol
 * at the next kept start.
 */
int symtab__finish(struct symtab *s)
{
	const struct symtab_sym *prev = NULL;
	uint64_t cover = 0;
	size_t n = s->nr, i, out = 0;

	symtab__unfinish(s);
	if (!n) {
		s->finished = 1;
		return 0;
	}
	s->ord = malloc(n * sizeof(*s->ord));
	s->ent = malloc(n * sizeof(*s->ent));
	s->starts = malloc(n * sizeof(*s->starts));
	if (!s->ord || !s->ent || !s->starts || sort_by_start(s, s->ord)) {
		symtab__unfinish(s);
		return -ENOMEM;
	}
	for (i = 0; i < n;) {
		const struct symtab_sym *y = &s->syms[s->ord[i]];
		struct symtab_ent *en = &s->ent[out];
		size_t j = i + 1;
		int same = 1;

		for (; j < n && s->syms[s->ord[j]].start == y->start; j++) {
			const struct symtab_sym *o = &s->syms[s->ord[j]];

			same &= o->size == y->size && o->limit == y->limit &&
				o->label == y->label;
		}
		en->first = (uint32_t)i;
		en->nr = (uint32_t)(j - i);
		i = j;
		if (!same) {
			symtab__choose(s, en);
			y = &s->syms[s->ord[en->first]];
		}
		if (y->label && y->start < cover)
			continue;
		if (y->size && y->start + y->size > cover)
			cover = y->start + y->size;
		if (prev && !prev->size)
			s->ent[out - 1].end = open_end(prev, y->start);
		en->end = y->start + y->size;
		s->starts[out++] = y->start;
		prev = y;
	}
	if (prev && !prev->size)
		s->ent[out - 1].end = open_end(prev, UINT64_MAX);
	s->nr_ent = out;
	s->dem = calloc(out, sizeof(*s->dem));
	if (!s->dem) {
		symtab__unfinish(s);
		return -ENOMEM;
	}
	s->finished = 1;
	return 0;
}

unsigned symtab__sources(const struct symtab *s)
{
	return s->sources;
}

size_t symtab__nr(const struct symtab *s)
{
	return s->finished ? s->nr_ent : s->nr;
}

/* The name entry i shows: its best symbol's, without a version, demangled
 * unless off; made once. */
static const char *symtab__name(struct symtab *s, size_t i)
{
	struct symtab_ent *en = &s->ent[i];
	const struct symtab_sym *y;
	const char *raw;
	char *base = NULL, *d = NULL;
	size_t len;

	if (en->nr > 1)
		symtab__choose(s, en);
	y = &s->syms[s->ord[en->first]];
	raw = s->strs + y->name;
	if (!s->dem)
		return raw; /* (no memory for the cache) */
	if (s->dem[i])
		return s->dem[i] == not_mangled ? raw : s->dem[i];
	len = shown_len(s, y);
	if (raw[len]) {
		base = strndup(raw, len);
		if (!base)
			return raw;
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
	s->dem[i] = d ? d : not_mangled;
	return d ? d : raw;
}

int symtab__lookup(struct symtab *s, uint64_t vaddr, const char **name,
		   uint64_t *offset, uint64_t *start)
{
	const uint64_t *base;
	size_t n, lo, k;

	if (!s->finished || !s->nr_ent)
		return -ENOENT;
	/*
	 * Branch-free binary search (the compiler emits cmov): the lookup
	 * address is random, so a branchy search mispredicts at half of its
	 * steps, which was most of its cost.
	 */
	base = s->starts;
	n = s->nr_ent;
	while (n > 1) {
		size_t half = n / 2;

		base = base[half] <= vaddr ? base + half : base;
		n -= half;
	}
	lo = (size_t)(base - s->starts) + (*base <= vaddr);
	/*
	 * lo - 1 is the largest start <= vaddr. If it ends before vaddr, an
	 * enclosing symbol a few entries back may still cover it (nested
	 * local labels inside a large function).
	 */
	for (k = 0; k < 4 && lo > k; k++) {
		size_t at = lo - 1 - k;

		if (vaddr < s->ent[at].end) {
			*name = symtab__name(s, at);
			*offset = vaddr - s->starts[at];
			if (start)
				*start = s->starts[at];
			return 0;
		}
	}
	return -ENOENT;
}

struct symtab *symtab__load(const struct elfread *e, const char *path,
			    const struct symtab_opts *opts)
{
	static const struct symtab_opts defaults;
	struct symtab *s;
	int n, have_full = 0;

	if (!opts)
		opts = &defaults;
	s = symtab__new(opts->no_demangle);
	if (!s)
		return NULL;
	s->full_names = opts->full_names;
	n = symtab__add_elf(s, e, SHT_SYMTAB);
	if (n == -ENOMEM)
		goto err_out;
	if (n > 0) {
		s->sources |= SYMSRC_SYMTAB;
		have_full = 1;
	}
	if (!have_full && !opts->no_debug_files) {
		char dbg[PATH_MAX];
		unsigned how = 0;

		if (!symbolize__find_debug_file(e, path, opts->debug_root, dbg,
						sizeof(dbg), &how)) {
			struct elfread *d = elfread__open(dbg);

			if (d) {
				n = symtab__add_elf(s, d, SHT_SYMTAB);
				elfread__free(d);
				if (n == -ENOMEM)
					goto err_out;
				if (n > 0) {
					s->sources |= how;
					have_full = 1;
				}
			}
		}
	}
	if (!have_full) {
		struct elfread *mini =
			elfread__open_gnu_debugdata(e, MINIDEBUG_MAX);

		if (mini) {
			n = symtab__add_elf(s, mini, SHT_SYMTAB);
			elfread__free(mini);
			if (n == -ENOMEM)
				goto err_out;
			if (n > 0)
				s->sources |= SYMSRC_MINIDEBUG;
		}
	}
	if (!have_full) {
		/* a Go binary linked with -s still names its functions */
		n = go_runtime__add_symbols(s, e);
		if (n == -ENOMEM)
			goto err_out;
		if (n > 0)
			s->sources |= SYMSRC_GOPCLNTAB;
	}
	/*
	 * A full .symtab (the binary's or its debug file's) has every symbol
	 * of .dynsym: the linker writes the global ones to both. perf reads
	 * one of the two tables, too; reading both doubled a shared
	 * library's aliases for no name.
	 */
	if (!have_full) {
		n = symtab__add_elf(s, e, SHT_DYNSYM);
		if (n == -ENOMEM)
			goto err_out;
		if (n > 0)
			s->sources |= SYMSRC_DYNSYM;
	}
	n = symtab__add_plt(s, e);
	if (n == -ENOMEM)
		goto err_out;
	if (n > 0)
		s->sources |= SYMSRC_PLT;
	if (symtab__finish(s))
		goto err_out;
	return s;

err_out:
	symtab__free(s);
	errno = ENOMEM;
	return NULL;
}

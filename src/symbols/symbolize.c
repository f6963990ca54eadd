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

struct symtab_sym {
	uint64_t start;
	uint64_t end;	/* exclusive; after symtab__finish() */
	uint64_t size;
	uint64_t limit; /* 0 or section end */
	uint32_t name;	/* offset in strs */
	uint8_t bind;
	uint8_t label;	/* STT_NOTYPE in code: a label, not a function */
};

/* Marks "tried: not a mangled name" in symtab.dem[]. */
static char not_mangled[1];

struct symtab {
	struct symtab_sym *syms;
	size_t nr, cap;
	char *strs;
	size_t strs_len, strs_cap;
	char **dem;	/* demangled names, lazily; NULL = not tried */
	uint64_t *starts; /* syms[i].start, dense for the binary search */
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
	for (i = 0; i < s->nr; i++)
		if (s->dem[i] != not_mangled)
			free(s->dem[i]);
	free(s->dem);
	s->dem = NULL;
}

void symtab__free(struct symtab *s)
{
	if (!s)
		return;
	symtab__drop_dem(s);
	free(s->starts);
	free(s->syms);
	free(s->strs);
	free(s);
}

/* Append a symbol named name[0..len) (no NUL needed). 0 or -ENOMEM. */
static int symtab__push(struct symtab *s, const char *name, size_t len,
			uint64_t start, uint64_t size, uint64_t limit,
			uint8_t bind, uint8_t label)
{
	struct symtab_sym *sym;

	if (s->strs_len + len + 1 > UINT32_MAX)
		return -ENOMEM;
	/* (symtab__add_elf() reserves a table's worth: no call per symbol) */
	if ((s->nr == s->cap &&
	     util__grow((void **)&s->syms, &s->cap, s->nr + 1, sizeof(*s->syms))) ||
	    (s->strs_len + len + 1 > s->strs_cap &&
	     util__grow((void **)&s->strs, &s->strs_cap, s->strs_len + len + 1, 1)))
		return -ENOMEM;
	/* Demangled names are indexed by position: positions change now. */
	if (s->dem)
		symtab__drop_dem(s);
	sym = &s->syms[s->nr++];
	sym->start = start;
	sym->size = size;
	/* A size that wraps is a lie: treat it as unknown. */
	if (start + size < start)
		sym->size = 0;
	sym->limit = limit > start ? limit : 0;
	sym->end = 0;
	sym->name = (uint32_t)s->strs_len;
	sym->bind = bind;
	sym->label = label;
	memcpy(s->strs + s->strs_len, name, len);
	s->strs[s->strs_len + len] = 0;
	s->strs_len += len + 1;
	s->finished = 0;
	return 0;
}

int symtab__add(struct symtab *s, const char *name, uint64_t start,
		uint64_t size, uint64_t limit, uint8_t bind)
{
	return symtab__push(s, name, strlen(name), start, size, limit, bind, 0);
}

void symtab__set_full_names(struct symtab *s, int full_names)
{
	symtab__drop_dem(s);
	s->full_names = full_names;
	if (s->finished && s->nr)
		s->dem = calloc(s->nr, sizeof(*s->dem)); /* NULL: raw names */
}

struct add_ctx {
	struct symtab *s;
	const struct elfread *e;
	uint64_t *sec_end; /* per section index: sh_addr + sh_size, or 0 */
	uint8_t *sec_exec; /* per section index: SHF_EXECINSTR */
	size_t nr_sec;
	int added;
	int err;
};

static int add_one(void *ctx, const struct elfread_sym *sym)
{
	struct add_ctx *c = ctx;
	const char *at;
	uint64_t limit = 0;
	size_t len;
	int err;

	int label = 0;

	if (sym->shndx == SHN_UNDEF || !sym->value || !sym->name[0])
		return 0;
	if (sym->type == STT_NOTYPE) {
		/*
		 * A label in code (hand-written assembly such as ld.so's
		 * _start and _dl_start_user) names the code up to the next
		 * symbol, as perf's elf_sym__is_label() has it. Not ARM/RISC-V
		 * mapping symbols ($x, $d) or assembler locals (.L).
		 */
		if (sym->shndx >= c->nr_sec || !c->sec_exec[sym->shndx] ||
		    sym->name[0] == '$' || !strncmp(sym->name, ".L", 2))
			return 0;
		label = 1;
	} else if (sym->type != STT_FUNC && sym->type != STT_GNU_IFUNC) {
		return 0;
	}
	if (sym->shndx < c->nr_sec)
		limit = c->sec_end[sym->shndx];
	/*
	 * .symtab spells versioned symbols "name@@VER" or "name@VER" (glibc's
	 * __libc_start_main@@GLIBC_2.34): a profile shows the function, as
	 * perf does, so the version goes.
	 */
	at = strchrnul(sym->name, '@');
	len = (size_t)(at - sym->name);
	if (!*at || at == sym->name) {
		len += strlen(at); /* unversioned, or a name that starts with @ */
	} else if (len >= 512) {
		return 0; /* (as long as a versioned name was ever kept) */
	}
	err = symtab__push(c->s, sym->name, len, sym->value, sym->size, limit,
			   sym->bind, (uint8_t)label);
	if (err) {
		c->err = err;
		return 1;
	}
	c->added++;
	return 0;
}

int symtab__add_elf(struct symtab *s, const struct elfread *e, uint32_t sht)
{
	struct add_ctx c = { .s = s, .e = e };
	size_t i;
	int ret, reserved = 0;

	c.nr_sec = elfread__nr_sections(e);
	if (c.nr_sec > 65536) /* more sections than any real binary */
		c.nr_sec = 65536;
	c.sec_end = calloc(c.nr_sec ? c.nr_sec : 1, sizeof(*c.sec_end));
	c.sec_exec = calloc(c.nr_sec ? c.nr_sec : 1, 1);
	if (!c.sec_end || !c.sec_exec) {
		free(c.sec_end);
		free(c.sec_exec);
		return -ENOMEM;
	}
	for (i = 0; i < c.nr_sec; i++) {
		struct elfread_section sec, strs;

		if (elfread__section_at(e, i, &sec))
			continue;
		/* NOBITS sections of debug files keep their addresses. */
		if (sec.vaddr + sec.size > sec.vaddr)
			c.sec_end[i] = sec.vaddr + sec.size;
		c.sec_exec[i] = !!(sec.flags & SHF_EXECINSTR);
		/* Room for the table (the first of its type, as
		 * elfread__for_each_symbol() reads) at once; best effort. */
		if (sec.type == sht && sec.data && !reserved) {
			reserved = 1;
			if (elfread__section_at(e, sec.link, &strs) == 0 &&
			    strs.data && strs.size < UINT32_MAX) {
				util__grow((void **)&s->syms, &s->cap,
					   s->nr + sec.size / (elfread__is_64(e) ? 24 : 16),
					   sizeof(*s->syms));
				util__grow((void **)&s->strs, &s->strs_cap,
					   s->strs_len + strs.size + 1, 1);
			}
		}
	}
	ret = elfread__for_each_symbol(e, sht, add_one, &c);
	free(c.sec_end);
	free(c.sec_exec);
	if (c.err)
		return c.err;
	if (ret < 0)
		return ret;
	return c.added;
}

struct got_slot {
	uint64_t addr;
	uint32_t sym;
};

static int got_cmp(const void *a, const void *b)
{
	const struct got_slot *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* GOT slot address -> dynamic symbol, from .rela.plt and .rela.dyn. */
static int collect_got_slots(const struct elfread *e, struct got_slot **out,
			     size_t *nr)
{
	struct got_slot *v = NULL;
	size_t n = 0, cap = 0, i;

	for (i = 1; i < elfread__nr_sections(e); i++) {
		struct elfread_section r;
		uint64_t k;

		if (elfread__section_at(e, i, &r) || r.type != SHT_RELA ||
		    !r.data)
			continue;
		for (k = 0; k + sizeof(Elf64_Rela) <= r.size;
		     k += sizeof(Elf64_Rela)) {
			Elf64_Rela rel;
			uint32_t type;

			memcpy(&rel, r.data + k, sizeof(rel));
			type = ELF64_R_TYPE(rel.r_info);
			if ((type != R_X86_64_JUMP_SLOT &&
			     type != R_X86_64_GLOB_DAT) ||
			    !ELF64_R_SYM(rel.r_info))
				continue;
			if (util__grow((void **)&v, &cap, n + 1, sizeof(*v))) {
				free(v);
				return -ENOMEM;
			}
			v[n].addr = rel.r_offset;
			v[n].sym = ELF64_R_SYM(rel.r_info);
			n++;
		}
	}
	if (n)
		qsort(v, n, sizeof(*v), got_cmp);
	*out = v;
	*nr = n;
	return 0;
}

static const struct got_slot *find_got_slot(const struct got_slot *v,
					    size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].addr == addr ? &v[lo] : NULL;
}

int symtab__add_plt(struct symtab *s, const struct elfread *e)
{
	static const char *plts[] = { ".plt", ".plt.sec", ".plt.got" };
	struct got_slot *slots = NULL;
	size_t nslots = 0, i;
	int added = 0, err;

	if (elfread__machine(e) != EM_X86_64 || !elfread__is_64(e))
		return 0;
	err = collect_got_slots(e, &slots, &nslots);
	if (err || !nslots) {
		free(slots);
		return err;
	}
	for (i = 0; i < sizeof(plts) / sizeof(plts[0]); i++) {
		struct elfread_section p;
		uint64_t ent, off;

		if (elfread__section(e, plts[i], &p) || !p.data)
			continue;
		ent = p.entsize >= 8 && p.entsize <= 64 ? p.entsize : 16;
		for (off = 0; off + ent <= p.size; off += ent) {
			const uint8_t *b = p.data + off;
			const struct got_slot *g;
			struct elfread_sym sym;
			char name[512];
			uint64_t k;
			int32_t disp;

			/* jmp *disp(%rip), maybe after endbr64 / bnd. */
			for (k = 0; k + 6 <= ent; k++)
				if (b[k] == 0xff && b[k + 1] == 0x25)
					break;
			if (k + 6 > ent)
				continue;
			memcpy(&disp, b + k + 2, 4);
			g = find_got_slot(slots, nslots,
					  p.vaddr + off + k + 6 + (int64_t)disp);
			if (!g || elfread__symbol(e, SHT_DYNSYM, g->sym, &sym) ||
			    !sym.name[0])
				continue;
			snprintf(name, sizeof(name), "%s@plt", sym.name);
			err = symtab__add(s, name, p.vaddr + off, ent, 0,
					  STB_GLOBAL);
			if (err) {
				free(slots);
				return err;
			}
			added++;
		}
	}
	free(slots);
	return added;
}

static size_t leading_underscores(const char *n)
{
	size_t k = 0;

	while (n[k] == '_')
		k++;
	return k;
}

/*
 * glibc's internal aliases of public functions (__GI___lll_lock_wait for
 * __lll_lock_wait, __libc_recv and __GI___recv for recv, _IO_fwrite for
 * fwrite): a profile shows the name a user calls.
 */
static int is_internal_alias(const char *n)
{
	return !strncmp(n, "__GI_", 5) || !strncmp(n, "__libc_", 7) ||
	       !strncmp(n, "_IO_", 4);
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
	size_t ua, ub, la, lb;
	int ia, ib;

	if (!!a->size != !!b->size)
		return a->size ? -1 : 1;
	if (a->label != b->label)
		return a->label ? 1 : -1;
	ia = is_internal_alias(na);
	ib = is_internal_alias(nb);
	if (ia != ib)
		return ia ? 1 : -1;
	if (bind_rank(a->bind) != bind_rank(b->bind))
		return bind_rank(a->bind) < bind_rank(b->bind) ? -1 : 1;
	ua = leading_underscores(na);
	ub = leading_underscores(nb);
	if (ua != ub)
		return ua < ub ? -1 : 1;
	la = strlen(na);
	lb = strlen(nb);
	if (la != lb)
		return la > lb ? -1 : 1;
	return strcmp(na, nb);
}

/* qsort has no context argument: the table being sorted. */
static const struct symtab *sort_tab;

static int sym_cmp(const void *pa, const void *pb)
{
	const struct symtab_sym *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return sym_better(sort_tab, a, b);
}

struct sym_key {
	uint64_t start;
	size_t idx;
};

/*
 * Sort s->syms by start and keep the best symbol of each start (the first
 * of the best in insertion order, as the stable comparison sort did): a
 * stable LSD radix sort of (start, index) keys, 11 bits a pass, skipping
 * the passes where every key has the same digit, then one sym_better()
 * scan per start. 0, or -ENOMEM (s untouched).
 */
static int sort_by_start(struct symtab *s)
{
	size_t n = s->nr, i, out = 0, cnt[2048];
	struct sym_key *k, *tmp;
	struct symtab_sym *syms;
	uint64_t diff = 0;
	unsigned shift;

	k = malloc(n * sizeof(*k));
	tmp = malloc(n * sizeof(*tmp));
	syms = malloc(n * sizeof(*syms));
	if (!k || !tmp || !syms) {
		free(k);
		free(tmp);
		free(syms);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		k[i].start = s->syms[i].start;
		k[i].idx = i;
		diff |= k[i].start ^ k[0].start;
	}
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
	for (i = 0; i < n;) {
		size_t j = i + 1, best = k[i].idx;

		for (; j < n && k[j].start == k[i].start; j++)
			if (sym_better(s, &s->syms[k[j].idx],
				       &s->syms[best]) < 0)
				best = k[j].idx;
		syms[out++] = s->syms[best];
		i = j;
	}
	free(k);
	free(tmp);
	free(s->syms);
	s->syms = syms;
	s->nr = out;
	s->cap = n;
	return 0;
}

int symtab__finish(struct symtab *s)
{
	size_t i, out = 0;

	symtab__drop_dem(s);
	if (s->nr && sort_by_start(s) < 0) {
		/* No memory for the keys: the comparison sort, in place. */
		sort_tab = s;
		qsort(s->syms, s->nr, sizeof(*s->syms), sym_cmp);
		sort_tab = NULL;
		/* Keep the best (first after sorting) of each start. */
		for (i = 0; i < s->nr; i++) {
			if (out && s->syms[out - 1].start == s->syms[i].start)
				continue;
			s->syms[out++] = s->syms[i];
		}
		s->nr = out;
	}
	/* A label inside a sized function (a local entry point of assembly
	 * code) must not cut the function's name short: drop it. */
	{
		uint64_t cover = 0;

		for (i = 0, out = 0; i < s->nr; i++) {
			struct symtab_sym *y = &s->syms[i];

			if (y->label && y->start < cover)
				continue;
			if (y->size && y->start + y->size > cover)
				cover = y->start + y->size;
			s->syms[out++] = *y;
		}
		s->nr = out;
	}
	for (i = 0; i < s->nr; i++) {
		struct symtab_sym *y = &s->syms[i];

		if (y->size) {
			y->end = y->start + y->size;
			continue;
		}
		/* Size 0 (hand-written assembly): up to the next symbol,
		 * but never past its section. */
		y->end = i + 1 < s->nr ? s->syms[i + 1].start : UINT64_MAX;
		if (y->limit && y->limit < y->end)
			y->end = y->limit;
		if (y->end == UINT64_MAX)
			y->end = y->start + 1;
	}
	free(s->starts);
	s->starts = NULL;
	if (s->nr) {
		s->dem = calloc(s->nr, sizeof(*s->dem));
		s->starts = malloc(s->nr * sizeof(*s->starts));
		if (!s->dem || !s->starts)
			return -ENOMEM;
		for (i = 0; i < s->nr; i++)
			s->starts[i] = s->syms[i].start;
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
	return s->nr;
}

static const char *symtab__name(struct symtab *s, size_t i)
{
	const char *raw = s->strs + s->syms[i].name;

	if (s->no_demangle || !s->dem)
		return raw;
	if (!s->dem[i]) {
		char *d = symbolize__demangle(raw);

		if (d && !s->full_names)
			symbolize__cxx_short(d);

		s->dem[i] = d ? d : not_mangled;
	}
	return s->dem[i] == not_mangled ? raw : s->dem[i];
}

int symtab__lookup(struct symtab *s, uint64_t vaddr, const char **name,
		   uint64_t *offset, uint64_t *start)
{
	const uint64_t *base;
	size_t n, lo, k;

	if (!s->finished || !s->nr)
		return -ENOENT;
	/*
	 * Branch-free binary search (the compiler emits cmov): the lookup
	 * address is random, so a branchy search mispredicts at half of its
	 * steps, which was most of its cost.
	 */
	base = s->starts;
	n = s->nr;
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
		const struct symtab_sym *y = &s->syms[lo - 1 - k];

		if (vaddr < y->end) {
			*name = symtab__name(s, lo - 1 - k);
			*offset = vaddr - y->start;
			if (start)
				*start = y->start;
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
	n = symtab__add_elf(s, e, SHT_DYNSYM);
	if (n == -ENOMEM)
		goto err_out;
	if (n > 0)
		s->sources |= SYMSRC_DYNSYM;
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

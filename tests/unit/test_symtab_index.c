// SPDX-License-Identifier: MIT
/*
 * The lazily finished symtab index against a plain reference: random
 * tables (aliases at one address, sizes 0 and covering, section ends,
 * code labels and versioned names through an ELF image made here, tables
 * crowded into a few buckets or spread over the address space), looked
 * up at every start, around every end and at random addresses; each
 * answer must be the one a fully sorted table gives.
 */
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/elfread.h"
#include "symbols/symbolize.h"
#include "testlib.h"

/* ---- the reference: everything sorted up front, as the rules say ---- */

struct rsym {
	uint64_t start, size, limit;
	uint8_t bind, label;
	const char *name; /* as shown (no version) */
	size_t idx;	  /* order of addition */
};

struct rent {
	const struct rsym *y;
	uint64_t end;
};

static size_t underscores(const char *n)
{
	size_t k = 0;

	while (n[k] == '_')
		k++;
	return k;
}

static int internal(const char *n)
{
	return !strncmp(n, "__GI_", 5) || !strncmp(n, "__libc_", 7) ||
	       !strncmp(n, "_IO_", 4);
}

static int brank(uint8_t b)
{
	return b == STB_GLOBAL ? 0 : b == STB_WEAK ? 1 : 2;
}

static int ref_better(const struct rsym *a, const struct rsym *b)
{
	if (!!a->size != !!b->size)
		return a->size ? -1 : 1;
	if (a->label != b->label)
		return a->label ? 1 : -1;
	if (internal(a->name) != internal(b->name))
		return internal(a->name) ? 1 : -1;
	if (brank(a->bind) != brank(b->bind))
		return brank(a->bind) < brank(b->bind) ? -1 : 1;
	if (underscores(a->name) != underscores(b->name))
		return underscores(a->name) < underscores(b->name) ? -1 : 1;
	if (strlen(a->name) != strlen(b->name))
		return strlen(a->name) > strlen(b->name) ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int by_start(const void *pa, const void *pb)
{
	const struct rsym *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Sorts r[n] in place; returns the entries (nent of them). */
static struct rent *ref_build(struct rsym *r, size_t n, size_t *nent)
{
	struct rent *e = calloc(n ? n : 1, sizeof(*e));
	uint64_t cover = 0;
	size_t i, j, k, out = 0;

	qsort(r, n, sizeof(*r), by_start);
	for (i = 0; i < n; i = j) {
		const struct rsym *best = &r[i];
		uint64_t gend = 0;

		for (j = i; j < n && r[j].start == r[i].start; j++) {
			if (ref_better(&r[j], best) < 0)
				best = &r[j];
			if (r[j].size && r[j].start + r[j].size > gend)
				gend = r[j].start + r[j].size;
		}
		/* a label inside any sized symbol that starts before it */
		if (!(best->label && best->start < cover))
			e[out++].y = best;
		if (gend > cover)
			cover = gend;
	}
	for (k = 0; k < out; k++) {
		const struct rsym *y = e[k].y;
		uint64_t end;

		if (y->size) {
			e[k].end = y->start + y->size;
			continue;
		}
		end = k + 1 < out ? e[k + 1].y->start : UINT64_MAX;
		if (y->limit && y->limit < end)
			end = y->limit;
		e[k].end = end == UINT64_MAX ? y->start + 1 : end;
	}
	*nent = out;
	return e;
}

static int ref_lookup(const struct rent *e, size_t n, uint64_t v,
		      const struct rent **hit)
{
	size_t lo = 0, hi = n, k;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e[mid].y->start <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = 0; k < 4 && lo > k; k++)
		if (v < e[lo - 1 - k].end) {
			*hit = &e[lo - 1 - k];
			return 0;
		}
	return -ENOENT;
}

/* ---- the comparison ---- */

static uint64_t rnd_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* Number of addresses whose answers differ (0: all agree). */
static size_t compare(struct symtab *s, struct rsym *r, size_t n,
		      uint64_t lo, uint64_t span, char *why, size_t why_len)
{
	size_t nent, i, k, bad = 0;
	struct rent *e = ref_build(r, n, &nent);

	for (i = 0; i < 4 * n + 200; i++) {
		const struct rsym *y = &r[i % (n ? n : 1)];
		const struct rent *hit = NULL;
		const char *name = NULL;
		uint64_t v, off = 0, start = 0;
		int want, got;

		switch (n ? i % 5 : 4) {
		case 0: v = y->start; break;
		case 1: v = y->start - 1; break;
		case 2: v = y->start + y->size; break;
		case 3: v = y->start + y->size - 1; break;
		default: v = lo - 16 + rnd() % (span + 64); break;
		}
		want = ref_lookup(e, nent, v, &hit);
		got = symtab__lookup(s, v, &name, &off, &start);
		if (want != got ||
		    (!got && (strcmp(name, hit->y->name) ||
			      start != hit->y->start ||
			      off != v - hit->y->start))) {
			if (!bad++)
				snprintf(why, why_len,
					 "at 0x%llx: want %d %s@0x%llx, got %d %s@0x%llx",
					 (unsigned long long)v, want,
					 hit ? hit->y->name : "-",
					 hit ? (unsigned long long)hit->y->start : 0ull,
					 got, got ? "-" : name,
					 (unsigned long long)start);
		}
	}
	k = symtab__nr(s);
	if (k != nent && !bad++)
		snprintf(why, why_len, "symtab__nr %zu, want %zu", k, nent);
	free(e);
	return bad;
}

static const char *pool[] = {
	"fn", "fn_global", "_fn", "__fn", "__GI_fn", "__libc_fn", "_IO_fn",
	"memcpy", "__memcpy_avx", "a", "bb", "ccc", "__GI___lll_lock",
	"__lll_lock", "_IO_", "__GI_", "x_y_z",
};
#define POOL (sizeof(pool) / sizeof(pool[0]))

/* n symbols by symtab__add in [lo, lo + span). */
static size_t run_added(size_t n, uint64_t lo, uint64_t span, int wide,
			char *why, size_t why_len)
{
	struct rsym *r = calloc(n ? n : 1, sizeof(*r));
	struct symtab *s = symtab__new(1);
	static const uint8_t binds[] = { STB_GLOBAL, STB_WEAK, STB_LOCAL };
	size_t i, bad;

	for (i = 0; i < n; i++) {
		uint64_t sz = rnd() % 4;

		r[i].start = lo + rnd() % span;
		if (wide && rnd() % 8 == 0)
			r[i].start = rnd() | 1; /* anywhere */
		r[i].size = sz == 0 ? 0 : sz == 3 ? rnd() % (span / 4 + 1)
						  : rnd() % 64;
		if (r[i].start + r[i].size < r[i].start)
			r[i].size = 0;
		r[i].limit = rnd() % 3 ? 0 : r[i].start + rnd() % 256;
		if (r[i].limit <= r[i].start)
			r[i].limit = 0;
		r[i].bind = binds[rnd() % 3];
		r[i].name = pool[rnd() % POOL];
		r[i].idx = i;
		if (symtab__add(s, r[i].name, r[i].start, r[i].size,
				r[i].limit, r[i].bind))
			abort();
	}
	if (symtab__finish(s))
		abort();
	bad = compare(s, r, n, lo, span, why, why_len);
	symtab__free(s);
	free(r);
	return bad;
}

TEST(symtab_index_should_answer_as_a_sorted_table_for_added_symbols)
{
	static const struct {
		size_t n;
		uint64_t lo, span;
		int wide;
	} cases[] = {
		{ 0, 0x1000, 0x100, 0 },   { 1, 0x1000, 1, 0 },
		{ 7, 0x1000, 0x40, 0 },	   { 300, 0x400000, 0x20000, 0 },
		{ 3000, 0x26000, 0x150000, 0 }, /* glibc-like spread */
		{ 2000, 0x1000, 48, 0 },   /* crowded: big buckets */
		{ 2000, 0x1000, 0x10000, 1 }, /* a few far outliers */
	};
	char why[256] = "";
	size_t c, round;

	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
		for (round = 0; round < 5; round++) {
			size_t bad = run_added(cases[c].n, cases[c].lo,
					       cases[c].span, cases[c].wide,
					       why, sizeof(why));

			CHECK_MSG(!bad, "case %zu round %zu: %zu wrong; first %s",
				  c, round, bad, why);
		}
}

/* ---- code labels and versions come from ELF symbol tables ---- */

#define TEXT_ADDR 0x1000ull
#define TEXT_SIZE 0x8000ull

struct img {
	uint8_t *b;
	size_t len, cap;
};

static size_t img_put(struct img *m, const void *p, size_t len)
{
	size_t at = m->len;

	if (m->len + len > m->cap) {
		m->cap = (m->len + len) * 2;
		m->b = realloc(m->b, m->cap);
		if (!m->b)
			abort();
	}
	memcpy(m->b + at, p, len);
	m->len += len;
	return at;
}

/*
 * An ET_DYN image: .text (NOBITS, as in a debug file, executable),
 * .data (NOBITS), .symtab of syms[n] with the names in strs, .strtab,
 * .shstrtab.
 */
static struct elfread *make_elf(const Elf64_Sym *syms, size_t n,
				const char *strs, size_t strs_len)
{
	static const char shstr[] = "\0.text\0.data\0.symtab\0.strtab\0.shstrtab";
	Elf64_Shdr sh[6];
	Elf64_Ehdr eh;
	Elf64_Sym null_sym;
	struct img m = { 0 };
	size_t sym_off, str_off, shstr_off, sh_off;
	struct elfread *e;

	memset(&eh, 0, sizeof(eh));
	img_put(&m, &eh, sizeof(eh));
	memset(&null_sym, 0, sizeof(null_sym));
	sym_off = img_put(&m, &null_sym, sizeof(null_sym));
	img_put(&m, syms, n * sizeof(*syms));
	str_off = img_put(&m, strs, strs_len);
	shstr_off = img_put(&m, shstr, sizeof(shstr));
	while (m.len % 8)
		img_put(&m, "", 1);
	memset(sh, 0, sizeof(sh));
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_NOBITS,
			      .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
			      .sh_addr = TEXT_ADDR, .sh_size = TEXT_SIZE };
	sh[2] = (Elf64_Shdr){ .sh_name = 7, .sh_type = SHT_NOBITS,
			      .sh_flags = SHF_ALLOC | SHF_WRITE,
			      .sh_addr = 0x20000, .sh_size = 0x1000 };
	sh[3] = (Elf64_Shdr){ .sh_name = 13, .sh_type = SHT_SYMTAB,
			      .sh_offset = sym_off,
			      .sh_size = (n + 1) * sizeof(Elf64_Sym),
			      .sh_link = 4, .sh_info = 1,
			      .sh_entsize = sizeof(Elf64_Sym) };
	sh[4] = (Elf64_Shdr){ .sh_name = 21, .sh_type = SHT_STRTAB,
			      .sh_offset = str_off, .sh_size = strs_len };
	sh[5] = (Elf64_Shdr){ .sh_name = 29, .sh_type = SHT_STRTAB,
			      .sh_offset = shstr_off, .sh_size = sizeof(shstr) };
	sh_off = img_put(&m, sh, sizeof(sh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_shoff = sh_off;
	eh.e_ehsize = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 6;
	eh.e_shstrndx = 5;
	memcpy(m.b, &eh, sizeof(eh));
	e = elfread__open_mem_owned(m.b, m.len);
	if (!e)
		free(m.b);
	return e;
}

static const char *epool[] = {
	"fn", "fn@@V_2", "fn@V_1", "_start", "_dl_start_user", ".Lloop",
	"$x", "__GI_fn", "__libc_fn@@GLIBC_2.34", "@odd", "entry", "_IO_x",
	"__memcpy_avx_unaligned_erms", "memcpy@@GLIBC_2.14", "local_label",
};
#define EPOOL (sizeof(epool) / sizeof(epool[0]))

static size_t run_elf(size_t n, uint64_t span, char *why, size_t why_len)
{
	Elf64_Sym *es = calloc(n ? n : 1, sizeof(*es));
	struct rsym *r = calloc(n ? n : 1, sizeof(*r));
	size_t off[EPOOL], i, nr = 0, bad;
	char strs[1024];
	size_t strs_len = 1;
	struct elfread *e;
	struct symtab *s;

	strs[0] = 0;
	for (i = 0; i < EPOOL; i++) {
		off[i] = strs_len;
		memcpy(strs + strs_len, epool[i], strlen(epool[i]) + 1);
		strs_len += strlen(epool[i]) + 1;
	}
	for (i = 0; i < n; i++) {
		static const uint8_t binds[] = { STB_GLOBAL, STB_WEAK, STB_LOCAL };
		size_t p = rnd() % EPOOL;
		unsigned t = (unsigned)(rnd() % 10);
		uint8_t type = t < 6 ? STT_FUNC : t < 7 ? STT_GNU_IFUNC :
			       t < 9 ? STT_NOTYPE : STT_OBJECT;
		uint64_t sz = rnd() % 4;
		const char *at;

		es[i].st_name = (uint32_t)off[p];
		es[i].st_info = ELF64_ST_INFO(binds[rnd() % 3], type);
		es[i].st_shndx = type == STT_OBJECT ? 2 : rnd() % 16 ? 1 : 0;
		es[i].st_value = type == STT_OBJECT ? 0x20000 + rnd() % 0x1000 :
				 TEXT_ADDR + rnd() % span;
		es[i].st_size = sz == 0 ? 0 : sz == 3 ? rnd() % (span / 3 + 1)
						      : rnd() % 48;
		/* what the table must hold: code, named, defined */
		if (type == STT_OBJECT || !es[i].st_shndx ||
		    (type == STT_NOTYPE &&
		     (epool[p][0] == '$' || !strncmp(epool[p], ".L", 2))))
			continue;
		r[nr].start = es[i].st_value;
		r[nr].size = es[i].st_size;
		r[nr].limit = TEXT_ADDR + TEXT_SIZE;
		r[nr].bind = ELF64_ST_BIND(es[i].st_info);
		r[nr].label = type == STT_NOTYPE;
		at = strchr(epool[p], '@');
		r[nr].name = at && at != epool[p] ?
			strndup(epool[p], (size_t)(at - epool[p])) :
			strdup(epool[p]);
		r[nr].idx = nr;
		nr++;
	}
	e = make_elf(es, n, strs, strs_len);
	s = symtab__new(1);
	if (!e || !s || symtab__add_elf(s, e, SHT_SYMTAB) != (int)nr ||
	    symtab__finish(s)) {
		snprintf(why, why_len, "could not build the table");
		bad = 1;
	} else {
		elfread__free(e); /* names must outlive the image */
		e = NULL;
		bad = compare(s, r, nr, TEXT_ADDR, span, why, why_len);
	}
	symtab__free(s);
	elfread__free(e);
	for (i = 0; i < nr; i++)
		free((char *)r[i].name);
	free(r);
	free(es);
	return bad;
}

TEST(symtab_index_should_answer_as_a_sorted_table_for_elf_symbols)
{
	static const struct {
		size_t n;
		uint64_t span;
	} cases[] = {
		{ 1, 16 }, { 12, 0x100 }, { 400, 0x2000 }, { 3000, 0x7000 },
		{ 1500, 40 }, /* crowded */
	};
	char why[256] = "";
	size_t c, round;

	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
		for (round = 0; round < 5; round++) {
			size_t bad = run_elf(cases[c].n, cases[c].span, why,
					     sizeof(why));

			CHECK_MSG(!bad, "case %zu round %zu: %zu wrong; first %s",
				  c, round, bad, why);
		}
}

TEST(symtab_index_should_keep_a_label_only_outside_sized_functions)
{
	/* f [0x1000, 0x1100) sized; a label inside it names nothing; a
	 * label after it names code up to the next symbol. */
	static const char strs[] = "\0f\0inner\0after\0g";
	Elf64_Sym es[4];
	struct elfread *e;
	struct symtab *s = symtab__new(1);
	const char *name;
	uint64_t off, start;

	memset(es, 0, sizeof(es));
	es[0] = (Elf64_Sym){ .st_name = 1, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
			     .st_shndx = 1, .st_value = 0x1000, .st_size = 0x100 };
	es[1] = (Elf64_Sym){ .st_name = 3, .st_info = ELF64_ST_INFO(STB_LOCAL, STT_NOTYPE),
			     .st_shndx = 1, .st_value = 0x1080 };
	es[2] = (Elf64_Sym){ .st_name = 9, .st_info = ELF64_ST_INFO(STB_LOCAL, STT_NOTYPE),
			     .st_shndx = 1, .st_value = 0x1200 };
	es[3] = (Elf64_Sym){ .st_name = 15, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
			     .st_shndx = 1, .st_value = 0x1300, .st_size = 0x10 };
	e = make_elf(es, 4, strs, sizeof(strs));
	CHECK(e && s);
	CHECK_INT(symtab__add_elf(s, e, SHT_SYMTAB), 4);
	CHECK_INT(symtab__finish(s), 0);
	CHECK_INT(symtab__lookup(s, 0x10a0, &name, &off, &start), 0);
	CHECK_STR(name, "f");
	CHECK_U64(off, 0xa0);
	CHECK_INT(symtab__lookup(s, 0x1100, &name, &off, &start), -ENOENT);
	CHECK_INT(symtab__lookup(s, 0x12ff, &name, &off, &start), 0);
	CHECK_STR(name, "after");
	CHECK_U64(start, 0x1200);
	CHECK_INT(symtab__lookup(s, 0x1305, &name, &off, &start), 0);
	CHECK_STR(name, "g");
	CHECK_INT((int)symtab__nr(s), 3);
	symtab__free(s);
	elfread__free(e);
}

TEST_MAIN()

// SPDX-License-Identifier: MIT
/* Symbol tables and debug-file lookup (src/symbols/symbolize.h). */
#include "symbols/symbolize.h"
#include "util.h"

#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/elfread.h"
#include "runtimes/runtime.h"
#include "symbols/symtab_int.h"

/* MiniDebugInfo images are small (symbols only); refuse bombs. */
#define MINIDEBUG_MAX (64u << 20)

struct symtab *symtab__new(int no_demangle)
{
	struct symtab *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->no_demangle = no_demangle;
	return s;
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

		/* the header only: reading the bytes would put all of a big
		 * binary's sections (chromium's 282 MB) in memory */
		if (elfread__section_header_at(e, i, &sec))
			continue;
		/* NOBITS sections of debug files keep their addresses. */
		if (sec.vaddr + sec.size > sec.vaddr)
			si->end[i] = sec.vaddr + sec.size;
		si->exec[i] = !!(sec.flags & SHF_EXECINSTR);
	}
	return 0;
}

/* What symtab__add_elf() reads one table with. */
struct add_ctx {
	struct sec_info si;
	const char *strs;
	uint64_t strs_len;
	uint32_t base;		/* of the copied string table in s->strs */
	struct symtab_sym *out;	/* the next free slot of s->syms */
};

/* Append r when it is a function (or a code label) with a valid name. */
static inline void add_raw(struct add_ctx *c, const struct elfread_raw_sym *r)
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
 * Keep only the names of the symbols syms[first..nr) the copied string
 * table at base holds: most of a table's strings name other symbols
 * (objects, locals, source files), and the table is kept as long as its
 * binary. A name two symbols share (aliases) is copied once.
 */
static void compact_names(struct symtab *s, size_t first, uint32_t base)
{
	size_t need = 0, at = 0, len = s->strs_len - base;
	uint32_t last_old = UINT32_MAX, last_new = 0;
	char *buf;

	for (size_t i = first; i < s->nr; i++)
		need += strlen(s->strs + s->syms[i].name) + 1;
	if (need >= len || !(buf = malloc(need ? need : 1)))
		return; /* (nothing to save, or no memory: the whole copy stays) */
	for (size_t i = first; i < s->nr; i++) {
		struct symtab_sym *y = &s->syms[i];
		size_t l;

		if (y->name == last_old) {
			y->name = last_new;
			continue;
		}
		l = strlen(s->strs + y->name) + 1;
		memcpy(buf + at, s->strs + y->name, l);
		last_old = y->name;
		last_new = y->name = base + (uint32_t)at;
		at += l;
	}
	memcpy(s->strs + base, buf, at);
	s->strs_len = base + at;
	free(buf);
}

/* Give back the room reserved for symbols and strings not kept. */
static void symtab__shrink(struct symtab *s)
{
	void *p;

	if (s->cap > s->nr && (p = realloc(s->syms, (s->nr ? s->nr : 1) * sizeof(*s->syms)))) {
		s->syms = p;
		s->cap = s->nr ? s->nr : 1;
	}
	if (s->strs_cap > s->strs_len && (p = realloc(s->strs, s->strs_len ? s->strs_len : 1))) {
		s->strs = p;
		s->strs_cap = s->strs_len ? s->strs_len : 1;
	}
}

/*
 * The function symbols of one table, read straight from its entries (the
 * bounds were checked by elfread__symbol_table(); names below strs_len
 * are terminated). The string table is copied whole, once, then cut to
 * the names kept (compact_names()). Version suffixes are cut when a name
 * is shown (symtab__name()), not here.
 */
int symtab__add_elf(struct symtab *s, const struct elfread *e, uint32_t sht)
{
	struct elfread_symtab t;
	struct add_ctx c;
	struct elfread_raw_sym r;
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
	for (i = 0; i < t.nr; i++) {
		elfread_raw_sym__read(t.is_64, t.syms, i, &r);
		add_raw(&c, &r);
	}
	added = (size_t)(c.out - (s->syms + s->nr));
	s->nr += added;
	compact_names(s, s->nr - added, c.base);
	free(c.si.end);
	free(c.si.exec);
	return (int)added;
}

unsigned symtab__sources(const struct symtab *s)
{
	return s->sources;
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
	/* a runtime's own names (a Go binary linked with -s still names its
	 * functions in its .gopclntab) */
	for (size_t i = 0; i < runtime__count(); i++) {
		const struct runtime_ops *ops = runtime__get(i);

		if (!ops->add_symbols)
			continue;
		n = ops->add_symbols(s, e, have_full);
		if (n == -ENOMEM)
			goto err_out;
		if (n > 0)
			s->sources |= ops->symsrc;
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
	symtab__shrink(s);
	if (symtab__finish(s))
		goto err_out;
	return s;

err_out:
	symtab__free(s);
	errno = ENOMEM;
	return NULL;
}

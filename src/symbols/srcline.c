// SPDX-License-Identifier: MIT
/* Source lines and inline frames from DWARF via libdw. See src/symbols/srcline.h. */
#include "symbols/srcline.h"

#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/dwarfimage.h"
#include "symbols/dwarfscope.h"
#include "model/elfread.h"
#include "symbols/symbolize.h"
#include "util.h"

/* One resolved address. */
struct sl_entry {
	uint64_t pc;
	struct srcline_level *lv; /* malloc()ed, n of them */
	uint32_t n;
	int16_t rc;
	uint8_t used;
};

/* A string of the pool made from one in the DWARF (its copy, its
 * demangled form, its path joined to its CU's directory), by the address
 * of that string: valid while that Dwarf is open. */
struct sl_name {
	const char *key;
	const char *name; /* the pool's */
};

struct sl_names {
	struct sl_name *v;
	size_t nr, cap; /* cap: a power of two */
};

/* The strings the levels point to, one copy of each, owned: they outlive
 * the Dwarf they came from (srcline__close_dwarf()). */
struct sl_chunk {
	struct sl_chunk *next;
	size_t used, size;
	char data[];
};

struct sl_pool {
	const char **v; /* by content; cap: a power of two */
	size_t nr, cap;
	struct sl_chunk *chunks;
};

struct srcline {
	const struct elfread *e;
	char *path;
	struct srcline_opts opts;
	char *debug_root;
	int opened;
	struct elfread *dbg; /* separate debug file, when the DWARF is there */
	struct dwarf_image *img; /* its sections inflated, when compressed */
	Dwarf *dw;
	struct sl_entry *tab;
	size_t nr, cap; /* cap: a power of two (0 before the first insert) */
	/* by the address of a string in the Dwarf: its pool copy (plain), its
	 * demangled form's, its full path's; emptied when the Dwarf ends */
	struct sl_names plain, demangled, paths;
	struct dwarfscope scopes;
	struct sl_pool pool;
	int oom; /* a string of this resolve could not be kept */
	struct srcline_stats st;
};

struct srcline *srcline__new(const struct elfread *e, const char *path,
			     const struct srcline_opts *opts)
{
	struct srcline *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->e = e;
	if (opts)
		s->opts = *opts;
	s->path = path ? strdup(path) : NULL;
	s->debug_root = s->opts.debug_root ? strdup(s->opts.debug_root) : NULL;
	if ((path && !s->path) || (s->opts.debug_root && !s->debug_root)) {
		srcline__free(s);
		errno = ENOMEM;
		return NULL;
	}
	s->opts.debug_root = s->debug_root;
	return s;
}

static void names_clear(struct sl_names *m)
{
	free(m->v);
	m->v = NULL;
	m->nr = m->cap = 0;
}

static void pool_free(struct sl_pool *p)
{
	while (p->chunks) {
		struct sl_chunk *c = p->chunks;

		p->chunks = c->next;
		free(c);
	}
	free(p->v);
	memset(p, 0, sizeof(*p));
}

/* What s holds of its Dwarf (the strings' maps keyed by addresses in it,
 * the scope index, libdw's own memory, the image, the debug file),
 * freed: its answers and their strings stay. */
static void end_dwarf(struct srcline *s)
{
	names_clear(&s->plain);
	names_clear(&s->demangled);
	names_clear(&s->paths);
	dwarfscope__clear(&s->scopes);
	if (s->dw)
		dwarf_end(s->dw);
	s->dw = NULL;
	dwarf_image__free(s->img);
	s->img = NULL;
	elfread__free(s->dbg);
	s->dbg = NULL;
}

void srcline__free(struct srcline *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->cap; i++)
		free(s->tab[i].lv);
	free(s->tab);
	end_dwarf(s);
	pool_free(&s->pool);
	free(s->path);
	free(s->debug_root);
	free(s);
}

int srcline__is_open(const struct srcline *s)
{
	return s && s->opened && (s->dw || s->dbg);
}

int srcline__close_dwarf(struct srcline *s)
{
	if (!srcline__is_open(s))
		return 0;
	end_dwarf(s);
	/* the binary's own DWARF pages read for libdw (none when its image
	 * was made: dwarf_of gave them back then) */
	elfread__drop_pages(s->e, ELFREAD_DROP_DWARF);
	s->opened = 0; /* opened again at the next address not cached */
	s->st.closes++;
	return 1;
}

void srcline__stats(const struct srcline *s, struct srcline_stats *out)
{
	*out = s->st;
}

int srcline__trim(struct srcline *s)
{
	return s ? dwarf_image__trim(s->img) : 0;
}

static int has_debug_info(const struct elfread *e)
{
	struct elfread_section sec;

	return !elfread__section_header(e, ".debug_info", &sec) && sec.size > 0 &&
	       sec.type != SHT_NOBITS /* stripped into a debug file */;
}

/* A Dwarf of e: from an inflated image of its debug sections when they
 * are compressed (kept in the DWARF cache for the next run), else (or
 * when the image cannot be made) from e as it is, which libdw inflates
 * itself. */
static Dwarf *dwarf_of(struct srcline *s, const struct elfread *e)
{
	uint8_t id[ELFREAD_BUILD_ID_MAX];
	struct dwarf_image_key key = { .id = id };
	char dir[PATH_MAX];
	/* nothing of the file's DWARF read yet: a stored image needs only
	 * the ELF header (read at open); elfread__fill_dwarf below when it
	 * is made or libdw reads the file (reading it first cost every
	 * cached open the whole DWARF in private memory, kept until the
	 * binary was freed: 10 MiB for libc's debug file, 29 for a -g
	 * libpython; BENCHMARKS.md, agent memory) */
	Elf *elf = elfread__libelf_some(e, 0);
	Dwarf *dw;
	size_t len = 0;
	unsigned flags = s->opts.lean_dwarf ? DWARF_IMAGE_LEAN : 0;
	int cached;

	cached = !dwarf_image__cache_dir(dir, sizeof(dir)) &&
		 !elfread__build_id(e, id, &key.id_len);
	len = elfread__size(e);
	key.file_len = len;
	/* a stored image needs nothing of the file's DWARF read */
	if (cached && !dwarf_image__load_cached(elf, dir, &key, flags, &s->img)) {
		dw = dwarf_begin_elf(dwarf_image__elf(s->img), DWARF_C_READ, NULL);
		if (dw) {
			s->st.images++;
			s->st.images_cached++;
			return dw;
		}
		dwarf_image__free(s->img);
		s->img = NULL;
	}
	/* a file that shrank while read: no DWARF from it (what is gone
	 * reads as zeros) */
	if (elfread__fill_dwarf(e))
		return NULL;
	if (!dwarf_image__open_cached_flags(elf, cached ? dir : NULL, cached ? &key : NULL, flags,
					    &s->img)) {
		/* the image holds its own (inflated) copies: the file's
		 * compressed DWARF just read need not stay in memory */
		elfread__drop_pages(e, ELFREAD_DROP_DWARF);
		dw = dwarf_begin_elf(dwarf_image__elf(s->img), DWARF_C_READ, NULL);
		if (dw) {
			s->st.images++;
			s->st.images_cached += (uint64_t)dwarf_image__from_cache(s->img);
			return dw;
		}
		dwarf_image__free(s->img);
		s->img = NULL;
	}
	return dwarf_begin_elf(elf, DWARF_C_READ, NULL);
}

/* The binary's own DWARF, else its debug file's. */
static void srcline__open(struct srcline *s)
{
	char dbg[PATH_MAX];
	unsigned how;

	s->opened = 1;
	s->st.opens++;
	if (has_debug_info(s->e)) {
		s->dw = dwarf_of(s, s->e);
		if (s->dw)
			return;
	}
	if (s->opts.no_debug_files ||
	    symbolize__find_debug_file(s->e, s->path, s->opts.debug_root, dbg,
				       sizeof(dbg), &how))
		return;
	s->dbg = elfread__open(dbg);
	if (!s->dbg || !has_debug_info(s->dbg))
		return;
	s->dw = dwarf_of(s, s->dbg);
}

static size_t ptr_hash(const void *p)
{
	return (size_t)(((uintptr_t)p * 0x9e3779b97f4a7c15ull) >> 20);
}

/* The slot of key in m (its name NULL when new), or NULL on ENOMEM. */
static struct sl_name *names_slot(struct sl_names *m, const char *key)
{
	size_t i, mask;

	if (m->nr * 2 >= m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		struct sl_name *v = calloc(cap, sizeof(*v));

		if (!v)
			return NULL;
		for (i = 0; i < m->cap; i++) {
			size_t j;

			if (!m->v[i].key)
				continue;
			for (j = ptr_hash(m->v[i].key) & (cap - 1); v[j].key; j = (j + 1) & (cap - 1))
				;
			v[j] = m->v[i];
		}
		free(m->v);
		m->v = v;
		m->cap = cap;
	}
	mask = m->cap - 1;
	for (i = ptr_hash(key) & mask; m->v[i].key; i = (i + 1) & mask)
		if (m->v[i].key == key)
			return &m->v[i];
	m->v[i].key = key;
	m->v[i].name = NULL;
	m->nr++;
	return &m->v[i];
}

static size_t str_hash(const char *str, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)str[i]) * 0x100000001b3ull;
	return (size_t)(h ^ (h >> 29));
}

/* str (len bytes) as the pool's copy, made once; NULL on ENOMEM. */
static const char *pool_intern(struct sl_pool *p, const char *str, size_t len)
{
	struct sl_chunk *c = p->chunks;
	size_t i, mask;
	char *copy;

	if ((p->nr + 1) * 2 > p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		const char **v = calloc(cap, sizeof(*v));

		if (!v)
			return NULL;
		for (i = 0; i < p->cap; i++) {
			size_t j;

			if (!p->v[i])
				continue;
			for (j = str_hash(p->v[i], strlen(p->v[i])) & (cap - 1); v[j]; j = (j + 1) & (cap - 1))
				;
			v[j] = p->v[i];
		}
		free(p->v);
		p->v = v;
		p->cap = cap;
	}
	mask = p->cap - 1;
	for (i = str_hash(str, len) & mask; p->v[i]; i = (i + 1) & mask)
		if (!strncmp(p->v[i], str, len) && !p->v[i][len])
			return p->v[i];
	if (!c || c->size - c->used < len + 1) {
		size_t size = len + 1 > 16384 - sizeof(*c) ? len + 1 : 16384 - sizeof(*c);

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->size = size;
		c->used = 0;
		c->next = p->chunks;
		p->chunks = c;
	}
	copy = c->data + c->used;
	memcpy(copy, str, len);
	copy[len] = 0;
	c->used += len + 1;
	p->v[i] = copy;
	p->nr++;
	return copy;
}

/* The pool's copy of dw, a string in the Dwarf, found by its address
 * after the first time; NULL for NULL, or on ENOMEM (s->oom). */
static const char *kept(struct srcline *s, const char *dw)
{
	struct sl_name *e;

	if (!dw)
		return NULL;
	e = names_slot(&s->plain, dw);
	if (e && !e->name)
		e->name = pool_intern(&s->pool, dw, strlen(dw));
	if (!e || !e->name) {
		s->oom = 1;
		return NULL;
	}
	return e->name;
}

/* The demangled (short unless full_names) form of a mangled DWARF name,
 * made once; NULL when it does not demangle, or on ENOMEM (s->oom). */
static const char *demangled(struct srcline *s, const char *mangled)
{
	struct sl_name *e = names_slot(&s->demangled, mangled);
	char *d;

	if (!e) {
		s->oom = 1;
		return NULL;
	}
	if (e->name)
		return e->name;
	d = symbolize__demangle(mangled);
	if (!d)
		return NULL; /* tried, not mangled; tried again next time */
	if (!s->opts.full_names)
		symbolize__cxx_short(d);
	e->name = pool_intern(&s->pool, d, strlen(d));
	free(d);
	if (!e->name)
		s->oom = 1;
	return e->name;
}

/* A file of a line table as the pool's copy; a relative one made
 * absolute with its CU's directory, as addr2line prints it ("/src" + "/"
 * + "lib/x.c"). Made once; NULL for NULL, or on ENOMEM (s->oom). */
static const char *full_path(struct srcline *s, Dwarf_Die *cu, const char *file)
{
	struct sl_name *e;
	const char *dir;
	Dwarf_Attribute a;
	size_t ld, lf;
	char *joined;

	if (!file)
		return NULL;
	e = names_slot(&s->paths, file);
	if (!e) {
		s->oom = 1;
		return NULL;
	}
	if (e->name)
		return e->name;
	dir = file[0] == '/' ? NULL : dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a));
	lf = strlen(file);
	if (!dir || !dir[0]) {
		e->name = pool_intern(&s->pool, file, lf);
	} else {
		ld = strlen(dir);
		joined = malloc(ld + lf + 2);
		if (joined) {
			memcpy(joined, dir, ld);
			joined[ld] = '/';
			memcpy(joined + ld + 1, file, lf + 1);
			e->name = pool_intern(&s->pool, joined, ld + lf + 1);
			free(joined);
		}
	}
	if (!e->name)
		s->oom = 1;
	return e->name;
}

/* A function DIE's name (through DW_AT_abstract_origin/specification),
 * and *sys its mangled linkage name when the name is that demangled. */
static const char *die_name(struct srcline *s, Dwarf_Die *die, const char **sys)
{
	static const unsigned linkage[] = { DW_AT_linkage_name, DW_AT_MIPS_linkage_name };
	Dwarf_Attribute a;
	const char *n, *d;

	*sys = NULL;
	for (size_t i = 0; i < sizeof(linkage) / sizeof(linkage[0]); i++) {
		n = dwarf_formstring(dwarf_attr_integrate(die, linkage[i], &a));
		if (n && n[0] == '_' && n[1] == 'Z') {
			d = demangled(s, n);
			if (!d)
				return kept(s, n); /* it does not demangle */
			*sys = kept(s, n);
			return d;
		}
	}
	return kept(s, dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a)));
}

static int udata_attr(Dwarf_Die *die, unsigned name, Dwarf_Word *out)
{
	Dwarf_Attribute a;

	return dwarf_formudata(dwarf_attr(die, name, &a), out);
}

/* Resolve pc through libdw into lv[SRCLINE_MAX_LEVELS]. */
static int resolve(struct srcline *s, uint64_t pc, struct srcline_level *lv,
		   size_t *nout)
{
	Dwarf_Die cudie, *scopes = NULL, *scopes_v = NULL;
	Dwarf_Die path[DWARFSCOPE_PATH_MAX];
	Dwarf_Files *files = NULL;
	Dwarf_Line *l;
	const char *file = NULL;
	size_t nfiles = 0, n = 0;
	int line = 0, ns, i;

	if (!dwarf_addrdie(s->dw, pc, &cudie))
		return -ENOENT;
	l = dwarf_getsrc_die(&cudie, pc);
	if (l) {
		file = full_path(s, &cudie, dwarf_linesrc(l, NULL, NULL));
		if (dwarf_lineno(l, &line) || line < 0)
			line = 0;
	}
	if (dwarf_getsrcfiles(&cudie, &files, &nfiles))
		files = NULL;
	/*
	 * The innermost scope at pc, then every DIE that holds it (as
	 * eu-addr2line -i walks them: dwarf_getscopes() alone stops at the
	 * innermost inlined instance).
	 */
	ns = s->opts.libdw_scopes ? -1 : dwarfscope__path(&s->scopes, &cudie, pc, path);
	if (ns >= 0) {
		scopes_v = path;
	} else {
		ns = dwarf_getscopes(&cudie, pc, &scopes);
		if (ns > 0) {
			Dwarf_Die inner;

			if (dwarf_offdie(s->dw, dwarf_dieoffset(&scopes[0]), &inner)) {
				free(scopes);
				scopes = NULL;
				ns = dwarf_getscopes_die(&inner, &scopes);
			}
		}
		scopes_v = scopes;
	}
	for (i = 0; i < ns; i++) {
		Dwarf_Die *d = &scopes_v[i];
		int tag = dwarf_tag(d);
		Dwarf_Word w;

		if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
			continue;
		/* keep the room for the outermost function */
		if (n < SRCLINE_MAX_LEVELS - 1 || tag == DW_TAG_subprogram) {
			int decl = 0;

			lv[n].func = die_name(s, d, &lv[n].sys_func);
			lv[n].file = file;
			lv[n].line = (uint32_t)line;
			/* (through DW_AT_abstract_origin/specification) */
			lv[n].start_line = !dwarf_decl_line(d, &decl) && decl > 0 ? (uint32_t)decl : 0;
			n++;
		}
		if (tag == DW_TAG_subprogram)
			break;
		/* the next level's line is this inlined call's */
		file = NULL;
		line = 0;
		if (files && !udata_attr(d, DW_AT_call_file, &w) && w < nfiles)
			file = full_path(s, &cudie, dwarf_filesrc(files, w, NULL, NULL));
		if (!udata_attr(d, DW_AT_call_line, &w) && w <= INT_MAX)
			line = (int)w;
	}
	free(scopes);
	if (!n && l) {
		/* a line, but no function DIE: one nameless level */
		lv[0] = (struct srcline_level){ .func = NULL, .file = file,
						.line = (uint32_t)line };
		n = 1;
	}
	if (!n)
		return -ENOENT;
	*nout = n;
	return 0;
}

static size_t pc_hash(uint64_t pc)
{
	return (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 24);
}

static int grow_tab(struct srcline *s)
{
	size_t cap = s->cap ? s->cap * 2 : 256, i, j;
	struct sl_entry *t;

	if (cap > SIZE_MAX / sizeof(*t))
		return -ENOMEM;
	t = calloc(cap, sizeof(*t));
	if (!t)
		return -ENOMEM;
	for (i = 0; i < s->cap; i++) {
		if (!s->tab[i].used)
			continue;
		for (j = pc_hash(s->tab[i].pc) & (cap - 1); t[j].used; j = (j + 1) & (cap - 1))
			;
		t[j] = s->tab[i];
	}
	free(s->tab);
	s->tab = t;
	s->cap = cap;
	return 0;
}

int srcline__lookup(struct srcline *s, uint64_t pc,
		    const struct srcline_level **levels, size_t *n)
{
	struct srcline_level lv[SRCLINE_MAX_LEVELS];
	struct sl_entry *e;
	size_t i, k = 0;
	int rc;

	s->st.lookups++;
	/* a cached answer needs no Dwarf: it may be closed */
	if (s->cap) {
		for (i = pc_hash(pc) & (s->cap - 1); s->tab[i].used; i = (i + 1) & (s->cap - 1)) {
			e = &s->tab[i];
			if (e->pc != pc)
				continue;
			if (e->rc)
				return e->rc;
			*levels = e->lv;
			*n = e->n;
			return 0;
		}
	}
	if (!s->opened)
		srcline__open(s);
	if (!s->dw)
		return -ENOENT;
	if ((s->nr + 1) * 2 > s->cap && grow_tab(s))
		return -ENOMEM;
	s->st.resolved++;
	s->oom = 0;
	rc = resolve(s, pc, lv, &k);
	if (s->oom)
		return -ENOMEM; /* not an answer: not kept */
	if (rc)
		s->st.misses++;
	for (i = pc_hash(pc) & (s->cap - 1); s->tab[i].used; i = (i + 1) & (s->cap - 1))
		;
	e = &s->tab[i];
	if (!rc) {
		e->lv = malloc(k * sizeof(*e->lv));
		if (!e->lv)
			return -ENOMEM;
		memcpy(e->lv, lv, k * sizeof(*e->lv));
	}
	e->pc = pc;
	e->n = (uint32_t)k;
	e->rc = (int16_t)rc;
	e->used = 1;
	s->nr++;
	if (rc)
		return rc;
	*levels = e->lv;
	*n = k;
	return 0;
}

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

/* A string made from one in the DWARF (a demangled name, a path joined
 * to its CU's directory), by the address of that string. */
struct sl_name {
	const char *key;
	char *name;
};

struct sl_names {
	struct sl_name *v;
	size_t nr, cap; /* cap: a power of two */
};

/*
 * One address range of a CU's child DIE (scope_path()'s first level):
 * [lo, hi), the DIE's place among the CU's children, and the DIE.
 */
struct sl_span {
	uint64_t lo, hi;
	uint64_t maxhi; /* the largest hi of this span and all before it */
	uint32_t order;
	Dwarf_Die die;
};

/* The ranges of a CU's children, sorted by lo: made on the first PC in
 * the CU, then binary-searched where each PC walked the children. */
struct sl_cu {
	Dwarf_Off off; /* the CU DIE's */
	struct sl_span *v;
	size_t n;
	int state; /* CU_* */
};

enum { CU_EMPTY, CU_INDEXED, CU_WALK /* not indexed: walk its children */ };

struct sl_cus {
	struct sl_cu *v;
	size_t nr, cap; /* cap: a power of two */
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
	struct sl_names demangled, paths;
	struct sl_cus cus;
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

void srcline__free(struct srcline *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->cap; i++)
		free(s->tab[i].lv);
	free(s->tab);
	for (i = 0; i < s->demangled.cap; i++)
		free(s->demangled.v[i].name);
	free(s->demangled.v);
	for (i = 0; i < s->paths.cap; i++)
		free(s->paths.v[i].name);
	free(s->paths.v);
	for (i = 0; i < s->cus.cap; i++)
		free(s->cus.v[i].v);
	free(s->cus.v);
	if (s->dw)
		dwarf_end(s->dw);
	dwarf_image__free(s->img);
	elfread__free(s->dbg);
	free(s->path);
	free(s->debug_root);
	free(s);
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

/* The demangled (short unless full_names) form of a mangled DWARF name,
 * made once; the raw name when it does not demangle or on ENOMEM. */
static const char *demangled(struct srcline *s, const char *mangled)
{
	struct sl_name *e = names_slot(&s->demangled, mangled);
	char *d;

	if (!e)
		return mangled;
	if (e->name)
		return e->name;
	d = symbolize__demangle(mangled);
	if (d && !s->opts.full_names)
		symbolize__cxx_short(d);
	e->name = d; /* (NULL: tried, not mangled; tried again next time) */
	return d ? d : mangled;
}

/* A relative path of a line table made absolute with its CU's directory,
 * as addr2line prints it ("/src" + "/" + "lib/x.c"), made once. */
static const char *full_path(struct srcline *s, Dwarf_Die *cu, const char *file)
{
	struct sl_name *e;
	const char *dir;
	Dwarf_Attribute a;
	size_t ld, lf;

	if (!file || file[0] == '/')
		return file;
	dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a));
	if (!dir || !dir[0])
		return file;
	e = names_slot(&s->paths, file);
	if (!e)
		return file;
	if (!e->name) {
		ld = strlen(dir);
		lf = strlen(file);
		e->name = malloc(ld + lf + 2);
		if (!e->name)
			return file;
		memcpy(e->name, dir, ld);
		e->name[ld] = '/';
		memcpy(e->name + ld + 1, file, lf + 1);
	}
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
			*sys = d != n ? n : NULL;
			return d;
		}
	}
	return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
}

static int udata_attr(Dwarf_Die *die, unsigned name, Dwarf_Word *out)
{
	Dwarf_Attribute a;

	return dwarf_formudata(dwarf_attr(die, name, &a), out);
}

/* As libdw's may_have_scopes(): the DIEs dwarf_getscopes() descends into. */
static int may_have_scopes(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit:
	case DW_TAG_module:
	case DW_TAG_lexical_block:
	case DW_TAG_with_stmt:
	case DW_TAG_catch_block:
	case DW_TAG_try_block:
	case DW_TAG_entry_point:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_subprogram:
	case DW_TAG_namespace:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
		return 1;
	default:
		return 0;
	}
}

/*
 * Tags of entries that DWARF 5 (2.17) gives no code address or range:
 * data, types and call sites (a DW_TAG_GNU_call_site's DW_AT_low_pc
 * alone is no range either), so dwarf_haspc() is 0 for them. Not asking
 * saves its attribute scan on most of the entries a walk passes.
 */
static int never_has_pc(int tag)
{
	switch (tag) {
	case DW_TAG_variable:
	case DW_TAG_formal_parameter:
	case DW_TAG_member:
	case DW_TAG_typedef:
	case DW_TAG_base_type:
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
	case DW_TAG_restrict_type:
	case DW_TAG_atomic_type:
	case DW_TAG_array_type:
	case DW_TAG_subrange_type:
	case DW_TAG_enumeration_type:
	case DW_TAG_enumerator:
	case DW_TAG_union_type:
	case DW_TAG_subroutine_type:
	case DW_TAG_unspecified_parameters:
	case DW_TAG_unspecified_type:
	case DW_TAG_ptr_to_member_type:
	case DW_TAG_inheritance:
	case DW_TAG_template_type_parameter:
	case DW_TAG_template_value_parameter:
	case DW_TAG_imported_declaration:
	case DW_TAG_imported_module:
	case DW_TAG_call_site:
	case DW_TAG_call_site_parameter:
	case DW_TAG_GNU_call_site:
	case DW_TAG_GNU_call_site_parameter:
		return 1;
	default:
		return 0;
	}
}

#define SCOPE_PATH_MAX 256

static int span_cmp(const void *a, const void *b)
{
	const struct sl_span *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * c's spans: every address range of every child of cudie that the walk
 * would ask dwarf_haspc() about. CU_WALK when the walk could come out
 * otherwise than "the first child in document order whose ranges hold
 * pc": an imported unit, an error from libdw (dwarf_haspc() would fail
 * on it for some PC), or ENOMEM.
 */
static void cu_index_build(Dwarf_Die *cudie, struct sl_cu *c)
{
	Dwarf_Die child;
	struct sl_span *v = NULL, *nv;
	size_t n = 0, cap = 0;
	uint32_t order = 0;
	int rc;

	c->state = CU_WALK;
	rc = dwarf_child(cudie, &child);
	while (rc == 0) {
		int tag = dwarf_tag(&child);
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		if (tag == DW_TAG_imported_unit || order == UINT32_MAX)
			goto fail;
		while (!never_has_pc(tag) && (off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
			if (lo >= hi)
				continue; /* holds no pc */
			if (n == cap) {
				if (cap > SIZE_MAX / 2 / sizeof(*v))
					goto fail;
				cap = cap ? cap * 2 : 64;
				nv = realloc(v, cap * sizeof(*v));
				if (!nv)
					goto fail;
				v = nv;
			}
			v[n++] = (struct sl_span){ .lo = lo, .hi = hi, .order = order, .die = child };
		}
		if (off < 0)
			goto fail;
		order++;
		rc = dwarf_siblingof(&child, &child);
	}
	if (rc < 0)
		goto fail;
	if (n)
		qsort(v, n, sizeof(*v), span_cmp);
	for (size_t i = 0; i < n; i++)
		v[i].maxhi = i && v[i - 1].maxhi > v[i].hi ? v[i - 1].maxhi : v[i].hi;
	c->v = v;
	c->n = n;
	c->state = CU_INDEXED;
	return;
fail:
	free(v);
}

static size_t off_hash(Dwarf_Off off)
{
	return (size_t)((off * 0x9e3779b97f4a7c15ull) >> 24);
}

/* The index of the CU cudie, made on its first PC; NULL when the CU is
 * to be walked (CU_WALK, or ENOMEM). */
static const struct sl_cu *cu_index(struct srcline *s, Dwarf_Die *cudie)
{
	struct sl_cus *m = &s->cus;
	Dwarf_Off off = dwarf_dieoffset(cudie);
	struct sl_cu *c;
	size_t i, mask;

	if (off == (Dwarf_Off)-1)
		return NULL;
	if ((m->nr + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		struct sl_cu *v = calloc(cap, sizeof(*v));

		if (!v)
			return NULL;
		for (i = 0; i < m->cap; i++) {
			size_t j;

			if (m->v[i].state == CU_EMPTY)
				continue;
			for (j = off_hash(m->v[i].off) & (cap - 1); v[j].state != CU_EMPTY; j = (j + 1) & (cap - 1))
				;
			v[j] = m->v[i];
		}
		free(m->v);
		m->v = v;
		m->cap = cap;
	}
	mask = m->cap - 1;
	for (i = off_hash(off) & mask; m->v[i].state != CU_EMPTY; i = (i + 1) & mask)
		if (m->v[i].off == off)
			return m->v[i].state == CU_INDEXED ? &m->v[i] : NULL;
	c = &m->v[i];
	c->off = off;
	m->nr++;
	cu_index_build(cudie, c);
	return c->state == CU_INDEXED ? c : NULL;
}

/* The child of c's CU that the walk finds for pc: the first in document
 * order whose ranges hold it. 0 when none does. */
static int cu_index_find(const struct sl_cu *c, uint64_t pc, Dwarf_Die *out)
{
	const struct sl_span *best = NULL;
	size_t lo = 0, hi = c->n;

	while (lo < hi) { /* lo: the first span starting after pc */
		size_t mid = lo + (hi - lo) / 2;

		if (c->v[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* every span before lo starts at or before pc; those that may end
	 * after it are the run back to where maxhi falls to pc */
	for (size_t i = lo; i-- > 0 && c->v[i].maxhi > pc;)
		if (c->v[i].hi > pc && (!best || c->v[i].order < best->order))
			best = &c->v[i];
	if (!best)
		return 0;
	*out = best->die;
	return 1;
}

/*
 * The DIEs that hold pc, innermost first, into out[SCOPE_PATH_MAX]: the
 * innermost DIE that dwarf_getscopes() finds (in document order, the
 * first child holding pc at each level, descending as libdw does), then
 * its parents up to the CU, which is what dwarf_getscopes_die() gives
 * for it. One walk down the tree, where the two calls walk the CU up to
 * three times (the second and third in full): 80% of a cold lookup in
 * libc. The CU's own children are not walked but looked up in its
 * index (cu_index()): the PCs of a profile fall in a few CUs, and that
 * level was most of the walk. Their count (0: nothing holds pc), or -1
 * when this walk is not sure to agree with libdw's (an imported unit,
 * an error from dwarf_haspc, deeper than SCOPE_PATH_MAX): then use those
 * calls.
 */
static int scope_path(struct srcline *s, Dwarf_Die *cudie, uint64_t pc, Dwarf_Die *out)
{
	Dwarf_Die path[SCOPE_PATH_MAX], child;
	const struct sl_cu *ix = cu_index(s, cudie);
	int depth = 0, rc;

	path[0] = *cudie;
	if (ix) {
		if (!cu_index_find(ix, pc, &path[1]))
			return 0;
		depth = 1;
	}
	for (;;) {
		int found = 0;

		if (depth && (!may_have_scopes(dwarf_tag(&path[depth])) ||
			      !dwarf_haschildren(&path[depth])))
			break; /* path[depth] is the innermost */
		if (depth + 1 >= SCOPE_PATH_MAX)
			return -1;
		rc = dwarf_child(&path[depth], &child);
		if (rc < 0)
			return -1;
		while (rc == 0) {
			int tag = dwarf_tag(&child), in;

			if (tag == DW_TAG_imported_unit)
				return -1;
			in = never_has_pc(tag) ? 0 : dwarf_haspc(&child, pc);
			if (in < 0)
				return -1;
			if (in) {
				path[++depth] = child;
				found = 1;
				break;
			}
			rc = dwarf_siblingof(&child, &child);
			if (rc < 0)
				return -1;
		}
		if (!found)
			break; /* path[depth] is the innermost */
	}
	if (!depth)
		return 0;
	for (int i = 0; i <= depth; i++)
		out[i] = path[depth - i];
	return depth + 1;
}

/* Resolve pc through libdw into lv[SRCLINE_MAX_LEVELS]. */
static int resolve(struct srcline *s, uint64_t pc, struct srcline_level *lv,
		   size_t *nout)
{
	Dwarf_Die cudie, *scopes = NULL, *scopes_v = NULL;
	Dwarf_Die path[SCOPE_PATH_MAX];
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
	ns = s->opts.libdw_scopes ? -1 : scope_path(s, &cudie, pc, path);
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
	if (!s->opened)
		srcline__open(s);
	if (!s->dw)
		return -ENOENT;
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
	if ((s->nr + 1) * 2 > s->cap && grow_tab(s))
		return -ENOMEM;
	s->st.resolved++;
	rc = resolve(s, pc, lv, &k);
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

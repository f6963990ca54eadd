// SPDX-License-Identifier: MIT
/* The DIEs that hold a PC, in one walk. See src/symbols/dwarfscope.h. */
#include "symbols/dwarfscope.h"

#include <dwarf.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * One address range of a CU's child DIE (the walk's first level): [lo,
 * hi), the DIE's place among the CU's children, and the DIE.
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

void dwarfscope__clear(struct dwarfscope *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->v[i].v);
	free(m->v);
	m->v = NULL;
	m->nr = m->cap = 0;
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
static const struct sl_cu *cu_index(struct dwarfscope *m, Dwarf_Die *cudie)
{
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
 * The DIEs that hold pc, innermost first, into out[DWARFSCOPE_PATH_MAX]:
 * the innermost DIE that dwarf_getscopes() finds (in document order, the
 * first child holding pc at each level, descending as libdw does), then
 * its parents up to the CU, which is what dwarf_getscopes_die() gives
 * for it. One walk down the tree, where the two calls walk the CU up to
 * three times (the second and third in full): 80% of a cold lookup in
 * libc. The CU's own children are not walked but looked up in its
 * index (cu_index()): the PCs of a profile fall in a few CUs, and that
 * level was most of the walk. Their count (0: nothing holds pc), or -1
 * when this walk is not sure to agree with libdw's (an imported unit,
 * an error from dwarf_haspc, deeper than DWARFSCOPE_PATH_MAX): then use
 * those calls.
 */
int dwarfscope__path(struct dwarfscope *m, Dwarf_Die *cudie, uint64_t pc, Dwarf_Die *out)
{
	Dwarf_Die path[DWARFSCOPE_PATH_MAX], child;
	const struct sl_cu *ix = cu_index(m, cudie);
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
		if (depth + 1 >= DWARFSCOPE_PATH_MAX)
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

// SPDX-License-Identifier: MIT
/*
 * A compiled frame's Java frames (hotspot.h hotspot__scopes()): the
 * nmethod's PcDescs (sorted by pc offset, between its _scopes_pcs_offset
 * and _dependencies_offset) searched for pc, then the scope chain from
 * the scopes data (between _scopes_data_begin and the PcDescs), each
 * scope's Method from the nmethod's metadata table (between its
 * _metadata_offset and the scopes data). Every offset is checked against
 * its region: a pc this cannot follow gets no scopes, never another's.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "runtimes/hotspot/hotspot.h"

#define SCOPE_BYTES 15u /* sender, method index, bci: 5 bytes each at most */

static int rd_i32(hotspot_read_fn read, void *ctx, uint64_t addr, int32_t *v)
{
	return read(ctx, addr, v, sizeof(*v));
}

/* The nmethod's regions: [*pcs, *pcs_end) PcDescs, [*scopes, *pcs)
 * scopes data, [*meta, *scopes) metadata. */
static int regions(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
		   uint64_t blob, uint64_t *pcs, uint64_t *pcs_end, uint64_t *scopes,
		   uint64_t *meta)
{
	int32_t o_pcs, o_deps, o_meta;
	int err;

	if ((err = rd_i32(read, ctx, blob + l->nm_pcs, &o_pcs)) ||
	    (err = rd_i32(read, ctx, blob + l->nm_deps, &o_deps)) ||
	    (err = rd_i32(read, ctx, blob + l->nm_metadata, &o_meta)) ||
	    (err = read(ctx, blob + l->cm_scopes_begin, scopes, sizeof(*scopes))))
		return err;
	if (o_meta <= 0 || o_pcs <= o_meta || o_deps < o_pcs ||
	    (uint32_t)(o_deps - o_pcs) / l->pcd_size > HOTSPOT_PCDESC_MAX)
		return -EINVAL;
	*pcs = blob + (uint64_t)o_pcs;
	*pcs_end = blob + (uint64_t)o_deps;
	*meta = blob + (uint64_t)o_meta;
	return *scopes >= *meta && *scopes <= *pcs ? 0 : -EINVAL;
}

/* The scope decode offset of pc's PcDesc: the first at or after the
 * offset (exact: at it). */
static int find_pcdesc(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
		       uint64_t pcs, uint64_t pcs_end, int64_t off, bool exact, int32_t *scope)
{
	uint64_t lo = 0, hi = (pcs_end - pcs) / l->pcd_size; /* [lo, hi) */
	int32_t at;
	int err;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if ((err = rd_i32(read, ctx, pcs + mid * l->pcd_size + l->pcd_pc, &at)))
			return err;
		if (at < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= (pcs_end - pcs) / l->pcd_size)
		return -ENOENT;
	if ((err = rd_i32(read, ctx, pcs + lo * l->pcd_size + l->pcd_pc, &at)) ||
	    (err = rd_i32(read, ctx, pcs + lo * l->pcd_size + l->pcd_scope, scope)))
		return err;
	if (exact && at != off)
		return -ENOENT;
	return *scope > 0 ? 0 : -ENOENT; /* (0: serialized_null, no scope) */
}

int hotspot__scopes(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
		    uint64_t blob, uint64_t code_begin, uint64_t pc, bool exact,
		    struct hotspot_scope *out)
{
	uint64_t pcs, pcs_end, scopes, meta, own;
	int32_t dec;
	unsigned n = 0;
	int err;

	if (!l->has_scopes)
		return -ENOENT;
	if (pc < code_begin || pc - code_begin > 0x7fffffff)
		return -EINVAL;
	if ((err = regions(l, read, ctx, blob, &pcs, &pcs_end, &scopes, &meta)) ||
	    (err = find_pcdesc(l, read, ctx, pcs, pcs_end, (int64_t)(pc - code_begin), exact,
			       &dec)))
		return err;
	while (dec > 0) {
		uint8_t b[SCOPE_BYTES];
		uint32_t sender, midx, bci;
		size_t len, pos = 0;

		if (n >= HOTSPOT_SCOPES_MAX || (uint64_t)dec >= pcs - scopes)
			return -EINVAL;
		len = pcs - scopes - (uint64_t)dec < sizeof(b) ? (size_t)(pcs - scopes - (uint64_t)dec)
							       : sizeof(b);
		if ((err = read(ctx, scopes + (uint64_t)dec, b, len)))
			return err;
		if ((err = hotspot__read_u5(b, len, &pos, &sender)) ||
		    (err = hotspot__read_u5(b, len, &pos, &midx)) ||
		    (err = hotspot__read_u5(b, len, &pos, &bci)))
			return err;
		/* (a sender is written before its scope: the chain ends) */
		if (sender >= (uint32_t)dec || !midx || midx > (scopes - meta) / 8 || bci > 0xffff)
			return -EINVAL;
		if ((err = read(ctx, meta + (uint64_t)(midx - 1) * 8, &out[n].method, 8)))
			return err;
		if (!out[n].method || out[n].method & 7)
			return -EINVAL;
		out[n].bci = (int32_t)bci + l->entry_bci;
		n++;
		dec = (int32_t)sender;
	}
	/* the outermost scope is the nmethod's own method */
	if ((err = read(ctx, blob + l->nm_method, &own, sizeof(own))))
		return err;
	return n && out[n - 1].method == own ? (int)n : -EINVAL;
}

/* One "name\tfile\tline\n" line of a frame into inl[*used..size), `keep`
 * bytes left after it (for the marker): false, and nothing, when it does
 * not fit. */
static bool inl_line(char *inl, size_t size, size_t *used, size_t keep, const char *name,
		     const char *file, uint32_t line)
{
	size_t room = size - *used - keep;
	int w = snprintf(inl + *used, size - *used, "%s\t%s\t%u\n", name, file, line);

	if (w <= 0 || (size_t)w >= room) {
		inl[*used] = 0;
		return false;
	}
	*used += (size_t)w;
	return true;
}

#define MARK_LINE HOTSPOT_UNREADABLE "\t\t0\n"

/*
 * The methods inlined at the call, sc[0..n-1) (innermost first), into
 * inl[0..size) outermost first. A stack must not put a method under one
 * it is not called from: a Method that does not read is the marker in
 * its place (the others kept), and when the rest do not fit the marker
 * ends them (room for it is kept all along).
 */
static void inlined_frames(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
			   const struct hotspot_scope *sc, int n, char *inl, size_t size)
{
	const size_t keep = sizeof(MARK_LINE) - 1;
	struct hotspot_method mi;
	size_t used = 0;

	for (int k = n - 2; k >= 0; k--) {
		bool ok = !hotspot__method(l, read, ctx, sc[k].method, sc[k].bci, &mi);

		/* (the innermost may use the marker's room: none follows it) */
		if (!inl_line(inl, size, &used, k ? keep : 0, ok ? mi.name : HOTSPOT_UNREADABLE,
			      ok ? mi.file : "", ok ? mi.line : 0)) {
			memcpy(inl + used, MARK_LINE, sizeof(MARK_LINE));
			return;
		}
	}
}

int hotspot__caller_frame(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
			  const struct hotspot_code *c, uint64_t ra, struct hotspot_method *m,
			  char *inl, size_t size)
{
	struct hotspot_scope sc[HOTSPOT_SCOPES_MAX];
	bool want = inl && size > sizeof(MARK_LINE);
	int n;

	if (!l->has_scopes)
		return -ENOENT;
	if (want)
		inl[0] = 0;
	/* (its own method checked against the nmethod's: a file and line
	 * only where its class has them, a lambda's hidden class has not) */
	n = hotspot__scopes(l, read, ctx, c->blob, c->start, ra, true, sc);
	/* (no PcDesc there: a call without debug info, to a stub or a leaf
	 * of the runtime, not a Java call; its frame is its method, as the
	 * sampled frame's is) */
	if (n == -ENOENT)
		return -ENOENT;
	if (n <= 0 || hotspot__method(l, read, ctx, sc[n - 1].method, sc[n - 1].bci, m) ||
	    strcmp(m->name, c->name)) {
		/* the methods inlined at the call unknown: the nmethod's own
		 * under the marker, not its callee right under it */
		memset(m, 0, sizeof(*m));
		_Static_assert(sizeof(m->name) == sizeof(c->name), "the same bound");
		memcpy(m->name, c->name, sizeof(m->name));
		if (!m->name[0])
			return -ENOENT;
		if (want)
			memcpy(inl, MARK_LINE, sizeof(MARK_LINE));
		return 0;
	}
	if (n > 1 && want)
		inlined_frames(l, read, ctx, sc, n, inl, size);
	return 0;
}

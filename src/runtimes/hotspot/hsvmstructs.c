// SPDX-License-Identifier: MIT
/*
 * HotSpot's structure layout from its own tables (hotspot.h): the
 * gHotSpotVMStructs and gHotSpotVMTypes entries, whose layout is itself
 * given by the exported *EntryOffset / *ArrayStride variables, so one
 * reader serves the JDKs whose fields it names (11 to 21).
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "runtimes/hotspot/hotspot.h"

#define STRIDE_MAX 256u
#define BATCH 32u /* entries read at once */
#define TNAME_MAX 64u

/* A field the reader needs: type (or alt, the same field under another
 * JDK's type name), field, where it goes in the layout. */
struct want {
	const char *type, *alt, *field;
	bool is_static;
	size_t at;
	bool optional; /* for interpreted frames and lines only */
};

#define F(t, a, f, dst) { t, a, f, false, offsetof(struct hotspot_layout, dst), false }
#define O(t, a, f, dst) { t, a, f, false, offsetof(struct hotspot_layout, dst), true }

static const struct want wants[] = {
	{ "CodeCache", NULL, "_heaps", true, offsetof(struct hotspot_layout, heaps), false },
	F("GrowableArrayBase", "GenericGrowableArray", "_len", ga_len),
	F("GrowableArray<int>", NULL, "_data", ga_data),
	F("CodeHeap", NULL, "_memory", heap_memory),
	F("CodeHeap", NULL, "_segmap", heap_segmap),
	F("CodeHeap", NULL, "_log2_segment_size", heap_log2),
	F("VirtualSpace", NULL, "_low_boundary", vs_low),
	F("VirtualSpace", NULL, "_high_boundary", vs_high),
	F("HeapBlock", NULL, "_header", hb_header),
	F("HeapBlock::Header", NULL, "_used", hb_used),
	F("CodeBlob", NULL, "_name", cb_name),
	F("CodeBlob", NULL, "_code_begin", cb_code_begin),
	F("CodeBlob", NULL, "_code_end", cb_code_end),
	F("CodeBlob", NULL, "_frame_size", cb_frame_size),
	F("CodeBlob", NULL, "_frame_complete_offset", cb_frame_complete),
	F("CompiledMethod", "nmethod", "_method", nm_method),
	F("Method", NULL, "_constMethod", m_const),
	F("ConstMethod", NULL, "_constants", cm_constants),
	F("ConstMethod", NULL, "_name_index", cm_name_index),
	F("ConstantPool", NULL, "_pool_holder", cp_holder),
	F("ConstantPool", NULL, "_length", cp_length),
	F("Klass", NULL, "_name", k_name),
	F("Symbol", NULL, "_length", sym_length),
	F("Symbol", NULL, "_body", sym_body),
	O("Method", NULL, "_access_flags", m_access),
	O("ConstMethod", NULL, "_constMethod_size", cm_size),
	O("ConstMethod", NULL, "_flags", cm_flags),
	O("ConstMethod", NULL, "_code_size", cm_code_size),
	O("ConstantPool", NULL, "_tags", cp_tags),
	O("ConstantPool", NULL, "_source_file_name_index", cp_source),
	O("Array<int>", NULL, "_length", arr_len),
	O("Array<u1>", NULL, "_data", arr_data),
	/* (compiled frames' scopes) */
	O("CompiledMethod", "nmethod", "_scopes_data_begin", cm_scopes_begin),
	O("nmethod", NULL, "_scopes_pcs_offset", nm_pcs),
	O("nmethod", NULL, "_dependencies_offset", nm_deps),
	O("nmethod", NULL, "_metadata_offset", nm_metadata),
	O("PcDesc", NULL, "_pc_offset", pcd_pc),
	O("PcDesc", NULL, "_scope_decode_offset", pcd_scope),
};

#define OPT_FIRST 24 /* wants[OPT_FIRST..]: optional */
#define SCOPE_FIRST 32 /* wants[SCOPE_FIRST..]: the scopes' */
_Static_assert(sizeof(wants) / sizeof(wants[0]) <= 64, "found is a 64-bit mask");


#define NR_WANTS (sizeof(wants) / sizeof(wants[0]))

/* Sizes: the type, where it goes. */
static const struct want sizes[] = {
	{ "HeapBlock", NULL, NULL, false, offsetof(struct hotspot_layout, heapblock_size), false },
	{ "ConstantPool", NULL, NULL, false, offsetof(struct hotspot_layout, cp_size), false },
	{ "ConstMethod", NULL, NULL, false, offsetof(struct hotspot_layout, cm_sizeof), true },
	{ "PcDesc", NULL, NULL, false, offsetof(struct hotspot_layout, pcd_size), true },
};

#define NR_SIZES (sizeof(sizes) / sizeof(sizes[0]))

static int read_u64(hotspot_read_fn read, void *ctx, uint64_t addr, uint64_t *v)
{
	return read(ctx, addr, v, sizeof(*v));
}

/* A NUL-terminated string of at most TNAME_MAX - 1 bytes at addr into buf
 * (a longer one is none this reader wants): 0, -EINVAL, read's error. The
 * bytes are read in small steps, since a string may end a mapping. */
static int read_str(hotspot_read_fn read, void *ctx, uint64_t addr, char *buf)
{
	for (size_t got = 0; got < TNAME_MAX; got += 16) {
		int err;

		if (addr + got < addr)
			return -EINVAL;
		err = read(ctx, addr + got, buf + got, 16);
		if (err)
			return err;
		if (memchr(buf + got, 0, 16))
			return 0;
	}
	return -EINVAL;
}

static uint64_t field_at(const uint8_t *e, uint64_t off)
{
	uint64_t v;

	memcpy(&v, e + off, sizeof(v));
	return v;
}

static bool wanted_type(const char *name, const struct want *w)
{
	return !strcmp(name, w->type) || (w->alt && !strcmp(name, w->alt));
}

/* The entry layout variables: each an offset inside an entry of stride
 * bytes, with room for its 8 bytes (a 32-bit isStatic is read as its
 * low byte). */
static int read_layout(hotspot_read_fn read, void *ctx, const uint64_t *addr, uint64_t *out,
		       size_t n, uint64_t *stride)
{
	int err = read_u64(read, ctx, addr[n], stride);

	if (err)
		return err;
	if (*stride < 8 || *stride > STRIDE_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if ((err = read_u64(read, ctx, addr[i], &out[i])))
			return err;
		if (out[i] > *stride - 1 || (i != 2 && out[i] > *stride - 8))
			return -EINVAL;
	}
	return 0;
}

static int store(struct hotspot_layout *out, const struct want *w, uint64_t v)
{
	if (w->is_static) {
		memcpy((uint8_t *)out + w->at, &v, sizeof(v));
		return v ? 0 : -EINVAL;
	}
	if (v > 1u << 20) /* a field offset, a type size: small */
		return -EINVAL;
	memcpy((uint8_t *)out + w->at, &(uint32_t){ (uint32_t)v }, sizeof(uint32_t));
	return 0;
}

static int scan_structs(const struct hotspot_syms *s, hotspot_read_fn read, void *ctx,
			struct hotspot_layout *out, uint64_t *found)
{
	const uint64_t vars[] = { s->s_type, s->s_field, s->s_static, s->s_offset,
				  s->s_address, s->s_stride };
	uint64_t off[5], stride, table;
	uint8_t batch[BATCH * STRIDE_MAX];
	char tname[TNAME_MAX], fname[TNAME_MAX];
	int err;

	if ((err = read_layout(read, ctx, vars, off, 5, &stride)) ||
	    (err = read_u64(read, ctx, s->structs, &table)))
		return err;
	for (uint64_t i = 0; i < HOTSPOT_MAX_ENTRIES; i += BATCH) {
		if (table + (i + BATCH) * stride < table)
			return -EINVAL;
		/* (the last batch may end past the table's mapping: then one
		 * entry at a time) */
		bool whole = !read(ctx, table + i * stride, batch, BATCH * stride);

		for (uint32_t k = 0; k < BATCH; k++) {
			const uint8_t *e = batch + k * stride;
			bool st, have_f = false;
			uint64_t tp, fp;

			if (!whole && (err = read(ctx, table + (i + k) * stride,
						  batch + k * stride, stride)))
				return err;
			tp = field_at(e, off[0]);
			if (!tp)
				return 0; /* the end of the table */
			fp = field_at(e, off[1]);
			if (!fp || read_str(read, ctx, tp, tname))
				continue; /* (a name too long to be ours) */
			st = e[off[2]] != 0;
			for (size_t w = 0; w < NR_WANTS; w++) {
				if ((*found & (1ull << w)) || !wanted_type(tname, &wants[w]) ||
				    st != wants[w].is_static)
					continue;
				if (!have_f && read_str(read, ctx, fp, fname))
					break;
				have_f = true;
				if (strcmp(fname, wants[w].field))
					continue;
				err = store(out, &wants[w], field_at(e, st ? off[4] : off[3]));
				if (err)
					return err;
				*found |= 1ull << w;
			}
		}
	}
	return -EINVAL; /* no end */
}

static int scan_types(const struct hotspot_syms *s, hotspot_read_fn read, void *ctx,
		      struct hotspot_layout *out, uint64_t *found)
{
	const uint64_t vars[] = { s->t_type, s->t_size, s->t_stride };
	uint64_t off[2], stride, table;
	uint8_t e[STRIDE_MAX];
	char tname[TNAME_MAX];
	int err;

	if ((err = read_layout(read, ctx, vars, off, 2, &stride)) ||
	    (err = read_u64(read, ctx, s->types, &table)))
		return err;
	/* (sizes are read one entry at a time: the table is read once) */
	for (uint64_t i = 0; i < HOTSPOT_MAX_ENTRIES; i++) {
		uint64_t tp;

		if (table + (i + 1) * stride < table)
			return -EINVAL;
		if ((err = read(ctx, table + i * stride, e, stride)))
			return err;
		tp = field_at(e, off[0]);
		if (!tp)
			return 0;
		if (read_str(read, ctx, tp, tname))
			continue;
		for (size_t w = 0; w < NR_SIZES; w++)
			if (!(*found & (1ull << w)) && !strcmp(tname, sizes[w].type)) {
				if ((err = store(out, &sizes[w], field_at(e, off[1]))))
					return err;
				*found |= 1ull << w;
			}
	}
	return -EINVAL;
}

/* The integer constants: name, where it goes. */
static const struct {
	const char *name;
	size_t at;
} ints[] = {
	{ "JVM_CONSTANT_Utf8", offsetof(struct hotspot_layout, tag_utf8) },
	{ "ConstMethod::_has_linenumber_table", offsetof(struct hotspot_layout, has_lnt) },
	{ "frame::interpreter_frame_sender_sp_offset", offsetof(struct hotspot_layout, fp_method) },
	{ "frame::interpreter_frame_last_sp_offset", offsetof(struct hotspot_layout, fp_bcp) },
	{ "InvocationEntryBci", offsetof(struct hotspot_layout, entry_bci) },
};

#define NR_INTS (sizeof(ints) / sizeof(ints[0]))

static int scan_ints(const struct hotspot_syms *s, hotspot_read_fn read, void *ctx,
		     struct hotspot_layout *out, uint64_t *found)
{
	const uint64_t vars[] = { s->i_name, s->i_value, s->i_stride };
	uint64_t off[2], stride, table;
	uint8_t e[STRIDE_MAX];
	char name[TNAME_MAX];
	int err;

	if (!s->ints)
		return -ENOENT;
	if ((err = read_layout(read, ctx, vars, off, 2, &stride)) ||
	    (err = read_u64(read, ctx, s->ints, &table)))
		return err;
	for (uint64_t i = 0; i < HOTSPOT_MAX_ENTRIES; i++) {
		uint64_t np;

		if (table + (i + 1) * stride < table)
			return -EINVAL;
		if ((err = read(ctx, table + i * stride, e, stride)))
			return err;
		np = field_at(e, off[0]);
		if (!np)
			return 0;
		if (read_str(read, ctx, np, name))
			continue;
		for (size_t w = 0; w < NR_INTS; w++)
			if (!(*found & (1ull << w)) && !strcmp(name, ints[w].name)) {
				int32_t v;

				memcpy(&v, e + off[1], sizeof(v));
				memcpy((uint8_t *)out + ints[w].at, &v, sizeof(v));
				*found |= 1ull << w;
			}
	}
	return -EINVAL;
}

/*
 * Interpreted frames: x86-64's fixed interpreter frame (frame_x86.hpp)
 * below the saved fp, one word each: sender sp, last sp, Method*, mirror,
 * mdp, cache, locals, bcp. The VM exports the first two slots' offsets;
 * the Method's is the next, the bcp's five after it. A VM whose first two
 * are not where x86-64's are (another layout) gets no interpreted names.
 */
static void interp_layout(struct hotspot_layout *l, uint64_t got_opt, uint64_t got_ints,
			  bool have_cm)
{
	const uint64_t want = (1ull << (SCOPE_FIRST - OPT_FIRST)) - 1;
	int32_t sender = l->fp_method, last = l->fp_bcp;

	l->fp_method = l->fp_bcp = 0;
	if ((got_opt & want) != want || !have_cm ||
	    (got_ints & 15) != 15 || sender != -1 || last != -2 ||
	    l->tag_utf8 <= 0 || l->cm_sizeof < 8)
		return;
	l->fp_method = (last - 1) * 8;
	l->fp_bcp = (last - 6) * 8;
	l->has_interp = true;
	/* (a flag bit, of a 16- or 32-bit field) */
	l->has_lines = l->has_lnt > 0 && l->has_lnt <= 0xffff &&
		       !(l->has_lnt & (l->has_lnt - 1));
}

int hotspot__layout(const struct hotspot_syms *syms, hotspot_read_fn read, void *ctx,
		    struct hotspot_layout *out)
{
	uint64_t got = 0, gsizes = 0, gints = 0;
	const uint64_t req = (1ull << OPT_FIRST) - 1;
	int err;

	_Static_assert(NR_SIZES == 4, "sizes: two required, ConstMethod's, PcDesc's optional");
	_Static_assert(NR_INTS == 5, "ints: four for the interpreter, one for scopes");
	memset(out, 0, sizeof(*out));
	if ((err = scan_structs(syms, read, ctx, out, &got)))
		return err;
	if ((got & req) != req)
		return -ENOENT;
	if ((err = scan_types(syms, read, ctx, out, &gsizes)))
		return err;
	if ((gsizes & 3) != 3)
		return -ENOENT;
	if (out->heapblock_size < 8 || out->cp_size < 8)
		return -EINVAL;
	/* (a VM without its int constants: compiled frames only) */
	if (scan_ints(syms, read, ctx, out, &gints))
		gints = 0;
	interp_layout(out, got >> OPT_FIRST, gints, (gsizes & 4) != 0);
	/* scopes: with the methods' lines (a frame's line is the point) */
	out->has_scopes = out->has_lines && (got >> SCOPE_FIRST) == (1ull << (NR_WANTS - SCOPE_FIRST)) - 1 &&
			  (gsizes & 8) && (gints & 16) && out->entry_bci == -1 &&
			  out->pcd_size >= 8 && out->pcd_size <= 64 &&
			  out->pcd_pc <= out->pcd_size - 4 && out->pcd_scope <= out->pcd_size - 4;
	return 0;
}

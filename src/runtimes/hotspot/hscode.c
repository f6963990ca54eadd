// SPDX-License-Identifier: MIT
/*
 * The HotSpot code holding a PC, and its name (hotspot.h): CodeCache's
 * heaps, the segment map of the heap that holds it walked back to its
 * block, the CodeBlob after the block's header; an nmethod named from its
 * Method (hsmethod.c). Every pointer comes from the target and is
 * checked before use: a PC this cannot follow gets no name, never
 * another's.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "runtimes/hotspot/hotspot.h"

#define HEAPS_MAX 16
#define SEG_WINDOW 256u
#define SEG_STEPS 65536u
#define BLOB_NAME_MAX 64u

static int rd64(hotspot_read_fn read, void *ctx, uint64_t addr, uint64_t *v)
{
	return read(ctx, addr, v, sizeof(*v));
}

/* A pointer field: non-NULL, 8-aligned, in user space. */
static int rdptr(hotspot_read_fn read, void *ctx, uint64_t addr, uint64_t *v)
{
	int err = rd64(read, ctx, addr, v);

	if (err)
		return err;
	return *v && !(*v & 7) && *v < (1ull << 56) ? 0 : -EINVAL;
}

/* The block start (segment index) of segment idx: the map's bytes say
 * how far back to step, 0 at a block's first segment, 0xff unused. */
static int block_of(hotspot_read_fn read, void *ctx, uint64_t segmap, uint64_t *idx)
{
	uint8_t w[SEG_WINDOW];
	uint64_t wlo = 1, whi = 0; /* [wlo, whi]: the window's indexes */

	for (unsigned step = 0; step < SEG_STEPS; step++) {
		uint8_t b;
		int err;

		if (*idx < wlo || *idx > whi) {
			wlo = *idx >= SEG_WINDOW - 1 ? *idx - (SEG_WINDOW - 1) : 0;
			whi = *idx;
			if ((err = read(ctx, segmap + wlo, w, whi - wlo + 1)))
				return err;
		}
		b = w[*idx - wlo];
		if (b == 0xff)
			return -ENOENT; /* free */
		if (b == 0)
			return 0;
		if (b > *idx)
			return -EINVAL;
		*idx -= b;
	}
	return -EINVAL;
}

/* An nmethod's `pkg.Class.method` (hsmethod.c). */
static int method_name(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
		       uint64_t blob, char *out)
{
	struct hotspot_method m;
	uint64_t method;
	int err;

	if ((err = rdptr(read, ctx, blob + l->nm_method, &method)) ||
	    (err = hotspot__method(l, read, ctx, method, -1, &m)))
		return err;
	_Static_assert(sizeof(m.name) == HOTSPOT_NAME_MAX, "the same bound");
	memcpy(out, m.name, sizeof(m.name));
	return 0;
}

/* The heap holding pc: its bounds, segment map, segment size. */
struct heap {
	uint64_t low, high, segmap;
	int32_t log2;
};

static int heap_of(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx, uint64_t pc,
		   struct heap *h)
{
	uint64_t arr, data;
	int32_t len;
	int err;

	if ((err = rdptr(read, ctx, l->heaps, &arr)) ||
	    (err = read(ctx, arr + l->ga_len, &len, sizeof(len))) ||
	    (err = rdptr(read, ctx, arr + l->ga_data, &data)))
		return err;
	if (len <= 0 || len > HEAPS_MAX)
		return -EINVAL;
	for (int32_t i = 0; i < len; i++) {
		uint64_t heap;

		if ((err = rdptr(read, ctx, data + (uint64_t)i * 8, &heap)) ||
		    (err = rd64(read, ctx, heap + l->heap_memory + l->vs_low, &h->low)) ||
		    (err = rd64(read, ctx, heap + l->heap_memory + l->vs_high, &h->high)))
			return err;
		if (pc < h->low || pc >= h->high)
			continue;
		if ((err = rd64(read, ctx, heap + l->heap_segmap + l->vs_low, &h->segmap)) ||
		    (err = read(ctx, heap + l->heap_log2, &h->log2, sizeof(h->log2))))
			return err;
		if (h->log2 < 4 || h->log2 > 16 || !h->segmap)
			return -EINVAL;
		return 0;
	}
	return -ENOENT;
}

int hotspot__code(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx, uint64_t pc,
		  bool want_name, struct hotspot_code *out)
{
	char bname[BLOB_NAME_MAX];
	uint64_t idx, block, blob, name;
	uint8_t used;
	int32_t frame, complete;
	struct heap h;
	int err;

	memset(out, 0, sizeof(*out));
	if ((err = heap_of(l, read, ctx, pc, &h)))
		return err;
	idx = (pc - h.low) >> h.log2;
	if (h.segmap + idx < h.segmap || (err = block_of(read, ctx, h.segmap, &idx)))
		return err ? err : -EINVAL;
	block = h.low + (idx << h.log2);
	if ((err = read(ctx, block + l->hb_header + l->hb_used, &used, 1)))
		return err;
	if (!used)
		return -ENOENT;
	blob = block + l->heapblock_size;
	out->blob = blob;
	if ((err = rd64(read, ctx, blob + l->cb_code_begin, &out->start)) ||
	    (err = rd64(read, ctx, blob + l->cb_code_end, &out->end)) ||
	    (err = read(ctx, blob + l->cb_frame_size, &frame, sizeof(frame))) ||
	    (err = read(ctx, blob + l->cb_frame_complete, &complete, sizeof(complete))) ||
	    (err = rd64(read, ctx, blob + l->cb_name, &name)))
		return err;
	if (!name) /* (a C string: any alignment) */
		return -EINVAL;
	if (out->start <= blob || out->start > out->end || out->end > h.high)
		return -EINVAL;
	if (pc < out->start || pc >= out->end)
		return -ENOENT; /* its header, relocations, data */
	out->frame_size = frame > 0 && frame < (1 << 20) ? (uint32_t)frame : 0;
	/* (an offset from the code's start; -1: never complete) */
	out->frame_complete = complete >= 0 && (uint64_t)complete <= out->end - out->start
				      ? out->start + (uint64_t)complete
				      : out->end;
	/* (the blob's name: a C string of libjvm.so, short) */
	memset(bname, 0, sizeof(bname));
	for (size_t got = 0; got < sizeof(bname) - 1 && !memchr(bname, 0, got); got += 16)
		if ((err = read(ctx, name + got, bname + got, 16)))
			return err;
	bname[sizeof(bname) - 1] = 0;
	if (!strcmp(bname, "nmethod")) {
		out->kind = HOTSPOT_NMETHOD;
		return want_name ? method_name(l, read, ctx, blob, out->name) : 0;
	}
	if (!strcmp(bname, "Interpreter")) {
		out->kind = HOTSPOT_INTERPRETER;
		strcpy(out->name, "[interpreter]");
		return 0;
	}
	for (size_t i = 0; bname[i]; i++)
		if ((unsigned char)bname[i] < 0x20 || bname[i] == 0x7f)
			return -EINVAL;
	out->kind = HOTSPOT_STUB;
	memcpy(out->name, bname, strlen(bname) + 1);
	return 0;
}

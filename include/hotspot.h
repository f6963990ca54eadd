/* SPDX-License-Identifier: MIT */
/*
 * HotSpot (OpenJDK) code named from the VM's own metadata, read from
 * outside through a memory reader (the target's memory is untrusted:
 * every read is bounded, every pointer and length checked).
 *
 * The layout comes from the tables libjvm.so exports for serviceability
 * agents, not from a hand-kept table: gHotSpotVMStructs (type, field,
 * static or not, offset or address), gHotSpotVMTypes (sizes), and the
 * entry layout of both from the gHotSpotVM*Entry*Offset / *ArrayStride
 * variables (filled by the VM at its start, so read after it).
 *
 * hotspot__layout() reads what this reader needs from those tables;
 * hotspot__name() finds the CodeBlob holding a PC (the CodeCache's heaps,
 * each heap's segment map walked back to the block start) and names an
 * nmethod `pkg.Class.method` (Method -> ConstMethod -> ConstantPool ->
 * pool holder Klass's name Symbol, and the name Symbol by index), the
 * interpreter `[interpreter]`.
 */
#ifndef SFPROF_HOTSPOT_H
#define SFPROF_HOTSPOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Reads len bytes at addr of the target: 0, or a negative errno. */
typedef int (*hotspot_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* Where libjvm.so's exported variables are, in the target (runtime
 * addresses). */
struct hotspot_syms {
	uint64_t structs, types;	      /* gHotSpotVMStructs, gHotSpotVMTypes */
	uint64_t s_type, s_field, s_static;  /* gHotSpotVMStructEntry*Offset */
	uint64_t s_offset, s_address, s_stride;
	uint64_t t_type, t_size, t_stride;   /* gHotSpotVMTypeEntry*Offset */
};

#define HOTSPOT_MAX_ENTRIES 8192u /* more is not a table: stop */
#define HOTSPOT_NAME_MAX 512u

/* The fields this reader uses (offsets in bytes; addresses of statics). */
struct hotspot_layout {
	uint64_t heaps;			/* &CodeCache::_heaps */
	uint32_t ga_len, ga_data;	/* GrowableArrayBase::_len, GrowableArray<int>::_data */
	uint32_t heap_memory, heap_segmap, heap_log2; /* CodeHeap:: */
	uint32_t vs_low, vs_high;	/* VirtualSpace::_low_boundary, _high_boundary */
	uint32_t heapblock_size, hb_header, hb_used; /* sizeof(HeapBlock), ::_header, Header::_used */
	uint32_t cb_name, cb_code_begin, cb_code_end, cb_frame_size; /* CodeBlob:: */
	uint32_t cb_frame_complete;	/* CodeBlob::_frame_complete_offset */
	uint32_t nm_method;		/* nmethod::_method */
	uint32_t m_const;		/* Method::_constMethod */
	uint32_t cm_constants, cm_name_index; /* ConstMethod:: */
	uint32_t cp_holder, cp_length, cp_size; /* ConstantPool::_pool_holder, _length, sizeof */
	uint32_t k_name;		/* Klass::_name */
	uint32_t sym_length, sym_body;	/* Symbol:: */
};

/* The layout from the tables: 0, -ENOENT (a field this reader needs is
 * missing: not a VM it knows), -EINVAL (a bad table), or read's error. */
int hotspot__layout(const struct hotspot_syms *syms, hotspot_read_fn read, void *ctx,
		    struct hotspot_layout *out);

/* The code holding pc. */
enum hotspot_kind {
	HOTSPOT_NMETHOD = 1,	 /* a compiled Java method: name is its */
	HOTSPOT_INTERPRETER = 2, /* the template interpreter */
	HOTSPOT_STUB = 3,	 /* another blob: name is the blob's */
};

struct hotspot_code {
	uint64_t start, end; /* the blob's code [begin, end) */
	uint32_t frame_size; /* words (CodeBlob::_frame_size), 0 unknown */
	uint64_t frame_complete; /* from here on the frame is built */
	enum hotspot_kind kind;
	char name[HOTSPOT_NAME_MAX];
};

/* pc's code (its name too when `name`: else out->name is ""): 0 with
 * *out, -ENOENT (pc in no code heap, in a free block, or not in its
 * blob's code), -EINVAL (inconsistent memory), or read's error. */
int hotspot__code(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx, uint64_t pc,
		  bool name, struct hotspot_code *out);

#endif

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
	/* gHotSpotVMIntConstants, its Entry{Name,Value}Offset, ArrayStride:
	 * the interpreter's frame layout and ConstMethod's flag bits (a VM
	 * without them gets its compiled frames named, not its interpreted
	 * ones) */
	uint64_t ints, i_name, i_value, i_stride;
};

#define HOTSPOT_MAX_ENTRIES 8192u /* more is not a table: stop */
#define HOTSPOT_NAME_MAX 512u
#define HOTSPOT_FILE_MAX 128u
#define HOTSPOT_LNT_MAX 65536u /* line-number table bytes read at most */

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
	/* optional (0 when the VM does not say: has_interp, has_lines) */
	uint32_t m_access;		/* Method::_access_flags */
	uint32_t cm_size, cm_flags, cm_code_size; /* ConstMethod::_constMethod_size, _flags, _code_size */
	uint32_t cm_sizeof;		/* sizeof(ConstMethod): the bytecodes follow it */
	uint32_t cp_tags, cp_source;	/* ConstantPool::_tags, _source_file_name_index */
	uint32_t arr_len, arr_data;	/* Array<int>::_length, Array<u1>::_data */
	int32_t tag_utf8;		/* JVM_CONSTANT_Utf8 */
	int32_t has_lnt;		/* ConstMethod::_has_linenumber_table */
	int32_t fp_method, fp_bcp;	/* the interpreter frame's slots, bytes from fp */
	bool has_interp;		/* interpreted frames can be named */
	bool has_lines;			/* and their lines read */
	/* optional, for compiled frames' scopes (has_scopes) */
	uint32_t cm_scopes_begin;	/* CompiledMethod::_scopes_data_begin */
	uint32_t nm_pcs, nm_deps, nm_metadata; /* nmethod::_scopes_pcs_offset, ... */
	uint32_t pcd_pc, pcd_scope, pcd_size; /* PcDesc::_pc_offset, _scope_decode_offset, sizeof */
	int32_t entry_bci;		/* InvocationEntryBci */
	bool has_scopes;
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
	uint64_t blob;	     /* the CodeBlob */
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

/* A Java method read from a Method* (hotspot__method()). */
struct hotspot_method {
	char name[HOTSPOT_NAME_MAX]; /* pkg.Class.method */
	char file[HOTSPOT_FILE_MAX]; /* its class's source file, "" unknown */
	uint32_t line;		     /* of bci, 0 unknown */
	uint64_t method;	     /* its Method* */
};

/* What names an interpreted frame of a Method* without the VM
 * (hsrecord.h's METHOD): its name and file, its bytecodes [code, code +
 * code_size) and its compressed line-number table, lnt[0..lnt_len) (0:
 * none, or longer than HOTSPOT_LNT_REC_MAX). */
#define HOTSPOT_LNT_REC_MAX 4096u
struct hotspot_method_rec {
	struct hotspot_method m;
	uint64_t code;
	uint16_t code_size;
	size_t lnt_len;
	uint8_t lnt[HOTSPOT_LNT_REC_MAX];
};

/* Method* method's record, checked as hotspot__method() does: 0 with
 * *out, -EINVAL (not a method), or read's error. */
int hotspot__method_rec(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
			uint64_t method, struct hotspot_method_rec *out);

/* The length of the line-number table at t[0..len) up to its end (its 0
 * byte, counted), or -EINVAL (it does not end within len). */
int hotspot__lnt_len(const uint8_t *t, size_t len);

/*
 * The method at Method* `method`, checked against the VM's metadata (a
 * pointer that is not a Method gives no name, never another's): its
 * ConstMethod's pool is its holder's, its name a Utf8 entry of that pool,
 * the Symbols' lengths bounded. bci < 0: no line wanted. 0 with *out,
 * -EINVAL (not a method), or read's error.
 */
int hotspot__method(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
		    uint64_t method, int32_t bci, struct hotspot_method *out);

/*
 * An interpreted frame of frame pointer fp: its Method* and bytecode
 * pointer from the frame's fixed slots (l->fp_method, l->fp_bcp); the
 * bcp must point into that method's bytecodes (a native method's is 0),
 * which ties the Method to the frame. with_line: the line of the bcp (a
 * caller's bcp is saved at its call; the sampled frame's may be older).
 * 0 with *out, -ENOENT (no interpreter layout), -EINVAL, read's error.
 */
int hotspot__interp_frame(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
			  uint64_t fp, bool with_line, struct hotspot_method *out);

/* A compiled frame's Java frames at a pc of its nmethod, innermost first
 * (methods inlined into it, then its own): C2 inlines 15 deep
 * (MaxInlineLevel since JDK 14), so 16 scopes; a longer chain does not
 * read (its frame is marked, hotspot__caller_frame()). */
#define HOTSPOT_SCOPES_MAX 16u
#define HOTSPOT_PCDESC_MAX (1u << 20)

struct hotspot_scope {
	uint64_t method; /* Method* */
	int32_t bci;	 /* < 0: none (its entry) */
};

/*
 * The scopes of the nmethod at blob (code from code_begin) at pc: the
 * PcDesc of pc (exact: the one at pc, a return address; else the first
 * at or after it, as the VM's pc_desc_near), then its scope chain from
 * the scopes data (DebugInfoReadStream: sender offset, metadata index of
 * the Method, bci + InvocationEntryBci; each sender before its scope in
 * the data, so the chain ends), at most HOTSPOT_SCOPES_MAX. The
 * outermost must be the nmethod's own Method. The number of scopes, or
 * -ENOENT (no layout or no PcDesc), -EINVAL, read's error.
 */
int hotspot__scopes(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
		    uint64_t blob, uint64_t code_begin, uint64_t pc, bool exact,
		    struct hotspot_scope *out);

/* A Java frame there that did not read (a method inlined into a compiled
 * caller), or Java frames that may be missing there (a compiled caller
 * whose scopes did not read): a stack never has a hole. */
#define HOTSPOT_UNREADABLE "[java: unreadable frame]"

/*
 * A compiled caller's frame at return address ra of the nmethod c (named:
 * c->name): its own method at the call (the outermost scope of the
 * PcDesc at ra, hotspot__scopes() exact) with its file and line where
 * its class has them (a lambda's hidden class has not) into *m, and the
 * methods inlined at the call into inl[0..size) (NULL: none wanted) as
 * lines of "name\tfile\tline\n", outermost first. Never a hole: a
 * Method that does not read is a HOTSPOT_UNREADABLE line in its place,
 * the lines that do not fit end in one, and scopes that do not read (or
 * do not check out) make the frame c->name under one. 0, or -ENOENT (no
 * layout for scopes, or no PcDesc at ra: a call to no Java code, its
 * name the nmethod's).
 */
int hotspot__caller_frame(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
			  const struct hotspot_code *c, uint64_t ra, struct hotspot_method *m,
			  char *inl, size_t size);

/*
 * The line of bci in a compressed line-number table (HotSpot's
 * CompressedLineNumberReadStream: (bci, line) pairs as deltas, a byte
 * (bci_delta << 3 | line_delta) or 0xff and two signed UNSIGNED5 ints,
 * 0 the end) of at most len bytes: the pair at bci, else the nearest
 * before it, as Method::line_from_bci. 0 with *line, -ENOENT (no pair at
 * or before bci), -EINVAL (the table runs past len or is damaged).
 */
int hotspot__line_of(const uint8_t *table, size_t len, uint32_t bci, uint32_t *line);

/* One of the VM's compressed (UNSIGNED5) ints of t[*pos..len), *pos
 * past it: 0, or -EINVAL (it runs past len). */
int hotspot__read_u5(const uint8_t *t, size_t len, size_t *pos, uint32_t *v);

#endif

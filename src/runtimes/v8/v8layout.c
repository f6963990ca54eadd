// SPDX-License-Identifier: MIT
/*
 * V8's layout from the postmortem constants (src/runtimes/v8/v8reader.h): node
 * exports each as a dynamic symbol v8dbg_NAME whose 4 bytes in the
 * binary's data are the value, so the layout is the running VM's own,
 * for any version that keeps these names (node 18-22: V8 10.2-12.4).
 */
#include "runtimes/v8/v8reader.h"

#include <elf.h>
#include <errno.h>
#include <string.h>

#include "model/elfread.h"

/* What the reader takes, by the constant's name after "v8dbg_". */
static const struct want {
	const char *name;
	size_t off; /* in struct v8_layout */
	int wide;   /* int64_t field (else uint32_t / unsigned) */
	int opt;    /* interpreted frames only: not required */
} wants[] = {
#define W(n, f) { n, offsetof(struct v8_layout, f), 0, 0 }
#define O(n, f) { n, offsetof(struct v8_layout, f), 0, 1 }
	{ "off_fp_function", offsetof(struct v8_layout, fp_function), 1 },
	{ "HeapObjectTag", offsetof(struct v8_layout, heap_tag), 2 },
	{ "HeapObjectTagMask", offsetof(struct v8_layout, heap_tag_mask), 2 },
	W("SmiShiftSize", smi_shift),
	W("class_HeapObject__map__Map", map),
	W("class_Map__instance_type__uint16_t", map_type),
	W("class_JSFunction__shared__SharedFunctionInfo", fn_shared),
	W("class_SharedFunctionInfo__name_or_scope_info__Object", sfi_name),
	W("class_SharedFunctionInfo__script_or_debug_info__HeapObject", sfi_script),
	W("class_Script__name__Object", script_name),
	W("class_String__length__int32_t", str_len),
	W("class_SeqOneByteString__chars__char", seq1_chars),
	W("class_SeqTwoByteString__chars__char", seq2_chars),
	W("class_ConsString__first__String", cons_first),
	W("class_ConsString__second__String", cons_second),
	W("class_ThinString__actual__String", thin_actual),
	W("class_SlicedString__parent__String", sliced_parent),
	W("class_SlicedString__offset__SMI", sliced_offset),
	W("type_JSFunction__JS_FUNCTION_TYPE", t_function),
	W("type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE", t_sfi),
	W("type_Script__SCRIPT_TYPE", t_script),
	W("type_ScopeInfo__SCOPE_INFO_TYPE", t_scope_info),
	W("FirstNonstringType", first_nonstring),
	W("StringRepresentationMask", repr_mask),
	W("StringEncodingMask", enc_mask),
	W("SeqStringTag", seq_tag),
	W("ConsStringTag", cons_tag),
	W("ThinStringTag", thin_tag),
	W("SlicedStringTag", sliced_tag),
	W("OneByteStringTag", one_byte_tag),
	W("scopeinfo_idx_ncontextlocals", si_ncontextlocals),
	W("scopeinfo_idx_first_vars", si_first_vars),
	/* interpreted frames: optional */
	{ "off_fp_context", offsetof(struct v8_layout, fp_context), 1, 1 },
	{ "off_fp_bytecode_array", offsetof(struct v8_layout, fp_bytecode_array), 1, 1 },
	{ "off_fp_bytecode_offset", offsetof(struct v8_layout, fp_bytecode_offset), 1, 1 },
	O("class_SharedFunctionInfo__function_data__Object", sfi_data),
	O("class_Code__bytecode_or_interpreter_data__HeapObject", code_bytecode),
	O("class_FixedArrayBase__length__SMI", array_len),
	O("class_BytecodeArray__data__uintptr_t", bytecode_data),
	O("type_BytecodeArray__BYTECODE_ARRAY_TYPE", t_bytecode),
	O("type_InterpreterData__INTERPRETER_DATA_TYPE", t_interp_data),
	O("type_Code__CODE_TYPE", t_code),
#undef O
#undef W
};
#define NR_WANTS (sizeof(wants) / sizeof(wants[0]))

struct found {
	const struct elfread *e;
	struct v8_layout *l;
	uint64_t have; /* bit per want */
	int32_t ptr_size, bad;
};

/* The 4 bytes at ELF vaddr v of section shndx (.data; 0 in .bss): only
 * that section is read, not the (large) binary. */
static int value_at(const struct elfread *e, uint16_t shndx, uint64_t v, int32_t *out)
{
	struct elfread_section sec;

	if (elfread__section_at(e, shndx, &sec) || v < sec.vaddr || v - sec.vaddr > sec.size ||
	    sec.size - (v - sec.vaddr) < 4)
		return -EINVAL;
	/* (a constant that is 0, SeqStringTag, may sit in .bss) */
	if (sec.type == SHT_NOBITS) {
		*out = 0;
		return 0;
	}
	if (!sec.data)
		return -EINVAL;
	memcpy(out, sec.data + (v - sec.vaddr), 4);
	return 0;
}

static int sym_cb(void *ctx, const struct elfread_sym *s)
{
	struct found *f = ctx;
	int32_t v;

	if (s->shndx == SHN_UNDEF || strncmp(s->name, "v8dbg_", 6))
		return 0;
	if (!strcmp(s->name + 6, "SystemPointerSize")) {
		if (!value_at(f->e, s->shndx, s->value, &v))
			f->ptr_size = v;
		return 0;
	}
	for (size_t i = 0; i < NR_WANTS; i++) {
		char *dst = (char *)f->l + wants[i].off;

		if (strcmp(s->name + 6, wants[i].name))
			continue;
		if (value_at(f->e, s->shndx, s->value, &v)) {
			f->bad |= !wants[i].opt;
			return 0;
		}
		if (wants[i].opt && !wants[i].wide && v < 0)
			return 0; /* (no interpreted frames: a bad optional one) */
		if (wants[i].wide == 1) {
			int64_t w = v;

			memcpy(dst, &w, sizeof(w));
		} else if (wants[i].wide == 2) {
			uint64_t w = (uint64_t)(uint32_t)v;

			memcpy(dst, &w, sizeof(w));
		} else {
			uint32_t u = (uint32_t)v;

			if (v < 0)
				f->bad = 1;
			memcpy(dst, &u, sizeof(u));
		}
		f->have |= 1ull << i;
	}
	return 0;
}

static int slot_ok(int64_t off)
{
	return off < 0 && off >= -256 && off % 8 == 0;
}

int v8layout__from_elf(const struct elfread *e, struct v8_layout *l)
{
	struct found f = { .e = e, .l = l };
	const uint32_t *offs[] = { &l->map, &l->map_type, &l->fn_shared, &l->sfi_name,
				   &l->sfi_script, &l->script_name, &l->str_len, &l->seq1_chars,
				   &l->seq2_chars, &l->cons_first, &l->cons_second,
				   &l->thin_actual, &l->sliced_parent, &l->sliced_offset };
	uint64_t req = 0, interp = 0;

	_Static_assert(NR_WANTS < 64, "one bit per constant");
	for (size_t i = 0; i < NR_WANTS; i++)
		*(wants[i].opt ? &interp : &req) |= 1ull << i;
	memset(l, 0, sizeof(*l));
	elfread__for_each_symbol(e, SHT_DYNSYM, sym_cb, &f);
	if ((f.have & req) != req)
		return -ENOENT;
	/* 8-byte tagged slots only: pointer compression (4-byte slots, a
	 * cage base) is not read here */
	if (f.ptr_size != 8 || l->smi_shift != 31)
		return -ENOENT;
	if (f.bad || l->heap_tag_mask == 0 || l->heap_tag_mask > 7 ||
	    (l->heap_tag & ~l->heap_tag_mask) || !l->heap_tag || l->fp_function % 8 ||
	    l->fp_function < -256 || l->fp_function > 256 || l->first_nonstring > 0x10000 ||
	    l->si_ncontextlocals > 16 || l->si_first_vars > 16)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
		if (*offs[i] > 4096)
			return -EINVAL;
	/* the interpreter's frame slots: below fp, apart, pointer-aligned */
	l->has_interp = (f.have & interp) == interp && slot_ok(l->fp_context) &&
			slot_ok(l->fp_bytecode_array) && slot_ok(l->fp_bytecode_offset) &&
			l->fp_context != l->fp_function && l->fp_bytecode_array != l->fp_function &&
			l->fp_bytecode_offset != l->fp_function &&
			l->fp_bytecode_array != l->fp_bytecode_offset && l->sfi_data <= 4096 &&
			l->code_bytecode <= 4096 && l->array_len <= 4096 && l->bytecode_data <= 4096 &&
			l->bytecode_data > l->array_len;
	l->smi_shift += 1; /* (the tag's own bit) */
	return 0;
}

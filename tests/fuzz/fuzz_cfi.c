// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: CFI interpreter + SFrame conversion + encoding.
 *
 * Input: 8-byte header, then section bytes.
 *   [0]    flags: bit0 .eh_frame present, bit1 .debug_frame present,
 *          bit2 a lazy .plt, bit3 a direct .plt.got, bit4 IBT .plt,
 *          bit5 encode SFrame v2 instead of v3, bit6 the bytes after
 *          .eh_frame are its .eh_frame_hdr too (a search table)
 *   [1..3] where the .eh_frame ends and .debug_frame starts (LE, mod size)
 *   [4..7] .eh_frame vaddr (LE), also the text/GOT bases
 * Every derived table must encode (sframe_encode accepts what cfi_derive
 * makes) and decode again; lookups over it must not fail but by -ENOENT
 * or -ESRCH. A callee-saved register's rule at the functions' addresses
 * (cfi__reg_rule(), the unwinder's replay) is found or not, never more.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/cfi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfi_input in = { 0 };
	struct cfi_stats st;
	struct sframe_encode_opts o = { 3, SFRAME_ABI_AMD64_LE, -8, 0, 0 };
	void *buf = NULL;
	size_t len = 0;

	if (size < 8)
		return 0;
	uint8_t flags = data[0];
	size_t split = (size_t)data[1] | (size_t)data[2] << 8 | (size_t)data[3] << 16;
	uint64_t vaddr = (uint64_t)data[4] | (uint64_t)data[5] << 8 |
			 (uint64_t)data[6] << 16 | (uint64_t)data[7] << 24;
	data += 8;
	size -= 8;
	split = size ? split % (size + 1) : 0;

	if (flags & 1) {
		in.eh_frame = data;
		in.eh_frame_len = split;
		in.eh_frame_vaddr = vaddr;
	}
	if (flags & 2) {
		in.debug_frame = data + split;
		in.debug_frame_len = size - split;
	}
	in.text_vaddr = vaddr & ~0xfffull;
	in.got_vaddr = vaddr + 0x100000;
	if (flags & 4)
		in.plt[in.nr_plt++] = (struct cfi_plt){ vaddr & ~0xfull, 0x40 + (vaddr & 0xff0), 16,
							flags & 16 ? CFI_PLT_LAZY_IBT : CFI_PLT_LAZY };
	if ((flags & 64) && size > split) {
		in.eh_frame_hdr = data + split;
		in.eh_frame_hdr_len = size - split;
		in.eh_frame_hdr_vaddr = vaddr + split;
	}
	if (flags & 8)
		in.plt[in.nr_plt++] = (struct cfi_plt){ vaddr + 0x1000, 0x18, 8, CFI_PLT_DIRECT };

	o.section_vaddr = vaddr + 0x200000;
	if (flags & 32)
		o.version = 2;
	int err = cfi_to_sframe(&in, &o, &buf, &len, &st);
	if (err == -ENOENT || err == -ENOMEM)
		return 0;
	if (err) /* a derived table the encoder refuses is a bug in one of them */
		abort();
	if (st.fdes_rejected > st.fdes)
		abort();

	struct sframe_table *t = NULL;
	if (sframe_table__new_owned(buf, len, o.section_vaddr, &t)) {
		free(buf);
		abort();
	}
	size_t n = sframe_table__nr_funcs(t);
	for (size_t i = 0; i < n && i < 64; i++) {
		struct sframe_func f;
		struct sframe_row r;
		if (sframe_table__func(t, i, &f))
			abort();
		for (uint64_t pc = f.start; pc < f.start + f.size && pc < f.start + 64; pc += 3) {
			err = sframe_table__find(t, pc, &r, NULL);
			if (err && err != -ENOENT && err != -ESRCH)
				abort();
		}
		if (i < 16) {
			static const unsigned regs[] = { 3, 12, 15 };
			struct cfi_reg_rule rr;

			for (unsigned k = 0; k < 3; k++) {
				err = cfi__reg_rule(&in, f.start + (f.size ? k % f.size : 0),
						    regs[k], &rr);
				if ((err && err != -ENOENT && err != -ENOMEM) ||
				    (!err && (rr.kind < CFI_REG_SAME || rr.kind > CFI_REG_OTHER)))
					abort();
			}
		}
	}
	sframe_table__free(t);
	return 0;
}

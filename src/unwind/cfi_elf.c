// SPDX-License-Identifier: MIT
/*
 * The CFI input of an ELF file: its .eh_frame, .debug_frame and
 * .eh_frame_hdr bytes, the .got and .text bases their pointer encodings
 * need, and the PLT sections whose rows cfi_derive() can synthesize.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <gelf.h>
#include <libelf.h>

#include "unwind/cfi.h"

int cfi_input_from_elf(Elf *e, struct cfi_input *in)
{
	GElf_Ehdr eh;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	struct cfi_plt *plt = NULL, *plt_sec = NULL;

	if (!e || !in)
		return -EINVAL;
	memset(in, 0, sizeof(*in));
	if (!gelf_getehdr(e, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_machine != EM_X86_64 || elf_getshdrstrndx(e, &shstrndx))
		return -EINVAL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name)
			continue;
		/* A separate debug file keeps the addresses, not the bytes. */
		if (sh.sh_type == SHT_NOBITS) {
			if (!strcmp(name, ".got"))
				in->got_vaddr = sh.sh_addr;
			else if (!strcmp(name, ".text"))
				in->text_vaddr = sh.sh_addr;
			continue;
		}
		bool is_eh = !strcmp(name, ".eh_frame");
		bool is_dbg = !strcmp(name, ".debug_frame");
		bool is_hdr = !strcmp(name, ".eh_frame_hdr");
		if (!strcmp(name, ".got"))
			in->got_vaddr = sh.sh_addr;
		else if (!strcmp(name, ".text"))
			in->text_vaddr = sh.sh_addr;
		else if ((!strcmp(name, ".plt") || !strcmp(name, ".plt.sec") ||
			  !strcmp(name, ".plt.got")) && in->nr_plt < 4) {
			struct cfi_plt *p = &in->plt[in->nr_plt++];
			p->vaddr = sh.sh_addr;
			p->size = sh.sh_size;
			p->entsize = (uint32_t)sh.sh_entsize;
			p->kind = name[4] ? CFI_PLT_DIRECT : CFI_PLT_LAZY;
			if (!name[4])
				plt = p;
			if (!strcmp(name, ".plt.sec"))
				plt_sec = p;
		}
		if (!is_eh && !is_dbg && !is_hdr)
			continue;
		if (is_dbg && (sh.sh_flags & SHF_COMPRESSED) &&
		    elf_compress(scn, 0, 0) < 0)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || !d->d_size)
			continue;
		if (is_eh) {
			in->eh_frame = d->d_buf;
			in->eh_frame_len = d->d_size;
			in->eh_frame_vaddr = sh.sh_addr;
		} else if (is_dbg) {
			in->debug_frame = d->d_buf;
			in->debug_frame_len = d->d_size;
		} else {
			in->eh_frame_hdr = d->d_buf;
			in->eh_frame_hdr_len = d->d_size;
			in->eh_frame_hdr_vaddr = sh.sh_addr;
		}
	}
	/* With IBT, .plt entries start with endbr64 and .plt.sec holds the jumps. */
	if (plt && plt_sec)
		plt->kind = CFI_PLT_LAZY_IBT;
	return in->eh_frame || in->debug_frame ? 0 : -ENOENT;
}

// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: ELF bytes through dwarf_image__open (compression
 * headers, zlib streams, section layout), then the image through libdw
 * as srcline opens it, with a walk over its units.
 */
#include <elfutils/libdw.h>
#include <stdint.h>
#include <stdlib.h>

#include "symbols/dwarfimage.h"
#include "model/elfread.h"

static volatile uint64_t sink;

/* libdw 0.188's own leaks on corrupt input are elfutils' (see fuzz_srcline.c). */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libdw.so\n";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elfread *e = elfread__open_mem(data, size);
	struct dwarf_image *img = NULL;
	Dwarf *dw;

	if (!e)
		return 0;
	if (!dwarf_image__open(elfread__libelf(e), &img)) {
		if (dwarf_image__size(img) < sizeof(Elf64_Ehdr))
			abort();
		dw = dwarf_begin_elf(dwarf_image__elf(img), DWARF_C_READ, NULL);
		if (dw) {
			Dwarf_Off off = 0, next;
			size_t hsize;
			int n = 0;

			while (n++ < 64 && !dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL)) {
				Dwarf_Die cu;

				if (dwarf_offdie(dw, off + hsize, &cu))
					sink += (uint64_t)dwarf_tag(&cu);
				off = next;
			}
			dwarf_end(dw);
		}
		dwarf_image__free(img);
	}
	elfread__free(e);
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: ELF bytes as a file (a memfd), through elfread's
 * lazy reader (src/model/elfread_file.c): the headers it reads at open
 * by hand before libelf sees them (extended section numbering, tables
 * out of the file), section bytes read as they are looked up, the
 * build-id from notes or PT_NOTE, the libelf handle, and the DWARF fill.
 * Every section's bytes must lie in the image, as with an image in memory.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "model/elfread.h"

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t id[ELFREAD_BUILD_ID_MAX];
	struct elfread_section s;
	struct elfread *e;
	const uint8_t *img;
	size_t len, img_len;
	int fd = memfd_create("fuzz_elffile", MFD_CLOEXEC);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	e = elfread__open_fd(fd);
	close(fd); /* (elfread keeps its own) */
	if (!e)
		return 0;
	if (!elfread__build_id(e, id, &len))
		sink += len;
	if (!elfread__section(e, ".symtab", &s) && s.data)
		sink += s.data[s.size - 1];
	sink += elfread__size(e);
	sink += (uintptr_t)elfread__libelf(e);
	sink += (uint64_t)elfread__fill_dwarf(e);
	img = elfread__image(e, &img_len);
	for (size_t i = 0; i < elfread__nr_sections(e) && i < 4096; i++) {
		if (elfread__section_at(e, i, &s) || !s.data)
			continue;
		if (s.data < img || s.size > img_len || s.data + s.size > img + img_len)
			abort(); /* section bytes must lie in the image */
		sink += s.data[0] + s.data[s.size - 1];
	}
	elfread__free(e);
	return 0;
}

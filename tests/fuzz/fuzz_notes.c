// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the build-id in a bare run of ELF notes
 * (elfread__notes_build_id, fed /sys/kernel/notes for pprof's kernel
 * mapping). Whatever the bytes: no read outside them, and a found id is
 * 1..ELFREAD_BUILD_ID_MAX bytes copied from inside them. Seeds
 * (tests/fuzz/corpus/notes/): this machine's /sys/kernel/notes, a note
 * run without a GNU note and one cut in its descriptor.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/elfread.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t id[ELFREAD_BUILD_ID_MAX];
	size_t len = 0;
	int r = elfread__notes_build_id(data, size, id, &len);

	if (r == 0 && (len == 0 || len > ELFREAD_BUILD_ID_MAX || !memmem(data, size, id, len)))
		abort();
	if (r != 0 && r != -ENOENT)
		abort();
	return 0;
}

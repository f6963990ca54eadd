// SPDX-License-Identifier: MIT
/*
 * sfprof sframe-dump: print a .sframe section the way binutils
 * `objdump --sframe` does, so the two can be compared with diff(1).
 *
 *   sfprof sframe-dump FILE                   the .sframe section of an ELF file
 *   sfprof sframe-dump --raw FILE --base ADDR a raw section loaded at ADDR
 *   sfprof sframe-dump --from-eh-frame FILE   the table derived from FILE's
 *                                             .eh_frame/.debug_frame (cfi.h)
 *
 * Exit status: 0 ok, 1 unreadable file or malformed section, 2 bad usage.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unwind/cfi.h"
#include "cli/cmd.h"
#include "cli/options.h"
#include "unwind/sframe.h"
#include "util.h"

/* Bigger inputs are refused: an ELF file is read whole into memory. */
#define SFRAME_DUMP_FILE_MAX ((size_t)4 << 30)

#ifndef SHT_GNU_SFRAME
#define SHT_GNU_SFRAME 0x6ffffff4
#endif

/* objdump's BFD target name for the ELF header. */
static void elf_format_name(const GElf_Ehdr *eh, char *buf, size_t sz)
{
	int is64 = eh->e_ident[EI_CLASS] == ELFCLASS64;
	int be = eh->e_ident[EI_DATA] == ELFDATA2MSB;

	switch (eh->e_machine) {
	case EM_X86_64:
		snprintf(buf, sz, is64 ? "elf64-x86-64" : "elf32-x86-64");
		break;
	case EM_386:
		snprintf(buf, sz, "elf32-i386");
		break;
	case EM_AARCH64:
		snprintf(buf, sz, "elf%d-%saarch64", is64 ? 64 : 32,
			 be ? "big" : "little");
		break;
	case EM_S390:
		snprintf(buf, sz, "elf%d-s390", is64 ? 64 : 32);
		break;
	default:
		snprintf(buf, sz, "elf%d-%s", is64 ? 64 : 32,
			 be ? "big" : "little");
	}
}

/*
 * Find .sframe in an ELF image: *data and *len point into the image, *vaddr
 * is its sh_addr. 0, -ENOENT (no such section) or -EINVAL (bad ELF).
 */
static int find_sframe(Elf *elf, const uint8_t *img, size_t img_len,
		       const uint8_t **data, size_t *len, uint64_t *vaddr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return -EINVAL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			return -EINVAL;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!(name && !strcmp(name, ".sframe")) &&
		    sh.sh_type != SHT_GNU_SFRAME)
			continue;
		if (sh.sh_flags & SHF_COMPRESSED)
			return -EINVAL;
		*vaddr = sh.sh_addr;
		if (sh.sh_type == SHT_NOBITS || sh.sh_size == 0) {
			*data = img;
			*len = 0;
			return 0;
		}
		if (sh.sh_offset > img_len || sh.sh_size > img_len - sh.sh_offset)
			return -EINVAL;
		*data = img + sh.sh_offset;
		*len = (size_t)sh.sh_size;
		return 0;
	}
	return -ENOENT;
}

static int dump_section(const char *path, const uint8_t *data, size_t len,
			uint64_t vaddr, const char *name)
{
	struct sframe_table *t = NULL;
	int err;

	if (len == 0) /* objdump prints nothing for an empty section */
		return 0;
	err = sframe_table__new(data, len, vaddr, &t);
	if (err) {
		fflush(stdout);
		fprintf(stderr, "sfprof: %s: %s\n", path, sframe_strerror(err));
		return 1;
	}
	err = sframe_table__dump(t, name, stdout);
	sframe_table__free(t);
	return err ? 1 : 0;
}

/* The SFrame table cfi_to_sframe() derives from the ELF's CFI, dumped. */
static int dump_derived(const char *path, Elf *elf)
{
	struct cfi_input in;
	struct sframe_encode_opts o = { 3, SFRAME_ABI_AMD64_LE, -8, 0, 0 };
	void *buf = NULL;
	size_t len = 0;
	int err, rc;

	err = cfi_input_from_elf(elf, &in);
	if (!err) {
		o.section_vaddr = in.eh_frame_vaddr;
		err = cfi_to_sframe(&in, &o, &buf, &len, NULL);
	}
	if (err) {
		fprintf(stderr, "sfprof: %s: cannot derive SFrame from CFI: %s\n",
			path, err <= -SFRAME_E_TRUNCATED ? sframe_strerror(err)
							 : strerror(-err));
		return 1;
	}
	rc = dump_section(path, buf, len, o.section_vaddr, NULL);
	free(buf);
	return rc;
}

/*
 * path's bytes, refused from what its header and size say before any of
 * the rest is read: larger than SFRAME_DUMP_FILE_MAX, empty, or (elf) not
 * starting with the ELF magic. 0, or 1 after a line on stderr.
 */
static int read_input(const char *path, int elf, uint8_t **img, size_t *len)
{
	unsigned char magic[SELFMAG];
	struct stat st;
	int fd = util__open_regular(path, 0, &st), err;

	*img = NULL;
	*len = 0;
	if (fd < 0) {
		fprintf(stderr, "sfprof: %s: %s\n", path, util__strerror(fd));
		return 1;
	}
	if ((uint64_t)st.st_size > SFRAME_DUMP_FILE_MAX) {
		fprintf(stderr, "sfprof: %s: %lld bytes, more than any binary sframe-dump reads "
			"(%zu GiB)\n", path, (long long)st.st_size, SFRAME_DUMP_FILE_MAX >> 30);
		close(fd);
		return 1;
	}
	if (st.st_size == 0) {
		fprintf(stderr, "sfprof: %s: empty file: %s\n", path,
			elf ? "not an ELF file" : "no SFrame section in it");
		close(fd);
		return 1;
	}
	if (elf && (pread(fd, magic, sizeof(magic), 0) != (ssize_t)sizeof(magic) ||
		    memcmp(magic, ELFMAG, SELFMAG))) {
		fprintf(stderr, "sfprof: %s: not an ELF file\n", path);
		close(fd);
		return 1;
	}
	close(fd);
	err = util__read_regular(path, SFRAME_DUMP_FILE_MAX, img, len);
	if (err) {
		fprintf(stderr, "sfprof: %s: %s\n", path, util__strerror(err));
		return 1;
	}
	return 0;
}

static int dump_elf(const char *path, int from_eh)
{
	uint8_t *img = NULL;
	size_t img_len = 0, len = 0;
	const uint8_t *data = NULL;
	uint64_t vaddr = 0;
	Elf *elf = NULL;
	GElf_Ehdr eh;
	char fmt[64];
	int err, rc = 1;

	if (read_input(path, 1, &img, &img_len))
		return 1;
	if (elf_version(EV_CURRENT) == EV_NONE)
		goto err_out;
	elf = elf_memory((char *)img, img_len);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		fprintf(stderr, "sfprof: %s: not an ELF file\n", path);
		goto err_out;
	}
	if (from_eh) {
		elf_format_name(&eh, fmt, sizeof(fmt));
		printf("\n%s:     file format %s\n\n", path, fmt);
		rc = dump_derived(path, elf);
		goto err_out;
	}
	err = find_sframe(elf, img, img_len, &data, &len, &vaddr);
	if (err == -ENOENT) {
		fprintf(stderr, "sfprof: %s: no .sframe section\n", path);
		goto err_out;
	}
	if (err) {
		fprintf(stderr, "sfprof: %s: malformed ELF section headers\n",
			path);
		goto err_out;
	}
	elf_format_name(&eh, fmt, sizeof(fmt));
	printf("\n%s:     file format %s\n\n", path, fmt);
	rc = dump_section(path, data, len, vaddr, NULL);
err_out:
	if (elf)
		elf_end(elf);
	free(img);
	return rc;
}

static int dump_raw(const char *path, uint64_t base)
{
	uint8_t *img = NULL;
	size_t len = 0;
	int rc;

	if (read_input(path, 0, &img, &len))
		return 1;
	rc = dump_section(path, img, len, base, path);
	free(img);
	return rc;
}

int cmd_sframe_dump(int argc, char **argv)
{
	struct sfprof_opts o;
	const char *file;
	int raw, from_eh, rc;
	uint64_t base = 0;

	sfprof_opts__init(&o, SFPROF_CMD_SFRAME_DUMP);
	if (sfprof_opts__parse(&o, argc, argv, stdout, stderr))
		return SFPROF_EXIT_USAGE;
	if (o.help)
		return 0;
	file = o.input;
	raw = o.sframe_raw;
	from_eh = o.from_eh_frame;
	if (o.sframe_base) {
		char *end;

		errno = 0;
		base = strtoull(o.sframe_base, &end, 0);
		if (errno || end == o.sframe_base || *end) {
			fprintf(stderr, "sfprof: bad --base address '%s'\n", o.sframe_base);
			return SFPROF_EXIT_USAGE;
		}
	}
	rc = raw ? dump_raw(file, base) : dump_elf(file, from_eh);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "sfprof: writing the dump: %s\n", strerror(errno));
		return 1;
	}
	return rc;
}

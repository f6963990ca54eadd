// SPDX-License-Identifier: MIT
/* An uncompressed copy of the DWARF sections libdw needs. See src/symbols/dwarfimage.h. */
#include "symbols/dwarfimage_int.h"

#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <zlib.h>

uint64_t dwarf_image_lean_min = DWARF_IMAGE_LEAN_MIN;

/* At most this many sections are kept (the DWARF 5 set is 14). */
#define MAX_KEPT 32

struct kept {
	Elf_Scn *scn;
	const char *name;
	GElf_Shdr sh;
	const unsigned char *src; /* the zlib stream, or the plain bytes */
	size_t src_len;
	uint64_t size, align; /* inflated */
	int compressed;
	size_t off, name_off; /* in the image */
};

/* Debug sections nothing in srcline reads (location lists, macros, CFI,
 * name indexes): left out of the image, so never inflated. */
static int unneeded(const char *name)
{
	static const char *const skip[] = {
		".debug_loc",	   ".debug_loclists", ".debug_macro",
		".debug_macinfo",  ".debug_frame",    ".debug_pubnames",
		".debug_pubtypes", ".debug_gnu_pubnames", ".debug_gnu_pubtypes",
		".debug_names",
	};

	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (!strcmp(name, skip[i]))
			return 1;
	return 0;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* Fill k from scn: 0, -ENOTSUP (not handled here), -EINVAL. */
static int describe(Elf_Scn *scn, struct kept *k)
{
	Elf_Data *raw = elf_rawdata(scn, NULL);
	Elf64_Chdr ch;

	if (!raw || (!raw->d_buf && raw->d_size))
		return -EINVAL;
	k->scn = scn;
	k->src = raw->d_buf;
	k->src_len = raw->d_size;
	k->align = k->sh.sh_addralign ? k->sh.sh_addralign : 1;
	k->size = raw->d_size;
	if (!(k->sh.sh_flags & SHF_COMPRESSED))
		return 0;
	if (raw->d_size < sizeof(ch))
		return -EINVAL;
	memcpy(&ch, raw->d_buf, sizeof(ch));
	if (ch.ch_type != ELFCOMPRESS_ZLIB)
		return -ENOTSUP; /* zstd and others: libdw's own path */
	/* DEFLATE cannot expand more than 1032:1 */
	if (ch.ch_size > DWARF_IMAGE_MAX || ch.ch_size / 1032 > raw->d_size)
		return -EINVAL;
	k->compressed = 1;
	k->src += sizeof(ch);
	k->src_len -= sizeof(ch);
	k->size = ch.ch_size;
	k->align = ch.ch_addralign ? ch.ch_addralign : 1;
	return 0;
}

/* The kept sections of src into k[]: their count, or -errno. */
static int collect(Elf *src, struct kept *k, size_t *names_len, int *any_compressed)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, n = 0;
	int rc;

	if (elf_getshdrstrndx(src, &shstrndx))
		return -EINVAL;
	*names_len = 1 + sizeof(".shstrtab");
	*any_compressed = 0;
	while ((scn = elf_nextscn(src, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			return -EINVAL;
		name = elf_strptr(src, shstrndx, sh.sh_name);
		if (!name)
			return -EINVAL;
		if (!strncmp(name, ".zdebug", 7) || !strcmp(name, ".gnu_debugaltlink"))
			return -ENOTSUP;
		if (strncmp(name, ".debug_", 7) || sh.sh_type == SHT_NOBITS || unneeded(name))
			continue;
		if (n == MAX_KEPT)
			return -ENOTSUP;
		memset(&k[n], 0, sizeof(k[n]));
		k[n].name = name;
		k[n].sh = sh;
		rc = describe(scn, &k[n]);
		if (rc)
			return rc;
		/* a power of two, and not absurd: it is an offset alignment */
		if (k[n].align & (k[n].align - 1) || k[n].align > 4096)
			return -EINVAL;
		*any_compressed |= k[n].compressed;
		*names_len += strlen(name) + 1;
		n++;
	}
	return (int)n;
}

/*
 * zlib, the one DEFLATE library: libelf and libdw need it anyway (and it
 * streams the gzip outputs); libdeflate inflated libc's sections ~2.5x
 * faster, but only on a cold cache (BENCHMARKS.md, "one DEFLATE library").
 */
static int inflate_into(const struct kept *k, void *dst)
{
	z_stream zs = { 0 };
	int r;

	if (!k->compressed) {
		if (k->src_len) /* (an empty section has no data at all) */
			memcpy(dst, k->src, k->src_len);
		return 0;
	}
	if (inflateInit(&zs) != Z_OK)
		return -ENOMEM;
	zs.next_in = (Bytef *)k->src;
	zs.next_out = dst;
	/* in steps: avail_in and avail_out are 32-bit */
	do {
		size_t in_left = k->src_len - (size_t)((const uint8_t *)zs.next_in - k->src);
		size_t out_left = k->size - (size_t)((uint8_t *)zs.next_out - (uint8_t *)dst);

		zs.avail_in = in_left > UINT32_MAX ? UINT32_MAX : (uInt)in_left;
		zs.avail_out = out_left > UINT32_MAX ? UINT32_MAX : (uInt)out_left;
		r = inflate(&zs, Z_FINISH);
	} while (r == Z_OK || (r == Z_BUF_ERROR && zs.avail_out == 0 && zs.total_out < k->size));
	inflateEnd(&zs);
	return r == Z_STREAM_END && zs.total_out == k->size ? 0 : -EINVAL;
}

int dwarf_image__open(Elf *src, struct dwarf_image **out)
{
	return dwarf_image__open_flags(src, 0, out);
}

int dwarf_image__open_flags(Elf *src, unsigned flags, struct dwarf_image **out)
{
	struct kept k[MAX_KEPT];
	struct dwarf_image *img = NULL;
	GElf_Ehdr eh;
	Elf64_Ehdr *ne;
	Elf64_Shdr *sh;
	char *names;
	size_t names_len, off, shoff, total, name_at;
	int n, any_compressed, rc;

	*out = NULL;
	if (elf_kind(src) != ELF_K_ELF || !gelf_getehdr(src, &eh))
		return -EINVAL;
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_type == ET_REL)
		return -ENOTSUP;
	n = collect(src, k, &names_len, &any_compressed);
	if (n < 0)
		return n;
	if (!n)
		return -ENOTSUP;
	if (!any_compressed) {
		uint64_t plain = 0;

		for (int i = 0; i < n; i++)
			plain += k[i].size;
		/* libdw reads plain sections where they are: a copy only
		 * pays when it is read back from the cache, mapped */
		if (!(flags & DWARF_IMAGE_LEAN) || plain < dwarf_image_lean_min)
			return -ENOTSUP;
	}

	/* Ehdr | sections, each aligned | .shstrtab | section headers */
	off = sizeof(Elf64_Ehdr);
	for (int i = 0; i < n; i++) {
		off = align_up(off, k[i].align);
		k[i].off = off;
		off += k[i].size;
		if (off > DWARF_IMAGE_MAX)
			return -EINVAL;
	}
	name_at = off;
	shoff = align_up(off + names_len, 8);
	total = shoff + (size_t)(n + 2) * sizeof(Elf64_Shdr);

	img = calloc(1, sizeof(*img));
	if (!img)
		return -ENOMEM;
	/* fresh pages, faulted in one go (cheaper than on first touch) */
	img->map = mmap(NULL, total, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (img->map == MAP_FAILED) {
		free(img);
		return -ENOMEM;
	}
	img->size = total;

	names = (char *)img->map + name_at;
	names[0] = '\0';
	off = 1;
	for (int i = 0; i < n; i++) {
		size_t l = strlen(k[i].name) + 1;

		k[i].name_off = off;
		memcpy(names + off, k[i].name, l);
		off += l;
		rc = inflate_into(&k[i], (char *)img->map + k[i].off);
		if (rc)
			goto err;
	}
	memcpy(names + off, ".shstrtab", sizeof(".shstrtab"));

	ne = img->map;
	memcpy(ne->e_ident, eh.e_ident, EI_NIDENT);
	ne->e_type = eh.e_type;
	ne->e_machine = eh.e_machine;
	ne->e_version = EV_CURRENT;
	ne->e_flags = eh.e_flags;
	ne->e_ehsize = sizeof(Elf64_Ehdr);
	ne->e_shentsize = sizeof(Elf64_Shdr);
	ne->e_shoff = shoff;
	ne->e_shnum = (uint16_t)(n + 2);
	ne->e_shstrndx = (uint16_t)(n + 1);
	sh = (Elf64_Shdr *)((char *)img->map + shoff);
	for (int i = 0; i < n; i++) {
		sh[i + 1] = (Elf64_Shdr){
			.sh_name = (uint32_t)k[i].name_off,
			.sh_type = k[i].sh.sh_type,
			.sh_flags = k[i].sh.sh_flags & ~(uint64_t)SHF_COMPRESSED,
			.sh_addr = k[i].sh.sh_addr,
			.sh_offset = k[i].off,
			.sh_size = k[i].size,
			.sh_addralign = k[i].align,
			.sh_entsize = k[i].sh.sh_entsize,
		};
	}
	sh[n + 1] = (Elf64_Shdr){
		.sh_name = (uint32_t)off,
		.sh_type = SHT_STRTAB,
		.sh_offset = name_at,
		.sh_size = names_len,
		.sh_addralign = 1,
	};
	img->elf = elf_memory(img->map, total);
	if (!img->elf) {
		rc = -EINVAL;
		goto err;
	}
	*out = img;
	return 0;
err:
	dwarf_image__free(img);
	return rc;
}

Elf *dwarf_image__elf(const struct dwarf_image *img)
{
	return img->elf;
}

int dwarf_image__from_cache(const struct dwarf_image *img)
{
	return img->from_cache;
}

size_t dwarf_image__size(const struct dwarf_image *img)
{
	return img->size;
}

int dwarf_image__trim(struct dwarf_image *img)
{
	if (!img || !img->mapped)
		return 0; /* a private copy: MADV_DONTNEED would zero it */
	return !madvise(img->map, img->size, MADV_DONTNEED);
}

void dwarf_image__free(struct dwarf_image *img)
{
	if (!img)
		return;
	if (img->elf)
		elf_end(img->elf);
	munmap(img->map, img->size);
	free(img);
}

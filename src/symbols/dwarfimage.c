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
#include <unistd.h>
#include <zlib.h>

#include "util.h"

uint64_t dwarf_image_lean_min = DWARF_IMAGE_LEAN_MIN;
size_t dwarf_image_write_chunk = 1u << 20;

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

/* What an image of src holds and where: the kept sections, each at its
 * offset, then the section names, then the section headers. */
struct plan {
	struct kept k[MAX_KEPT];
	int n;
	GElf_Ehdr eh;
	size_t names_len, name_at, shoff, total;
};

/* p for src: 0, or -errno (-ENOTSUP: no image to make). */
static int plan(Elf *src, unsigned flags, struct plan *p)
{
	int any_compressed;
	size_t off;

	if (elf_kind(src) != ELF_K_ELF || !gelf_getehdr(src, &p->eh))
		return -EINVAL;
	if (p->eh.e_ident[EI_CLASS] != ELFCLASS64 || p->eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    p->eh.e_type == ET_REL)
		return -ENOTSUP;
	p->n = collect(src, p->k, &p->names_len, &any_compressed);
	if (p->n < 0)
		return p->n;
	if (!p->n)
		return -ENOTSUP;
	if (!any_compressed) {
		uint64_t plain = 0;

		for (int i = 0; i < p->n; i++)
			plain += p->k[i].size;
		/* libdw reads plain sections where they are: a copy only
		 * pays when it is read back from the cache, mapped */
		if (!(flags & DWARF_IMAGE_LEAN) || plain < dwarf_image_lean_min)
			return -ENOTSUP;
	}
	/* Ehdr | sections, each aligned | .shstrtab | section headers */
	off = sizeof(Elf64_Ehdr);
	for (int i = 0; i < p->n; i++) {
		off = align_up(off, p->k[i].align);
		p->k[i].off = off;
		off += p->k[i].size;
		if (off > DWARF_IMAGE_MAX)
			return -EINVAL;
	}
	p->name_at = off;
	p->shoff = align_up(off + p->names_len, 8);
	p->total = p->shoff + (size_t)(p->n + 2) * sizeof(Elf64_Shdr);
	return 0;
}

/* The ELF header, the names (names_len bytes) and the n + 2 section
 * headers of p's image. */
static void headers(struct plan *p, Elf64_Ehdr *ne, char *names, Elf64_Shdr *sh)
{
	size_t off = 1;

	names[0] = '\0';
	for (int i = 0; i < p->n; i++) {
		size_t l = strlen(p->k[i].name) + 1;

		p->k[i].name_off = off;
		memcpy(names + off, p->k[i].name, l);
		off += l;
	}
	memcpy(names + off, ".shstrtab", sizeof(".shstrtab"));
	memset(ne, 0, sizeof(*ne));
	memcpy(ne->e_ident, p->eh.e_ident, EI_NIDENT);
	ne->e_type = p->eh.e_type;
	ne->e_machine = p->eh.e_machine;
	ne->e_version = EV_CURRENT;
	ne->e_flags = p->eh.e_flags;
	ne->e_ehsize = sizeof(Elf64_Ehdr);
	ne->e_shentsize = sizeof(Elf64_Shdr);
	ne->e_shoff = p->shoff;
	ne->e_shnum = (uint16_t)(p->n + 2);
	ne->e_shstrndx = (uint16_t)(p->n + 1);
	memset(&sh[0], 0, sizeof(sh[0]));
	for (int i = 0; i < p->n; i++) {
		const struct kept *k = &p->k[i];

		sh[i + 1] = (Elf64_Shdr){
			.sh_name = (uint32_t)k->name_off,
			.sh_type = k->sh.sh_type,
			.sh_flags = k->sh.sh_flags & ~(uint64_t)SHF_COMPRESSED,
			.sh_addr = k->sh.sh_addr,
			.sh_offset = k->off,
			.sh_size = k->size,
			.sh_addralign = k->align,
			.sh_entsize = k->sh.sh_entsize,
		};
	}
	sh[p->n + 1] = (Elf64_Shdr){
		.sh_name = (uint32_t)off,
		.sh_type = SHT_STRTAB,
		.sh_offset = p->name_at,
		.sh_size = p->names_len,
		.sh_addralign = 1,
	};
}

/* Where inflated bytes go: into memory (fd < 0), or written to fd at
 * off through a buffer of cap bytes. */
struct sink {
	char *dst;
	int fd;
	uint64_t off;
	char *buf;
	size_t cap;
};

/*
 * zlib, the one DEFLATE library: libelf and libdw need it anyway (and it
 * streams the gzip outputs); libdeflate inflated libc's sections ~2.5x
 * faster, but only on a cold cache (BENCHMARKS.md, "one DEFLATE library").
 * k's bytes at to->dst + k->off, or written to to->fd at k->off a buffer
 * at a time (an image made as a file never sits whole in memory).
 */
static int inflate_into(const struct kept *k, const struct sink *to)
{
	z_stream zs = { 0 };
	uint64_t done = 0;
	int r;

	if (!k->compressed) {
		if (!k->src_len) /* (an empty section has no data at all) */
			return 0;
		if (to->fd < 0) {
			memcpy(to->dst + k->off, k->src, k->src_len);
			return 0;
		}
		return util__pwrite_all(to->fd, k->src, k->src_len, k->off);
	}
	if (inflateInit(&zs) != Z_OK)
		return -ENOMEM;
	zs.next_in = (Bytef *)k->src;
	/* in steps: avail_in and avail_out are 32-bit, the buffer smaller */
	for (;;) {
		size_t in_left = k->src_len - (size_t)((const uint8_t *)zs.next_in - k->src);
		size_t out_left = k->size - done, step, got;
		char *out = to->fd < 0 ? to->dst + k->off + done : to->buf;
		uInt in_before;

		step = to->fd < 0 || out_left < to->cap ? out_left : to->cap;
		zs.next_out = (Bytef *)out;
		zs.avail_in = in_left > UINT32_MAX ? UINT32_MAX : (uInt)in_left;
		zs.avail_out = step > UINT32_MAX ? UINT32_MAX : (uInt)step;
		in_before = zs.avail_in;
		r = inflate(&zs, Z_FINISH);
		got = (size_t)((char *)zs.next_out - out);
		if (to->fd >= 0 && got && util__pwrite_all(to->fd, out, got, k->off + done)) {
			r = Z_ERRNO;
			break;
		}
		done += got;
		/* (Z_FINISH: Z_BUF_ERROR until the end, progress or not) */
		if ((r != Z_OK && r != Z_BUF_ERROR) || (!got && zs.avail_in == in_before))
			break; /* the end, an error, or no progress */
	}
	inflateEnd(&zs);
	if (r == Z_ERRNO)
		return -EIO;
	return r == Z_STREAM_END && zs.total_out == k->size && done == k->size ? 0 : -EINVAL;
}

int dwarf_image__open(Elf *src, struct dwarf_image **out)
{
	return dwarf_image__open_flags(src, 0, out);
}

int dwarf_image__open_flags(Elf *src, unsigned flags, struct dwarf_image **out)
{
	struct plan *p = malloc(sizeof(*p));
	struct dwarf_image *img = NULL;
	struct sink to = { .fd = -1 };
	int rc;

	*out = NULL;
	if (!p)
		return -ENOMEM;
	rc = plan(src, flags, p);
	if (rc)
		goto err;
	rc = -ENOMEM;
	img = calloc(1, sizeof(*img));
	if (!img)
		goto err;
	/* fresh pages, faulted in one go (cheaper than on first touch) */
	img->map = mmap(NULL, p->total, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (img->map == MAP_FAILED) {
		free(img);
		img = NULL;
		goto err;
	}
	img->size = p->total;
	to.dst = img->map;
	headers(p, img->map, (char *)img->map + p->name_at,
		(Elf64_Shdr *)((char *)img->map + p->shoff));
	for (int i = 0; i < p->n; i++)
		if ((rc = inflate_into(&p->k[i], &to)))
			goto err;
	img->elf = elf_memory(img->map, img->size);
	if (!img->elf) {
		rc = -EINVAL;
		goto err;
	}
	free(p);
	*out = img;
	return 0;
err:
	free(p);
	dwarf_image__free(img);
	return rc;
}

int dwarf_image__write(Elf *src, unsigned flags, int fd)
{
	struct plan *p = malloc(sizeof(*p));
	struct sink to = { .fd = fd, .cap = dwarf_image_write_chunk ? dwarf_image_write_chunk : 1 };
	char *hdr = NULL;
	size_t shlen;
	int rc;

	if (!p)
		return -ENOMEM;
	rc = plan(src, flags, p);
	if (rc)
		goto out;
	shlen = (size_t)(p->n + 2) * sizeof(Elf64_Shdr);
	rc = -ENOMEM;
	to.buf = malloc(to.cap);
	hdr = malloc(sizeof(Elf64_Ehdr) + p->names_len + shlen);
	if (!to.buf || !hdr)
		goto out;
	/* Ehdr | Shdr[] | names: each aligned */
	headers(p, (Elf64_Ehdr *)hdr, hdr + sizeof(Elf64_Ehdr) + shlen,
		(Elf64_Shdr *)(hdr + sizeof(Elf64_Ehdr)));
	/* sized first: the gaps of the alignments read as zeros */
	if (ftruncate(fd, (off_t)p->total)) {
		rc = -errno;
		goto out;
	}
	rc = util__pwrite_all(fd, hdr, sizeof(Elf64_Ehdr), 0);
	for (int i = 0; !rc && i < p->n; i++)
		rc = inflate_into(&p->k[i], &to);
	if (!rc)
		rc = util__pwrite_all(fd, hdr + sizeof(Elf64_Ehdr) + shlen, p->names_len, p->name_at);
	if (!rc)
		rc = util__pwrite_all(fd, hdr + sizeof(Elf64_Ehdr), shlen, p->shoff);
out:
	free(hdr);
	free(to.buf);
	free(p);
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

// SPDX-License-Identifier: MIT
/*
 * Validated ELF access on top of libelf. See src/model/elfread.h.
 *
 * libelf parses the ELF and section headers; everything else (notes,
 * symbols, strings, section bytes) is read here from the image with each
 * offset and length checked first. Only images in the host's byte order
 * are accepted: libelf may convert other images in place, and sfprof
 * profiles the machine it runs on.
 */
#include "model/elfread_int.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_ELFDATA ELFDATA2LSB
#else
#define HOST_ELFDATA ELFDATA2MSB
#endif


/*
 * A PIE executable and a shared library are both ET_DYN; the linker marks
 * the former with DF_1_PIE in DT_FLAGS_1 (binutils >= 2.26, lld). Read
 * from PT_DYNAMIC, bounds-checked against the image.
 */
static int dynamic_says_pie(const struct elfread *e, size_t phnum)
{
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		size_t esz = e->img[EI_CLASS] == ELFCLASS64 ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);

		if (!gelf_getphdr(e->elf, (int)i, &ph) || ph.p_type != PT_DYNAMIC ||
		    !in_image(e, ph.p_offset, ph.p_filesz) || elfread__fill(e, ph.p_offset, ph.p_filesz))
			continue;
		for (uint64_t off = 0; off + esz <= ph.p_filesz; off += esz) {
			uint64_t tag, val;

			if (esz == sizeof(Elf64_Dyn)) {
				Elf64_Dyn d;

				memcpy(&d, e->img + ph.p_offset + off, sizeof(d));
				tag = (uint64_t)d.d_tag, val = d.d_un.d_val;
			} else {
				Elf32_Dyn d;

				memcpy(&d, e->img + ph.p_offset + off, sizeof(d));
				tag = (uint64_t)(int64_t)d.d_tag, val = d.d_un.d_val;
			}
			if (tag == DT_NULL)
				break;
			if (tag == DT_FLAGS_1)
				return (val & DF_1_PIE) != 0;
		}
	}
	return 0;
}

int elfread__init(struct elfread *e)
{
	size_t phnum = 0, i;

	if (e->len < EI_NIDENT || memcmp(e->img, ELFMAG, SELFMAG) != 0 ||
	    e->img[EI_DATA] != HOST_ELFDATA ||
	    (e->img[EI_CLASS] != ELFCLASS64 && e->img[EI_CLASS] != ELFCLASS32))
		return -EINVAL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	e->elf = elf_memory((char *)e->img, e->len);
	if (!e->elf || elf_kind(e->elf) != ELF_K_ELF)
		return -EINVAL;
	if (!gelf_getehdr(e->elf, &e->ehdr))
		return -EINVAL;
	if (elf_getshdrnum(e->elf, &e->shnum) != 0)
		e->shnum = 0;
	if (elf_getshdrstrndx(e->elf, &e->shstrndx) != 0 ||
	    e->shstrndx >= e->shnum)
		e->shstrndx = SHN_UNDEF;
	/* libelf checked that the section header table lies in the image. */

	if (elf_getphdrnum(e->elf, &phnum) != 0)
		phnum = 0;
	for (i = 0; i < phnum && e->nr_loads < MAX_LOADS; i++) {
		GElf_Phdr ph;
		struct elfread_load *l;

		if (!gelf_getphdr(e->elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		/* Reject wrapping ranges; nothing else can use them. */
		if (ph.p_offset + ph.p_filesz < ph.p_offset ||
		    ph.p_vaddr + ph.p_memsz < ph.p_vaddr ||
		    ph.p_filesz > ph.p_memsz)
			continue;
		l = &e->loads[e->nr_loads++];
		l->vaddr = ph.p_vaddr;
		l->memsz = ph.p_memsz;
		l->offset = ph.p_offset;
		l->filesz = ph.p_filesz;
		l->align = ph.p_align;
		l->flags = ph.p_flags;
	}
	e->is_exec = dynamic_says_pie(e, phnum);
	if (e->ehdr.e_type == ET_EXEC)
		e->is_exec = 1;
	return 0;
}


/* The section name table, read once (every section_at() names one). */
void elfread__init_shstr(struct elfread *e)
{
	uint32_t unused;

	e->have_shstr = e->shstrndx != SHN_UNDEF &&
			!elfread__section_raw(e, e->shstrndx, &e->shstr, &unused, 1);
}

static struct elfread *elfread__new(const void *img, size_t len, void *owned,
				    void *map)
{
	struct elfread *e = calloc(1, sizeof(*e));
	int err;

	if (!e)
		return NULL;
	e->img = img;
	e->len = len;
	e->owned = owned;
	e->map = map;
	err = elfread__init(e);
	if (err) {
		/* On failure the caller keeps ownership of the bytes. */
		e->owned = NULL;
		e->map = NULL;
		elfread__free(e);
		errno = -err;
		return NULL;
	}
	elfread__init_shstr(e);
	return e;
}

struct elfread *elfread__open_mem(const void *image, size_t len)
{
	if (!image) {
		errno = EINVAL;
		return NULL;
	}
	return elfread__new(image, len, NULL, NULL);
}

struct elfread *elfread__open_mem_owned(void *image, size_t len)
{
	struct elfread *e;

	if (!image) {
		errno = EINVAL;
		return NULL;
	}
	e = elfread__new(image, len, image, NULL);
	if (!e) {
		int saved = errno;

		free(image);
		errno = saved;
	}
	return e;
}


void elfread__free(struct elfread *e)
{
	if (!e)
		return;
	if (e->elf)
		elf_end(e->elf);
	if (e->map)
		munmap(e->map, e->len);
	elfread__lazy_free(e->lazy);
	free(e->owned);
	free(e);
}

const uint8_t *elfread__image(const struct elfread *e, size_t *len)
{
	/* (a file that shrank since open reads as zeros past its end) */
	elfread__fill_for_libelf(e);
	if (len)
		*len = e->len;
	return e->img;
}

size_t elfread__size(const struct elfread *e)
{
	return e->len;
}

void *elfread__libelf(const struct elfread *e)
{
	elfread__fill_for_libelf(e);
	return e->elf;
}

unsigned elfread__type(const struct elfread *e)
{
	return e->ehdr.e_type;
}

int elfread__is_executable(const struct elfread *e)
{
	return e->is_exec;
}

unsigned elfread__machine(const struct elfread *e)
{
	return e->ehdr.e_machine;
}

int elfread__is_64(const struct elfread *e)
{
	return e->img[EI_CLASS] == ELFCLASS64;
}

size_t elfread__nr_sections(const struct elfread *e)
{
	return e->shnum;
}

/* A NUL-terminated string at off inside the section's bytes, or NULL. */
const char *elfread__section_str(const struct elfread_section *s, uint64_t off)
{
	if (!s->data || off >= s->size)
		return NULL;
	if (!memchr(s->data + off, '\0', s->size - off))
		return NULL;
	return (const char *)s->data + off;
}

/* Headers of section idx, without its name. */
/* Headers of section idx, without its name; with want, its bytes too
 * (read from the file if not yet). Without, data points at bytes that
 * may not be read yet: for the name and type only. */
int elfread__section_raw(const struct elfread *e, size_t idx, struct elfread_section *out,
			 uint32_t *name_off, int want)
{
	GElf_Shdr sh;
	Elf_Scn *scn;

	memset(out, 0, sizeof(*out));
	out->name = "";
	*name_off = 0;
	if (idx >= e->shnum)
		return -ENOENT;
	scn = elf_getscn(e->elf, idx);
	if (!scn || !gelf_getshdr(scn, &sh))
		return -EINVAL;
	out->type = sh.sh_type;
	out->flags = sh.sh_flags;
	out->vaddr = sh.sh_addr;
	out->offset = sh.sh_offset;
	out->size = sh.sh_size;
	out->entsize = sh.sh_entsize;
	out->link = sh.sh_link;
	out->index = idx;
	*name_off = sh.sh_name;
	if (sh.sh_type == SHT_NOBITS || sh.sh_type == SHT_NULL || !sh.sh_size)
		return 0;
	if (!in_image(e, sh.sh_offset, sh.sh_size))
		return -EINVAL;
	if (want && elfread__fill(e, sh.sh_offset, sh.sh_size))
		return -EINVAL;
	out->data = e->img + sh.sh_offset;
	return 0;
}

int elfread__section_at(const struct elfread *e, size_t idx,
			struct elfread_section *out)
{
	uint32_t name_off;
	const char *name;
	int err;

	err = elfread__section_raw(e, idx, out, &name_off, 1);
	if (err)
		return err;
	if (e->have_shstr) {
		name = elfread__section_str(&e->shstr, name_off);
		if (name)
			out->name = name;
	}
	return 0;
}

static int section_named(const struct elfread *e, const char *name,
			 struct elfread_section *out, int want)
{
	size_t i;

	if (!e->have_shstr)
		return -ENOENT;
	for (i = 1; i < e->shnum; i++) {
		uint32_t name_off;
		const char *n;

		if (elfread__section_raw(e, i, out, &name_off, 0) == -ENOENT)
			break;
		n = elfread__section_str(&e->shstr, name_off);
		if (!n || strcmp(n, name) != 0)
			continue;
		/* Found by name: now its bytes must be valid. */
		if (elfread__section_raw(e, i, out, &name_off, want))
			return -EINVAL;
		if (!want)
			out->data = NULL;
		out->name = n;
		return 0;
	}
	memset(out, 0, sizeof(*out));
	out->name = "";
	return -ENOENT;
}

int elfread__section(const struct elfread *e, const char *name,
		     struct elfread_section *out)
{
	return section_named(e, name, out, 1);
}

int elfread__section_header(const struct elfread *e, const char *name,
			    struct elfread_section *out)
{
	return section_named(e, name, out, 0);
}

int elfread__section_header_at(const struct elfread *e, size_t idx,
			       struct elfread_section *out)
{
	uint32_t name_off;
	int err = elfread__section_raw(e, idx, out, &name_off, 0);

	out->data = NULL;
	return err;
}

int elfread__shdr_table(const struct elfread *e, uint64_t *off, uint64_t *size)
{
	if (!e->ehdr.e_shoff || !e->shnum)
		return -ENOENT;
	*off = e->ehdr.e_shoff;
	*size = (uint64_t)e->shnum * e->ehdr.e_shentsize;
	return 0;
}

int elfread__phdr_table(const struct elfread *e, uint64_t *off, uint64_t *size)
{
	if (!e->ehdr.e_phoff || !e->ehdr.e_phnum)
		return -ENOENT;
	*off = e->ehdr.e_phoff;
	*size = (uint64_t)e->ehdr.e_phnum * e->ehdr.e_phentsize;
	return 0;
}

uint64_t elfread__needed_size(const struct elfread *e)
{
	uint64_t need = 0, end;

	/* (the header's own counts: libelf drops a table it cannot read) */
	if (e->ehdr.e_shoff) {
		end = e->ehdr.e_shoff + (uint64_t)e->ehdr.e_shnum * e->ehdr.e_shentsize;
		need = end > need ? end : need;
	}
	if (e->ehdr.e_phoff) {
		end = e->ehdr.e_phoff + (uint64_t)e->ehdr.e_phnum * e->ehdr.e_phentsize;
		need = end > need ? end : need;
	}
	for (size_t i = 0; i < e->nr_loads; i++) {
		end = e->loads[i].offset + e->loads[i].filesz;
		need = end > need ? end : need;
	}
	return need;
}

size_t elfread__nr_loads(const struct elfread *e)
{
	return e->nr_loads;
}

int elfread__load(const struct elfread *e, size_t i, struct elfread_load *out)
{
	if (i >= e->nr_loads)
		return -ENOENT;
	*out = e->loads[i];
	return 0;
}

int elfread__offset_to_vaddr(const struct elfread *e, uint64_t off,
			     uint64_t *vaddr)
{
	const struct elfread_load *best = NULL;
	size_t i;

	for (i = 0; i < e->nr_loads; i++) {
		const struct elfread_load *l = &e->loads[i];

		if (off < l->offset || off - l->offset >= l->filesz)
			continue;
		if (!best || ((l->flags & PF_X) && !(best->flags & PF_X)))
			best = l;
	}
	if (!best)
		return -ENOENT;
	*vaddr = off - best->offset + best->vaddr;
	return 0;
}

int elfread__mapping_bias(const struct elfread *e, uint64_t start,
			  uint64_t off, int64_t *bias)
{
	const struct elfread_load *best = NULL;
	int best_rank = -1;
	size_t i;

	/*
	 * The loader maps each PT_LOAD from p_offset rounded down to a page,
	 * so the mapping's offset is at most a page below p_offset.
	 * Runtime(X) = start + X - off and vaddr(X) = X - p_offset + p_vaddr
	 * for every file offset X of the segment, so the difference does
	 * not depend on X.
	 */
	for (i = 0; i < e->nr_loads; i++) {
		const struct elfread_load *l = &e->loads[i];
		uint64_t lo = l->offset & ~(uint64_t)0xfff;
		uint64_t hi = l->offset + (l->filesz ? l->filesz : 1);
		int rank;

		if (off < lo || off >= hi)
			continue;
		rank = (off >= l->offset) * 2 + !!(l->flags & PF_X);
		if (rank > best_rank) {
			best = l;
			best_rank = rank;
		}
	}
	if (!best)
		return -ENOENT;
	*bias = (int64_t)(start - off + best->offset - best->vaddr);
	return 0;
}

/*
 * Walk ELF notes in [p, p + len): returns the build-id descriptor.
 * Note layout: namesz, descsz, type (4 bytes each), name, desc, each
 * padded to `align` (4, or 8 in SHF_ALLOC 8-aligned note sections).
 */
static int notes_build_id(const uint8_t *p, uint64_t len, uint64_t align,
			  uint8_t *id, size_t *id_len)
{
	uint64_t pos = 0;

	if (align != 8)
		align = 4;
	while (len - pos >= 12) {
		uint32_t namesz, descsz, type;
		uint64_t name_pad, desc_pad;

		memcpy(&namesz, p + pos, 4);
		memcpy(&descsz, p + pos + 4, 4);
		memcpy(&type, p + pos + 8, 4);
		pos += 12;
		name_pad = ((uint64_t)namesz + align - 1) & ~(align - 1);
		desc_pad = ((uint64_t)descsz + align - 1) & ~(align - 1);
		if (name_pad > len - pos)
			return -ENOENT;
		if (desc_pad > len - pos - name_pad) {
			/* The last note's padding may be missing. */
			if (descsz > len - pos - name_pad)
				return -ENOENT;
			desc_pad = descsz;
		}
		if (type == NT_GNU_BUILD_ID && namesz == 4 &&
		    !memcmp(p + pos, "GNU", 4) && descsz > 0 &&
		    descsz <= ELFREAD_BUILD_ID_MAX) {
			memcpy(id, p + pos + name_pad, descsz);
			*id_len = descsz;
			return 0;
		}
		pos += name_pad + desc_pad;
	}
	return -ENOENT;
}

int elfread__notes_build_id(const void *notes, size_t len, uint8_t *id, size_t *id_len)
{
	if (!notes || !id || !id_len)
		return -EINVAL;
	return notes_build_id(notes, len, 4, id, id_len);
}

int elfread__build_id(const struct elfread *e, uint8_t *id, size_t *len)
{
	size_t i, phnum = 0;

	for (i = 1; i < e->shnum; i++) {
		struct elfread_section s;
		uint32_t name_off;
		GElf_Shdr sh;

		if (elfread__section_raw(e, i, &s, &name_off, 0) || s.type != SHT_NOTE ||
		    !s.data || elfread__section_raw(e, i, &s, &name_off, 1))
			continue;
		if (!gelf_getshdr(elf_getscn(e->elf, i), &sh))
			continue;
		if (!notes_build_id(s.data, s.size, sh.sh_addralign, id, len))
			return 0;
	}
	/* No section headers (or no note section): the PT_NOTE segments. */
	if (elf_getphdrnum(e->elf, &phnum) != 0)
		return -ENOENT;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e->elf, i, &ph) || ph.p_type != PT_NOTE ||
		    !in_image(e, ph.p_offset, ph.p_filesz) || elfread__fill(e, ph.p_offset, ph.p_filesz))
			continue;
		if (!notes_build_id(e->img + ph.p_offset, ph.p_filesz,
				    ph.p_align, id, len))
			return 0;
	}
	return -ENOENT;
}

int elfread__debuglink(const struct elfread *e, const char **name,
		       uint32_t *crc)
{
	struct elfread_section s;
	const char *n;
	uint64_t crc_off;

	if (elfread__section(e, ".gnu_debuglink", &s) || !s.data)
		return -ENOENT;
	n = elfread__section_str(&s, 0);
	if (!n || !*n)
		return -EINVAL;
	/* The CRC follows the name, 4-byte aligned. */
	crc_off = (strlen(n) + 1 + 3) & ~(uint64_t)3;
	if (crc_off > s.size || s.size - crc_off < 4)
		return -EINVAL;
	memcpy(crc, s.data + crc_off, 4);
	*name = n;
	return 0;
}

/* The symbol table of type sht and its string table. */
static int symbol_tables(const struct elfread *e, uint32_t sht,
			 struct elfread_section *syms,
			 struct elfread_section *strs)
{
	uint32_t unused;
	size_t idx;

	/* (by header alone: their names are not needed) */
	for (idx = 1; idx < e->shnum; idx++) {
		if (elfread__section_raw(e, idx, syms, &unused, 0) == 0 &&
		    syms->type == sht && syms->data)
			break;
	}
	if (idx >= e->shnum || elfread__section_raw(e, idx, syms, &unused, 1))
		return -ENOENT;
	if (elfread__section_raw(e, syms->link, strs, &unused, 1) || !strs->data ||
	    strs->type != SHT_STRTAB)
		return -ENOENT;
	return 0;
}

/* The decoded fields of a raw entry, its name aside. */
static uint32_t sym_of_raw(int is_64, const uint8_t *syms, uint64_t i, struct elfread_sym *s)
{
	struct elfread_raw_sym r;

	elfread_raw_sym__read(is_64, syms, i, &r);
	s->value = r.value;
	s->size = r.size;
	s->shndx = r.shndx;
	s->type = ELF64_ST_TYPE(r.info); /* (the same bits as ELF32_ST_*) */
	s->bind = ELF64_ST_BIND(r.info);
	return r.name;
}

/* Decode symbol i (in bounds) of syms; 0, or -ENOENT for a bad name.
 * names_len: bytes of strs in which every offset starts a NUL-terminated
 * string (elfread_symtab.strs_len), or 0 to check this name alone. */
static int decode_symbol(const struct elfread *e,
			 const struct elfread_section *syms,
			 const struct elfread_section *strs, uint64_t names_len,
			 uint64_t i, struct elfread_sym *s)
{
	uint32_t name_off = sym_of_raw(elfread__is_64(e), syms->data, i, s);

	if (names_len)
		s->name = name_off < names_len ?
			(const char *)strs->data + name_off : NULL;
	else
		s->name = elfread__section_str(strs, name_off);
	return s->name ? 0 : -ENOENT;
}

static size_t sym_entsize(const struct elfread *e)
{
	return elfread__is_64(e) ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
}

/* Bytes of a string table up to and including its last NUL: a string at
 * any offset below it is terminated inside the table. */
static uint64_t names_len(const struct elfread_section *strs)
{
	const uint8_t *nul = memrchr(strs->data, '\0', strs->size);

	return nul ? (uint64_t)(nul - strs->data) + 1 : 0;
}

int elfread__symbol_table(const struct elfread *e, uint32_t sht,
			  struct elfread_symtab *out)
{
	struct elfread_section syms, strs;

	memset(out, 0, sizeof(*out));
	if (symbol_tables(e, sht, &syms, &strs))
		return -ENOENT;
	out->is_64 = elfread__is_64(e);
	out->entsize = sym_entsize(e);
	out->nr = syms.size / out->entsize;
	out->syms = syms.data;
	out->strs = (const char *)strs.data;
	out->strs_len = names_len(&strs);
	return 0;
}

int elfread_symtab__get(const struct elfread_symtab *t, uint64_t idx,
			struct elfread_sym *out)
{
	uint32_t name_off;

	if (idx >= t->nr)
		return -ENOENT;
	name_off = sym_of_raw(t->is_64, t->syms, idx, out);
	if (name_off >= t->strs_len)
		return -ENOENT;
	out->name = t->strs + name_off;
	return 0;
}

int elfread__for_each_symbol(const struct elfread *e, uint32_t sht,
			     elfread_sym_fn cb, void *ctx)
{
	struct elfread_section syms, strs;
	uint64_t i, n, len;
	int ret;

	if (symbol_tables(e, sht, &syms, &strs))
		return -ENOENT;
	n = syms.size / sym_entsize(e);
	len = names_len(&strs);
	if (!len)
		return 0; /* no name in the table is terminated */
	for (i = 0; i < n; i++) {
		struct elfread_sym s;

		if (decode_symbol(e, &syms, &strs, len, i, &s))
			continue;
		ret = cb(ctx, &s);
		if (ret)
			return ret;
	}
	return 0;
}

int elfread__symbol(const struct elfread *e, uint32_t sht, uint64_t idx,
		    struct elfread_sym *out)
{
	struct elfread_section syms, strs;

	if (symbol_tables(e, sht, &syms, &strs) ||
	    idx >= syms.size / sym_entsize(e))
		return -ENOENT;
	return decode_symbol(e, &syms, &strs, 0, idx, out);
}

struct elfread *elfread__open_gnu_debugdata(const struct elfread *e,
					    size_t max_len)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	struct elfread_section s;
	uint8_t *out = NULL, *nb;
	size_t cap = 0;
	lzma_ret lr;
	int err;

	if (!max_len)
		max_len = 256u << 20;
	if (elfread__section(e, ".gnu_debugdata", &s) || !s.data) {
		errno = ENOENT;
		return NULL;
	}
	if (lzma_stream_decoder(&strm, 256u << 20, 0) != LZMA_OK) {
		errno = ENOMEM;
		return NULL;
	}
	strm.next_in = s.data;
	strm.avail_in = s.size;
	for (;;) {
		if (strm.avail_out == 0) {
			size_t ncap = cap ? cap * 2 : (s.size * 4 + 4096);

			if (cap >= max_len) {
				err = EFBIG;
				goto err_out;
			}
			if (ncap > max_len)
				ncap = max_len;
			nb = realloc(out, ncap);
			if (!nb) {
				err = ENOMEM;
				goto err_out;
			}
			out = nb;
			strm.next_out = out + cap;
			strm.avail_out = ncap - cap;
			cap = ncap;
		}
		lr = lzma_code(&strm, LZMA_FINISH);
		if (lr == LZMA_STREAM_END)
			break;
		if (lr != LZMA_OK) {
			err = lr == LZMA_MEM_ERROR ? ENOMEM : EINVAL;
			goto err_out;
		}
	}
	lzma_end(&strm);
	/* open_mem_owned frees `out` on failure. */
	return elfread__open_mem_owned(out, cap - strm.avail_out);

err_out:
	lzma_end(&strm);
	free(out);
	errno = err;
	return NULL;
}

char *elfread__hex(const uint8_t *id, size_t len, char *buf)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		buf[2 * i] = digits[id[i] >> 4];
		buf[2 * i + 1] = digits[id[i] & 15];
	}
	buf[2 * len] = '\0';
	return buf;
}

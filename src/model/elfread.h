/* SPDX-License-Identifier: MIT */
/*
 * Validated access to one ELF image: sections by name, PT_LOAD segments
 * (for runtime address <-> ELF vaddr translation), the GNU build-id note,
 * .gnu_debuglink, symbols of .symtab/.dynsym, and the MiniDebugInfo image
 * in .gnu_debugdata.
 *
 * The image is hostile input. libelf (elfutils) parses the headers; every
 * offset, size and string that comes out of it is checked again against
 * the image bounds before a pointer is formed. Section data pointers point
 * into the image, never past its end; SHT_NOBITS sections have data NULL.
 *
 * Ownership: an elfread owns its libelf handle; the image is borrowed
 * (elfread__open_mem), owned and free()d (elfread__open_mem_owned), or an
 * private copy the elfread made and unmaps (elfread__open, elfread__open_fd).
 * Every pointer returned (section data, names) lives until elfread__free().
 * Not thread-safe per object; separate objects are independent.
 * A file is read into anonymous memory, never mapped: a mapping (as with
 * libelf's ELF_C_READ_MMAP, which perf uses) faults with SIGBUS when a
 * target truncates the file in place while it is open. A file that
 * shrinks while read is refused (ESTALE) and counted
 * (elfread__nr_changed).
 */
#ifndef SFPROF_ELFREAD_H
#define SFPROF_ELFREAD_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define ELFREAD_BUILD_ID_MAX 64 /* bytes; GNU ld uses 20 (sha1) */
/* Larger files are refused (EFBIG): the largest debug files of big C++
 * programs are a few GiB; a bigger "binary" named in a capture is junk. */
#define ELFREAD_FILE_MAX (16ull << 30)

struct elfread;

struct elfread_section {
	const char *name;	 /* "" when unnamed */
	const uint8_t *data;	 /* NULL for SHT_NOBITS or empty */
	uint64_t size;		 /* sh_size (bytes at data, unless NOBITS) */
	uint64_t vaddr;		 /* sh_addr */
	uint64_t offset;	 /* sh_offset */
	uint64_t flags;		 /* SHF_* */
	uint64_t entsize;	 /* sh_entsize */
	uint32_t type;		 /* SHT_* */
	uint32_t link;		 /* sh_link */
	uint32_t index;
};

struct elfread_load {
	uint64_t vaddr, memsz;	 /* p_vaddr, p_memsz */
	uint64_t offset, filesz; /* p_offset, p_filesz */
	uint64_t align;
	uint32_t flags;		 /* PF_X | PF_W | PF_R */
};

struct elfread_sym {
	const char *name;	/* never NULL; "" when unnamed */
	uint64_t value, size;
	uint16_t shndx;
	uint8_t type;		/* STT_* */
	uint8_t bind;		/* STB_* */
};

/* Constructors: NULL + errno (EINVAL: not an ELF image libelf accepts). */
struct elfread *elfread__open_mem(const void *image, size_t len);
struct elfread *elfread__open_mem_owned(void *image, size_t len);
struct elfread *elfread__open_fd(int fd); /* copies; fd may be closed after */
struct elfread *elfread__open(const char *path);
void elfread__free(struct elfread *e); /* NULL is a no-op */
/* Files refused so far (all elfreads) because they shrank while read. */
uint64_t elfread__nr_changed(void);

/* len bytes at file offset off, read from the file only as far as they
 * go (elfread__image reads all of it): 0, -EINVAL (outside the image),
 * -ESTALE (the file shrank). */
int elfread__read(const struct elfread *e, uint64_t off, void *buf, size_t len);
/* The whole image (a file's: read in full first, but its DWARF). */
const uint8_t *elfread__image(const struct elfread *e, size_t *len);
size_t elfread__size(const struct elfread *e); /* without reading anything */
/* The bytes its headers say the file holds (the header tables and the
 * loaded segments): more than elfread__size() for a truncated file. */
uint64_t elfread__needed_size(const struct elfread *e);
/* The libelf handle (an Elf *), for code that takes one (cfi.h). It lives
 * as long as e; do not elf_end() it. Every section but the DWARF
 * (.debug_* other than .debug_frame) is read by then; before libdw,
 * elfread__fill_dwarf() (0, or -ESTALE when the file shrank: its DWARF is
 * not to be trusted). */
void *elfread__libelf(const struct elfread *e);
int elfread__fill_dwarf(const struct elfread *e);
/* The libelf handle with only some sections read (a file's header tables
 * and section names always are), for a reader that looks at no other:
 * CFI (.eh_frame, .eh_frame_hdr, .debug_frame), or every section not
 * loaded (SHF_ALLOC clear: DWARF, .symtab). A big binary's code and data
 * are most of it, and what is read stays in memory until dropped. */
enum { ELFREAD_FILL_CFI = 1u << 0, ELFREAD_FILL_UNALLOC = 1u << 1 };
void *elfread__libelf_some(const struct elfread *e, unsigned what);
/*
 * Give back the memory of a file's pages read so far: they are read from
 * the file again when next wanted (elfread__section, _libelf, _image,
 * _fill_dwarf). ELFREAD_DROP_ALL: every page but the header tables' and
 * the section names'; else only the pages holding nothing but the
 * sections named: .symtab, .strtab, .dynsym, .dynstr (SYMBOLS), the DWARF
 * (DWARF), or every section tables are made of (TABLES: those,
 * .eh_frame(_hdr), .sframe, .gnu_debugdata). Only when nothing holds a pointer into what
 * is dropped (a symbol table copies its names; the unwind and line tables
 * made of the rest are freed first). Returns the bytes given back; 0 for
 * an image in memory.
 */
enum {
	ELFREAD_DROP_SYMBOLS = 1u << 0,
	ELFREAD_DROP_DWARF = 1u << 1,
	ELFREAD_DROP_TABLES = 1u << 2,
	ELFREAD_DROP_ALL = 1u << 3,
};
size_t elfread__drop_pages(const struct elfread *e, unsigned what);
unsigned elfread__type(const struct elfread *e);    /* ET_EXEC, ET_DYN, ... */
unsigned elfread__machine(const struct elfread *e); /* EM_X86_64, ... */
/* A program's executable (ET_EXEC, or ET_DYN marked DF_1_PIE), not a
 * shared library: 1 or 0. */
int elfread__is_executable(const struct elfread *e);
int elfread__is_64(const struct elfread *e);

size_t elfread__nr_sections(const struct elfread *e);
/* Section by index or by name (first match). 0, -ENOENT, or -EINVAL when
 * the header points outside the image. */
int elfread__section_at(const struct elfread *e, size_t idx,
			struct elfread_section *out);
int elfread__section(const struct elfread *e, const char *name,
		     struct elfread_section *out);
/* elfread__section(_at) without its bytes (data NULL; nothing read). */
int elfread__section_header(const struct elfread *e, const char *name,
			    struct elfread_section *out);
int elfread__section_header_at(const struct elfread *e, size_t idx,
			       struct elfread_section *out);
/* Where the section / program header tables are in the file: 0, -ENOENT. */
int elfread__shdr_table(const struct elfread *e, uint64_t *off, uint64_t *size);
int elfread__phdr_table(const struct elfread *e, uint64_t *off, uint64_t *size);

/* PT_LOAD segments in program header order. */
size_t elfread__nr_loads(const struct elfread *e);
int elfread__load(const struct elfread *e, size_t i, struct elfread_load *out);

/*
 * ELF vaddr of a file offset: the PT_LOAD whose [p_offset, p_offset +
 * p_filesz) holds it (a PF_X segment wins when several do). 0 / -ENOENT.
 */
int elfread__offset_to_vaddr(const struct elfread *e, uint64_t off,
			     uint64_t *vaddr);

/*
 * Load bias of a mapping: runtime address = ELF vaddr + bias, for a file
 * mapping [start, end) at file offset `off` (as in /proc/PID/maps). The
 * segment chosen is the one holding `off` (rounded to its page). Works for
 * ET_EXEC (bias 0), PIE and shared objects alike. 0 / -ENOENT.
 */
int elfread__mapping_bias(const struct elfread *e, uint64_t start,
			  uint64_t off, int64_t *bias);

/* GNU build-id: copies up to ELFREAD_BUILD_ID_MAX bytes. 0 / -ENOENT. */
int elfread__build_id(const struct elfread *e, uint8_t *id, size_t *len);

/* The GNU build-id in a bare run of 4-aligned ELF notes, such as
 * /sys/kernel/notes (the running kernel's): 0, -ENOENT (none), -EINVAL. */
int elfread__notes_build_id(const void *notes, size_t len, uint8_t *id, size_t *id_len);

/* .gnu_debuglink: file name (NUL-terminated inside the section) and CRC. */
int elfread__debuglink(const struct elfread *e, const char **name,
		       uint32_t *crc);

/*
 * Calls cb for each symbol of the table of type `sht` (SHT_SYMTAB or
 * SHT_DYNSYM); a nonzero return from cb stops and is returned. Symbols
 * whose name lies outside the string table are skipped. Returns 0,
 * -ENOENT (no such table) or cb's value.
 */
typedef int (*elfread_sym_fn)(void *ctx, const struct elfread_sym *sym);
int elfread__for_each_symbol(const struct elfread *e, uint32_t sht,
			     elfread_sym_fn cb, void *ctx);

/*
 * The raw symbol table of type sht, for readers that decode it in bulk:
 * nr entries of entsize bytes (Elf64_Sym when is_64, else Elf32_Sym, in
 * host byte order, possibly unaligned: memcpy them out) at syms, all
 * inside the image; its string table at strs, where any st_name below
 * strs_len starts a NUL-terminated string inside the table (strs_len is
 * 0 when no name is terminated) and any other st_name is invalid.
 * 0 or -ENOENT (no such table, or no string table for it).
 */
struct elfread_symtab {
	const uint8_t *syms;
	uint64_t nr;
	size_t entsize;
	const char *strs;
	uint64_t strs_len;
	int is_64;
};
int elfread__symbol_table(const struct elfread *e, uint32_t sht,
			  struct elfread_symtab *out);

/* The fields of one entry of such a table, as the file has them. */
struct elfread_raw_sym {
	uint64_t value, size;
	uint32_t name; /* st_name */
	uint16_t shndx;
	uint8_t info;
};

/* Entry idx (in bounds) of the entries at syms: the one decoder of the
 * Elf64_Sym and Elf32_Sym layouts. */
static inline void elfread_raw_sym__read(int is_64, const uint8_t *syms, uint64_t idx,
					 struct elfread_raw_sym *r)
{
	if (is_64) {
		Elf64_Sym es;

		memcpy(&es, syms + idx * sizeof(es), sizeof(es));
		*r = (struct elfread_raw_sym){ es.st_value, es.st_size, es.st_name,
					       es.st_shndx, es.st_info };
	} else {
		Elf32_Sym es;

		memcpy(&es, syms + idx * sizeof(es), sizeof(es));
		*r = (struct elfread_raw_sym){ es.st_value, es.st_size, es.st_name,
					       es.st_shndx, es.st_info };
	}
}
/* Symbol number idx of such a table: 0, or -ENOENT (idx out of range, or
 * its name invalid). */
int elfread_symtab__get(const struct elfread_symtab *t, uint64_t idx,
			struct elfread_sym *out);

/* Symbol number idx of the table of type sht. 0, -ENOENT (no table, idx
 * out of range, or its name outside the string table). */
int elfread__symbol(const struct elfread *e, uint32_t sht, uint64_t idx,
		    struct elfread_sym *out);

/*
 * MiniDebugInfo: decompress .gnu_debugdata (xz) into a new elfread that
 * owns the bytes. At most `max_len` output bytes (0: 256 MiB). NULL +
 * errno: ENOENT (no section), EINVAL (corrupt), EFBIG (over max_len).
 */
struct elfread *elfread__open_gnu_debugdata(const struct elfread *e,
					    size_t max_len);

/* Lowercase hex of id[len] into buf (2 * len + 1 bytes). Returns buf. */
char *elfread__hex(const uint8_t *id, size_t len, char *buf);

#endif

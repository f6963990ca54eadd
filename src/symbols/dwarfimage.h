/* SPDX-License-Identifier: MIT */
/*
 * An uncompressed in-memory copy of the DWARF sections that source lines
 * and inline frames need, for libdw to read instead of the file.
 *
 * Why: libdw 0.188's dwarf_begin_elf() inflates every compressed debug
 * section with zlib when the Dwarf is made. libc6-dbg's debug file holds
 * 10 MB of them; that cost about 60 ms of every report with a libc frame
 * (BENCHMARKS.md, srcline). Here only the sections that dwarf_addrdie,
 * dwarf_getscopes and the line table read are kept (not .debug_loclists,
 * .debug_loc, .debug_macro, .debug_frame or the pubnames), and they are
 * inflated with libdeflate, 2.5x faster than zlib on this data.
 *
 * dwarf_image__open() declines (-ENOTSUP) whatever it does not handle
 * exactly, so the caller gives the ELF to libdw as before: nothing to
 * gain (no kept section is compressed), a 32-bit or big-endian ELF, a
 * relocatable object (libdw applies relocations to those), another
 * compression than zlib, GNU .zdebug_ sections, or a dwz alt link.
 *
 * Every length in the ELF is checked: a compression header must fit its
 * section, the inflated size must be what the header says and at most
 * DWARF_IMAGE_MAX bytes in all; a bad stream is -EINVAL.
 *
 * A cache keeps images between runs (dwarf_image__open_cached), since
 * inflating libc's is still ~20 ms: DIR/xx/yyyy/dwarf-LEN-vN, by the
 * build-id and length of the file the sections were read from, like the
 * build-id cache (directories 0700, files 0600, written to a temporary
 * name and renamed, nothing followed through a symlink). An entry is used
 * only when it is a regular file owned by this user, writable by no one
 * else, and an ELF whose sections libdw takes as before; anything else is
 * rebuilt from the source. The cache holds at most
 * $SFPROF_DWARF_CACHE_MB MiB (default 512): each store drops the least
 * recently used images beyond it (an entry's mtime is its last use). DIR: $SFPROF_DWARF_CACHE ("" turns the cache
 * off), else $XDG_CACHE_HOME/sfprof/dwarf, else $HOME/.cache/sfprof/dwarf.
 *
 * Ownership: the image owns its memory and its Elf handle; the Elf lives
 * until dwarf_image__free(), which must come after dwarf_end() of any
 * Dwarf made from it. The source Elf is only read during the call.
 */
#ifndef SFPROF_DWARFIMAGE_H
#define SFPROF_DWARFIMAGE_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

#define DWARF_IMAGE_MAX (1ull << 31) /* bytes of sections, inflated */

struct dwarf_image;

/* 0 and *out; -ENOTSUP (use src as it is), -EINVAL, -ENOMEM. */
int dwarf_image__open(Elf *src, struct dwarf_image **out);

/*
 * DWARF_IMAGE_LEAN, for a process that stays up (the agent, --interval):
 * plain (uncompressed) sections are copied into an image too when they
 * hold at least DWARF_IMAGE_LEAN_MIN bytes, and an image is used only
 * through the cache, read back as the cache file's mapping (without
 * MADV_HUGEPAGE): libdw then faults in the pages it reads (one CU's
 * lines, the unit headers), shared with the page cache and given back at
 * munmap, where from the binary's own file every byte of its DWARF had
 * to be read into private memory first (elfread_file.c: files are never
 * mapped). A -g libpython held 29 MiB so (BENCHMARKS.md, agent memory).
 * Without a cache directory, or when the store fails, -ENOTSUP.
 */
#define DWARF_IMAGE_LEAN 1u
#define DWARF_IMAGE_LEAN_MIN (4ull << 20)
/* DWARF_IMAGE_LEAN_MIN, lowered by the unit tests (their fixtures are small) */
extern uint64_t dwarf_image_lean_min;
int dwarf_image__open_flags(Elf *src, unsigned flags, struct dwarf_image **out);
/* Which file an image is of: its build-id and its length in bytes. */
struct dwarf_image_key {
	const uint8_t *id;
	size_t id_len;
	uint64_t file_len;
};

/* The default cache directory into buf: 0, -ENOENT (no cache: none of
 * the variables set, or $SFPROF_DWARF_CACHE empty), -ENAMETOOLONG. */
int dwarf_image__cache_dir(char *buf, size_t size);

/* The stored image only (nothing read from src but its ELF header):
 * 0, or -errno when there is no good one. flags: DWARF_IMAGE_LEAN maps
 * it without MADV_HUGEPAGE. */
int dwarf_image__load_cached(Elf *src, const char *dir, const struct dwarf_image_key *key,
			     unsigned flags, struct dwarf_image **out);

/*
 * As dwarf_image__open, through the cache at dir (NULL: none): the
 * stored image when there is a good one, else one made from src and
 * stored (a failure to store only costs the next run its time).
 */
int dwarf_image__open_cached(Elf *src, const char *dir,
			     const struct dwarf_image_key *key,
			     struct dwarf_image **out);
/* The same with dwarf_image__open_flags' flags. */
int dwarf_image__open_cached_flags(Elf *src, const char *dir,
				   const struct dwarf_image_key *key, unsigned flags,
				   struct dwarf_image **out);
#define DWARF_CACHE_MAX_DEFAULT (512ull << 20)
/*
 * Removes the least recently used images below dir until the rest take at
 * most max_bytes of disk; *removed (may be NULL) counts them. 0 or -errno
 * (dir not openable). Temporary files of a store under way are left alone.
 */
int dwarf_image__cache_trim(const char *dir, uint64_t max_bytes, unsigned *removed);
/* The same over several cache directories at once (the DWARF cache's and
 * the build-id cache's: one bound for both, their binary copies "elf"
 * counted by the disk they take, least recently used dropped first);
 * directories are skipped when NULL or not openable, -ENOENT when none
 * is. */
int dwarf_image__cache_trim_all(const char *const *dirs, size_t nr, uint64_t max_bytes,
				unsigned *removed);
/* The bound: $SFPROF_DWARF_CACHE_MB MiB, else DWARF_CACHE_MAX_DEFAULT. */
uint64_t dwarf_image__cache_max(void);
/* 1 when img was read from the cache, else 0. */
int dwarf_image__from_cache(const struct dwarf_image *img);
Elf *dwarf_image__elf(const struct dwarf_image *img);
size_t dwarf_image__size(const struct dwarf_image *img); /* bytes mapped */
void dwarf_image__free(struct dwarf_image *img);	 /* NULL is a no-op */
/*
 * Give back the pages of an image read from the cache that this process
 * maps now (MADV_DONTNEED on the file's read-only mapping: the page
 * cache keeps them, and libdw's next read faults them in again, the same
 * bytes); its Dwarf stays valid. A private image (made in memory,
 * without DWARF_IMAGE_LEAN) is left alone. 1 when trimmed, else 0.
 */
int dwarf_image__trim(struct dwarf_image *img);

#endif

// SPDX-License-Identifier: MIT
/* A file's bytes for elfread (src/model/elfread.h), read into private
 * memory as they are wanted, never mapped. */
#include "model/elfread_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/*
 * A file is never mapped: a target can truncate its own binary while it
 * is open here, and a mapped page past the new end (even one copied on
 * write: truncation drops those too) faults with SIGBUS in whatever
 * touches it next, libdw included. Its bytes are read instead into
 * anonymous memory of the file's size (MAP_NORESERVE: pages never read
 * cost nothing), page by page as they are first wanted: the headers at
 * open, a section's bytes when it is looked up, everything else a
 * libelf user may read when the Elf is handed out (elfread__libelf), and
 * the DWARF only when asked for (elfread__fill_dwarf). A page that
 * can no longer be read (the file shrank) stays zeros, the read fails,
 * and the file is counted once (elfread__nr_changed).
 */
#define LAZY_PAGE 4096u

struct lazy {
	int fd;
	int changed;
	int all, dwarf; /* elfread__libelf / _dwarf filled it so */
	uint8_t *done;	/* a bit per page */
};

/* Binaries dropped because their file changed size while read. */
static uint64_t nr_changed;

uint64_t elfread__nr_changed(void)
{
	return __atomic_load_n(&nr_changed, __ATOMIC_RELAXED);
}

/* [off, end) of the file into dst + off, skipping holes (SEEK_DATA): a
 * sparse file costs what it holds, not what it claims. 0, -ESTALE when
 * the file ended early, -errno. */
static int read_range(int fd, uint8_t *dst, uint64_t off, uint64_t end)
{
	while (off < end) {
		off_t data = lseek(fd, (off_t)off, SEEK_DATA), hole;
		uint64_t stop;

		if (data < 0 && errno == ENXIO)
			return -ESTALE; /* nothing but a hole to the end, or shrunk */
		if (data < 0)
			data = (off_t)off; /* no SEEK_DATA here: read it all */
		if ((uint64_t)data >= end)
			return 0;
		hole = lseek(fd, data, SEEK_HOLE);
		stop = hole < 0 || (uint64_t)hole > end || hole <= data ? end : (uint64_t)hole;
		for (off = (uint64_t)data; off < stop;) {
			ssize_t n = pread(fd, dst + off, stop - off, (off_t)off);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return -errno;
			if (n == 0)
				return -ESTALE;
			off += (uint64_t)n;
		}
	}
	return 0;
}

/* Make [off, off + size) of the image hold the file's bytes: 0 or -errno. */
int elfread__fill(const struct elfread *e, uint64_t off, uint64_t size)
{
	struct lazy *lz = e->lazy;
	uint64_t p, last, run;
	int err;

	if (!lz || !size)
		return 0;
	if (!in_image(e, off, size))
		return -EINVAL;
	if (lz->changed)
		return -ESTALE;
	last = (off + size - 1) / LAZY_PAGE;
	for (p = off / LAZY_PAGE; p <= last; p = run) {
		if (lz->done[p / 8] & (1u << (p % 8))) {
			run = p + 1;
			continue;
		}
		for (run = p; run <= last && !(lz->done[run / 8] & (1u << (run % 8))); run++)
			lz->done[run / 8] |= (uint8_t)(1u << (run % 8));
		err = read_range(lz->fd, e->map, p * LAZY_PAGE,
				 run * LAZY_PAGE < e->len ? run * LAZY_PAGE : e->len);
		if (err) {
			if (err == -ESTALE) {
				lz->changed = 1;
				__atomic_fetch_add(&nr_changed, 1, __ATOMIC_RELAXED);
			}
			return err;
		}
	}
	return 0;
}

/* The ELF, program and section header tables, before libelf sees them
 * (it reads them at elf_memory and elf_getshdr). */
static int fill_headers(struct elfread *e)
{
	const uint8_t *h = e->img;
	uint64_t phoff, shoff, phn, shn, phes, shes;

	if (elfread__fill(e, 0, e->len < sizeof(Elf64_Ehdr) ? e->len : sizeof(Elf64_Ehdr)))
		return -EINVAL;
	if (e->len < EI_NIDENT || memcmp(h, ELFMAG, SELFMAG) != 0)
		return -EINVAL;
	if (h[EI_CLASS] == ELFCLASS64 && e->len >= sizeof(Elf64_Ehdr)) {
		Elf64_Ehdr eh;

		memcpy(&eh, h, sizeof(eh));
		phoff = eh.e_phoff, shoff = eh.e_shoff;
		phn = eh.e_phnum, shn = eh.e_shnum;
		phes = eh.e_phentsize, shes = eh.e_shentsize;
	} else if (h[EI_CLASS] == ELFCLASS32 && e->len >= sizeof(Elf32_Ehdr)) {
		Elf32_Ehdr eh;

		memcpy(&eh, h, sizeof(eh));
		phoff = eh.e_phoff, shoff = eh.e_shoff;
		phn = eh.e_phnum, shn = eh.e_shnum;
		phes = eh.e_phentsize, shes = eh.e_shentsize;
	} else {
		return -EINVAL;
	}
	/* (extended numbering: the count is in section 0's header) */
	if (shoff && !shn && shes >= sizeof(Elf64_Shdr) / 2 && in_image(e, shoff, shes)) {
		if (elfread__fill(e, shoff, shes))
			return -EINVAL;
		if (h[EI_CLASS] == ELFCLASS64 && shes >= sizeof(Elf64_Shdr)) {
			Elf64_Shdr s0;

			memcpy(&s0, h + shoff, sizeof(s0));
			shn = s0.sh_size;
		} else if (h[EI_CLASS] == ELFCLASS32 && shes >= sizeof(Elf32_Shdr)) {
			Elf32_Shdr s0;

			memcpy(&s0, h + shoff, sizeof(s0));
			shn = s0.sh_size;
		}
	}
	/* tables out of the file are libelf's to refuse */
	if (phn && phes && phn <= e->len / phes && in_image(e, phoff, phn * phes) &&
	    elfread__fill(e, phoff, phn * phes))
		return -EINVAL;
	if (shn && shes && shn <= e->len / shes && in_image(e, shoff, shn * shes) &&
	    elfread__fill(e, shoff, shn * shes))
		return -EINVAL;
	return 0;
}

/* Every byte a libelf user may read: all of the file but the DWARF
 * (.debug_*, other than .debug_frame, which unwinders read) and holes. */
int elfread__fill_for_libelf(const struct elfread *e)
{
	struct lazy *lz = e->lazy;
	size_t i;

	if (!lz || lz->all)
		return lz && lz->changed ? -ESTALE : 0;
	for (i = 0; i < e->nr_loads; i++)
		if (elfread__fill(e, e->loads[i].offset, e->loads[i].filesz))
			return -ESTALE;
	for (i = 1; i < e->shnum; i++) {
		struct elfread_section sec;
		uint32_t name_off;
		const char *n;

		if (elfread__section_raw(e, i, &sec, &name_off, 0) == -ENOENT)
			break;
		n = e->have_shstr ? elfread__section_str(&e->shstr, name_off) : NULL;
		if (!sec.data || (n && (!strncmp(n, ".debug_", 7) || !strncmp(n, ".zdebug_", 8)) &&
				  strcmp(n, ".debug_frame")))
			continue;
		elfread__section_raw(e, i, &sec, &name_off, 1);
	}
	lz->all = 1;
	return lz->changed ? -ESTALE : 0;
}

int elfread__read(const struct elfread *e, uint64_t off, void *buf, size_t len)
{
	if (!in_image(e, off, len))
		return -EINVAL;
	if (elfread__fill(e, off, len))
		return -ESTALE;
	memcpy(buf, e->img + off, len);
	return 0;
}

static int is_cfi(const char *n)
{
	return !strcmp(n, ".eh_frame") || !strcmp(n, ".eh_frame_hdr") ||
	       !strcmp(n, ".debug_frame");
}

void *elfread__libelf_some(const struct elfread *e, unsigned what)
{
	struct lazy *lz = e->lazy;

	if (!lz || lz->all)
		return e->elf;
	for (size_t i = 1; i < e->shnum; i++) {
		struct elfread_section sec;
		uint32_t name_off;
		const char *n;

		if (elfread__section_raw(e, i, &sec, &name_off, 0) == -ENOENT)
			break;
		if (!sec.data && (sec.type == SHT_NOBITS || !sec.size))
			continue;
		n = e->have_shstr ? elfread__section_str(&e->shstr, name_off) : NULL;
		if (((what & ELFREAD_FILL_CFI) && n && is_cfi(n)) ||
		    ((what & ELFREAD_FILL_UNALLOC) && !(sec.flags & SHF_ALLOC)))
			elfread__section_raw(e, i, &sec, &name_off, 1);
	}
	return e->elf;
}

/* DWARF readers read sections not loaded (.debug_*, their string and
 * relocation tables, .gnu_debugaltlink): not the code and data, which a
 * big binary has most of. */
int elfread__fill_dwarf(const struct elfread *e)
{
	struct lazy *lz = e->lazy;

	if (!lz)
		return 0;
	if (!lz->dwarf) {
		elfread__libelf_some(e, ELFREAD_FILL_UNALLOC);
		lz->dwarf = 1;
	}
	return lz->changed ? -ESTALE : 0;
}

struct elfread *elfread__open_fd(int fd)
{
	struct elfread *e;
	struct lazy *lz;
	struct stat st;
	size_t pages;
	void *map;
	int err, borrowed = 0;

	if (fstat(fd, &st) != 0)
		return NULL;
	if (!S_ISREG(st.st_mode) || st.st_size < EI_NIDENT) {
		errno = EINVAL;
		return NULL;
	}
	if ((uint64_t)st.st_size > SIZE_MAX ||
	    (uint64_t)st.st_size > ELFREAD_FILE_MAX) {
		errno = EFBIG;
		return NULL;
	}
	pages = ((size_t)st.st_size + LAZY_PAGE - 1) / LAZY_PAGE;
	e = calloc(1, sizeof(*e));
	lz = calloc(1, sizeof(*lz));
	map = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (lz)
		lz->done = calloc((pages + 7) / 8, 1);
	/* its own fd, kept for the reads to come; with none left (EMFILE),
	 * the caller's, and the whole file read now */
	if (lz) {
		lz->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (lz->fd < 0 && (errno == EMFILE || errno == ENFILE)) {
			lz->fd = fd;
			borrowed = 1;
		}
	}
	if (!e || !lz || !lz->done || lz->fd < 0 || map == MAP_FAILED) {
		err = lz && lz->fd < 0 ? errno : ENOMEM;
		goto err_out;
	}
	e->img = map;
	e->map = map;
	e->len = st.st_size;
	e->lazy = lz;
	lz = NULL;
	if (fill_headers(e)) {
		err = e->lazy->changed ? ESTALE : EINVAL;
		if (borrowed)
			e->lazy->fd = -1;
		elfread__free(e);
		errno = err;
		return NULL;
	}
	err = elfread__init(e);
	if (err) {
		err = e->lazy->changed ? ESTALE : -err;
		if (borrowed)
			e->lazy->fd = -1;
		elfread__free(e);
		errno = err;
		return NULL;
	}
	elfread__init_shstr(e);
	if (borrowed) {
		err = elfread__fill(e, 0, e->len);
		e->lazy->fd = -1; /* (the caller's: not closed here) */
		if (err) {
			elfread__free(e);
			errno = -err;
			return NULL;
		}
	}
	return e;

err_out:
	if (map != MAP_FAILED)
		munmap(map, st.st_size);
	if (lz) {
		if (lz->fd >= 0 && !borrowed)
			close(lz->fd);
		free(lz->done);
	}
	free(lz);
	free(e);
	errno = err;
	return NULL;
}

struct elfread *elfread__open(const char *path)
{
	struct elfread *e;
	/* regular files only, never a blocking open: debug-file candidates
	 * come from names inside binaries (symlinks followed: .build-id/) */
	int fd = util__open_regular(path, 0, NULL);
	int saved;

	if (fd < 0) {
		errno = fd == -UTIL_E_NOT_REGULAR ? EINVAL : -fd;
		return NULL;
	}
	e = elfread__open_fd(fd);
	saved = errno;
	close(fd);
	errno = saved;
	return e;
}

/* Sections only the tables made of them read (symbols, unwind rows,
 * DWARF lines): their owners free those before the pages go. The rest
 * (code, data) is read through elfread at each use (proc__read_code,
 * the runtimes' probes), except what a runtime keeps pointers into
 * (Go's .gopclntab): ELFREAD_DROP_TABLES then. */
static int is_dwarf(const char *n)
{
	return !strncmp(n, ".debug_", 7) || !strncmp(n, ".zdebug_", 8);
}

static int droppable(const char *n, unsigned what)
{
	int sym = !strcmp(n, ".symtab") || !strcmp(n, ".strtab") || !strcmp(n, ".dynsym") ||
		  !strcmp(n, ".dynstr");

	if (what & ELFREAD_DROP_SYMBOLS && sym)
		return 1;
	if (what & ELFREAD_DROP_DWARF && is_dwarf(n))
		return 1;
	return what & ELFREAD_DROP_TABLES &&
	       (sym || !strcmp(n, ".eh_frame") ||
		!strcmp(n, ".eh_frame_hdr") || !strcmp(n, ".sframe") ||
		!strcmp(n, ".gnu_debugdata") || is_dwarf(n));
}

static void mark_range(uint8_t *keep, uint64_t off, uint64_t size, uint64_t pages)
{
	if (!size)
		return;
	for (uint64_t p = off / LAZY_PAGE; p <= (off + size - 1) / LAZY_PAGE && p < pages; p++)
		keep[p / 8] |= (uint8_t)(1u << (p % 8));
}

size_t elfread__drop_pages(const struct elfread *e, unsigned what)
{
	int only = !(what & ELFREAD_DROP_ALL);
	struct lazy *lz = e->lazy;
	uint64_t pages, p, run;
	uint8_t *keep, *drop;
	size_t dropped = 0;

	/* a memory image is its owner's; a file read whole through the
	 * caller's fd (none of its own) cannot be read again */
	if (!lz || lz->fd < 0 || lz->changed || !e->map || !e->have_shstr)
		return 0;
	pages = (e->len + LAZY_PAGE - 1) / LAZY_PAGE;
	keep = calloc((pages + 7) / 8, 1);
	drop = calloc((pages + 7) / 8, 1);
	if (!keep || !drop)
		goto out;
	/* libelf reads the header tables in place at any time */
	mark_range(keep, 0, sizeof(Elf64_Ehdr), pages);
	if (e->ehdr.e_phnum)
		mark_range(keep, e->ehdr.e_phoff,
			   (uint64_t)e->ehdr.e_phnum * e->ehdr.e_phentsize, pages);
	if (e->ehdr.e_shoff)
		mark_range(keep, e->ehdr.e_shoff,
			   (uint64_t)e->shnum * e->ehdr.e_shentsize, pages);
	for (size_t i = 1; i < e->shnum; i++) {
		struct elfread_section sec;
		uint32_t name_off;
		const char *n;
		int rc = elfread__section_raw(e, i, &sec, &name_off, 0);

		if (rc == -ENOENT)
			break;
		if (rc || sec.type == SHT_NOBITS || !sec.size || !in_image(e, sec.offset, sec.size))
			continue;
		n = elfread__section_str(&e->shstr, name_off);
		if (i == e->shstrndx || (only && !(n && droppable(n, what))))
			mark_range(keep, sec.offset, sec.size, pages); /* (names: e->shstr) */
	}
	if (!only)
		memset(drop, 0xff, (pages + 7) / 8);
	else
		for (size_t i = 1; i < e->shnum; i++) {
			struct elfread_section sec;
			uint32_t name_off;
			const char *n;

			if (elfread__section_raw(e, i, &sec, &name_off, 0) ||
			    sec.type == SHT_NOBITS || !sec.size || !in_image(e, sec.offset, sec.size))
				continue;
			n = elfread__section_str(&e->shstr, name_off);
			if (n && droppable(n, what))
				mark_range(drop, sec.offset, sec.size, pages);
		}
	for (p = 0; p < pages; p = run + 1) {
		/* a run of filled pages to drop that nothing kept is on */
		for (run = p; run < pages && (drop[run / 8] & (1u << (run % 8))) &&
			      !(keep[run / 8] & (1u << (run % 8))) &&
			      (lz->done[run / 8] & (1u << (run % 8)));
		     run++)
			lz->done[run / 8] &= (uint8_t)~(1u << (run % 8));
		if (run == p)
			continue;
		(void)madvise((uint8_t *)e->map + p * LAZY_PAGE, (run - p) * LAZY_PAGE, MADV_DONTNEED);
		dropped += (size_t)(run - p) * LAZY_PAGE;
	}
	/* the next libelf user or DWARF reader fills them again */
	if (dropped)
		lz->all = lz->dwarf = 0;
out:
	free(keep);
	free(drop);
	return dropped;
}

void elfread__lazy_free(struct lazy *lz)
{
	if (!lz)
		return;
	if (lz->fd >= 0)
		close(lz->fd);
	free(lz->done);
	free(lz);
}

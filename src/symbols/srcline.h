/* SPDX-License-Identifier: MIT */
/*
 * Source lines and inline frames of one binary, from its DWARF, through
 * elfutils' libdw (dwarf_addrdie, dwarf_getscopes, dwarf_getsrc_die).
 *
 * The DWARF is looked for in the binary itself, else in its separate
 * debug file (build-id path or .gnu_debuglink, symbolize.h's
 * symbolize__find_debug_file). Nothing is read until the first lookup;
 * each address is resolved once and cached.
 *
 * A lookup at ELF vaddr `pc` gives the levels of code at pc, innermost
 * first, as `addr2line -i -f` prints them: level 0 is the function whose
 * code pc is (an inlined function, or the real one), with pc's file and
 * line; level k + 1 is the function level k was inlined into, with the
 * file and line of that call. The last level is the real (out-of-line)
 * function. Names are DWARF's (linkage name demangled, as perf script
 * prints C++ names, else DW_AT_name).
 *
 * Ownership: a srcline owns every level and string it returns (its own
 * copies, not libdw's); they live until srcline__free(), through any
 * srcline__close_dwarf(). Not thread-safe.
 */
#ifndef SFPROF_SRCLINE_H
#define SFPROF_SRCLINE_H

#include <stddef.h>
#include <stdint.h>

struct elfread;
struct srcline;

/* At most this many levels per address (deeper inlining is cut at the
 * innermost levels' end: the outermost function is always kept). */
#define SRCLINE_MAX_LEVELS 32

struct srcline_level {
	const char *func; /* NULL when DWARF has no name */
	/* its DW_AT_linkage_name where func is that demangled (C++), else
	 * NULL: pprof's Function.system_name */
	const char *sys_func;
	const char *file; /* NULL when unknown */
	uint32_t line;	  /* 0 when unknown */
	/* the function's first line: DW_AT_decl_line of the subprogram
	 * (outermost level) or of the inlined subroutine's origin; 0 when
	 * unknown */
	uint32_t start_line;
};

struct srcline_opts {
	const char *debug_root; /* for separate debug files; NULL = "/" */
	int no_debug_files;	/* only the binary's own DWARF */
	int full_names;		/* C++ names with their signatures */
	int lean_dwarf;		/* DWARF_IMAGE_LEAN (dwarfimage.h): a process
				 * that stays up */
	int libdw_scopes;	/* tests: scopes by dwarf_getscopes() and
				 * dwarf_getscopes_die(), the reference for
				 * the one-walk path srcline takes */
};

/*
 * A source-line resolver for the binary `e` (borrowed: it must outlive
 * the srcline), known as `path` (for the debuglink search; may be NULL).
 * Cheap: the DWARF is opened at the first lookup. NULL + errno (ENOMEM).
 */
struct srcline *srcline__new(const struct elfread *e, const char *path,
			     const struct srcline_opts *opts);
void srcline__free(struct srcline *s); /* NULL is a no-op */

/*
 * Levels at ELF vaddr pc: 0 with *levels and *n (>= 1); -ENOENT when the
 * binary has no DWARF or none covers pc; -ENOMEM.
 */
int srcline__lookup(struct srcline *s, uint64_t pc,
		    const struct srcline_level **levels, size_t *n);

struct srcline_stats {
	uint64_t lookups;  /* srcline__lookup calls */
	uint64_t resolved; /* addresses resolved through libdw (cache misses) */
	uint64_t misses;   /* ... that found no line */
	uint64_t images;   /* DWARF read from an inflated image (dwarfimage.h) */
	uint64_t images_cached; /* ... that came from the DWARF cache */
	uint64_t opens;	 /* DWARF looked for and opened (again after a close) */
	uint64_t closes; /* srcline__close_dwarf() calls that freed one */
};
void srcline__stats(const struct srcline *s, struct srcline_stats *out);

/* Give back the mapped pages of s's DWARF image when it is the cache
 * file's (dwarf_image__trim); its lookups go on as before. 1 when
 * trimmed. */
int srcline__trim(struct srcline *s);

/*
 * Free all s holds of the DWARF: libdw's Dwarf (its line tables, CUs and
 * abbreviations: most of a srcline's memory), the DWARF image, the debug
 * file, the scope index. The answers given so far stay, and their
 * strings; an address not looked up before opens the DWARF again (the
 * image mapped from the cache: a remake only of what that address
 * needs). 1 when something was freed, 0 when nothing was open.
 */
int srcline__close_dwarf(struct srcline *s);
/* 1 when s holds an open DWARF (or its debug file) to close. */
int srcline__is_open(const struct srcline *s);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Symbol tables: ELF vaddr -> function name, one per binary.
 *
 * A symtab is an index of function symbols (STT_FUNC, STT_GNU_IFUNC)
 * with their names copied into its own string arena, so it outlives the
 * ELF images it was built from. Lookup finds the largest start <=
 * address, bounded by the symbol's size (or, for size-0 symbols, by the
 * next symbol and the end of the symbol's section). symtab__finish()
 * only drops the symbols into buckets by address; the first lookup that
 * lands in a bucket sorts it and chooses its names (see symtab_index.c).
 *
 * Several symbols at one address (glibc aliases) keep one: non-zero size,
 * then a function over a code label, then a public name over a glibc
 * internal alias (__GI_*, __libc_*, _IO_*), then global over weak over
 * local, then (as perf does) fewer leading underscores, then the longer
 * name. Code labels (STT_NOTYPE in an executable section, such as ld.so's
 * _dl_start_user) are symbols of size 0 unless they start inside a sized
 * symbol; a size-0 symbol names the code up to the next symbol.
 *
 * symtab__load() gathers the symbols of one binary from, in order:
 *   its own .symtab; else a separate debug file found by build-id
 *   (<root>/usr/lib/debug/.build-id/xx/rest.debug, build-id checked) or by
 *   .gnu_debuglink (next to the binary, in its .debug/ directory, or under
 *   <root>/usr/lib/debug/<dir>/; CRC32 or build-id checked);
 *   MiniDebugInfo (.gnu_debugdata, xz, as Fedora ships it);
 *   a Go binary's .gopclntab, when none of these had a .symtab;
 *   and .dynsym unless a full .symtab (the binary's or its debug file's,
 *   which has all of .dynsym) was read: MiniDebugInfo omits what .dynsym
 *   has, and perf reads one table of the two;
 *   and "name@plt" for x86-64 PLT stubs (.plt, .plt.sec, .plt.got), as
 *   perf and objdump name them.
 *
 * C++ (Itanium ABI) names are demangled lazily at lookup, once per symbol,
 * unless the table was made with demangling off, and printed as perf
 * script prints them: without return type, parameter list, qualifiers and
 * GCC clone suffixes ("sfprof::Acc<unsigned long>::step"), unless
 * full_names asks for the whole signature.
 *
 * Ownership: a symtab owns everything it returns; returned names live
 * until symtab__free(). Not thread-safe (lookups finish buckets and cache
 * names).
 */
#ifndef SFPROF_SYMBOLIZE_H
#define SFPROF_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

struct elfread;
struct symtab;

/* Where the symbols came from (bits of symtab__sources()). */
enum {
	SYMSRC_SYMTAB = 1u << 0,	/* the binary's own .symtab */
	SYMSRC_DEBUG_BUILDID = 1u << 1, /* .build-id/xx/rest.debug */
	SYMSRC_DEBUGLINK = 1u << 2,	/* .gnu_debuglink */
	SYMSRC_MINIDEBUG = 1u << 3,	/* .gnu_debugdata */
	SYMSRC_DYNSYM = 1u << 4,	/* .dynsym */
	SYMSRC_PLT = 1u << 5,		/* synthesized "name@plt" */
	SYMSRC_GOPCLNTAB = 1u << 6,	/* Go's .gopclntab (goruntime.h) */
};

struct symtab_opts {
	/* Root prepended to /usr/lib/debug (NULL or "" = "/"). Tests point
	 * it at a scratch directory. */
	const char *debug_root;
	int no_demangle;  /* keep mangled names */
	int no_debug_files; /* do not look for separate debug files */
	int full_names;	 /* C++: keep return type and parameters */
};

/* Empty table; add symbols, then symtab__finish(). NULL + errno. */
struct symtab *symtab__new(int no_demangle);
void symtab__free(struct symtab *s); /* NULL is a no-op */
/* Demangled names with (1) or without (0, the default) signatures. */
void symtab__set_full_names(struct symtab *s, int full_names);

/* Add function symbols of e's table `sht` (SHT_SYMTAB/SHT_DYNSYM).
 * Returns how many were added, or -errno. */
int symtab__add_elf(struct symtab *s, const struct elfread *e, uint32_t sht);
/* x86-64 PLT stubs: each entry's `jmp *disp(%rip)` names a GOT slot whose
 * JUMP_SLOT/GLOB_DAT relocation names the symbol. Returns how many. */
int symtab__add_plt(struct symtab *s, const struct elfread *e);
/* Add one symbol (name is copied). 0 or -ENOMEM. `limit`: 0, or an
 * address the symbol cannot extend past (its section's end). */
int symtab__add(struct symtab *s, const char *name, uint64_t start,
		uint64_t size, uint64_t limit, uint8_t bind);
/* Sort, drop duplicates, compute ends. Lookups need it; adding after it
 * requires another call. 0 or -ENOMEM. */
int symtab__finish(struct symtab *s);

/*
 * Build the table for the binary `e` found at `path` (used for the
 * debuglink directory search; may be NULL). Never fails for lack of
 * symbols: an empty table is a valid result. NULL + errno on ENOMEM.
 */
struct symtab *symtab__load(const struct elfread *e, const char *path,
			    const struct symtab_opts *opts);

unsigned symtab__sources(const struct symtab *s); /* SYMSRC_* bits */
size_t symtab__nr(const struct symtab *s);

/*
 * The function holding `vaddr`: 0 with *name (demangled unless off) and
 * *offset = vaddr - start (and *start when non-NULL), or -ENOENT.
 */
int symtab__lookup(struct symtab *s, uint64_t vaddr, const char **name,
		   uint64_t *offset, uint64_t *start);
/* The same, and *sys_name (when non-NULL): the symbol as the binary
 * spells it (C++: mangled) where that differs from *name, else NULL;
 * NULL too for a versioned mangled name, whose unversioned form is not
 * kept. pprof's Function.system_name. */
int symtab__lookup_sys(struct symtab *s, uint64_t vaddr, const char **name,
		       const char **sys_name, uint64_t *offset, uint64_t *start);

/*
 * Demangle an Itanium C++ name ("_Z..."). Returns a malloc()ed string the
 * caller frees, or NULL when `name` is not a mangled name (or on error).
 */
char *symbolize__demangle(const char *name);

/*
 * A demangled C++ name as perf script prints it, in place: no return type,
 * parameter list, cv/ref-qualifiers or " [clone .x]" suffixes
 * ("int ns::f<int>(int) const [clone .cold]" -> "ns::f<int>"). A name that
 * is not a function's ("vtable for X") stays. Returns the new length.
 */
size_t symbolize__cxx_short(char *name);

/*
 * Find a separate debug file for a binary. Tries the build-id path, then
 * the debuglink locations; checks that the candidate matches (build-id or
 * CRC32). Returns 0 and the path in buf (and SYMSRC_* in *how), -ENOENT,
 * or -errno.
 */
int symbolize__find_debug_file(const struct elfread *e, const char *path,
			       const char *debug_root, char *buf, size_t cap,
			       unsigned *how);

#endif

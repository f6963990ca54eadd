/* SPDX-License-Identifier: MIT */
/*
 * JIT symbol maps in perf's text format (/tmp/perf-PID.map, written by
 * node --perf-basic-prof, Java agents, .NET, Python -X perf, LuaJIT):
 * one "START SIZE NAME\n" line per piece of generated code, START and
 * SIZE in hex (an optional 0x), NAME the rest of the line.
 *
 * The parser is pure: perfmap__feed() takes bytes, so a map that grows
 * while it is being read is followed by feeding what was appended since
 * perfmap__offset(). Only complete lines are consumed; a partial last
 * line waits for the next feed. Every field is validated: a line with a
 * bad number, a size of 0, a range that wraps, an empty name, a NUL byte
 * or more than PERFMAP_LINE_MAX bytes is skipped and counted. Where two
 * entries cover an address, the later one wins (a JIT reuses its code
 * memory) from the time it appeared: each entry is valid from the time
 * perfmap__set_time() last gave (when it was read; 0 if never), and a
 * lookup at a time names the address as the map did then.
 *
 * perfmap__open_read() is the I/O edge: it reads the file's new bytes,
 * opened safely (see there).
 *
 * Ownership: a perfmap owns its names; a name returned by
 * perfmap__lookup() lives until perfmap__free(). Not thread-safe.
 */
#ifndef SFPROF_PERFMAP_H
#define SFPROF_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

#define PERFMAP_LINE_MAX 4096u

struct perfmap;

struct perfmap *perfmap__new(void); /* NULL + errno */
void perfmap__free(struct perfmap *m); /* NULL is a no-op */

/*
 * Parse the complete lines of data[0..len), the bytes that follow what
 * was fed before. Returns the bytes consumed (up to and including the
 * last newline; a line too long to be valid is consumed as soon as that
 * is known), or -ENOMEM (nothing consumed).
 */
long perfmap__feed(struct perfmap *m, const char *data, size_t len);

/* Bytes consumed so far: where the next read of the file starts. */
uint64_t perfmap__offset(const struct perfmap *m);
size_t perfmap__nr(const struct perfmap *m);	     /* entries kept */
uint64_t perfmap__bad_lines(const struct perfmap *m); /* lines skipped */

/*
 * The entry covering addr: 0 with *name and *start (may be NULL), or
 * -ENOENT.
 */
int perfmap__lookup(struct perfmap *m, uint64_t addr, const char **name,
		    uint64_t *start);
/* The same with the entry's end (exclusive; may be NULL). */
int perfmap__lookup_range(struct perfmap *m, uint64_t addr, const char **name,
			  uint64_t *start, uint64_t *end);

/* A lookup's entry: seq numbers the map's entries from 1 in file order. */
struct perfmap_hit {
	const char *name;
	uint64_t start, end; /* [start, end) */
	uint32_t seq;
	const char *file; /* perfmap__add_src()'s source, else NULL and 0 */
	uint32_t line;
	const char *inl;  /* perfmap__add_src()'s inlined frames, else NULL */
};

/*
 * The entry naming addr at time t: of those covering it, the newest valid
 * at t, or where none is valid yet the oldest (a JIT appends its line
 * after its code has run). t = UINT64_MAX: the newest. 0 with *hit, or
 * -ENOENT.
 */
int perfmap__lookup_at(struct perfmap *m, uint64_t addr, uint64_t t, struct perfmap_hit *hit);
/* Entry seq (a hit's): 0 with *hit, or -ENOENT. */
int perfmap__entry(const struct perfmap *m, uint32_t seq, struct perfmap_hit *hit);
/* Entries added from now on are valid from t (a time never goes back). */
void perfmap__set_time(struct perfmap *m, uint64_t t);

/*
 * Add one entry [start, start + size) named name[0..len) (not
 * NUL-terminated; copied), as a parsed line would be: for the other
 * sources of JIT names (jitdump.h, a capture's JIT records). 0, -EINVAL
 * (size 0, a range that wraps, an empty name, a NUL in it, longer than
 * PERFMAP_LINE_MAX), -ENOMEM.
 */
int perfmap__add(struct perfmap *m, uint64_t start, uint64_t size, const char *name,
		 size_t len);
/* The same with the code's source file (NUL-terminated, copied; NULL:
 * none) and line (0: none), and the frames inlined there (inl: lines of
 * "name\tfile\tline\n", outermost first; copied; NULL: none): a VM's own
 * name for it (jitmaps__add_live_src). */
int perfmap__add_src(struct perfmap *m, uint64_t start, uint64_t size, const char *name,
		     size_t len, const char *file, uint32_t line, const char *inl);

/*
 * A bound on what m's entries may cost, in bytes (0: none; about what
 * they take in memory: the entry, its index slot and its name). An entry
 * past it is dropped and counted (perfmap__dropped), never an error, so a
 * map too big for the bound keeps its first entries.
 */
void perfmap__set_limit(struct perfmap *m, uint64_t bytes);
uint64_t perfmap__bytes(const struct perfmap *m);
uint64_t perfmap__dropped(const struct perfmap *m);

/*
 * Open a map file: O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC (a target cannot make
 * sfprof follow a symlink at its end or block on a FIFO), and it must be
 * a regular file. The fd (the caller closes it), or -ENOENT, -EINVAL (a
 * symlink or not a regular file), -errno.
 * A path in /proc/PID/root (and open_file_in's root /proc/PID/root) is
 * opened with PID's fsuid, fsgid and groups (EACCES where PID could not
 * read it), and must be owned by PID's user or root (else -EINVAL), as
 * perf requires of a map.
 */
int perfmap__open_file(const char *path);
/*
 * The same for `rel` resolved inside the directory `root` (a process's
 * /proc/PID/root) with openat2's RESOLVE_IN_ROOT: an absolute symlink the
 * target planted (/tmp -> /etc) resolves in its root, never in sfprof's.
 * -EOPNOTSUPP where the kernel has no openat2 (before 5.6).
 */
int perfmap__open_file_in(const char *root, const char *rel);

/*
 * Feed what was appended to the open map file fd since the last read,
 * reading at most up to `max_size` bytes of the file in all. A kept fd
 * still reads a file whose process has exited. 0 (also when nothing was
 * new), -EFBIG (over max_size: what fits was read), -EINVAL (not a
 * regular file), -errno.
 */
int perfmap__read_fd(struct perfmap *m, int fd, uint64_t max_size);

/* open_file / open_file_in, read_fd, close: 0 or their errors. */
int perfmap__open_read(struct perfmap *m, const char *path, uint64_t max_size);
int perfmap__open_read_in(struct perfmap *m, const char *root, const char *rel,
			  uint64_t max_size);

#endif

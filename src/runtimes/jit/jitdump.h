/* SPDX-License-Identifier: MIT */
/*
 * jitdump files (jit-PID.dump): the binary format perf's `perf inject
 * --jit` reads (tools/perf/Documentation/jitdump-specification.txt in the
 * Linux tree), written by V8 (--perf-prof), the JVM's perf agents, .NET
 * (DOTNET_PerfMapEnabled=1), wasmtime, LuaJIT. A file header, then
 * records, each a 16-byte header (u32 id, u32 total_size, u64 timestamp)
 * and a body:
 *   JIT_CODE_LOAD (0)        pid, tid, vma, code_addr, code_size,
 *                            code_index, NUL-terminated name, code bytes
 *   JIT_CODE_MOVE (1)        pid, tid, vma, old_code_addr, new_code_addr,
 *                            code_size, code_index
 *   JIT_CODE_DEBUG_INFO (2)  code_addr, nr_entry, entries {addr, line,
 *                            discrim, NUL-terminated file name; "\xff\0"
 *                            repeats the previous one}: for the LOAD that
 *                            follows it
 *   JIT_CODE_CLOSE (3)       header only
 *   JIT_CODE_UNWINDING_INFO (4) unwinding_size, eh_frame_hdr_size,
 *                            mapped_size, data
 * Only the writer's byte order on x86-64 (little-endian magic "JiTD" as
 * 0x4A695444) is read; a swapped magic is refused.
 *
 * The parser is pure: jitdump__feed() takes the bytes that follow what
 * was consumed before, so a dump that grows while it is read is followed
 * by feeding from jitdump__offset(). Code bytes and unwinding data are
 * never needed: jitdump__skip_pending() says how many bytes the reader may
 * step over without reading them. Every length and offset is validated
 * against the record's total_size; a bad record is skipped by its
 * total_size and counted (a total_size below 16 or above
 * JITDUMP_RECORD_MAX ends the parse: nothing after it can be trusted).
 * Loaded and moved code becomes entries of a perfmap (perfmap.h), the
 * same lookup the text maps feed; where entries overlap the later wins.
 * Debug-info lines are kept (jitdump__line()).
 *
 * Ownership: a jitdump borrows the perfmap it feeds (which must outlive
 * it) and owns its lines; a file name returned lives until
 * jitdump__free(). Not thread-safe.
 */
#ifndef SFPROF_JITDUMP_H
#define SFPROF_JITDUMP_H

#include <stddef.h>
#include <stdint.h>

#include "runtimes/jit/perfmap.h"

#define JITDUMP_MAGIC 0x4A695444u
#define JITDUMP_HEADER_MIN 40u
#define JITDUMP_HEADER_MAX 4096u
/* The bytes of one record the parser looks at (not code or unwinding
 * data): at most this; a record can be larger (its code is skipped). */
#define JITDUMP_PREFIX_MAX (1u << 20)
#define JITDUMP_RECORD_MAX (256u << 20)
#define JITDUMP_LINES_MAX (1u << 20) /* debug-info lines kept in all */

enum jitdump_rec {
	JITDUMP_CODE_LOAD = 0,
	JITDUMP_CODE_MOVE = 1,
	JITDUMP_CODE_DEBUG_INFO = 2,
	JITDUMP_CODE_CLOSE = 3,
	JITDUMP_CODE_UNWINDING_INFO = 4,
};

struct jitdump_stats {
	uint64_t loads, moves, debug_infos, lines, unwinding_infos, closes;
	uint64_t unknown; /* records of other ids, skipped */
	uint64_t bad;	  /* records skipped for an impossible field */
};

struct jitdump;

struct jitdump *jitdump__new(struct perfmap *into); /* NULL + errno */
void jitdump__free(struct jitdump *d);		     /* NULL is a no-op */

/*
 * Parse what data[0..len) completes: the file header first, then
 * records. Returns the bytes consumed (a partial record waits for the
 * next feed: jitdump__want() says how many bytes it needs), -ENOMEM
 * (nothing consumed), or -EINVAL when the file cannot be read on (bad
 * magic or version, a swapped byte order, an impossible record size):
 * jitdump__error() says why, and every later feed returns -EINVAL.
 */
long jitdump__feed(struct jitdump *d, const uint8_t *data, size_t len);

/* Bytes of the current record the parser does not need (code, unwinding
 * data): the reader may advance by up to this many without reading them
 * (jitdump__skip()), or feed them. */
uint64_t jitdump__skip_pending(const struct jitdump *d);
void jitdump__skip(struct jitdump *d, uint64_t n); /* n <= skip_pending */
/* The bytes the next feed must hold at least to make progress. */
size_t jitdump__want(const struct jitdump *d);

uint64_t jitdump__offset(const struct jitdump *d); /* bytes consumed */
uint32_t jitdump__pid(const struct jitdump *d);	    /* header's, 0 before */
const char *jitdump__error(const struct jitdump *d); /* NULL when none */
void jitdump__stats(const struct jitdump *d, struct jitdump_stats *out);

/*
 * The source line of addr from debug-info records: 0 with *file and
 * *line (the entry at or below addr within its code), or -ENOENT.
 */
int jitdump__line(struct jitdump *d, uint64_t addr, const char **file, uint32_t *line);

/*
 * Follow the dump open at fd: feed what was appended since the last
 * read, stepping over code bytes, reading at most `max_size` bytes of the
 * file in all. 0 (also when nothing was new), -EFBIG (over max_size),
 * -EINVAL (not a regular file, or the dump is broken), -errno.
 */
int jitdump__read_fd(struct jitdump *d, int fd, uint64_t max_size);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Names of CPython code objects, read from a running target's memory:
 * co_qualname, co_name, co_filename, co_firstlineno and the line of an
 * instruction from co_linetable (the 3.11+ location table, CPython's
 * Objects/locations.md), cached per (pid, code object address).
 *
 * The target's memory is hostile input: every read goes through one
 * narrow callback, every length is capped (strings PYREADER_STR_MAX
 * bytes of UTF-8, line tables PYREADER_LINETABLE_MAX bytes), every
 * pointer and type is checked; a bad pointer costs that one frame (an
 * error return, counted in pyreader_stats), never a crash or a wrong
 * name.
 *
 * Use (one reader per daemon; not thread-safe):
 *   r = pyreader__new(0, 0);
 *   pyreader__add_target(r, pid, &(struct pyreader_target){
 *           .offsets = info.offsets,                  (pyversion.h)
 *           .code_type = info.code_type_addr + bias, ... });
 *   for each BPF frame {code_ptr, instr_offset}:
 *     pycode_name(r, pid, code_ptr, instr_offset, &f)  -> f.qualname,
 *                                                         f.filename, f.line
 *   on the pid's EXIT or EXEC: pyreader__forget_pid(r, pid)
 *
 * instr_offset is the instruction's byte offset in the bytecode, as `dis`
 * and co_positions() count it: frame->prev_instr (3.11/3.12) or
 * ->instr_ptr (3.13) minus (code_ptr + pyoffsets.code_adaptive). A
 * negative offset as int32 (-2: 3.11's "not started yet", prev_instr =
 * first instruction - 1) gives co_firstlineno, as CPython does.
 *
 * Cache staleness: a code object freed and its address reused by another
 * one would be misnamed. So, unless PYREADER_F_TRUST_CACHE, a cache hit
 * re-reads the code object's header (one read of ~0x90 bytes) and
 * decodes again when ob_type, the name/file/table pointers or
 * co_firstlineno changed; if that read fails (the process is gone, as
 * when the ring is drained after an exit), the cached names stand.
 */
#ifndef SFPROF_PYREADER_H
#define SFPROF_PYREADER_H

#include <stddef.h>
#include <stdint.h>

struct pyoffsets;
struct pyreader;

#define PYREADER_STR_MAX 1024		  /* bytes of UTF-8 per name, NUL included */
#define PYREADER_LINETABLE_MAX (256u << 10) /* bytes of co_linetable */
#define PYREADER_ENTRIES_DEFAULT 8192
#define PYREADER_TARGETS_MAX 65536

/*
 * Reads exactly len bytes of the target's memory at addr into buf:
 * 0, or -errno (-EFAULT: not mapped / short, -ESRCH: no such process).
 * len is at most a few KiB (PYREADER_LINETABLE_MAX for a table).
 */
typedef int (*pyreader_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

struct pyreader_target {
	const struct pyoffsets *offsets; /* required; copied */
	pyreader_read_fn read;		 /* NULL: process_vm_readv(pid) */
	void *read_ctx;
	/* Run-time addresses of PyCode_Type, PyUnicode_Type, PyBytes_Type
	 * (pyversion_info's + the load bias): each object's ob_type must be
	 * this. 0: that check is skipped. */
	uint64_t code_type, unicode_type, bytes_type;
};

enum pyreader_flag {
	PYREADER_F_TRUST_CACHE = 1u << 0, /* hits are not re-validated */
	/* a hit is re-validated once per pyreader__tick() (e.g. once per
	 * ring-buffer drain), not every time */
	PYREADER_F_VERIFY_PER_TICK = 1u << 1,
};

enum pycode_frame_flag {
	PYCODE_F_TRUNCATED = 1u << 0, /* a name was cut at PYREADER_STR_MAX */
	PYCODE_F_NO_LINES = 1u << 1,  /* the line table was bad or too big:
					 line is 0 */
};

struct pycode_frame {
	/* UTF-8, NUL-terminated, never NULL on success. They live in the
	 * reader's cache until the next pycode_name(), pyreader__forget_pid()
	 * or pyreader__free() on this reader: copy them to keep them. */
	const char *qualname;
	const char *name;
	const char *filename;
	int32_t line;	     /* of instr_offset; 0 when the table says none */
	int32_t firstlineno; /* co_firstlineno */
	uint32_t flags;	     /* enum pycode_frame_flag */
};

struct pyreader_stats {
	uint64_t lookups;
	uint64_t hits;		/* from the cache */
	uint64_t hits_unverified; /* ... re-validation read failed: cached names used */
	uint64_t misses;	/* decoded from the target's memory */
	uint64_t stale;		/* a hit whose code object had changed: decoded again */
	uint64_t evictions;
	/* errors (the frame is lost), by reason */
	uint64_t err_no_target;	/* pid not added */
	uint64_t err_read;	/* a read failed: bad pointer, process gone */
	uint64_t err_type;	/* an ob_type is not the expected type */
	uint64_t err_string;	/* a name is not a valid compact str */
	uint64_t err_nomem;
	/* degraded, the frame is kept */
	uint64_t bad_linetable;	/* line 0: the table was bad or too big */
	uint64_t truncated;	/* a name cut at PYREADER_STR_MAX */
};

/* max_entries: cached code objects (0: PYREADER_ENTRIES_DEFAULT); the
 * least recently used is evicted. flags: enum pyreader_flag.
 * NULL + errno (ENOMEM, EINVAL). */
struct pyreader *pyreader__new(unsigned max_entries, unsigned flags);
void pyreader__free(struct pyreader *r); /* NULL is a no-op */

/* Adds (or replaces, dropping its cache) the target pid. 0, -EINVAL
 * (no offsets), -ENOSPC (PYREADER_TARGETS_MAX), -ENOMEM. */
int pyreader__add_target(struct pyreader *r, uint32_t pid,
			 const struct pyreader_target *t);
/* PYREADER_F_VERIFY_PER_TICK: entries validated before this call are
 * validated again on their next hit. */
void pyreader__tick(struct pyreader *r);

/* The process exited or exec'd: forget it and its cached code objects. */
void pyreader__forget_pid(struct pyreader *r, uint32_t pid);

/*
 * Names the code object at code_ptr in pid. 0 and *out, or -errno:
 * -ENOENT (pid not added), -EFAULT/-ESRCH (a read failed), -EINVAL (not a
 * code object, or a bad name string), -ENOMEM. Each error is counted.
 */
int pycode_name(struct pyreader *r, uint32_t pid, uint64_t code_ptr,
		uint32_t instr_offset, struct pycode_frame *out);

void pyreader__stats(const struct pyreader *r, struct pyreader_stats *out);

/* ---- the parts, for tests and fuzzing ---- */

/* A decoded line table: runs of code units with one line each. */
struct pylinetable {
	struct pylinetable_run {
		uint32_t end;	/* code units [previous end, end) */
		int32_t line;	/* 0: no location */
	} *runs;
	uint32_t nr_runs;
};

/*
 * Decodes a 3.11+ co_linetable of len bytes (len <= PYREADER_LINETABLE_MAX)
 * starting at co_firstlineno. 0, -EINVAL (malformed: an entry not
 * starting with bit 7, a truncated or oversized varint, a line out of
 * range), -E2BIG, -ENOMEM. On error *t is empty. Free with
 * pylinetable_free().
 */
int pylinetable_decode(const uint8_t *tab, size_t len, int32_t firstlineno,
		       struct pylinetable *t);
/* The line of the instruction at byte offset instr_offset; 0 when none. */
int32_t pylinetable_line(const struct pylinetable *t, uint32_t instr_offset);
void pylinetable_free(struct pylinetable *t);

#endif

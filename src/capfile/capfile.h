/* SPDX-License-Identifier: MIT */
/*
 * Capture files: what `sfprof record` writes and `sfprof report` reads.
 *
 * Layout (all integers little-endian, every record 8-byte aligned):
 *
 *   file header, 16 bytes:  magic "SFPROFCA", u32 version (2), u32 flags (0)
 *   records:                u32 type, u32 len, u32 crc, u32 hcrc, len
 *                           payload bytes, zero padding to a multiple of 8
 *
 * Checksums (version 2) are CRC32C: crc over type, len and the payload,
 * hcrc over the first 12 bytes of the header. A record whose crc fails is
 * skipped (its length is trusted: hcrc holds); a header whose hcrc fails
 * is skipped to the next 8-aligned header whose hcrc holds. Either way
 * the reader returns one CAPFILE_REC_DAMAGED record for the stretch and
 * goes on, so one flipped bit costs one record, not the rest of the file.
 * Padding is not covered (it is never read). Version 1 (8-byte headers,
 * no checksums) is still read.
 *
 * Records (unknown types are skipped, so readers survive additions):
 *   META     first record. "key\0value\0" pairs: host, kernel, clock,
 *            start_mono_ns, start_unix_ns, event, hz, stack_size, pid,
 *            command, sfprof_version, arch, event_hdr_size, kernel_stacks.
 *            Self-describing:
 *            a reader prints or ignores keys it does not know.
 *   MAPPING  one executable mapping of a process and the time (the
 *            CLOCK_MONOTONIC of the events) it was seen: fixed fields, then
 *            build-id bytes, then the path. Written before the first event
 *            that needs it.
 *   TASK     a change to a process's address space, in the order the live
 *            run applied it: RESET (its mappings are gone: exec, or a
 *            full set of MAPPINGs follows), FORK (a new process, a copy of
 *            its parent), EXIT (its last thread exited). With the MAPPINGs
 *            they let report rebuild each process as it was at each event.
 *   EVENT    one struct sfprof_event exactly as the ring buffer gave it
 *            (header + stack_len stack bytes).
 *   KSTACK   a kernel stack referenced by events' kstack_id: id, ips.
 *   KSYM     kernel symbols for KSTACK frames: address, name.
 *   STATS    "key\0value\0" pairs: the counters of the run (lost_*, ...).
 *   END      record and event counts: present when record finished cleanly.
 *   PYFRAME  the name record gave a Python frame (pymerge.h) of a process:
 *            pid, instruction offset, code object address, line, the
 *            qualname's length, co_firstlineno (0 = unknown), then
 *            qualname NUL filename. Written before the first event that
 *            needs it; a later one for the same frame replaces it (exec).
 *   JIT      a JIT's name for code of a process (jitmap.h: its perf map or
 *            jitdump) that a recorded stack ran in: pid, start, size, name.
 *            Written when record first names such a frame (some only at
 *            the end, where a JIT wrote its map late), so report names JIT
 *            frames after the process and its map are gone.
 *   PYTRAMP  the code of a process's CPython perf trampoline template
 *            (pytrampoline.h): pid, length, 1..CAPFILE_PYTRAMP_MAX bytes.
 *            Written before the first JIT record of one of its copies, so
 *            report unwinds through them as record did.
 *   RUNTIME  what a runtime (runtimes/runtime.h) must carry for report to
 *            name and unwind a process's frames as record did (HotSpot's
 *            code blobs, frame names and Methods): u32 kind (its enum
 *            runtime_record_type, not 0), u32 pid (not 0), u32 length
 *            (1..CAPFILE_RUNTIME_MAX), u32 0, then the runtime's bytes,
 *            which it validates itself (they begin with its version).
 *            Written before the first event that needs it; a later one for
 *            the same thing replaces it for later events.
 *
 * The file is created with mode 0600: raw stacks may hold secrets. While
 * record runs it is FILE.XXXXXX (six random characters) beside FILE, and
 * renamed to FILE when record ends; after a SIGKILL the events are there.
 *
 * The reader validates every length and field before use; a truncated or
 * corrupt file yields every record before the damage, then an error with
 * the offset and what was wrong (capfile_reader__error()).
 *
 * Ownership: pointers in a struct capfile_record point into the reader's
 * buffer and live until the next capfile_reader__next() or __free().
 */
#ifndef SFPROF_CAPFILE_H
#define SFPROF_CAPFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/proc.h" /* struct proc_mapping_rec */
#include "sfprof_event.h"

#define CAPFILE_MAGIC "SFPROFCA"
#define CAPFILE_VERSION 2u
#define CAPFILE_HDR_SIZE 16u
#define CAPFILE_REC_HDR 16u /* version 2 record header; version 1: 8 */
/* No record is larger: an event is at most 248 + 65528 bytes. */
#define CAPFILE_REC_MAX (1u << 20)
#define CAPFILE_KSTACK_MAX 128u
#define CAPFILE_PYTRAMP_MAX 64u
#define CAPFILE_RUNTIME_MAX 65536u

enum capfile_rec_type {
	CAPFILE_REC_META = 1,
	CAPFILE_REC_MAPPING = 2,
	CAPFILE_REC_EVENT = 3,
	CAPFILE_REC_KSTACK = 4,
	CAPFILE_REC_KSYM = 5,
	CAPFILE_REC_STATS = 6,
	CAPFILE_REC_END = 7,
	CAPFILE_REC_TASK = 8,
	/* (9-11: left for other runtimes' records) */
	CAPFILE_REC_PYFRAME = 12,
	/* (16: apart from the numbers other additions take next) */
	CAPFILE_REC_JIT = 16,
	CAPFILE_REC_PYTRAMP = 17,
	CAPFILE_REC_RUNTIME = 18,
	/* never written: what the reader returns for a stretch it skipped */
	CAPFILE_REC_DAMAGED = 0x10000,
};

/* TASK kinds: the same values as enum proc_change_kind (proc.h). */
enum capfile_task_kind {
	CAPFILE_TASK_RESET = 1,
	CAPFILE_TASK_FORK = 3,
	CAPFILE_TASK_EXIT = 4,
};

/* Errors (negative returns), besides -errno. */
enum capfile_error {
	CAPFILE_E_MAGIC = 2000, /* not a capture file */
	CAPFILE_E_VERSION,	/* a version this sfprof cannot read */
	CAPFILE_E_TRUNCATED,	/* the file ends inside a record */
	CAPFILE_E_CORRUPT,	/* a length or field is impossible */
	CAPFILE_E_NO_META,	/* the first record is not META */
	CAPFILE_E_DAMAGED,	/* META fails its checksum */
};
const char *capfile_strerror(int err);

/* A key/value list (META, STATS); strings live in the record payload. */
struct capfile_kv {
	const char *key, *value;
};
#define CAPFILE_KV_MAX 64

struct capfile_record {
	uint32_t type; /* enum capfile_rec_type; others are skipped */
	uint64_t offset; /* in the file, of the record header */
	union {
		struct { /* META, STATS */
			struct capfile_kv kv[CAPFILE_KV_MAX];
			size_t nr_kv;
		} kv;
		struct { /* MAPPING; m.path is NUL-terminated */
			uint32_t pid;
			uint64_t ts_ns;
			struct proc_mapping_rec m;
		} mapping;
		struct { /* EVENT: e->size bytes, validated, 8-aligned */
			const struct sfprof_event *e;
		} event;
		struct { /* KSTACK */
			int32_t id;
			uint32_t nr;
			const uint64_t *ips; /* may be unaligned: use memcpy */
		} kstack;
		struct { /* KSYM */
			uint64_t addr;
			const char *name;
		} ksym;
		struct { /* TASK */
			uint32_t what; /* enum capfile_task_kind */
			uint32_t pid, ppid; /* ppid: FORK only, else 0 */
			uint64_t ts_ns;
		} task;
		struct { /* PYFRAME: strings NUL-terminated, non-empty qualname */
			uint32_t pid, line;
			uint32_t firstlineno; /* co_firstlineno, 0 = unknown */
			int32_t instr;
			uint64_t code;
			const char *qualname, *file;
		} pyframe;
		struct { /* JIT: name NUL-terminated, 1..4096 bytes */
			uint32_t pid;
			uint64_t start, size; /* size > 0, no wrap */
			const char *name;
		} jit;
		struct { /* PYTRAMP: 1..CAPFILE_PYTRAMP_MAX bytes of code */
			uint32_t pid, len;
			const uint8_t *code;
		} pytramp;
		struct { /* RUNTIME: 1..CAPFILE_RUNTIME_MAX bytes, the runtime's */
			uint32_t kind, pid, len;
			const uint8_t *data;
		} runtime;
		struct { /* END */
			uint64_t nr_records, nr_events;
		} end;
		struct { /* DAMAGED: bytes from rec->offset skipped, and why
			  * (lives until the next capfile_reader__next()) */
			uint64_t len;
			const char *why;
		} damaged;
	};
};

/* The META keys this sfprof writes, parsed (strings: "" when absent). */
struct capfile_meta {
	const char *host, *kernel, *clock, *event, *command, *arch;
	const char *sfprof_version;
	uint64_t start_mono_ns, start_unix_ns;
	uint32_t hz, stack_size, pid, event_hdr_size;
	uint32_t kernel_stacks; /* record --kernel: KSTACK/KSYM records follow */
	const char *comm;	/* writer: the target's comm (key "comm"), NULL = none;
				 * readers: capfile_reader__meta_kv */
};

/* ---- writer ---- */

struct capfile_writer;

/*
 * Create `path` (mode 0600) and write the header and META. The capture is
 * written to `path`.XXXXXX beside it (mkstemp) and renamed onto `path` by
 * capfile_writer__close(): a killed record leaves its events there. A
 * FIFO or stdout is written in place; a device is refused (EPERM-like
 * -UTIL_E_DEVICE in errno, see src/util.h). Writes the header and META (host, kernel release, arch, clock and sfprof_version
 * are filled in here; the other fields from meta). NULL + errno.
 */
struct capfile_writer *capfile_writer__create(const char *path,
					      const struct capfile_meta *meta);
int capfile_writer__mapping(struct capfile_writer *w, uint32_t pid,
			    uint64_t ts_ns, const struct proc_mapping_rec *m);
/* A TASK record (ppid only for FORK). */
int capfile_writer__task(struct capfile_writer *w, uint32_t what, uint32_t pid,
			 uint32_t ppid, uint64_t ts_ns);
/* e->size bytes (header + stack); -EINVAL when e's lengths disagree. */
int capfile_writer__event(struct capfile_writer *w, const struct sfprof_event *e);
int capfile_writer__kstack(struct capfile_writer *w, int32_t id,
			   const uint64_t *ips, uint32_t nr);
int capfile_writer__ksym(struct capfile_writer *w, uint64_t addr,
			 const char *name);
/* A PYFRAME record; -EINVAL for an empty or oversized name. */
int capfile_writer__pyframe(struct capfile_writer *w, uint32_t pid, uint64_t code, int32_t instr,
			    uint32_t line, uint32_t firstlineno, const char *qualname,
			    const char *file);
int capfile_writer__stats(struct capfile_writer *w, const struct capfile_kv *kv,
			  size_t nr);
/* A JIT record; -EINVAL for an empty range or name, a range that wraps. */
int capfile_writer__jit(struct capfile_writer *w, uint32_t pid, uint64_t start,
			uint64_t size, const char *name);
/* A PYTRAMP record; -EINVAL for no pid, or len 0 or over the maximum. */
int capfile_writer__pytramp(struct capfile_writer *w, uint32_t pid, const uint8_t *code,
			    size_t len);
/* A RUNTIME record; -EINVAL for kind or pid 0, or len 0 or over the
 * maximum. */
int capfile_writer__runtime(struct capfile_writer *w, uint32_t kind, uint32_t pid,
			    const uint8_t *data, size_t len);
/* Write END, flush and close; 0 or -errno (a write error anywhere before
 * is reported here too). On a write error (ENOSPC) a file that holds
 * records is still renamed onto the name, as a capture cut short, and
 * *kept_partial (when non-NULL) set. Frees w in every case. */
int capfile_writer__close(struct capfile_writer *w);
int capfile_writer__close_partial(struct capfile_writer *w, int *kept_partial);
/* The run failed before there was anything to keep: the temporary file
 * is removed and the name left as it was. Frees w (NULL: a no-op). */
void capfile_writer__abort(struct capfile_writer *w);
/* Write what is buffered when a second has passed since the last write
 * (called per record, and by the drain loop); 0 or the sticky -errno. */
int capfile_writer__flush_due(struct capfile_writer *w);
uint64_t capfile_writer__events(const struct capfile_writer *w);

/* ---- reader ---- */

struct capfile_reader;

/* Open a file and check its header and META. NULL + errno; *err gets a
 * negative capfile error or -errno when err is non-NULL. A regular file
 * is mmap()ed: it must not be truncated while the reader lives. */
struct capfile_reader *capfile_reader__open(const char *path, int *err);
/* Same over bytes in memory (fuzzing, tests); data must outlive r. */
struct capfile_reader *capfile_reader__new_mem(const void *data, size_t len,
					       int *err);
void capfile_reader__free(struct capfile_reader *r);

const struct capfile_meta *capfile_reader__meta(const struct capfile_reader *r);
/* META pairs as stored (unknown keys included). */
const struct capfile_kv *capfile_reader__meta_kv(const struct capfile_reader *r,
						 size_t *nr);

/*
 * Next record: 1 with *rec, 0 at a clean end (END seen and nothing after
 * it, or end of file), or a negative error: the file is cut or impossible
 * at rec->offset; capfile_reader__error() says how. Reading stops there.
 * A stretch that fails its checksum is not an error: it comes back as a
 * CAPFILE_REC_DAMAGED record (offset, length, why) and reading goes on.
 * Only rec->type, rec->offset and the union member of that type are set.
 */
int capfile_reader__next(struct capfile_reader *r, struct capfile_record *rec);

/* "offset N: ..." for the last error, "" when none. */
const char *capfile_reader__error(const struct capfile_reader *r);
/* Whether an END record was read (a clean, complete capture). */
int capfile_reader__complete(const struct capfile_reader *r);
uint64_t capfile_reader__records(const struct capfile_reader *r);
/* Damaged stretches skipped so far (and their bytes, when bytes). */
uint64_t capfile_reader__damaged(const struct capfile_reader *r,
				 uint64_t *bytes);

#endif

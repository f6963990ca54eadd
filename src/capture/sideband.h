/* SPDX-License-Identifier: MIT */
/*
 * The side-band: how every process's address space changes, in order
 * with the samples. A PERF_COUNT_SW_DUMMY event per CPU (pid -1) with
 * mmap2 + comm_exec records, CLOCK_MONOTONIC timestamps (the clock of
 * bpf_ktime_get_ns(), so they order against the BPF records), read from
 * its perf ring buffer without wakeups. This is perf's own mechanism
 * (perf record's MMAP2/COMM side-band): the kernel writes the record
 * while the mmap or exec happens, so a process that lives 10 ms is
 * described before it is gone, with the device and inode of each file.
 * (Not the build-id: see sideband.c for why asking for it harms other
 * perf sessions on this kernel.)
 *
 * Records: MMAP (an executable mapping: file-backed, "//anon" JIT code,
 * "[vdso]"...), EXEC (a COMM record with PERF_RECORD_MISC_COMM_EXEC: the
 * address space was replaced; the new image's MMAPs follow it), LOST
 * (the ring overflowed: changes were missed). munmap has no record; a
 * mapping ends when a later one overlaps it or its process execs/exits.
 *
 * sideband__deliver() merges the per-CPU rings by timestamp and hands
 * over every record up to a time: the capture calls it before each BPF
 * record with that record's timestamp, so the consumer's model of a
 * process is the one live when its sample was taken.
 *
 * Ownership: a struct sideband_rec (and its path) points into the ring
 * or a bounce buffer and is valid only during the callback.
 */
#ifndef SFPROF_SIDEBAND_H
#define SFPROF_SIDEBAND_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum sideband_kind {
	SIDEBAND_MMAP = 1,
	SIDEBAND_EXEC = 2,
	SIDEBAND_LOST = 3,
	SIDEBAND_OTHER = 4, /* a record sfprof does not use */
};

struct sideband_rec {
	uint32_t kind;	   /* enum sideband_kind */
	uint32_t pid, tid; /* LOST: 0 */
	uint64_t ts_ns;	   /* CLOCK_MONOTONIC */
	/* MMAP */
	uint64_t start, len, pgoff;
	uint32_t prot, flags; /* PROT_*, MAP_* */
	uint32_t dev_major, dev_minor;
	uint64_t inode;		       /* 0: anonymous or special */
	const char *path;	       /* MMAP: NUL-terminated; EXEC: the new comm */
	uint64_t lost;		       /* LOST: records lost */
};

/*
 * Parse one perf record (header included, `len` bytes, as the ring holds
 * it) of an event opened with sample_id_all and sample_type TID|TIME.
 * Pure; every length is checked. 0 with *out, or -EINVAL.
 */
int sideband__parse(const void *rec, size_t len, struct sideband_rec *out);

struct sideband;

/*
 * Open the dummy event on every online CPU with a ring of `pages` data
 * pages each (a power of two; 0 = 64). NULL + errno (a line on err).
 */
struct sideband *sideband__open(size_t pages, FILE *err);
void sideband__close(struct sideband *sb); /* NULL is a no-op */

typedef int (*sideband_fn)(void *ctx, const struct sideband_rec *r);

/*
 * Hand every record with ts_ns <= until (across CPUs, oldest first) to
 * fn. Returns the number delivered or the callback's negative errno.
 * Records that fail to parse are counted, not delivered.
 */
int sideband__deliver(struct sideband *sb, uint64_t until, sideband_fn fn, void *ctx);

struct sideband_stats {
	uint64_t records;   /* delivered */
	uint64_t mmaps, execs;
	uint64_t lost;	    /* records the kernel could not write (LOST) */
	uint64_t bad;	    /* records that did not parse */
};
void sideband__stats(const struct sideband *sb, struct sideband_stats *st);

#endif

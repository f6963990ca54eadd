/* SPDX-License-Identifier: MIT */
/*
 * /proc/PID/maps: a pure parser of its text, and a reader.
 *
 * Line format (fs/proc/task_mmu.c, show_map_vma()):
 *   START-END PERMS OFFSET MAJOR:MINOR INODE [padding PATH]
 * PATH is everything after the padding up to the newline, so it may hold
 * spaces. The kernel escapes a newline in a path as "\012" (seq_file_path
 * with esc "\n"); that text is kept as is. A file that was unlinked gets
 * " (deleted)" appended: the parser strips it and sets `deleted` (only for
 * file-backed entries, inode != 0). Pseudo paths ("[heap]", "[vdso]",
 * "[stack]", "[anon:name]") are kept as is, with `pseudo` set.
 *
 * Ownership: a struct procmaps owns its entries and their path strings;
 * procmaps__free() releases everything. Entry pointers live as long as the
 * struct procmaps.
 */
#ifndef SFPROF_PROCMAPS_H
#define SFPROF_PROCMAPS_H

#include <stddef.h>
#include <stdint.h>

/* procmaps_entry.prot: same bit values as PROT_READ/WRITE/EXEC. */
enum {
	PROCMAPS_PROT_READ = 1u << 0,
	PROCMAPS_PROT_WRITE = 1u << 1,
	PROCMAPS_PROT_EXEC = 1u << 2,
};

struct procmaps_entry {
	uint64_t start, end;	/* [start, end) */
	uint64_t offset;	/* file offset of start */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	uint8_t prot;		/* PROCMAPS_PROT_* */
	uint8_t shared;		/* 's' (1) or 'p' (0) */
	uint8_t deleted;	/* " (deleted)" was stripped from path */
	uint8_t pseudo;		/* path is "[...]" with inode 0 */
	const char *path;	/* "" for anonymous memory; never NULL */
};

struct procmaps {
	struct procmaps_entry *entries; /* in file order (ascending start) */
	size_t nr;
};

/*
 * Parse maps text. `text` need not be NUL-terminated. A malformed line
 * makes the whole parse fail with -EINVAL (and *bad_line, when non-NULL,
 * gets its 1-based number), since a half-understood address space is worse
 * than none. Lines with start >= end are malformed. An empty text gives
 * zero entries. Returns 0 and *out (free with procmaps__free), or -errno.
 */
int procmaps__parse(const char *text, size_t len, struct procmaps **out,
		    size_t *bad_line);

/* Read and parse a maps file (e.g. "/proc/123/maps"). 0 or -errno. */
int procmaps__read_file(const char *path, struct procmaps **out);

/* Read /proc/PID/maps. -ENOENT/-ESRCH when the process is gone. */
int procmaps__read(uint32_t pid, struct procmaps **out);

void procmaps__free(struct procmaps *m); /* NULL is a no-op */

/* What -p needs to know of /proc/PID/status. */
struct procmaps_status {
	uint32_t tgid;	/* 0 when absent */
	char state;	/* 'R', 'S', 'Z'...; 0 when absent */
	int kthread;	/* "Kthread: 1" (Linux 6.1+); 0 when absent */
	uint32_t threads; /* "Threads:", the zombie leader included; 0 when absent */
};

/* Parse status text (need not be NUL-terminated); unknown lines are
 * skipped. 0, or -EINVAL when a known field is malformed. */
int procmaps__parse_status(const char *text, size_t len, struct procmaps_status *out);
/* Read /proc/PID/status. -ENOENT when there is no such process. */
int procmaps__read_status(uint32_t pid, struct procmaps_status *out);

/* The entry containing addr, or NULL (binary search; entries are sorted). */
const struct procmaps_entry *procmaps__find(const struct procmaps *m,
					    uint64_t addr);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Small helpers more than one module needs. Internal to libsfprof: not
 * installed, not a contract.
 */
#ifndef SFPROF_UTIL_H
#define SFPROF_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * The whole of `path` in a malloc()ed buffer (*out, *out_len; the caller
 * frees *out). Files that report no size (procfs) are read in growing
 * chunks. With limit nonzero, a file of `limit` bytes or more fails with
 * -EFBIG. 0 or -errno; on error *out is NULL.
 */
int util__read_file(const char *path, size_t limit, uint8_t **out,
		    size_t *out_len);

/* How far to read the regular file at fd: its size, or max when it is
 * larger (then -EFBIG, *end still set). 0, -EINVAL (not a regular file)
 * or -errno. */
int util__regular_end(int fd, uint64_t max, uint64_t *end);

/* All n bytes of p to fd, through short writes and EINTR: 0 or -errno
 * (-EIO for a write that wrote nothing). */
int util__write_all(int fd, const void *p, size_t n);
/* The same at file offset off (pwrite; the file offset stays). */
int util__pwrite_all(int fd, const void *p, size_t n, uint64_t off);

/*
 * Errors of the helpers below that no errno names (negative returns, and
 * errno values). util__strerror() knows them and every errno.
 */
enum util_error {
	UTIL_E_NOT_REGULAR = 3000, /* reading: not a regular file */
	UTIL_E_DEVICE,		   /* writing: a device (or socket) */
	UTIL_E_NO_READER,	   /* writing: a FIFO nobody reads */
};
const char *util__strerror(int err);

/*
 * Open a file named by untrusted bytes (a capture's mapping paths) for
 * reading, only when it is a regular file: a stat() first, so a device or
 * FIFO is never opened; then O_NONBLOCK (a FIFO swapped in cannot hang
 * the open), O_CLOEXEC, O_NOFOLLOW when nofollow is set (a symlink is
 * then -ELOOP), and fstat() again (*st filled when st is non-NULL). The
 * fd, or -errno / -UTIL_E_NOT_REGULAR.
 */
int util__open_regular(const char *path, int nofollow, struct stat *st);

/*
 * Outputs (-o). A regular file is written to a temporary file beside it,
 * PATH.XXXXXX (mkstemp, mode `mode` less the umask), and renamed onto
 * PATH by util__out_commit(); a FIFO, the process's own stdout (also
 * through a symlink such as /dev/stdout) and /dev/null itself are written
 * in place, never chmod()ed or truncated. Any other device or socket is
 * refused (-UTIL_E_DEVICE), as is a symlink to one: as root, -o must never
 * write onto a disk or change a device's mode.
 */
struct util_out {
	int fd;
	char *tmp;  /* the temporary name; NULL when written in place */
	char *path; /* the name given */
};
/* What util__out_open() would do, without creating anything: 0, or the
 * error it would fail with (-UTIL_E_DEVICE, -EISDIR...). A FIFO is opened
 * here, without blocking: with no reader (after 2 s for one to come) it
 * is -UTIL_E_NO_READER, before any profiling; else the open end is held for util__out_open (so the
 * reader sees no end of file in between). */
int util__out_check(const char *path);
/* 1 when path names a regular file (or nothing yet) that is written
 * through a temporary name, not a FIFO, stdout or a device: only such a
 * name can have siblings made after it (prof.cpu.svg). */
int util__out_is_file(const char *path);
/* 0 with o->fd open for writing, or -errno / -UTIL_E_DEVICE. */
int util__out_open(struct util_out *o, const char *path, mode_t mode);
/* Close o->fd (after fsync() when sync is set) and rename the temporary
 * file onto the name; 0 or -errno. The temporary file is removed on
 * failure. o is released either way. */
int util__out_commit(struct util_out *o, int sync);
/* Close and remove the temporary file; o is released. */
void util__out_abort(struct util_out *o);

/*
 * CRC32C (Castagnoli, as in iSCSI and ext4): util__crc32c(0, p, n), and
 * chained: util__crc32c(util__crc32c(0, a, x), b, y) == the CRC of a|b.
 * SSE4.2's crc32 instruction where the CPU has it, else a table.
 */
uint32_t util__crc32c(uint32_t crc, const void *p, size_t n);

/*
 * s for a terminal: every control byte (< 0x20, 0x7f) as \xHH and a
 * backslash as \\, so bytes from captures and /proc cannot move the
 * cursor or retitle the terminal. Truncated to fit out (size >= 4), with
 * "..." at the end when cut. Returns out.
 */
const char *util__escape(char *out, size_t size, const char *s);

/*
 * util__read_file() for a path from the command line that must be a
 * regular file (an ELF file, a section): anything else fails with
 * -UTIL_E_NOT_REGULAR before a byte is read, so /dev/zero or a FIFO
 * cannot grow the buffer without end. limit as for util__read_file().
 */
int util__read_regular(const char *path, size_t limit, uint8_t **out,
		       size_t *out_len);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t util__now_ns(void);
/* Nanoseconds of clock `clk` (CLOCK_REALTIME, CLOCK_PROCESS_CPUTIME_ID...). */
uint64_t util__clock_ns(int clk);

/*
 * Grow the array *arr (elements of `elem` bytes, *cap of them) to hold at
 * least `need`, doubling from 16 with every size overflow-checked.
 * 0 or -ENOMEM (then *arr and *cap are unchanged).
 */
int util__grow(void **arr, size_t *cap, size_t need, size_t elem);

/*
 * v in decimal with thousands separators (1234567 -> "1,234,567"),
 * truncated to fit buf (size >= 1).
 */
void util__fmt_count(char *buf, size_t size, uint64_t v);

/*
 * Unaligned host-order loads and stores (capture records, .eh_frame_hdr
 * tables): memcpy, so no alignment or aliasing assumptions.
 */
static inline uint32_t util__get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t util__get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline void util__put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static inline void util__put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

#endif

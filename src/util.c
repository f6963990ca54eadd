// SPDX-License-Identifier: MIT
/* Helpers shared by several modules. See src/util.h. */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define READ_CHUNK 65536

const char *util__strerror(int err)
{
	switch (-err) {
	case UTIL_E_NOT_REGULAR:
		return "not a regular file";
	case UTIL_E_DEVICE:
		return "is a device or socket: refusing to write to it "
		       "(give a regular file, a FIFO or -)";
	case UTIL_E_NO_READER:
		return "a FIFO with no reader: start the reader first";
	case ENOSPC:
		return "no space left on device";
	default:
		return strerror(-err);
	}
}

int util__open_regular(const char *path, int nofollow, struct stat *stp)
{
	struct stat pre, st;
	int fd, err;

	/* not even opened unless regular: opening a device can act (a tape
	 * rewinds, a modem line rises) and a FIFO's open waits for a writer */
	if ((nofollow ? lstat(path, &pre) : stat(path, &pre)) != 0)
		return -errno;
	if (S_ISLNK(pre.st_mode))
		return -ELOOP;
	if (!S_ISREG(pre.st_mode))
		return -UTIL_E_NOT_REGULAR;
	/* O_NONBLOCK in case the name was swapped for a FIFO since */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY |
				(nofollow ? O_NOFOLLOW : 0));
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -UTIL_E_NOT_REGULAR;
	}
	if (stp)
		*stp = st;
	return fd;
}

static int read_fd(int fd, size_t limit, uint8_t **out, size_t *out_len);

int util__read_file(const char *path, size_t limit, uint8_t **out,
		    size_t *out_len)
{
	int fd;

	*out = NULL;
	*out_len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return read_fd(fd, limit, out, out_len);
}

int util__read_regular(const char *path, size_t limit, uint8_t **out,
		       size_t *out_len)
{
	int fd;

	*out = NULL;
	*out_len = 0;
	fd = util__open_regular(path, 0, NULL);
	if (fd < 0)
		return fd;
	return read_fd(fd, limit, out, out_len);
}

/* Read fd to its end and close it. */
static int read_fd(int fd, size_t limit, uint8_t **out, size_t *out_len)
{
	uint8_t *buf = NULL, *nb;
	size_t len = 0, cap = READ_CHUNK;
	struct stat st;
	int err;

	/* A regular file says how big it is: one read, no regrowth. */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (!limit || (uint64_t)st.st_size < limit))
		cap = (size_t)st.st_size + 1;
	buf = malloc(cap);
	if (!buf) {
		err = -ENOMEM;
		goto err_out;
	}
	for (;;) {
		ssize_t n;

		if (limit && len >= limit) {
			err = -EFBIG;
			goto err_out;
		}
		if (len == cap) {
			if (__builtin_mul_overflow(cap, 2, &cap)) {
				err = -ENOMEM;
				goto err_out;
			}
			nb = realloc(buf, cap);
			if (!nb) {
				err = -ENOMEM;
				goto err_out;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto err_out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	*out = buf;
	*out_len = len;
	return 0;

err_out:
	close(fd);
	free(buf);
	return err;
}

int util__regular_end(int fd, uint64_t max, uint64_t *end)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	*end = (uint64_t)st.st_size;
	if (*end > max) {
		*end = max;
		return -EFBIG;
	}
	return 0;
}

int util__write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t k = write(fd, b, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		b += k;
		n -= (size_t)k;
	}
	return 0;
}

int util__pwrite_all(int fd, const void *p, size_t n, uint64_t off)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t k = pwrite(fd, b, n, (off_t)off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -EIO;
		b += k;
		n -= (size_t)k;
		off += (uint64_t)k;
	}
	return 0;
}

uint64_t util__clock_ns(int clk)
{
	struct timespec ts;

	clock_gettime((clockid_t)clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t util__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int util__grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap, bytes;
	void *n;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (__builtin_mul_overflow(ncap, 2, &ncap))
			return -ENOMEM;
	}
	if (__builtin_mul_overflow(ncap, elem, &bytes))
		return -ENOMEM;
	n = realloc(*arr, bytes);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

void util__fmt_count(char *buf, size_t size, uint64_t v)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%" PRIu64, v), o = 0;

	for (int i = 0; i < n && (size_t)o + 2 < size; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = 0;
}

/* ---- outputs ---------------------------------------------------------- */

static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* The system's null device itself (not a copy of it made with mknod). */
static int is_dev_null(const struct stat *st)
{
	struct stat n;

	return S_ISCHR(st->st_mode) && st->st_rdev == makedev(1, 3) &&
	       lstat("/dev/null", &n) == 0 && same_file(st, &n);
}

enum out_how { OUT_RENAME, OUT_IN_PLACE, OUT_STDOUT };

/* How path is written, and what it is now (*st, for the in-place check). */
static int out_classify(const char *path, struct stat *st)
{
	struct stat lst, so;
	int link;

	if (lstat(path, &lst) != 0)
		return errno == ENOENT ? OUT_RENAME : -errno;
	link = S_ISLNK(lst.st_mode);
	if (!link)
		*st = lst;
	else if (stat(path, st) != 0)
		return errno == ENOENT ? OUT_RENAME : -errno; /* dangling */
	/* /dev/stdout, or any name of what stdout already is */
	if (!S_ISREG(st->st_mode) && fstat(STDOUT_FILENO, &so) == 0 &&
	    same_file(st, &so))
		return OUT_STDOUT;
	if (S_ISREG(st->st_mode)) {
		/* a symlink to stdout's regular file: not renamed over (a
		 * rename would replace /dev/stdout itself) */
		if (link && fstat(STDOUT_FILENO, &so) == 0 && same_file(st, &so))
			return OUT_STDOUT;
		return OUT_RENAME;
	}
	if (S_ISFIFO(st->st_mode))
		return OUT_IN_PLACE;
	if (S_ISDIR(st->st_mode))
		return -EISDIR;
	if (!link && is_dev_null(st))
		return OUT_IN_PLACE;
	return -UTIL_E_DEVICE;
}

/*
 * FIFOs opened by util__out_check, held for util__out_open: opening one
 * again after closing it would show its reader an end of file, and a
 * blocking open at the end of a run, with no reader, would hang it.
 */
#define HELD_MAX 4
static struct held_fifo {
	int fd;
	dev_t dev;
	ino_t ino;
} held[HELD_MAX];
static int nr_held;

static int fifo_hold(const char *path, const struct stat *st)
{
	struct stat now;
	int fd;

	for (int i = 0; i < nr_held; i++)
		if (held[i].dev == st->st_dev && held[i].ino == st->st_ino)
			return 0;
	/* a reader started beside sfprof (`cat fifo & sfprof -o fifo`) may
	 * not have opened it yet: up to 2 s for it, polling */
	for (int tries = 0;; tries++) {
		fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		if (fd >= 0 || errno != ENXIO || tries == 200)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	}
	if (fd < 0)
		return errno == ENXIO ? -UTIL_E_NO_READER : -errno;
	if (fstat(fd, &now) || !S_ISFIFO(now.st_mode) || now.st_dev != st->st_dev ||
	    now.st_ino != st->st_ino || nr_held == HELD_MAX) {
		close(fd);
		return nr_held == HELD_MAX ? 0 : -UTIL_E_DEVICE;
	}
	held[nr_held++] = (struct held_fifo){ fd, st->st_dev, st->st_ino };
	return 0;
}

/* The held fd of the FIFO st, taken (blocking writes from now on), or -1. */
static int fifo_take(const struct stat *st)
{
	for (int i = 0; i < nr_held; i++) {
		if (held[i].dev != st->st_dev || held[i].ino != st->st_ino)
			continue;
		int fd = held[i].fd, fl = fcntl(fd, F_GETFL);

		held[i] = held[--nr_held];
		if (fl >= 0)
			(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
		return fd;
	}
	return -1;
}

int util__out_is_file(const char *path)
{
	struct stat st;

	return out_classify(path, &st) == OUT_RENAME;
}

int util__out_check(const char *path)
{
	struct stat st;
	char *dir, *slash;
	int how = out_classify(path, &st), err = 0;

	if (how == OUT_IN_PLACE && S_ISFIFO(st.st_mode))
		return fifo_hold(path, &st);
	if (how != OUT_RENAME)
		return how < 0 ? how : 0;
	/* the temporary file goes beside it: say now, not after the run,
	 * that the directory is missing or not writable */
	dir = strdup(path);
	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir] = 0; /* "/x" -> "/" */
	if (access(slash ? dir : ".", W_OK | X_OK) != 0)
		err = -errno;
	free(dir);
	return err;
}

int util__out_open(struct util_out *o, const char *path, mode_t mode)
{
	struct stat st, now;
	mode_t mask;
	int how, err;

	o->fd = -1;
	o->tmp = NULL;
	o->path = strdup(path);
	if (!o->path)
		return -ENOMEM;
	how = out_classify(path, &st);
	if (how < 0) {
		err = how;
		goto err_out;
	}
	if (how == OUT_STDOUT) {
		o->fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
		if (o->fd < 0) {
			err = -errno;
			goto err_out;
		}
		return 0;
	}
	if (how == OUT_IN_PLACE) {
		/* no O_TRUNC, no O_CREAT, no chmod: a FIFO or /dev/null as
		 * it is. Checked again on the open file: the name may have
		 * been swapped since out_classify(). A FIFO: the end
		 * util__out_check opened, else one opened now without
		 * blocking (no reader: an error, not a hang). */
		o->fd = S_ISFIFO(st.st_mode) ? fifo_take(&st) : -1;
		if (o->fd < 0)
			o->fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY |
						   (S_ISFIFO(st.st_mode) ? O_NONBLOCK : O_NOFOLLOW));
		if (o->fd < 0 && errno == ENXIO && S_ISFIFO(st.st_mode)) {
			err = -UTIL_E_NO_READER;
			goto err_out;
		}
		if (o->fd >= 0 && S_ISFIFO(st.st_mode)) {
			int fl = fcntl(o->fd, F_GETFL);

			if (fl >= 0)
				(void)fcntl(o->fd, F_SETFL, fl & ~O_NONBLOCK);
		}
		if (o->fd < 0) {
			err = -errno;
			goto err_out;
		}
		if (fstat(o->fd, &now) != 0 || !same_file(&st, &now) ||
		    (now.st_mode & S_IFMT) != (st.st_mode & S_IFMT)) {
			err = -UTIL_E_DEVICE;
			goto err_out;
		}
		return 0;
	}
	if (asprintf(&o->tmp, "%s.XXXXXX", path) < 0) {
		o->tmp = NULL;
		err = -ENOMEM;
		goto err_out;
	}
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	if (o->fd < 0) {
		err = -errno;
		free(o->tmp);
		o->tmp = NULL;
		goto err_out;
	}
	mask = umask(0);
	umask(mask);
	if (fchmod(o->fd, mode & ~mask) != 0) {
		err = -errno;
		goto err_out;
	}
	return 0;

err_out:
	util__out_abort(o);
	return err;
}

int util__out_commit(struct util_out *o, int sync)
{
	int err = 0;

	if (o->fd >= 0 && sync && o->tmp && fsync(o->fd) != 0)
		err = -errno;
	if (o->fd >= 0 && close(o->fd) != 0 && !err)
		err = -errno;
	o->fd = -1;
	if (!err && o->tmp && rename(o->tmp, o->path) != 0)
		err = -errno;
	if (err) {
		util__out_abort(o);
		return err;
	}
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
	return 0;
}

void util__out_abort(struct util_out *o)
{
	if (o->fd >= 0)
		close(o->fd);
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	o->fd = -1;
	o->tmp = o->path = NULL;
}

/* ---- CRC32C ----------------------------------------------------------- */

static uint32_t crc32c_table[256];

static void crc32c_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		crc32c_table[i] = c;
	}
}

static uint32_t crc32c_sw(uint32_t c, const uint8_t *p, size_t n)
{
	static int ready;

	if (!ready) {
		crc32c_init();
		ready = 1;
	}
	while (n--)
		c = crc32c_table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return c;
}

#if defined(__x86_64__)
#include <nmmintrin.h>

/*
 * One crc32 instruction a word waits 3 cycles for the one before: three
 * independent lanes over 256-byte thirds of each 768-byte block run at
 * the instruction's throughput, and are joined by shifting the first two
 * lanes' registers over the bytes after them. A CRC register over zero
 * bytes is linear, so "shift by 512 / 256 bytes" is a table lookup per
 * register byte (built once from the instruction itself). 2.6 times the
 * single lane's speed for a capture's events of a few KiB.
 */
#define LANE 256

static uint32_t shift_tab[2][4][256]; /* [0]: over LANE bytes, [1]: 2*LANE */

__attribute__((target("sse4.2")))
static uint32_t crc32c_hw1(uint32_t c, const uint8_t *p, size_t n)
{
	uint64_t c64 = c;

	for (; n >= 8; n -= 8, p += 8)
		c64 = _mm_crc32_u64(c64, util__get64(p));
	c = (uint32_t)c64;
	for (; n; n--)
		c = _mm_crc32_u8(c, *p++);
	return c;
}

/* The shift is linear: 32 basis values through the instruction, every
 * other entry an XOR of two made before it (a few microseconds). */
static void shift_init(void)
{
	static const uint8_t zeros[2 * LANE];

	for (int t = 0; t < 2; t++)
		for (int b = 0; b < 4; b++) {
			uint32_t *tab = shift_tab[t][b];

			tab[0] = 0;
			for (uint32_t x = 1; x < 256; x++)
				tab[x] = (x & (x - 1)) ?
					 tab[x & (x - 1)] ^ tab[x & -x] :
					 crc32c_hw1(x << (8 * b), zeros,
						    (size_t)(t + 1) * LANE);
		}
}

static inline uint32_t shift(int t, uint32_t c)
{
	return shift_tab[t][0][c & 0xff] ^ shift_tab[t][1][(c >> 8) & 0xff] ^
	       shift_tab[t][2][(c >> 16) & 0xff] ^ shift_tab[t][3][c >> 24];
}

__attribute__((target("sse4.2")))
static uint32_t crc32c_hw(uint32_t c, const uint8_t *p, size_t n)
{
	static int ready;

	if (n >= 3 * LANE && !ready) {
		shift_init();
		ready = 1;
	}
	for (; n >= 3 * LANE; n -= 3 * LANE, p += 3 * LANE) {
		uint64_t c0 = c, c1 = 0, c2 = 0;

		for (size_t i = 0; i < LANE; i += 8) {
			c0 = _mm_crc32_u64(c0, util__get64(p + i));
			c1 = _mm_crc32_u64(c1, util__get64(p + LANE + i));
			c2 = _mm_crc32_u64(c2, util__get64(p + 2 * LANE + i));
		}
		c = shift(1, (uint32_t)c0) ^ shift(0, (uint32_t)c1) ^ (uint32_t)c2;
	}
	return crc32c_hw1(c, p, n);
}
#endif

uint32_t util__crc32c(uint32_t crc, const void *p, size_t n)
{
	uint32_t c = ~crc;

#if defined(__x86_64__)
	static int hw = -1;

	if (hw < 0)
		hw = __builtin_cpu_supports("sse4.2");
	if (hw)
		return ~crc32c_hw(c, p, n);
#endif
	return ~crc32c_sw(c, p, n);
}

/* ---- escaping --------------------------------------------------------- */

const char *util__escape(char *out, size_t size, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		char e[4];
		size_t n;

		if (c < 0x20 || c == 0x7f) {
			e[0] = '\\', e[1] = 'x', e[2] = hex[c >> 4], e[3] = hex[c & 15];
			n = 4;
		} else if (c == '\\') {
			e[0] = e[1] = '\\';
			n = 2;
		} else {
			e[0] = (char)c;
			n = 1;
		}
		if (o + n + 1 > size) {
			/* cut: end in "..." */
			o = o + 4 <= size ? o : size - 4;
			memcpy(out + o, "...", 4);
			return out;
		}
		memcpy(out + o, e, n);
		o += n;
	}
	out[o] = 0;
	return out;
}

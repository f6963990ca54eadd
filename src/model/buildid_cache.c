// SPDX-License-Identifier: MIT
/* The build-id cache (src/model/buildid_cache.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "model/buildid_cache.h"
#include "model/elfread.h"
#include "util.h"

int buildid_cache__default_dir(char *buf, size_t size)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (xdg && xdg[0] == '/')
		n = snprintf(buf, size, "%s/sfprof/buildid", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf, size, "%s/.cache/sfprof/buildid", home);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* mkdir -p, each directory it makes 0700. */
static int make_dirs(const char *dir)
{
	char p[4096];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, dir, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != 0)
			continue;
		p[i] = 0;
		if (mkdir(p, 0700) != 0 && errno != EEXIST)
			return -errno;
		p[i] = i < n ? '/' : 0;
	}
	return 0;
}

/*
 * A cache directory is used only when it is sfprof's user's and no one
 * else can write to it: otherwise another user (whose HOME root kept, as
 * sudo -E does) could plant a binary under any build-id, or lead root's
 * writes elsewhere through symlinks. Every directory above it must be
 * root's or the user's, and not writable by others unless sticky (/tmp).
 * fd's directory: 0, or -EPERM.
 */
static int dir_ours(int fd)
{
	struct stat st;

	if (fstat(fd, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022))
		return -EPERM;
	return 0;
}

static int ancestors_trusted(const char *dir)
{
	char p[4096];
	size_t n = strlen(dir);

	if (n >= sizeof(p) || dir[0] != '/')
		return dir[0] == '/' ? -ENAMETOOLONG : 0; /* relative: as given */
	memcpy(p, dir, n + 1);
	for (size_t i = n; i > 0; i--) {
		struct stat st;

		if (p[i] != '/')
			continue;
		p[i] = 0;
		if (lstat(i ? p : "/", &st)) {
			if (errno == ENOENT)
				continue; /* made below, by us, in a checked parent */
			return -errno;
		}
		if ((st.st_uid != 0 && st.st_uid != geteuid()) ||
		    ((st.st_mode & 002) && !(st.st_mode & S_ISVTX) && !S_ISLNK(st.st_mode)))
			return -EPERM;
	}
	return 0;
}

/* name below dirfd, a directory and no symlink, ours: its fd, or -errno. */
static int sub_dir(int dirfd, const char *name, int create)
{
	int fd;

	if (create && mkdirat(dirfd, name, 0700) != 0 && errno != EEXIST)
		return -errno;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (dir_ours(fd)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

int buildid_cache__entry_dir(const char *dir, const uint8_t *id, size_t len, int create)
{
	char hex[2 * ELFREAD_BUILD_ID_MAX + 1], xx[3];
	int base, a, b, err;

	if (!dir || len < 2 || len > ELFREAD_BUILD_ID_MAX)
		return -EINVAL;
	elfread__hex(id, len, hex);
	memcpy(xx, hex, 2);
	xx[2] = 0;
	/* (checked before mkdir -p makes anything in another's tree) */
	if ((err = ancestors_trusted(dir)))
		return err;
	if (create && (err = make_dirs(dir)))
		return err;
	base = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* as the user gave it */
	if (base < 0)
		return -errno;
	if (dir_ours(base)) {
		close(base);
		return -EPERM;
	}
	a = sub_dir(base, xx, create);
	close(base);
	if (a < 0)
		return a;
	b = sub_dir(a, hex + 2, create);
	close(a);
	return b;
}

/*
 * Each copy has a checksum beside it, elf.crc: "crc32c XXXXXXXX size N",
 * the CRC32C of the bytes of its data extents in order (SEEK_DATA; holes
 * are not bytes) and its size. It is verified whenever the copy is opened
 * for use: a copy cut short, bit-flipped or changed since is not used
 * (and replaced by the next record that keeps the binary).
 */
#define SUM_NAME "elf.crc"

static int sum_fd(int fd, uint32_t *crc, uint64_t *size)
{
	static char buf[1 << 16];
	struct stat st;
	uint64_t off = 0;
	uint32_t c = 0;

	if (fstat(fd, &st))
		return -errno;
	while (off < (uint64_t)st.st_size) {
		off_t data = lseek(fd, (off_t)off, SEEK_DATA), hole;
		uint64_t stop;

		if (data < 0 && errno == ENXIO)
			break;
		if (data < 0)
			data = (off_t)off;
		hole = lseek(fd, data, SEEK_HOLE);
		stop = hole < 0 || hole <= data || hole > st.st_size ? (uint64_t)st.st_size
								     : (uint64_t)hole;
		for (off = (uint64_t)data; off < stop;) {
			size_t want = stop - off < sizeof(buf) ? (size_t)(stop - off) : sizeof(buf);
			ssize_t n = pread(fd, buf, want, (off_t)off);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return n < 0 ? -errno : -EIO;
			c = util__crc32c(c, buf, (size_t)n);
			off += (uint64_t)n;
		}
	}
	*crc = c;
	*size = (uint64_t)st.st_size;
	return 0;
}

/* What d/elf.crc says: 0, or -errno (-EBADMSG: not a checksum line). */
static int sum_read(int d, uint32_t *crc, uint64_t *size)
{
	char line[80];
	unsigned long long n;
	unsigned c;
	struct stat st;
	ssize_t got;
	int fd = openat(d, SUM_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		close(fd);
		return -EPERM;
	}
	got = pread(fd, line, sizeof(line) - 1, 0);
	close(fd);
	if (got <= 0)
		return -EBADMSG;
	line[got] = 0;
	if (sscanf(line, "crc32c %8x size %llu", &c, &n) != 2)
		return -EBADMSG;
	*crc = c;
	*size = n;
	return 0;
}

/* d/elf, opened, when its checksum holds: fd, or -errno. */
static int open_verified(int d)
{
	uint32_t want = 0, got = 0;
	uint64_t wsize = 0, gsize = 0;
	struct stat st;
	int fd, err;

	fd = openat(d, "elf", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		close(fd);
		return -UTIL_E_NOT_REGULAR;
	}
	err = sum_read(d, &want, &wsize);
	if (!err)
		err = sum_fd(fd, &got, &gsize);
	if (!err && (got != want || gsize != wsize))
		err = -EBADMSG;
	if (err) {
		close(fd);
		return err;
	}
	/* its mtime is its last use: the cache trim drops the oldest */
	futimens(fd, NULL);
	return fd;
}

int buildid_cache__open(const char *dir, const uint8_t *id, size_t len)
{
	int d = buildid_cache__entry_dir(dir, id, len, 0), fd;

	if (d < 0)
		return d;
	fd = open_verified(d);
	close(d);
	return fd;
}

/* (cheap: record asks for every binary; the copy is verified when used) */
int buildid_cache__has(const char *dir, const uint8_t *id, size_t len)
{
	int d = buildid_cache__entry_dir(dir, id, len, 0), has;

	if (d < 0)
		return 0;
	has = faccessat(d, "elf", F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
	      faccessat(d, SUM_NAME, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
	close(d);
	return has;
}

/*
 * The copy holds only what report reads of a binary: its headers, its
 * PT_LOAD segments and its sections (symbols, unwind tables, DWARF), at
 * their offsets in a file of the same size, and of those only the bytes
 * the source holds (SEEK_DATA): a 4 GiB sparse file, or a junk tail no
 * header names, costs the cache nothing. At most BUILDID_CACHE_COPY_MAX
 * bytes are copied per binary (-EFBIG beyond).
 */
struct copy {
	int to, from;
	uint64_t size, copied;
	char buf[1 << 16];
};

static int copy_range(struct copy *c, uint64_t off, uint64_t len)
{
	uint64_t end = len > c->size - off ? c->size : off + len;

	if (off >= c->size)
		return 0;
	while (off < end) {
		off_t data = lseek(c->from, (off_t)off, SEEK_DATA), hole;
		uint64_t stop;

		if (data < 0 && errno == ENXIO)
			return 0; /* a hole to the end */
		if (data < 0)
			data = (off_t)off;
		if ((uint64_t)data >= end)
			return 0;
		hole = lseek(c->from, data, SEEK_HOLE);
		stop = hole < 0 || (uint64_t)hole > end || hole <= data ? end : (uint64_t)hole;
		for (off = (uint64_t)data; off < stop;) {
			size_t want = stop - off < sizeof(c->buf) ? (size_t)(stop - off) : sizeof(c->buf);
			ssize_t n = pread(c->from, c->buf, want, (off_t)off);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return -errno;
			if (n == 0)
				return -EIO; /* shrank while copied */
			/* (ranges overlap: a byte counts once per write, the
			 * bound is on what is written) */
			c->copied += (uint64_t)n;
			if (c->copied > BUILDID_CACHE_COPY_MAX)
				return -EFBIG;
			for (ssize_t w = 0; w < n;) {
				ssize_t k = pwrite(c->to, c->buf + w, (size_t)(n - w), (off_t)off + w);

				if (k < 0 && errno == EINTR)
					continue;
				if (k <= 0)
					return k < 0 ? -errno : -EIO;
				w += k;
			}
			off += (uint64_t)n;
		}
	}
	return 0;
}

static int copy_elf(int to, int from, uint64_t size, const struct elfread *e)
{
	struct copy *c = malloc(sizeof(*c));
	struct elfread_load l;
	struct elfread_section sec;
	int err = 0;

	if (!c)
		return -ENOMEM;
	c->to = to, c->from = from, c->size = size, c->copied = 0;
	if (ftruncate(to, (off_t)size) != 0) {
		free(c);
		return -errno;
	}
	/* the ELF header's page, the segments, the sections, both tables */
	err = copy_range(c, 0, 4096);
	for (size_t i = 0; !err && !elfread__load(e, i, &l); i++)
		err = copy_range(c, l.offset, l.filesz);
	for (size_t i = 1; !err && elfread__section_header_at(e, i, &sec) != -ENOENT; i++)
		if (sec.type != SHT_NOBITS && sec.size)
			err = copy_range(c, sec.offset, sec.size);
	if (!err && !elfread__shdr_table(e, &sec.offset, &sec.size))
		err = copy_range(c, sec.offset, sec.size);
	if (!err && !elfread__phdr_table(e, &sec.offset, &sec.size))
		err = copy_range(c, sec.offset, sec.size);
	free(c);
	return err;
}

/* 0 when the ELF file at fd has build-id id, else -ESTALE (or -errno);
 * *out: the elfread of it when 0. */
static int same_build_id(int fd, const uint8_t *id, size_t len, struct elfread **out)
{
	uint8_t got[ELFREAD_BUILD_ID_MAX];
	struct elfread *e = elfread__open_fd(fd);
	size_t n = 0;
	int err;

	*out = NULL;
	if (!e)
		return errno ? -errno : -EINVAL;
	err = elfread__build_id(e, got, &n);
	if (!err && (n != len || memcmp(got, id, len)))
		err = -ESTALE;
	if (err)
		elfread__free(e);
	else
		*out = e;
	return err;
}

/* elf.crc of the copy open at t (to be renamed from tmp): 0 or -errno */
static int sum_write(int d, int t, const char *tmp)
{
	char name[96], line[80];
	uint64_t size;
	uint32_t crc;
	int fd, err = sum_fd(t, &crc, &size), n;

	if (err)
		return err;
	n = snprintf(line, sizeof(line), "crc32c %08x size %llu\n", crc, (unsigned long long)size);
	snprintf(name, sizeof(name), "%s.crc", tmp);
	fd = openat(d, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	err = util__write_all(fd, line, (size_t)n);
	if (close(fd) != 0 && !err)
		err = -errno;
	if (!err && renameat(d, name, d, SUM_NAME) != 0)
		err = -errno;
	if (err)
		unlinkat(d, name, 0);
	return err;
}

int buildid_cache__add_fd(const char *dir, const uint8_t *id, size_t len, int fd)
{
	struct elfread *e = NULL;
	char tmp[64];
	struct stat st;
	int d, t, err;

	if (fstat(fd, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -UTIL_E_NOT_REGULAR;
	if ((uint64_t)st.st_size > BUILDID_CACHE_FILE_MAX)
		return -EFBIG;
	/* only the file the build-id names: a path reused since the run
	 * began must not poison the entry for every later report */
	if ((err = same_build_id(fd, id, len, &e)))
		return err;
	d = buildid_cache__entry_dir(dir, id, len, 1);
	if (d < 0) {
		elfread__free(e);
		return d;
	}
	t = open_verified(d);
	if (t >= 0) {
		close(t);
		elfread__free(e);
		close(d);
		return 0; /* kept before (another run, another process) */
	}
	/* none, or one that fails its checksum: made anew */
	/* unique per process and call; O_EXCL|O_NOFOLLOW: nothing there is
	 * opened, least of all through a symlink */
	static unsigned seq;
	snprintf(tmp, sizeof(tmp), ".elf.%d.%u", (int)getpid(), seq++);
	t = openat(d, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (t < 0) {
		err = -errno;
		elfread__free(e);
		close(d);
		return err;
	}
	err = copy_elf(t, fd, (uint64_t)st.st_size, e);
	elfread__free(e);
	if (!err)
		err = sum_write(d, t, tmp);
	if (close(t) != 0 && !err)
		err = -errno;
	/* the sum first: an elf without one is never used */
	if (!err && renameat(d, tmp, d, "elf") != 0)
		err = -errno;
	if (err)
		unlinkat(d, tmp, 0);
	close(d);
	return err;
}

/* ---- record's keeper ---- */

struct keep_ent {
	uint8_t id[ELFREAD_BUILD_ID_MAX];
	uint32_t len;
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	char *path;
	int fd;	  /* the file, opened when first seen; -1: none */
	int done; /* kept, or tried */
};

/* Files held open between their first mapping and the end of the run:
 * an open file outlives its unlink (a library dlclose()d and removed, an
 * upgrade). Beyond this many, the path is tried again at the end. */
#define KEEP_FDS_MAX 256

struct buildid_keeper {
	char *dir;
	struct keep_ent *v;
	size_t n, cap;
	unsigned kept, failed, fds;
	int first_err;
};

struct buildid_keeper *buildid_keeper__new(const char *dir)
{
	struct buildid_keeper *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->dir = strdup(dir);
	if (!k->dir) {
		free(k);
		errno = ENOMEM;
		return NULL;
	}
	return k;
}

static struct keep_ent *keep_find(struct buildid_keeper *k, const uint8_t *id,
				  uint32_t len)
{
	for (size_t i = 0; i < k->n; i++)
		if (k->v[i].len == len && !memcmp(k->v[i].id, id, len))
			return &k->v[i];
	return NULL;
}

/* Whether path still names the mapped file (same dev:inode). */
static int reachable(const struct keep_ent *e)
{
	struct stat st;

	return stat(e->path, &st) == 0 && S_ISREG(st.st_mode) &&
	       st.st_ino == e->inode && major(st.st_dev) == e->dev_major &&
	       minor(st.st_dev) == e->dev_minor;
}

static void keep_result(struct buildid_keeper *k, struct keep_ent *e, int err)
{
	e->done = 1;
	if (err) {
		k->failed++;
		if (!k->first_err)
			k->first_err = err;
	} else {
		k->kept++;
	}
}

void buildid_keeper__mapping(struct buildid_keeper *k, uint32_t pid,
			     const struct proc_mapping_rec *m)
{
	struct keep_ent *e;
	char mf[96];
	int fd;

	if (!k || !m->build_id_len || !m->path || m->path[0] != '/' ||
	    keep_find(k, m->build_id, m->build_id_len))
		return;
	if (util__grow((void **)&k->v, &k->cap, k->n + 1, sizeof(*k->v)))
		return;
	e = &k->v[k->n];
	memset(e, 0, sizeof(*e));
	e->fd = -1;
	e->path = strdup(m->path);
	if (!e->path)
		return;
	k->n++;
	memcpy(e->id, m->build_id, m->build_id_len);
	e->len = m->build_id_len;
	e->inode = m->inode;
	e->dev_major = m->dev_major;
	e->dev_minor = m->dev_minor;
	if (buildid_cache__has(k->dir, e->id, e->len)) {
		e->done = 1;
		return;
	}
	if (reachable(e)) {
		/* copied at the end, off the event path, from the file as it
		 * is now (held open: it may be unlinked before the end) */
		struct stat st;

		if (k->fds >= KEEP_FDS_MAX)
			return;
		fd = util__open_regular(e->path, 0, &st);
		if (fd < 0)
			return;
		if (st.st_ino != e->inode || major(st.st_dev) != e->dev_major ||
		    minor(st.st_dev) != e->dev_minor) {
			close(fd); /* replaced between the two looks */
			return;
		}
		e->fd = fd;
		k->fds++;
		return;
	}
	/* gone or replaced at its path: now, while the mapping exists */
	snprintf(mf, sizeof(mf), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid,
		 m->start, m->end);
	fd = open(mf, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		keep_result(k, e, -errno);
		return;
	}
	keep_result(k, e, buildid_cache__add_fd(k->dir, e->id, e->len, fd));
	close(fd);
}

int buildid_keeper__finish(struct buildid_keeper *k, unsigned *kept,
			   unsigned *failed)
{
	if (!k)
		return 0;
	for (size_t i = 0; i < k->n; i++) {
		struct keep_ent *e = &k->v[i];
		int fd;

		if (e->done)
			continue;
		if (e->fd >= 0) {
			keep_result(k, e, buildid_cache__add_fd(k->dir, e->id, e->len,
								e->fd));
			continue;
		}
		if (!reachable(e)) {
			keep_result(k, e, -ENOENT); /* went away during the run */
			continue;
		}
		fd = util__open_regular(e->path, 0, NULL);
		if (fd < 0) {
			keep_result(k, e, fd);
			continue;
		}
		keep_result(k, e, buildid_cache__add_fd(k->dir, e->id, e->len, fd));
		close(fd);
	}
	if (kept)
		*kept = k->kept;
	if (failed)
		*failed = k->failed;
	return k->first_err;
}

void buildid_keeper__free(struct buildid_keeper *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->n; i++) {
		free(k->v[i].path);
		if (k->v[i].fd >= 0)
			close(k->v[i].fd);
	}
	free(k->v);
	free(k->dir);
	free(k);
}

// SPDX-License-Identifier: MIT
/*
 * Output files of profiles (src/profile/profile.h): the pre-flight check run
 * before profiling starts, and gzip compression of a stream (-o x.svgz,
 * -o x.folded.gz) on the way to the file.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "output/output.h"
#include "profile/profile.h"
#include "util.h"

int profile__check_output(const char *path)
{
	char dir[PATH_MAX];
	const char *slash;
	struct stat st;

	if (!path || !strcmp(path, "-"))
		return 0;
	if (!path[0])
		return -ENOENT;
	if (!stat(path, &st)) {
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		/* a device or FIFO is written in place: it must be writable */
		if (!S_ISREG(st.st_mode))
			return access(path, W_OK) ? -errno : 0;
	}
	/* a regular file is written beside itself and renamed: its
	 * directory must exist and be writable */
	slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if ((size_t)(slash - path) >= sizeof(dir))
		return -ENAMETOOLONG;
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (access(dir, W_OK | X_OK))
		return -errno;
	return profile__probe_dir(dir);
}

int profile__probe_dir(const char *dir)
{
	char probe[PATH_MAX];
	int fd;

	/* access() says yes to root everywhere, /proc and read-only mounts
	 * included: only creating a file there tells */
	if ((size_t)snprintf(probe, sizeof(probe), "%s/.sfprof-probe-XXXXXX", dir) >= sizeof(probe))
		return -ENAMETOOLONG;
	fd = mkstemp(probe);
	if (fd < 0) /* ENOENT from a pseudo file system (/proc): it exists */
		return errno == ENOENT ? -EACCES : -errno;
	close(fd);
	unlink(probe);
	return 0;
}

int profile_format__gzip_path(const char *path)
{
	size_t len = path ? strlen(path) : 0;

	return (len > 3 && !strcasecmp(path + len - 3, ".gz")) ||
	       (len > 5 && !strcasecmp(path + len - 5, ".svgz"));
}

/* ---- a FILE that gzips into another FILE (fopencookie) ---- */

struct gz_cookie {
	FILE *under;
	z_stream zs;
	int err;
};

static int gz_pump(struct gz_cookie *c, int flush)
{
	unsigned char out[16384];
	int zr;

	do {
		c->zs.next_out = out;
		c->zs.avail_out = sizeof(out);
		zr = deflate(&c->zs, flush);
		if (zr == Z_STREAM_ERROR)
			return -EIO;
		if (fwrite(out, 1, sizeof(out) - c->zs.avail_out, c->under) !=
		    sizeof(out) - c->zs.avail_out)
			return -EIO;
	} while (c->zs.avail_out == 0 || (flush == Z_FINISH && zr != Z_STREAM_END));
	return 0;
}

static ssize_t gz_write(void *cookie, const char *buf, size_t size)
{
	struct gz_cookie *c = cookie;

	c->zs.next_in = (unsigned char *)(uintptr_t)buf;
	c->zs.avail_in = (uInt)size;
	if (c->err || (c->err = gz_pump(c, Z_NO_FLUSH))) {
		errno = EIO;
		return -1;
	}
	return (ssize_t)size;
}

static int gz_close(void *cookie)
{
	struct gz_cookie *c = cookie;
	int err = c->err;

	c->zs.next_in = NULL;
	c->zs.avail_in = 0;
	if (!err)
		err = gz_pump(c, Z_FINISH);
	deflateEnd(&c->zs);
	if (!err && (fflush(c->under) || ferror(c->under)))
		err = -EIO;
	free(c);
	if (err) {
		errno = -err;
		return -1;
	}
	return 0;
}

FILE *profile__gzip_stream(FILE *under)
{
	cookie_io_functions_t io = { .write = gz_write, .close = gz_close };
	struct gz_cookie *c = calloc(1, sizeof(*c));
	FILE *f;

	if (!c)
		return NULL;
	c->under = under;
	/* 15 + 16: a gzip header and trailer, as gzip(1) writes */
	if (deflateInit2(&c->zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	f = fopencookie(c, "w", io);
	if (!f) {
		deflateEnd(&c->zs);
		free(c);
	}
	return f;
}

/* ---- format dispatch -------------------------------------------------- */

int profile_format__parse(const char *name)
{
	if (!name)
		return -EINVAL;
	if (!strcmp(name, "folded"))
		return PROFILE_FMT_FOLDED;
	if (!strcmp(name, "svg"))
		return PROFILE_FMT_SVG;
	if (!strcmp(name, "pprof"))
		return PROFILE_FMT_PPROF;
	return -EINVAL;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcasecmp(s + a - b, suffix);
}

enum profile_format profile_format__from_path(const char *path)
{
	if (!path)
		return PROFILE_FMT_FOLDED;
	if (ends_with(path, ".svg") || ends_with(path, ".svgz") || ends_with(path, ".svg.gz"))
		return PROFILE_FMT_SVG;
	if (ends_with(path, ".pb.gz") || ends_with(path, ".pprof") || ends_with(path, ".pb"))
		return PROFILE_FMT_PPROF;
	return PROFILE_FMT_FOLDED;
}

static int write_fmt(const struct profile *p, enum profile_format fmt, FILE *f);

/* .gz/.svgz: folded and SVG through gzip (pprof is gzipped already) */
static int write_out(const struct profile *p, enum profile_format fmt, const char *path, FILE *f)
{
	FILE *z;
	int err;

	if (fmt == PROFILE_FMT_PPROF || !profile_format__gzip_path(path))
		return write_fmt(p, fmt, f);
	z = profile__gzip_stream(f);
	if (!z)
		return -errno;
	err = write_fmt(p, fmt, z);
	if (fclose(z) && !err)
		err = -EIO;
	return err;
}

static int write_fmt(const struct profile *p, enum profile_format fmt, FILE *f)
{
	switch (fmt) {
	case PROFILE_FMT_SVG:
		return profile__write_svg(p, f);
	case PROFILE_FMT_PPROF:
		return profile__write_pprof(p, f);
	case PROFILE_FMT_FOLDED:
	case PROFILE_FMT_AUTO:
		if (profile__render(p)->diff_base)
			return profile__write_folded_diff(p, f);
		return profile__write_folded(p, f);
	}
	return -EINVAL;
}

int profile__write(const struct profile *p, enum profile_format fmt, const char *path)
{
	struct util_out out;
	FILE *f;
	int err;

	if (!p || fmt < PROFILE_FMT_AUTO || fmt > PROFILE_FMT_PPROF)
		return -EINVAL;
	if (fmt == PROFILE_FMT_AUTO)
		fmt = profile_format__from_path(path && strcmp(path, "-") ? path : NULL);
	if (!path || !strcmp(path, "-")) {
		/* a terminal gets control bytes (a comm, a path) escaped */
		if ((fmt == PROFILE_FMT_FOLDED || fmt == PROFILE_FMT_AUTO) &&
		    !profile__render(p)->diff_base && isatty(STDOUT_FILENO))
			return profile__write_folded_escaped(p, stdout);
		return write_fmt(p, fmt, stdout);
	}
	/*
	 * A regular file through a temporary name renamed when complete; a
	 * FIFO or stdout in place; never onto a device (util.h). 0644: a
	 * profile holds names and counts, no raw memory.
	 */
	err = util__out_open(&out, path, 0644);
	if (err)
		return err;
	f = fdopen(out.fd, "w");
	if (!f) {
		err = -errno;
		util__out_abort(&out);
		return err;
	}
	err = write_out(p, fmt, path, f);
	out.fd = -1; /* fclose() closes it */
	if (fclose(f) && !err)
		err = errno ? -errno : -EIO;
	if (err) {
		util__out_abort(&out);
		return err;
	}
	return util__out_commit(&out, 0);
}

// SPDX-License-Identifier: MIT
/* DWARF images kept between runs. See src/symbols/dwarfimage.h. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/buildid_cache.h"
#include "symbols/dwarfimage_int.h"
#include "model/elfread.h"
#include "util.h"

/* Bumped when what an image holds changes (the set of sections kept). */
#define DWARF_IMAGE_VERSION 1

int dwarf_image__cache_dir(char *buf, size_t size)
{
	const char *env = getenv("SFPROF_DWARF_CACHE");
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (env && !env[0])
		return -ENOENT;
	if (env)
		n = snprintf(buf, size, "%s", env);
	else if (xdg && xdg[0] == '/')
		n = snprintf(buf, size, "%s/sfprof/dwarf", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf, size, "%s/.cache/sfprof/dwarf", home);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* DIR/xx/yyyy as an fd and the entry's name into name, or -errno. */
static int entry_dir(const char *dir, const struct dwarf_image_key *key, int create,
		     char *name, size_t size)
{
	int n;

	if (!dir || !key)
		return -EINVAL;
	n = snprintf(name, size, "dwarf-%" PRIu64 "-v%d", key->file_len, DWARF_IMAGE_VERSION);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return buildid_cache__entry_dir(dir, key->id, key->id_len, create);
}

/* The stored image, checked: 0 and *out, or -errno (rebuild it). */
static int load(const char *dir, const struct dwarf_image_key *key, Elf *src, unsigned flags,
		struct dwarf_image **out)
{
	char name[64];
	struct dwarf_image *img;
	struct stat st;
	GElf_Ehdr eh, sh;
	int d, fd;

	d = entry_dir(dir, key, 0, name, sizeof(name));
	if (d < 0)
		return d;
	fd = openat(d, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	close(d);
	if (fd < 0)
		return -errno;
	/* ours alone: another user's file could say anything */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022) || st.st_size < (off_t)sizeof(Elf64_Ehdr) ||
	    (uint64_t)st.st_size > DWARF_IMAGE_MAX + (1u << 20)) {
		close(fd);
		return -EPERM;
	}
	img = calloc(1, sizeof(*img));
	if (!img) {
		close(fd);
		return -ENOMEM;
	}
	img->size = (size_t)st.st_size;
	img->map = mmap(NULL, img->size, PROT_READ, MAP_PRIVATE, fd, 0);
	/*
	 * Advice: an image read back from disk (the next day, after a
	 * reboot) comes in as 2 MiB folios, mapped as one entry each, not
	 * 4 KiB pages that libdw's walk over every unit header faults in 16
	 * at a time and munmap clears one by one (libc's 8.5 MB image: 109
	 * faults and 0.25-0.5 ms of munmap in 4 KiB pages, 6 faults and
	 * 0.04-0.1 ms in 2 MiB ones; BENCHMARKS.md). Pages already cached
	 * keep their size.
	 */
	if (img->map != MAP_FAILED && !(flags & DWARF_IMAGE_LEAN))
		(void)madvise(img->map, img->size, MADV_HUGEPAGE);
	/* its mtime is its last use: dwarf_image__cache_trim drops the oldest */
	futimens(fd, NULL);
	close(fd);
	if (img->map == MAP_FAILED) {
		free(img);
		return -ENOMEM;
	}
	img->from_cache = 1;
	img->mapped = 1;
	img->elf = elf_memory(img->map, img->size);
	/* the same kind of ELF as the source, or it is not this image */
	if (!img->elf || elf_kind(img->elf) != ELF_K_ELF || !gelf_getehdr(img->elf, &eh) ||
	    !gelf_getehdr(src, &sh) || eh.e_machine != sh.e_machine ||
	    memcmp(eh.e_ident, sh.e_ident, EI_NIDENT) || eh.e_type != sh.e_type) {
		dwarf_image__free(img);
		return -EINVAL;
	}
	*out = img;
	return 0;
}

/* The image of src (img, or made straight into the file from src when
 * img is NULL: dwarf_image__write) written to the cache under a
 * temporary name, then renamed. */
static int store(const char *dir, const struct dwarf_image_key *key,
		 const struct dwarf_image *img, Elf *src, unsigned flags)
{
	static unsigned seq;
	char name[64], tmp[96];
	int d, t, err;

	d = entry_dir(dir, key, 1, name, sizeof(name));
	if (d < 0)
		return d;
	snprintf(tmp, sizeof(tmp), ".%s.%d.%u", name, (int)getpid(), seq++);
	t = openat(d, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (t < 0) {
		err = -errno;
		close(d);
		return err;
	}
	err = img ? util__write_all(t, img->map, img->size) : dwarf_image__write(src, flags, t);
	if (close(t) != 0 && !err)
		err = -errno;
	if (!err && renameat(d, tmp, d, name) != 0)
		err = -errno;
	if (err)
		unlinkat(d, tmp, 0);
	close(d);
	return err;
}

/* One stored image (a DWARF image, or a build-id cache's binary copy),
 * for dwarf_image__cache_trim. */
struct entry {
	char path[2 + 1 + 2 * ELFREAD_BUILD_ID_MAX + 1 + 64];
	int64_t mtime;
	uint64_t size;
	int base; /* which directory's */
};

static int older(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return (x->mtime > y->mtime) - (x->mtime < y->mtime);
}

/* The images below base/sub (xx/yyyy levels) appended to *v. */
static int list_level(int base, const char *sub, int depth, struct entry **v, size_t *n,
		      size_t *cap)
{
	DIR *d;
	struct dirent *de;
	int fd = openat(base, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat ds;

	/* only directories no one else can change: their entries cannot be
	 * swapped under the unlinks below */
	if (fd >= 0 && (fstat(fd, &ds) || ds.st_uid != geteuid() || (ds.st_mode & 022))) {
		close(fd);
		return 0;
	}
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((de = readdir(d))) {
		char path[sizeof((*v)->path)];
		struct stat st;

		if (de->d_name[0] == '.')
			continue; /* ., .. and another run's temporary file */
		if (depth == 0 ? snprintf(path, sizeof(path), "%s", de->d_name) >= (int)sizeof(path)
			       : snprintf(path, sizeof(path), "%s/%s", sub, de->d_name) >=
					 (int)sizeof(path))
			continue;
		if (depth < 2) {
			list_level(base, path, depth + 1, v, n, cap);
			continue;
		}
		/* a DWARF image, or a binary copy (its elf.crc goes with it) */
		if ((strncmp(de->d_name, "dwarf-", 6) && strcmp(de->d_name, "elf")) ||
		    fstatat(base, path, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (*n == *cap) {
			size_t c = *cap ? 2 * *cap : 64;
			struct entry *nv = realloc(*v, c * sizeof(**v));

			if (!nv)
				break;
			*v = nv;
			*cap = c;
		}
		snprintf((*v)[*n].path, sizeof((*v)[*n].path), "%s", path);
		(*v)[*n].mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		(*v)[*n].size = (uint64_t)st.st_blocks * 512; /* a sparse copy's disk */
		(*v)[*n].base = base;
		(*n)++;
	}
	closedir(d);
	return 0;
}

int dwarf_image__cache_trim(const char *dir, uint64_t max_bytes, unsigned *removed)
{
	return dwarf_image__cache_trim_all(&dir, 1, max_bytes, removed);
}

int dwarf_image__cache_trim_all(const char *const *dirs, size_t nr, uint64_t max_bytes,
				unsigned *removed)
{
	struct entry *v = NULL;
	size_t n = 0, cap = 0, nb = 0;
	uint64_t total = 0;
	int bases[4];

	if (removed)
		*removed = 0;
	for (size_t i = 0; i < nr && nb < 4; i++) {
		if (!dirs[i] || (i && dirs[0] && !strcmp(dirs[i], dirs[0])))
			continue;
		bases[nb] = open(dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (bases[nb] < 0)
			continue;
		list_level(bases[nb], ".", 0, &v, &n, &cap);
		nb++;
	}
	if (!nb)
		return -ENOENT;
	for (size_t i = 0; i < n; i++)
		total += v[i].size;
	if (total > max_bytes) {
		qsort(v, n, sizeof(*v), older);
		for (size_t i = 0; i < n && total > max_bytes; i++) {
			int base = v[i].base;
			char *slash = strrchr(v[i].path, '/');

			if (unlinkat(base, v[i].path, 0) != 0)
				continue;
			total -= v[i].size;
			if (removed)
				(*removed)++;
			if (slash && !strcmp(slash + 1, "elf")) { /* its checksum */
				char sum[sizeof(v[i].path) + 8];

				snprintf(sum, sizeof(sum), "%s.crc", v[i].path);
				unlinkat(base, sum, 0);
			}
			/* and its directories, when that left them empty */
			if (slash) {
				*slash = 0;
				if (!unlinkat(base, v[i].path, AT_REMOVEDIR) &&
				    (slash = strrchr(v[i].path, '/'))) {
					*slash = 0;
					unlinkat(base, v[i].path, AT_REMOVEDIR);
				}
			}
		}
	}
	free(v);
	for (size_t i = 0; i < nb; i++)
		close(bases[i]);
	return 0;
}

uint64_t dwarf_image__cache_max(void)
{
	const char *s = getenv("SFPROF_DWARF_CACHE_MB");
	char *end;
	unsigned long long mb;

	if (!s || !*s)
		return DWARF_CACHE_MAX_DEFAULT;
	errno = 0;
	mb = strtoull(s, &end, 10);
	if (errno || *end || mb > (1ull << 40))
		return DWARF_CACHE_MAX_DEFAULT;
	return mb << 20;
}

int dwarf_image__load_cached(Elf *src, const char *dir, const struct dwarf_image_key *key,
			     unsigned flags, struct dwarf_image **out)
{
	*out = NULL;
	return load(dir, key, src, flags, out);
}

int dwarf_image__open_cached(Elf *src, const char *dir,
			     const struct dwarf_image_key *key,
			     struct dwarf_image **out)
{
	return dwarf_image__open_cached_flags(src, dir, key, 0, out);
}

int dwarf_image__open_cached_flags(Elf *src, const char *dir,
				   const struct dwarf_image_key *key, unsigned flags,
				   struct dwarf_image **out)
{
	int err, stored;

	*out = NULL;
	if (dir && key && !load(dir, key, src, flags, out))
		return 0;
	if ((flags & DWARF_IMAGE_LEAN) && !(dir && key))
		return -ENOTSUP; /* only the cache's mapping is lean */
	if (flags & DWARF_IMAGE_LEAN) {
		/* made straight into the cache's file, then mapped from it:
		 * never a private copy of it all (six 80 MB binaries' 44 MB
		 * images at once: BENCHMARKS.md, DWARF burst) */
		err = store(dir, key, NULL, src, flags);
		stored = !err;
	} else {
		err = dwarf_image__open_flags(src, flags, out);
		stored = !err && dir && key && !store(dir, key, *out, NULL, 0);
	}
	if (stored) {
		/* one bound for the DWARF images and the binary copies */
		char bdir[4096];
		const char *dirs[2] = { dir, buildid_cache__default_dir(bdir, sizeof(bdir)) ? NULL : bdir };

		dwarf_image__cache_trim_all(dirs, 2, dwarf_image__cache_max(), NULL);
	}
	if (!err && (flags & DWARF_IMAGE_LEAN)) {
		/* the stored file, mapped, is read from here on (its pages
		 * as libdw wants them) */
		if (load(dir, key, src, flags, out))
			return -ENOTSUP;
		(*out)->from_cache = 0; /* made by this run */
	}
	return err;
}

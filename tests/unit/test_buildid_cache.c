// SPDX-License-Identifier: MIT
/* The build-id cache: entries by build-id, 0600/0700, verified, and never
 * written through a symlink. The binary cached is this test itself. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "model/buildid_cache.h"
#include "symbols/dwarfimage.h"
#include "model/elfread.h"
#include "testlib.h"

static char dir[64];

static void fresh_dir(void)
{
	strcpy(dir, "/tmp/sfprof-test-bidc-XXXXXX");
	if (!mkdtemp(dir))
		abort();
}

static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd)) {
	}
}

/* This binary's build-id and an fd on it. */
static int self(uint8_t *id, size_t *len)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	struct elfread *e = fd >= 0 ? elfread__open_fd(fd) : NULL;
	int err = e ? elfread__build_id(e, id, len) : -1;

	elfread__free(e);
	if (err && fd >= 0) {
		close(fd);
		return -1;
	}
	return fd;
}

TEST(add_should_keep_a_verified_copy_by_build_id_with_private_modes)
{
	uint8_t id[ELFREAD_BUILD_ID_MAX];
	char hex[2 * ELFREAD_BUILD_ID_MAX + 1], p[256];
	size_t len = 0;
	struct stat st, me;
	int fd = self(id, &len), got;

	if (fd < 0)
		SKIP("this test binary has no build-id");
	fresh_dir();
	snprintf(p, sizeof(p), "%s/new/sub", dir); /* created on demand */
	CHECK_INT(buildid_cache__has(p, id, len), 0);
	CHECK_INT(buildid_cache__add_fd(p, id, len, fd), 0);
	CHECK_INT(buildid_cache__has(p, id, len), 1);
	CHECK_INT(buildid_cache__add_fd(p, id, len, fd), 0); /* again: no-op */
	elfread__hex(id, len, hex);
	snprintf(p, sizeof(p), "%s/new/sub/%.2s/%s/elf", dir, hex, hex + 2);
	CHECK_INT(stat(p, &st), 0);
	CHECK_INT(st.st_mode & 0777, 0600);
	CHECK_INT(fstat(fd, &me), 0);
	CHECK_INT(st.st_size, me.st_size);
	*strrchr(p, '/') = 0;
	CHECK_INT(stat(p, &st), 0);
	CHECK_INT(st.st_mode & 0777, 0700);
	snprintf(p, sizeof(p), "%s/new/sub", dir);
	got = buildid_cache__open(p, id, len);
	CHECK(got >= 0);
	close(got);
	close(fd);
	cleanup();
}

TEST(add_should_refuse_a_file_with_another_build_id)
{
	uint8_t id[ELFREAD_BUILD_ID_MAX];
	size_t len = 0;
	int fd = self(id, &len);

	if (fd < 0)
		SKIP("this test binary has no build-id");
	fresh_dir();
	id[0] ^= 0xff;
	CHECK_INT(buildid_cache__add_fd(dir, id, len, fd), -ESTALE);
	CHECK_INT(buildid_cache__has(dir, id, len), 0);
	close(fd);
	cleanup();
}

TEST(a_symlink_in_the_cache_should_never_be_followed)
{
	uint8_t id[ELFREAD_BUILD_ID_MAX];
	char hex[2 * ELFREAD_BUILD_ID_MAX + 1], p[256], q[256];
	size_t len = 0;
	int fd = self(id, &len);

	if (fd < 0)
		SKIP("this test binary has no build-id");
	fresh_dir();
	elfread__hex(id, len, hex);
	snprintf(q, sizeof(q), "%s/elsewhere", dir);
	CHECK_INT(mkdir(q, 0700), 0);
	snprintf(p, sizeof(p), "%s/c", dir);
	CHECK_INT(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/c/%.2s", dir, hex);
	CHECK_INT(symlink(q, p), 0);
	snprintf(p, sizeof(p), "%s/c", dir);
	CHECK(buildid_cache__add_fd(p, id, len, fd) < 0);
	CHECK(buildid_cache__open(p, id, len) < 0);
	snprintf(p, sizeof(p), "%s/elsewhere/%s", dir, hex + 2);
	CHECK_INT(access(p, F_OK), -1);
	close(fd);
	cleanup();
}

/* dir/sub/xx/yyyy/name: a file of `data` bytes of data and `apparent`
 * bytes in all (the rest a hole), last used `age` seconds ago */
static void entry(const char *sub, const char *xy, const char *name, off_t data, off_t apparent,
		  int age)
{
	char p[256];
	struct timespec t[2];
	int fd;

	snprintf(p, sizeof(p), "mkdir -p '%s/%s/%s'", dir, sub, xy);
	if (system(p))
		abort();
	snprintf(p, sizeof(p), "%s/%s/%s/%s", dir, sub, xy, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		abort();
	for (off_t off = 0; off < data; off += 4096)
		if (pwrite(fd, p, sizeof(p), off) != (ssize_t)sizeof(p))
			abort();
	if (ftruncate(fd, apparent))
		abort();
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= age;
	t[1] = t[0];
	futimens(fd, t);
	close(fd);
}

static int exists(const char *sub, const char *xy, const char *name)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s/%s/%s", dir, sub, xy, name);
	return access(p, F_OK) == 0;
}

TEST(one_bound_should_cover_both_caches_oldest_first_by_disk_used)
{
	const char *dirs[2];
	char a[128], b[128];
	unsigned removed = 0;

	fresh_dir();
	chmod(dir, 0700);
	/* a DWARF image (1 MiB, oldest), a binary copy (1 MiB, older) and
	 * a sparse copy claiming 1 GiB that holds 64 KiB (newest) */
	entry("dwarf", "aa/1111", "dwarf-100-v1", 1 << 20, 1 << 20, 300);
	entry("buildid", "bb/2222", "elf", 1 << 20, 1 << 20, 200);
	entry("buildid", "bb/2222", "elf.crc", 64, 64, 200);
	entry("buildid", "cc/3333", "elf", 64 << 10, 1 << 30, 100);
	snprintf(a, sizeof(a), "%s/dwarf", dir);
	snprintf(b, sizeof(b), "%s/buildid", dir);
	dirs[0] = a;
	dirs[1] = b;
	/* room for 512 KiB: the two oldest go; the sparse one stays (its
	 * 64 KiB of disk count, not its 1 GiB) */
	CHECK_INT(dwarf_image__cache_trim_all(dirs, 2, 1u << 19, &removed), 0);
	CHECK_INT(removed, 2);
	CHECK_INT(exists("dwarf", "aa/1111", "dwarf-100-v1"), 0);
	CHECK_INT(exists("buildid", "bb/2222", "elf"), 0);
	CHECK_INT(exists("buildid", "bb/2222", "elf.crc"), 0);
	CHECK_INT(exists("buildid", "cc/3333", "elf"), 1);
	/* nothing over the bound: nothing removed */
	CHECK_INT(dwarf_image__cache_trim_all(dirs, 2, 1u << 19, &removed), 0);
	CHECK_INT(removed, 0);
	cleanup();
}

TEST(default_dir_should_follow_xdg_cache_home_then_home)
{
	char buf[256];

	setenv("XDG_CACHE_HOME", "/x/cache", 1);
	CHECK_INT(buildid_cache__default_dir(buf, sizeof(buf)), 0);
	CHECK_STR(buf, "/x/cache/sfprof/buildid");
	setenv("XDG_CACHE_HOME", "relative", 1); /* not absolute: ignored */
	setenv("HOME", "/home/u", 1);
	CHECK_INT(buildid_cache__default_dir(buf, sizeof(buf)), 0);
	CHECK_STR(buf, "/home/u/.cache/sfprof/buildid");
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	CHECK_INT(buildid_cache__default_dir(buf, sizeof(buf)), -ENOENT);
}

TEST_MAIN()

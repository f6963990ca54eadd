// SPDX-License-Identifier: MIT
/*
 * src/util.c: output files that never touch a device, bounded and
 * non-blocking readers for untrusted paths, CRC32C, terminal escaping.
 * The device cases make their own nodes with mknod(2) in a temporary
 * directory (root only; skipped otherwise).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "testlib.h"
#include "../src/util.h"

static char dir[64];

static const char *tmpdir(void)
{
	strcpy(dir, "/tmp/sfprof-test-util-XXXXXX");
	return mkdtemp(dir);
}

static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd)) {
	}
}

static void on_alarm(int sig)
{
	(void)sig;
	_exit(3); /* a blocking open: the test binary dies visibly */
}

TEST(crc32c_should_match_the_castagnoli_check_value)
{
	/* RFC 3720 B.4 / the "123456789" check value of CRC-32C */
	CHECK_U64(util__crc32c(0, "123456789", 9), 0xe3069283u);
	CHECK_U64(util__crc32c(util__crc32c(0, "1234", 4), "56789", 5),
		  0xe3069283u);
	CHECK_U64(util__crc32c(0, "", 0), 0);
	/* 32 zero bytes (RFC 3720 B.4) */
	uint8_t z[32] = { 0 };
	CHECK_U64(util__crc32c(0, z, sizeof(z)), 0x8a9136aau);
}

/* The table-driven CRC, bit by bit, as the reference. */
static uint32_t crc_ref(const uint8_t *p, size_t n)
{
	uint32_t c = ~0u;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
	}
	return ~c;
}

TEST(crc32c_should_agree_with_the_bitwise_reference_at_every_length)
{
	static uint8_t buf[5000];
	uint32_t x = 1;

	for (size_t i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
	for (size_t n = 0; n <= sizeof(buf); n += n < 800 ? 1 : 37) {
		uint32_t want = crc_ref(buf, n);

		CHECK_MSG(util__crc32c(0, buf, n) == want, "length %zu", n);
		/* chained at an odd split, and from an odd address */
		CHECK_MSG(util__crc32c(util__crc32c(0, buf, n / 3), buf + n / 3,
				       n - n / 3) == want, "split length %zu", n);
	}
	CHECK_U64(util__crc32c(0, buf + 1, 2999), crc_ref(buf + 1, 2999));
}

TEST(escape_should_hex_control_bytes_and_double_backslashes)
{
	char out[64];

	CHECK_STR(util__escape(out, sizeof(out), "/lib/a\033]0;x\007b\\c"),
		  "/lib/a\\x1b]0;x\\x07b\\\\c");
	CHECK_STR(util__escape(out, sizeof(out), "plain"), "plain");
	CHECK_STR(util__escape(out, 8, "abcdefghij"), "abcd...");
	CHECK_STR(util__escape(out, 8, "\n\n\n"), "\\x0a...");
}

TEST(out_open_should_write_a_new_regular_file_through_a_temporary_name)
{
	struct util_out o;
	char path[128];
	struct stat st;

	CHECK(tmpdir());
	snprintf(path, sizeof(path), "%s/out", dir);
	CHECK_INT(util__out_open(&o, path, 0600), 0);
	CHECK(o.tmp != NULL);
	CHECK(strncmp(o.tmp, path, strlen(path)) == 0);
	CHECK_INT(access(path, F_OK), -1); /* nothing at the name until commit */
	CHECK_INT(write(o.fd, "x", 1), 1);
	CHECK_INT(util__out_commit(&o, 1), 0);
	CHECK_INT(stat(path, &st), 0);
	CHECK_INT(st.st_size, 1);
	CHECK_INT(st.st_mode & 0777, 0600);
	cleanup();
}

TEST(out_check_should_fail_early_for_a_missing_directory)
{
	CHECK_INT(util__out_check("/nonexistent-sfprof-dir/out.svg"), -ENOENT);
	CHECK_INT(util__out_check("/tmp/sfprof-new-file-that-does-not-exist"), 0);
	CHECK_INT(util__out_check("/"), -EISDIR);
}

TEST(out_open_should_refuse_a_device_node_and_leave_its_mode)
{
	struct util_out o;
	char path[128], link[128];
	struct stat st;

	if (geteuid() != 0)
		SKIP("needs root for mknod");
	CHECK(tmpdir());
	snprintf(path, sizeof(path), "%s/null", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	CHECK_INT(mknod(path, S_IFCHR | 0666, makedev(1, 3)), 0);
	CHECK_INT(chmod(path, 0666), 0);
	CHECK_INT(util__out_check(path), -UTIL_E_DEVICE);
	CHECK_INT(util__out_open(&o, path, 0600), -UTIL_E_DEVICE);
	CHECK_INT(symlink(path, link), 0);
	CHECK_INT(util__out_open(&o, link, 0600), -UTIL_E_DEVICE);
	CHECK_INT(lstat(path, &st), 0);
	CHECK(S_ISCHR(st.st_mode));
	CHECK_INT(st.st_mode & 07777, 0666);
	CHECK_INT(lstat(link, &st), 0);
	CHECK(S_ISLNK(st.st_mode)); /* not renamed over either */
	cleanup();
}

TEST(out_open_should_write_dev_null_and_a_fifo_in_place)
{
	struct util_out o;
	char path[128];
	struct stat st;
	int rfd;

	CHECK_INT(util__out_open(&o, "/dev/null", 0600), 0);
	CHECK(o.tmp == NULL);
	CHECK_INT(util__out_commit(&o, 1), 0);
	CHECK_INT(stat("/dev/null", &st), 0);
	CHECK_INT(st.st_mode & 0777, 0666);

	CHECK(tmpdir());
	snprintf(path, sizeof(path), "%s/fifo", dir);
	CHECK_INT(mkfifo(path, 0644), 0);
	rfd = open(path, O_RDONLY | O_NONBLOCK);
	CHECK(rfd >= 0);
	CHECK_INT(util__out_open(&o, path, 0600), 0);
	CHECK(o.tmp == NULL);
	CHECK_INT(write(o.fd, "hi", 2), 2);
	CHECK_INT(util__out_commit(&o, 1), 0);
	char buf[4] = "";
	CHECK_INT(read(rfd, buf, sizeof(buf)), 2);
	close(rfd);
	CHECK_INT(lstat(path, &st), 0);
	CHECK(S_ISFIFO(st.st_mode));
	CHECK_INT(st.st_mode & 0777, 0644);
	cleanup();
}

TEST(out_open_should_write_stdout_through_a_symlink_without_renaming)
{
	struct util_out o;
	char link[128];
	struct stat st;

	/* a /dev/stdout of our own: a regression must not replace the
	 * system's */
	CHECK(tmpdir());
	snprintf(link, sizeof(link), "%s/stdout", dir);
	CHECK_INT(symlink("/proc/self/fd/1", link), 0);
	CHECK_INT(util__out_open(&o, link, 0600), 0);
	CHECK(o.tmp == NULL);
	CHECK_INT(util__out_commit(&o, 0), 0);
	CHECK_INT(lstat(link, &st), 0);
	CHECK(S_ISLNK(st.st_mode));
	cleanup();
}

TEST(open_regular_should_refuse_a_fifo_without_blocking)
{
	char path[128];

	CHECK(tmpdir());
	snprintf(path, sizeof(path), "%s/fifo", dir);
	CHECK_INT(mkfifo(path, 0600), 0);
	signal(SIGALRM, on_alarm);
	alarm(5);
	CHECK_INT(util__open_regular(path, 1, NULL), -UTIL_E_NOT_REGULAR);
	CHECK_INT(util__open_regular("/dev/zero", 1, NULL), -UTIL_E_NOT_REGULAR);
	alarm(0);
	cleanup();
}

TEST(open_regular_nofollow_should_refuse_a_symlink)
{
	char path[128], link[128];
	int fd;

	CHECK(tmpdir());
	snprintf(path, sizeof(path), "%s/f", dir);
	snprintf(link, sizeof(link), "%s/l", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	CHECK(fd >= 0);
	close(fd);
	CHECK_INT(symlink(path, link), 0);
	CHECK_INT(util__open_regular(link, 1, NULL), -ELOOP);
	fd = util__open_regular(link, 0, NULL);
	CHECK(fd >= 0);
	close(fd);
	cleanup();
}

TEST(read_regular_should_refuse_an_endless_device)
{
	uint8_t *buf = (uint8_t *)1;
	size_t len = 1;

	CHECK_INT(util__read_regular("/dev/zero", 0, &buf, &len),
		  -UTIL_E_NOT_REGULAR);
	CHECK(buf == NULL);
	CHECK_INT(len, 0);
	CHECK_STR(util__strerror(-UTIL_E_NOT_REGULAR), "not a regular file");
	CHECK_STR(util__strerror(-ENOSPC), "no space left on device");
}

TEST_MAIN()

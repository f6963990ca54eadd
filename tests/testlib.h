/* SPDX-License-Identifier: MIT */
/*
 * Minimal test harness. Each test is a function registered with TEST();
 * main() (TEST_MAIN) runs them in order and prints one line per test:
 *   PASS name | FAIL name: file:line: expected ... got ... | SKIP name: why
 * tests/run-tests.sh counts those lines. A test fails on its first failed
 * check; the binary exits 1 if any test failed.
 */
#ifndef SFPROF_TESTLIB_H
#define SFPROF_TESTLIB_H

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct test_case {
	const char *name;
	void (*fn)(void);
};

#define TEST_MAX 512
extern struct test_case test__cases[TEST_MAX];
extern int test__ncases;
extern int test__failed; /* current test failed */
extern int test__skipped;
extern char test__why[512];

#define TEST(name)                                                          \
	static void name(void);                                             \
	__attribute__((constructor)) static void name##__register(void)     \
	{                                                                   \
		if (test__ncases < TEST_MAX)                                \
			test__cases[test__ncases++] =                       \
				(struct test_case){ #name, name };          \
	}                                                                   \
	static void name(void)

#define TEST__FAIL(...)                                                     \
	do {                                                                \
		if (!test__failed) {                                        \
			int n__ = snprintf(test__why, sizeof(test__why),    \
					   "%s:%d: ", __FILE__, __LINE__);  \
			snprintf(test__why + n__, sizeof(test__why) - n__,  \
				 __VA_ARGS__);                              \
		}                                                           \
		test__failed = 1;                                           \
		return;                                                     \
	} while (0)

/* Stop the current test and report it skipped, with the reason. */
#define SKIP(...)                                                           \
	do {                                                                \
		snprintf(test__why, sizeof(test__why), __VA_ARGS__);       \
		test__skipped = 1;                                          \
		return;                                                     \
	} while (0)

#define CHECK(cond)                                                         \
	do {                                                                \
		if (!(cond))                                                \
			TEST__FAIL("check failed: %s", #cond);              \
	} while (0)

#define CHECK_MSG(cond, ...)                                                \
	do {                                                                \
		if (!(cond))                                                \
			TEST__FAIL(__VA_ARGS__);                            \
	} while (0)

#define CHECK_INT(got, want)                                                \
	do {                                                                \
		long long g__ = (long long)(got), w__ = (long long)(want);  \
		if (g__ != w__)                                             \
			TEST__FAIL("%s: expected %lld, got %lld", #got, w__, \
				   g__);                                    \
	} while (0)

#define CHECK_U64(got, want)                                                \
	do {                                                                \
		unsigned long long g__ = (got), w__ = (want);               \
		if (g__ != w__)                                             \
			TEST__FAIL("%s: expected 0x%llx, got 0x%llx", #got, \
				   w__, g__);                               \
	} while (0)

#define CHECK_STR(got, want)                                                \
	do {                                                                \
		const char *g__ = (got), *w__ = (want);                     \
		if (!g__ || strcmp(g__, w__) != 0)                          \
			TEST__FAIL("%s: expected \"%s\", got \"%s\"", #got, \
				   w__, g__ ? g__ : "(null)");              \
	} while (0)

/*
 * Fixtures built with the shell and the toolchain.
 *
 * test_sh: system() of a printf-formatted command. Its exit status (0:
 * success), or -1 when the command does not fit; a failed command is
 * printed on stderr, so a FAIL line's cause is in the test's output.
 */
static inline int test_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int test_sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	int n, rc;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(cmd)) {
		fprintf(stderr, "command too long (%d bytes): %.200s...\n", n, cmd);
		return -1;
	}
	rc = system(cmd);
	if (rc != 0)
		fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
	return rc;
}

static inline char *test__tmpdir_buf(void)
{
	static char dir[256];

	return dir;
}

static inline void test__tmpdir_remove(void)
{
	const char *dir = test__tmpdir_buf();

	if (dir[0])
		test_sh("rm -rf '%s'", dir);
}

/*
 * The test binary's scratch directory, /tmp/sfprof-NAME.XXXXXX: made on
 * the first call and removed with all it holds at exit; every later call
 * returns the same one, whatever NAME. NULL (errno set) if it cannot be
 * made. A test that needs it calls it: no test relies on another having
 * made it (each may run alone: test_x NAME).
 */
static inline const char *test_tmpdir(const char *name)
{
	char *dir = test__tmpdir_buf();

	if (!dir[0]) {
		snprintf(dir, 256, "/tmp/sfprof-%s.XXXXXX", name);
		if (!mkdtemp(dir)) {
			dir[0] = 0;
			return NULL;
		}
		atexit(test__tmpdir_remove);
	}
	return dir;
}

/* Write text to dir/name. 0, or -1 with errno set. */
static inline int test_write_file(const char *dir, const char *name, const char *text)
{
	char path[1024];
	FILE *f;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f) ? -1 : 0;
}

/*
 * Move the debug info of dir/bin to a separate file found by build-id,
 * as Debian's -dbgsym packages install it: bin.debug beside bin, a
 * stripped copy bin-stripped, and the debug file again at
 * dir/root/usr/lib/debug/.build-id/XX/REST.debug, where build_id_hex
 * (lower-case hex of bin's build-id) is XXREST. 0 or the shell's status.
 */
static inline int test_split_debug_by_build_id(const char *dir, const char *bin,
					       const char *build_id_hex)
{
	return test_sh("cd '%s' && objcopy --only-keep-debug '%s' '%s.debug' && "
		       "cp '%s' '%s-stripped' && strip -s '%s-stripped' && "
		       "mkdir -p root/usr/lib/debug/.build-id/%.2s && "
		       "cp '%s.debug' root/usr/lib/debug/.build-id/%.2s/%s.debug",
		       dir, bin, bin, bin, bin, bin, build_id_hex, bin, build_id_hex,
		       build_id_hex + 2);
}

/*
 * Build a test binary's fixtures once, in test_tmpdir(name): build(dir)
 * returns 0 when it made them all. 1 when they were made (by this call or
 * an earlier one), 0 when not; a failed build is not tried again.
 */
static inline int test_fixtures(const char *name, int (*build)(const char *dir))
{
	static int ok = -1;

	if (ok < 0) {
		const char *dir = test_tmpdir(name);

		ok = dir && build(dir) == 0;
	}
	return ok;
}

/* In a test: fail it when test_fixtures(name, build) could not make them. */
#define NEED_FIXTURES_OF(name, build)                                       \
	do {                                                                \
		if (!test_fixtures(name, build))                            \
			TEST__FAIL("could not build the fixtures in %s",    \
				   test__tmpdir_buf()[0] ? test__tmpdir_buf() : "/tmp"); \
	} while (0)

#define TEST_MAIN()                                                         \
	struct test_case test__cases[TEST_MAX];                             \
	int test__ncases, test__failed, test__skipped;                      \
	char test__why[512];                                                \
	int main(int argc, char **argv)                                     \
	{                                                                   \
		int bad = 0;                                                \
		for (int i = 0; i < test__ncases; i++) {                    \
			if (argc > 1 && !strstr(test__cases[i].name, argv[1])) \
				continue;                                   \
			test__failed = test__skipped = 0;                   \
			test__why[0] = 0;                                   \
			test__cases[i].fn();                                \
			if (test__failed) {                                 \
				printf("FAIL %s: %s\n", test__cases[i].name, \
				       test__why);                          \
				bad = 1;                                    \
			} else if (test__skipped) {                         \
				printf("SKIP %s: %s\n", test__cases[i].name, \
				       test__why);                          \
			} else {                                            \
				printf("PASS %s\n", test__cases[i].name);   \
			}                                                   \
			fflush(stdout);                                     \
		}                                                           \
		return bad;                                                 \
	}

#endif

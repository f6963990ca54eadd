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

#include <inttypes.h>
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

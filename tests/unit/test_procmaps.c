// SPDX-License-Identifier: MIT
/* /proc/PID/maps parser: byte inputs, including awkward paths. */
#include <errno.h>
#include <stdint.h>

#include "model/procmaps.h"
#include "testlib.h"

static struct procmaps *parse(const char *text)
{
	struct procmaps *m = NULL;

	if (procmaps__parse(text, strlen(text), &m, NULL))
		return NULL;
	return m;
}

TEST(parse_should_read_every_field)
{
	struct procmaps *m = parse(
		"55d0c0a00000-55d0c0a02000 r--p 00000000 fe:00 247134                     /usr/bin/cat\n"
		"55d0c0a02000-55d0c0a07000 r-xp 00002000 fe:01 247134                     /usr/bin/cat\n"
		"7ffd1a1f0000-7ffd1a212000 rw-s 0001f000 00:05 0 \n");
	const struct procmaps_entry *e;

	CHECK(m);
	CHECK_INT(m->nr, 3);
	e = &m->entries[1];
	CHECK_U64(e->start, 0x55d0c0a02000);
	CHECK_U64(e->end, 0x55d0c0a07000);
	CHECK_U64(e->offset, 0x2000);
	CHECK_INT(e->prot, PROCMAPS_PROT_READ | PROCMAPS_PROT_EXEC);
	CHECK_INT(e->shared, 0);
	CHECK_INT(e->dev_major, 0xfe);
	CHECK_INT(e->dev_minor, 1);
	CHECK_U64(e->inode, 247134);
	CHECK_STR(e->path, "/usr/bin/cat");
	CHECK_INT(e->deleted, 0);
	e = &m->entries[2];
	CHECK_INT(e->prot, PROCMAPS_PROT_READ | PROCMAPS_PROT_WRITE);
	CHECK_INT(e->shared, 1);
	CHECK_U64(e->offset, 0x1f000);
	CHECK_STR(e->path, "");
	procmaps__free(m);
}

TEST(parse_should_keep_spaces_in_paths)
{
	struct procmaps *m = parse(
		"400000-401000 r-xp 00000000 08:01 42     /opt/my app/bin  x\n"
		"401000-402000 r-xp 00000000 08:01 43                /tmp/ lead\n");

	CHECK(m);
	CHECK_INT(m->nr, 2);
	CHECK_STR(m->entries[0].path, "/opt/my app/bin  x");
	/* Padding is skipped; a path never starts with a space in maps
	 * since it is absolute, so leading blanks are padding. */
	CHECK_STR(m->entries[1].path, "/tmp/ lead");
	procmaps__free(m);
}

TEST(parse_should_strip_deleted_suffix_of_files_only)
{
	struct procmaps *m = parse(
		"400000-401000 r-xp 00000000 08:01 42 /tmp/old lib.so (deleted)\n"
		"7f0000000000-7f0000001000 rw-s 00000000 00:01 1025 /memfd:jit (deleted)\n"
		"7f0000001000-7f0000002000 r--p 00000000 00:00 0 [anon: (deleted)]\n");

	CHECK(m);
	CHECK_INT(m->nr, 3);
	CHECK_STR(m->entries[0].path, "/tmp/old lib.so");
	CHECK_INT(m->entries[0].deleted, 1);
	CHECK_STR(m->entries[1].path, "/memfd:jit");
	CHECK_INT(m->entries[1].deleted, 1);
	CHECK_STR(m->entries[2].path, "[anon: (deleted)]");
	CHECK_INT(m->entries[2].deleted, 0);
	CHECK_INT(m->entries[2].pseudo, 1);
	procmaps__free(m);
}

TEST(parse_should_flag_pseudo_paths)
{
	struct procmaps *m = parse(
		"7ffc00000000-7ffc00002000 r-xp 00000000 00:00 0                          [vdso]\n"
		"7ffc00010000-7ffc00031000 rw-p 00000000 00:00 0                          [stack]\n"
		"7ffc00040000-7ffc00041000 rw-p 00000000 00:00 0                          [anon:my region]\n");

	CHECK(m);
	CHECK_INT(m->nr, 3);
	CHECK_STR(m->entries[0].path, "[vdso]");
	CHECK_INT(m->entries[0].pseudo, 1);
	CHECK_STR(m->entries[2].path, "[anon:my region]");
	CHECK_INT(m->entries[2].pseudo, 1);
	procmaps__free(m);
}

TEST(parse_should_keep_escaped_newline_text)
{
	/* The kernel prints a newline in a file name as \012. */
	struct procmaps *m = parse(
		"400000-401000 r-xp 00000000 08:01 42 /tmp/a\\012b\n");

	CHECK(m);
	CHECK_STR(m->entries[0].path, "/tmp/a\\012b");
	procmaps__free(m);
}

TEST(parse_should_accept_missing_final_newline_and_empty_text)
{
	struct procmaps *m = parse("400000-401000 r-xp 00000000 08:01 42 /bin/x");

	CHECK(m);
	CHECK_INT(m->nr, 1);
	CHECK_STR(m->entries[0].path, "/bin/x");
	procmaps__free(m);
	m = parse("");
	CHECK(m);
	CHECK_INT(m->nr, 0);
	procmaps__free(m);
}

TEST(parse_should_reject_malformed_lines_with_their_number)
{
	static const char *bad[] = {
		"400000-401000 r-xq 00000000 08:01 42 /x\n",  /* bad share */
		"400000-400000 r-xp 00000000 08:01 42 /x\n",  /* empty */
		"401000-400000 r-xp 00000000 08:01 42 /x\n",  /* inverted */
		"400000-401000 r-xp 00000000 08:01\n",	      /* no inode */
		"400000 r-xp 00000000 08:01 42 /x\n",	      /* no end */
		"12345678901234567-401000 r-xp 0 08:01 42\n", /* 17 hex digits */
		"400000-401000 r-xp 0 08:01 99999999999999999999 /x\n",
		"400000-401000 r-xp 0 08:01 42x /x\n",
		"400000-401000 rwx 0 08:01 42 /x\n",
	};
	struct procmaps *m = NULL;
	size_t bad_line = 0, i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int err = procmaps__parse(bad[i], strlen(bad[i]), &m, NULL);

		CHECK_MSG(err == -EINVAL, "input %zu: expected -EINVAL, got %d",
			  i, err);
		CHECK(!m);
	}
	{
		const char *t = "400000-401000 r-xp 00000000 08:01 42 /ok\n"
				"garbage\n";

		CHECK_INT(procmaps__parse(t, strlen(t), &m, &bad_line), -EINVAL);
		CHECK_INT(bad_line, 2);
	}
	{
		const char t[] = "400000-401000 r-xp 0 08:01 42 /a\0b\n";

		CHECK_INT(procmaps__parse(t, sizeof(t) - 1, &m, NULL), -EINVAL);
	}
}

TEST(parse_should_sort_entries_and_find_by_address)
{
	struct procmaps *m = parse(
		"7f0000002000-7f0000003000 r-xp 00000000 08:01 3 /c\n"
		"7f0000000000-7f0000001000 r-xp 00000000 08:01 1 /a\n"
		"7f0000001000-7f0000002000 r-xp 00000000 08:01 2 /b\n");
	const struct procmaps_entry *e;

	CHECK(m);
	CHECK_STR(m->entries[0].path, "/a");
	CHECK_STR(m->entries[2].path, "/c");
	e = procmaps__find(m, 0x7f0000001fff);
	CHECK(e);
	CHECK_STR(e->path, "/b");
	e = procmaps__find(m, 0x7f0000002000);
	CHECK(e);
	CHECK_STR(e->path, "/c");
	CHECK(!procmaps__find(m, 0x7f0000003000));
	CHECK(!procmaps__find(m, 0x1000));
	procmaps__free(m);
}

TEST(read_should_find_this_function_in_own_maps)
{
	struct procmaps *m = NULL;
	const struct procmaps_entry *e;
	int err = procmaps__read_file("/proc/self/maps", &m);

	CHECK_INT(err, 0);
	e = procmaps__find(m, (uint64_t)(uintptr_t)&procmaps__find);
	CHECK(e);
	CHECK(e->prot & PROCMAPS_PROT_EXEC);
	CHECK(strstr(e->path, "test_procmaps") != NULL);
	procmaps__free(m);
	CHECK(procmaps__read(UINT32_MAX - 1, &m) < 0);
}

TEST_MAIN()

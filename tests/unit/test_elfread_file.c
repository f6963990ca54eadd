// SPDX-License-Identifier: MIT
/* elfread over a file: read into private memory as wanted, never mapped,
 * so a file cut short under it costs its bytes, not a SIGBUS; the cut is
 * counted (elfread__nr_changed). The file is a copy of this test binary. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/elfread.h"
#include "testlib.h"

/* A copy of this binary in a fresh unlinked file: its fd. */
static int copy_of_self(off_t *size)
{
	char tmp[] = "/tmp/sfprof-test-elffile-XXXXXX";
	int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), out = mkstemp(tmp);
	struct stat st;
	off_t off = 0;

	if (in < 0 || out < 0 || fstat(in, &st))
		abort();
	unlink(tmp);
	while (off < st.st_size)
		if (sendfile(out, in, &off, (size_t)(st.st_size - off)) <= 0)
			abort();
	close(in);
	*size = st.st_size;
	return out;
}

TEST(a_file_cut_after_open_should_fail_its_reads_and_count_not_fault)
{
	struct elfread_section s;
	struct elfread *e;
	uint64_t before = elfread__nr_changed();
	off_t size;
	int fd = copy_of_self(&size);

	e = elfread__open_fd(fd);
	CHECK(e != NULL);
	if (!e)
		return;
	CHECK_INT(elfread__section_header(e, ".symtab", &s), 0);
	CHECK(s.offset + s.size > 8192); /* past the cut below */
	/* the owner cuts it: nothing of .symtab is left */
	CHECK_INT(ftruncate(fd, 4096), 0);
	CHECK(elfread__section(e, ".symtab", &s) != 0);
	CHECK_INT(elfread__nr_changed(), before + 1);
	/* the image is still memory of ours: reading it cannot fault */
	size_t len;
	const uint8_t *img = elfread__image(e, &len);
	CHECK_INT(len, size);
	CHECK_INT(img[len - 1], 0);
	elfread__free(e);
	close(fd);
}

TEST(a_file_read_before_its_cut_should_keep_what_was_read)
{
	struct elfread_section s, again;
	struct elfread *e;
	off_t size;
	int fd = copy_of_self(&size);

	e = elfread__open_fd(fd);
	CHECK(e != NULL);
	if (!e)
		return;
	CHECK_INT(elfread__section(e, ".symtab", &s), 0);
	CHECK(s.data != NULL);
	CHECK_INT(ftruncate(fd, 4096), 0);
	CHECK_INT(elfread__section(e, ".symtab", &again), 0); /* read already */
	CHECK(again.data == s.data);
	elfread__free(e);
	close(fd);
}

static long rss_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

TEST(a_sparse_file_should_cost_what_it_holds)
{
	struct elfread *e;
	off_t size;
	int fd = copy_of_self(&size);
	long before = rss_kb();

	/* 1 GiB of hole after the binary: open and hand out libelf, which
	 * reads every section and segment, not the hole */
	CHECK_INT(ftruncate(fd, (off_t)1 << 30), 0);
	e = elfread__open_fd(fd);
	CHECK(e != NULL);
	if (e) {
		CHECK(elfread__libelf(e) != NULL);
		CHECK_INT(elfread__size(e), (size_t)1 << 30);
		/* (a copy of the hole would be 1 GiB of RSS) */
		CHECK_MSG(rss_kb() - before < 64 * 1024, "RSS grew by %ld kB", rss_kb() - before);
	}
	elfread__free(e);
	close(fd);
}

/*
 * Pages given back (elfread__drop_pages) are read from the file again at
 * the next read: the same bytes, not zeros. The image is anonymous memory
 * of ours, so MADV_DONTNEED alone would leave zeros where .debug_info was.
 */
TEST(dropped_pages_should_be_read_again_from_the_file)
{
	struct elfread_section s, t;
	struct elfread *e;
	uint8_t *copy;
	off_t size;
	int fd = copy_of_self(&size);

	e = elfread__open_fd(fd);
	CHECK(e != NULL);
	if (!e)
		return;
	CHECK_INT(elfread__section(e, ".debug_info", &s), 0);
	CHECK(s.size > 2 * 4096); /* whole pages of it to drop */
	copy = malloc(s.size);
	CHECK(copy != NULL);
	memcpy(copy, s.data, s.size);
	CHECK_INT(elfread__section(e, ".text", &t), 0);
	/* only the tables' pages: .text stays read */
	CHECK(elfread__drop_pages(e, ELFREAD_DROP_TABLES) >= s.size - 2 * 4096);
	CHECK_INT(elfread__section(e, ".debug_info", &s), 0);
	CHECK(!memcmp(copy, s.data, s.size));
	/* everything read so far, headers and names but */
	CHECK(elfread__drop_pages(e, ELFREAD_DROP_ALL) >= t.size - 2 * 4096);
	CHECK_INT(elfread__section(e, ".debug_info", &s), 0);
	CHECK(!memcmp(copy, s.data, s.size));
	CHECK_INT(elfread__section_header(e, ".text", &t), 0);
	free(copy);
	elfread__free(e);
	close(fd);
}

TEST_MAIN()

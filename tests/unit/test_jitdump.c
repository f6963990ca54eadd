// SPDX-License-Identifier: MIT
/* jitdump parsing (jitdump.h): records into the perfmap lookup, growth
 * fed in pieces, code bytes skipped, bad records, the file read. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "runtimes/jit/jitdump.h"
#include "runtimes/jit/perfmap.h"
#include "testlib.h"

TEST_MAIN();

struct buf {
	uint8_t b[1 << 16];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put32(struct buf *b, uint32_t v)
{
	put(b, &v, 4);
}

static void put64(struct buf *b, uint64_t v)
{
	put(b, &v, 8);
}

static void header(struct buf *b, uint32_t magic, uint32_t version)
{
	put32(b, magic);
	put32(b, version);
	put32(b, 40);
	put32(b, 62);
	put32(b, 0);
	put32(b, 4242);
	put64(b, 1);
	put64(b, 0);
}

static void load(struct buf *b, const char *name, uint64_t addr, uint64_t size)
{
	put32(b, JITDUMP_CODE_LOAD);
	put32(b, (uint32_t)(56 + strlen(name) + 1 + size));
	put64(b, 7);
	put32(b, 4242);
	put32(b, 4242);
	put64(b, addr);
	put64(b, addr);
	put64(b, size);
	put64(b, 0);
	put(b, name, strlen(name) + 1);
	for (uint64_t i = 0; i < size; i++)
		b->b[b->n++] = 0xcc;
}

static void move(struct buf *b, uint64_t from, uint64_t to, uint64_t size)
{
	put32(b, JITDUMP_CODE_MOVE);
	put32(b, 64);
	put64(b, 8);
	put32(b, 4242);
	put32(b, 4242);
	put64(b, to);
	put64(b, from);
	put64(b, to);
	put64(b, size);
	put64(b, 0);
}

static void debug2(struct buf *b, uint64_t addr)
{
	put32(b, JITDUMP_CODE_DEBUG_INFO);
	put32(b, 16 + 16 + (16 + 5) + (16 + 2));
	put64(b, 9);
	put64(b, addr);
	put64(b, 2);
	put64(b, addr);
	put32(b, 10);
	put32(b, 0);
	put(b, "a.js", 5);
	put64(b, addr + 0x10);
	put32(b, 12);
	put32(b, 0);
	put(b, "\xff", 2); /* the same file again */
}

static void unwinding(struct buf *b, uint64_t usize)
{
	put32(b, JITDUMP_CODE_UNWINDING_INFO);
	put32(b, (uint32_t)(40 + usize));
	put64(b, 10);
	put64(b, usize);
	put64(b, usize / 2);
	put64(b, usize);
	for (uint64_t i = 0; i < usize; i++)
		b->b[b->n++] = 0xee;
}

static struct buf *sample(void)
{
	struct buf *b = calloc(1, sizeof(*b));

	header(b, JITDUMP_MAGIC, 1);
	debug2(b, 0x1000);
	load(b, "JS:*hot a.js:1", 0x1000, 0x40);
	unwinding(b, 64);
	load(b, "JS:~cold", 0x2000, 0x1000);
	move(b, 0x2000, 0x9000, 0x1000);
	put32(b, 77); /* an unknown record id: skipped */
	put32(b, 24);
	put64(b, 11);
	put64(b, 0);
	put32(b, JITDUMP_CODE_CLOSE);
	put32(b, 16);
	put64(b, 12);
	return b;
}

static void check_sample(struct perfmap *m, struct jitdump *d)
{
	struct jitdump_stats st;
	const char *name, *file;
	uint64_t start;
	uint32_t line;

	jitdump__stats(d, &st);
	CHECK_U64(st.loads, 2);
	CHECK_U64(st.moves, 1);
	CHECK_U64(st.debug_infos, 1);
	CHECK_U64(st.lines, 2);
	CHECK_U64(st.unwinding_infos, 1);
	CHECK_U64(st.unknown, 1);
	CHECK_U64(st.closes, 1);
	CHECK_U64(st.bad, 0);
	CHECK_INT(jitdump__pid(d), 4242);
	CHECK_INT(perfmap__lookup(m, 0x103f, &name, &start), 0);
	CHECK_STR(name, "JS:*hot a.js:1");
	CHECK_U64(start, 0x1000);
	CHECK_INT(perfmap__lookup(m, 0x1040, &name, NULL), -ENOENT);
	CHECK_INT(perfmap__lookup(m, 0x9fff, &name, &start), 0);
	CHECK_STR(name, "JS:~cold");
	CHECK_U64(start, 0x9000);
	CHECK_INT(jitdump__line(d, 0x100f, &file, &line), 0);
	CHECK_STR(file, "a.js");
	CHECK_INT(line, 10);
	CHECK_INT(jitdump__line(d, 0x1020, &file, &line), 0);
	CHECK_STR(file, "a.js");
	CHECK_INT(line, 12);
	/* a line table never reaches into other code */
	CHECK_INT(jitdump__line(d, 0x9000, &file, &line), -ENOENT);
}

TEST(jitdump_should_name_loaded_and_moved_code_and_give_lines)
{
	struct buf *b = sample();
	struct perfmap *m = perfmap__new();
	struct jitdump *d = jitdump__new(m);

	CHECK(d);
	CHECK_INT(jitdump__feed(d, b->b, b->n), b->n);
	CHECK_U64(jitdump__offset(d), b->n);
	check_sample(m, d);
	CHECK(!jitdump__error(d));
	jitdump__free(d);
	perfmap__free(m);
	free(b);
}

TEST(jitdump_should_follow_a_dump_fed_byte_by_byte)
{
	struct buf *b = sample();
	struct perfmap *m = perfmap__new();
	struct jitdump *d = jitdump__new(m);
	size_t fed = 0;

	/* as a reader that sees the file grow one byte at a time: hands the
	 * parser what it has not consumed */
	for (size_t end = 1; end <= b->n; end++) {
		long n = jitdump__feed(d, b->b + fed, end - fed);

		CHECK(n >= 0);
		fed += (size_t)n;
		CHECK_U64(jitdump__offset(d), fed);
	}
	CHECK_U64(fed, b->n);
	check_sample(m, d);
	jitdump__free(d);
	perfmap__free(m);
	free(b);
}

TEST(jitdump_should_skip_code_bytes_without_reading_them)
{
	struct buf *b = sample();
	struct perfmap *m = perfmap__new();
	struct jitdump *d = jitdump__new(m);
	size_t off = 0;

	/* feed only what the parser wants; step over what it may skip */
	while (off < b->n) {
		uint64_t skip = jitdump__skip_pending(d);
		size_t want = jitdump__want(d);
		long n;

		if (skip) {
			jitdump__skip(d, skip);
			off += skip;
			continue;
		}
		CHECK(want <= b->n - off);
		n = jitdump__feed(d, b->b + off, want);
		/* (no progress only where the header says it needs more) */
		CHECK(n > 0 || jitdump__want(d) > want);
		off += (size_t)n;
	}
	CHECK_U64(jitdump__offset(d), b->n);
	check_sample(m, d);
	jitdump__free(d);
	perfmap__free(m);
	free(b);
}

TEST(jitdump_should_count_bad_records_and_go_on)
{
	struct buf *b = calloc(1, sizeof(*b));
	struct perfmap *m = perfmap__new();
	struct jitdump *d = jitdump__new(m);
	struct jitdump_stats st;
	const char *name;
	size_t at;

	header(b, JITDUMP_MAGIC, 1);
	/* a LOAD whose code size leaves no room for its name */
	at = b->n;
	load(b, "x", 0x1000, 0x10);
	memcpy(b->b + at + 40, &(uint64_t){ 0x100 }, 8);
	/* a LOAD whose name has no NUL before its code */
	at = b->n;
	load(b, "abc", 0x2000, 4);
	b->b[at + 56 + 3] = 'd';
	/* a MOVE of code never loaded; a MOVE of the wrong size */
	move(b, 0x5000, 0x6000, 0x10);
	put32(b, JITDUMP_CODE_MOVE);
	put32(b, 56); /* one field short */
	put64(b, 0);
	for (int i = 0; i < 5; i++)
		put64(b, 0x5000);
	/* DEBUG_INFO claiming more entries than fit */
	at = b->n;
	debug2(b, 0x1000);
	memcpy(b->b + at + 24, &(uint64_t){ 1000 }, 8);
	/* UNWINDING_INFO with a size past its record */
	at = b->n;
	unwinding(b, 8);
	memcpy(b->b + at + 16, &(uint64_t){ 64 }, 8);
	/* a code size that wraps the address space */
	load(b, "wrap", UINT64_MAX - 2, 8);
	load(b, "good", 0x3000, 8);
	CHECK_INT(jitdump__feed(d, b->b, b->n), b->n);
	jitdump__stats(d, &st);
	CHECK_U64(st.bad, 7);
	CHECK_U64(st.loads, 1);
	CHECK_INT(perfmap__nr(m), 1);
	CHECK_INT(perfmap__lookup(m, 0x3004, &name, NULL), 0);
	CHECK_STR(name, "good");
	CHECK(!jitdump__error(d));
	jitdump__free(d);
	perfmap__free(m);
	free(b);
}

TEST(jitdump_should_refuse_a_file_it_cannot_read_on)
{
	struct buf *b = calloc(1, sizeof(*b));
	struct perfmap *m = perfmap__new();
	struct jitdump *d = jitdump__new(m);

	header(b, __builtin_bswap32(JITDUMP_MAGIC), 1);
	CHECK_INT(jitdump__feed(d, b->b, b->n), -EINVAL);
	CHECK(jitdump__error(d) && strstr(jitdump__error(d), "byte order"));
	jitdump__free(d);

	d = jitdump__new(m);
	b->n = 0;
	header(b, JITDUMP_MAGIC, 2);
	CHECK_INT(jitdump__feed(d, b->b, b->n), -EINVAL);
	jitdump__free(d);

	/* a record size below its header: nothing after it can be found */
	d = jitdump__new(m);
	b->n = 0;
	header(b, JITDUMP_MAGIC, 1);
	load(b, "ok", 0x1000, 4);
	put32(b, JITDUMP_CODE_LOAD);
	put32(b, 8);
	put64(b, 0);
	load(b, "lost", 0x2000, 4);
	CHECK_INT(jitdump__feed(d, b->b, b->n), 40 + 56 + 3 + 4);
	CHECK(jitdump__error(d) != NULL);
	CHECK_INT(jitdump__feed(d, b->b, b->n), -EINVAL);
	CHECK_INT(perfmap__nr(m), 1);
	jitdump__free(d);
	perfmap__free(m);
	free(b);
}

TEST(jitdump_should_read_a_growing_file_and_skip_its_code)
{
	struct buf *b = sample();
	struct perfmap *m = perfmap__new();
	struct jitdump *d = jitdump__new(m);
	char path[] = "/tmp/sfprof-test-jitdump-XXXXXX";
	int fd = mkstemp(path);
	size_t half = b->n / 2;

	CHECK(fd >= 0);
	CHECK_INT(write(fd, b->b, half), half);
	CHECK_INT(jitdump__read_fd(d, fd, 1 << 20), 0);
	CHECK(jitdump__offset(d) <= half);
	CHECK_INT(write(fd, b->b + half, b->n - half), b->n - half);
	CHECK_INT(jitdump__read_fd(d, fd, 1 << 20), 0);
	CHECK_U64(jitdump__offset(d), b->n);
	check_sample(m, d);
	/* nothing new: nothing changes */
	CHECK_INT(jitdump__read_fd(d, fd, 1 << 20), 0);
	CHECK_U64(jitdump__offset(d), b->n);
	jitdump__free(d);

	/* over max_size: what fits is read */
	d = jitdump__new(m);
	CHECK_INT(jitdump__read_fd(d, fd, 200), -EFBIG);
	CHECK(jitdump__offset(d) <= 200);
	jitdump__free(d);
	close(fd);
	unlink(path);
	perfmap__free(m);
	free(b);
}

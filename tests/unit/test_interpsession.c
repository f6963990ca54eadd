// SPDX-License-Identifier: MIT
/*
 * The interpreter session (interpsession.h) over a kind of the test's: a
 * frame's names are read once, at the first event that has it, and kept
 * for the namer; a read that fails is not tried again; the kind hears of
 * the processes (attach, fork, exec, exit) and drops its caches with the
 * session's names; the names of an exited process stay until the reap
 * past its exit; a kind's prefetch thread names a frame the consumer
 * then finds named, its record written by the consumer; the --stats
 * lines count it all.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capfile/capfile.h"
#include "runtimes/interp/interpsession.h"
#include "sfprof_event.h"
#include "testlib.h"

#define TEST_FLAG SFPROF_PYS_PHP

struct fake {
	int reads, attached, forked, execs, exits, drops;
	uint64_t bad_code; /* read fails for it */
};

static void *fake_new(struct interp_session *s)
{
	(void)s;
	return calloc(1, sizeof(struct fake));
}

static void fake_free(void *st)
{
	free(st);
}

static void fake_attach(void *st, uint32_t pid)
{
	(void)pid;
	((struct fake *)st)->attached++;
}

static void fake_fork(void *st, uint32_t ppid, uint32_t pid)
{
	(void)ppid;
	(void)pid;
	((struct fake *)st)->forked++;
}

static void fake_exec(void *st, uint32_t pid)
{
	(void)pid;
	((struct fake *)st)->execs++;
}

static void fake_exit(void *st, uint32_t pid)
{
	(void)pid;
	((struct fake *)st)->exits++;
}

static void fake_drop(void *st, uint32_t pid, int all)
{
	(void)pid;
	(void)all;
	((struct fake *)st)->drops++;
}

static int fake_read(void *st, uint32_t pid, uint64_t code, int32_t instr,
		     struct interp_frame *out)
{
	struct fake *f = st;
	char buf[64];

	f->reads++;
	if (code == f->bad_code)
		return -EFAULT;
	snprintf(buf, sizeof(buf), "fn_%u_%llx", pid, (unsigned long long)code);
	out->name = strdup(buf);
	out->file = strdup("f.x");
	out->line = (uint32_t)instr + 100;
	out->first = 7;
	return 0;
}

static bool fake_seen(const void *st)
{
	return ((const struct fake *)st)->attached > 0;
}

static const struct interp_kind fake_kind = {
	.name = "fake",
	.section_flag = TEST_FLAG,
	.state_new = fake_new,
	.state_free = fake_free,
	.attach = fake_attach,
	.fork = fake_fork,
	.exec = fake_exec,
	.exit = fake_exit,
	.drop = fake_drop,
	.read = fake_read,
	.seen = fake_seen,
};

/* A sample of pid whose section has frames codes[0..n) at instr 3, with
 * section flags `flags`. */
static struct sfprof_event *sample(uint32_t pid, const uint64_t *codes, uint32_t n, uint32_t flags)
{
	size_t off = SFPROF_PY_SECTION_OFF(0), size = off + SFPROF_PY_SECTION_SIZE(n);
	struct sfprof_event *e = calloc(1, size);
	struct sfprof_py_section *sec = (void *)((uint8_t *)e + off);

	e->size = (uint32_t)size;
	e->kind = SFPROF_EV_CPU;
	e->flags = SFPROF_EVF_PYTHON;
	e->pid = pid;
	sec->nframes = n;
	sec->flags = flags;
	for (uint32_t i = 0; i < n; i++) {
		sec->frames[i].code = codes[i];
		sec->frames[i].instr = 3;
	}
	return e;
}

static int name_of(struct interp_session *s, uint32_t pid, uint64_t code, const char **name,
		   uint32_t *line)
{
	void *ctx;
	runtime_name_fn fn = interp__namer(s, &ctx);
	const char *file;
	uint32_t first;

	return fn(ctx, pid, code, 3, name, &file, line, &first);
}

TEST(frames_are_read_once_and_kept)
{
	struct interp_session *s = interp__new(&fake_kind);
	struct fake *f = interp__state(s);
	uint64_t codes[] = { 0x1000, 0x2000, 0x1000 };
	struct sfprof_event *e = sample(42, codes, 3, TEST_FLAG);
	const char *name;
	uint32_t line;

	interp__event(s, e);
	interp__event(s, e);
	CHECK_INT(f->reads, 2);
	CHECK_INT(f->attached, 2);
	CHECK_INT(name_of(s, 42, 0x2000, &name, &line), 0);
	CHECK_STR(name, "fn_42_2000");
	CHECK_INT(line, 103);
	CHECK_INT(f->reads, 2);
	/* another runtime's section is not this kind's */
	free(e);
	e = sample(42, (uint64_t[]){ 0x3000 }, 1, SFPROF_PYS_RUBY);
	interp__event(s, e);
	CHECK_INT(f->reads, 2);
	free(e);
	interp__free(s);
}

TEST(a_failed_read_is_tried_again_later_not_at_every_sample)
{
	struct interp_session *s = interp__new(&fake_kind);
	struct fake *f = interp__state(s);
	const char *name;
	uint32_t line;

	f->bad_code = 0xbad0;
	CHECK_INT(name_of(s, 7, 0xbad0, &name, &line), -EFAULT);
	CHECK_INT(name_of(s, 7, 0xbad0, &name, &line), -EFAULT);
	CHECK_INT(f->reads, 1);
	/* the memory reads now (PHP-FPM's next request compiled its code
	 * there): past the retry interval the frame is read again and named */
	f->bad_code = 0;
	usleep(30 * 1000);
	CHECK_INT(name_of(s, 7, 0xbad0, &name, &line), 0);
	CHECK_STR(name, "fn_7_bad0");
	CHECK_INT(f->reads, 2);
	CHECK_INT(name_of(s, 7, 0xbad0, &name, &line), 0);
	CHECK_INT(f->reads, 2);
	interp__free(s);
}

TEST(names_of_an_exited_process_stay_until_the_reap_past_its_exit)
{
	struct interp_session *s = interp__new(&fake_kind);
	struct fake *f = interp__state(s);
	const char *name;
	uint32_t line;

	CHECK_INT(name_of(s, 9, 0x10, &name, &line), 0);
	interp__exit(s, 9, 1000);
	CHECK_INT(f->exits, 1);
	interp__reap(s, 999);
	CHECK_INT(name_of(s, 9, 0x10, &name, &line), 0);
	CHECK_INT(f->reads, 1);
	interp__reap(s, 1000);
	CHECK(f->drops >= 1);
	CHECK_INT(name_of(s, 9, 0x10, &name, &line), 0);
	CHECK_INT(f->reads, 2); /* read again: the old name was dropped */
	interp__free(s);
}

TEST(fork_and_exec_drop_the_process_names)
{
	struct interp_session *s = interp__new(&fake_kind);
	struct fake *f = interp__state(s);
	struct sfprof_event t = { .kind = SFPROF_EV_FORK, .fork.ppid = 1, .pid = 5 };
	const char *name;
	uint32_t line;

	CHECK_INT(name_of(s, 5, 0x10, &name, &line), 0);
	interp__task(s, &t);
	CHECK_INT(f->forked, 1);
	CHECK_INT(name_of(s, 5, 0x10, &name, &line), 0);
	CHECK_INT(f->reads, 2);
	interp__exec(s, 5);
	CHECK_INT(f->execs, 1);
	CHECK_INT(name_of(s, 5, 0x10, &name, &line), 0);
	CHECK_INT(f->reads, 3);
	interp__free(s);
}

TEST(stats_count_reads_and_names_once_a_process_is_seen)
{
	struct interp_session *s = interp__new(&fake_kind);
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	const char *name;
	uint32_t line;

	interp__print_stats(s, m);
	fflush(m);
	CHECK_INT((int)len, 0);
	interp__attach(s, 3);
	name_of(s, 3, 0x10, &name, &line);
	name_of(s, 3, 0x20, &name, &line);
	interp__print_stats(s, m);
	fclose(m);
	CHECK(strstr(buf, "fake_frame_reads: 2\n") != NULL);
	CHECK(strstr(buf, "fake_frame_read_errors: 0\n") != NULL);
	CHECK(strstr(buf, "fake_names: 2\n") != NULL);
	free(buf);
	interp__free(s);
}

struct prefetch_arg {
	struct interp_session *s;
	uint32_t pid;
	uint64_t code;
};

static void *prefetch_thread(void *p)
{
	struct prefetch_arg *a = p;

	interp__prefetch(a->s, a->pid, a->code, 3);
	return NULL;
}

static void prefetch_on_a_thread(struct interp_session *s, uint32_t pid, uint64_t code)
{
	struct prefetch_arg a = { s, pid, code };
	pthread_t t;

	if (pthread_create(&t, NULL, prefetch_thread, &a) == 0)
		pthread_join(t, NULL);
}

TEST(a_prefetched_frame_is_named_after_its_memory_is_gone)
{
	struct interp_session *s = interp__new(&fake_kind);
	struct fake *f = interp__state(s);
	const char *name;
	uint32_t line;

	prefetch_on_a_thread(s, 42, 0x5000);
	CHECK_INT(f->reads, 1);
	/* the request that compiled it ended: its memory reads no more */
	f->bad_code = 0x5000;
	CHECK_INT(name_of(s, 42, 0x5000, &name, &line), 0);
	CHECK_STR(name, "fn_42_5000");
	CHECK_INT(f->reads, 1);
	interp__free(s);
}

TEST(a_failed_prefetch_is_read_again_by_the_consumer_at_once)
{
	struct interp_session *s = interp__new(&fake_kind);
	struct fake *f = interp__state(s);
	const char *name;
	uint32_t line;

	f->bad_code = 0x6000;
	prefetch_on_a_thread(s, 42, 0x6000);
	f->bad_code = 0;
	/* (no wait for the retry interval: the consumer's read comes first) */
	CHECK_INT(name_of(s, 42, 0x6000, &name, &line), 0);
	CHECK_STR(name, "fn_42_6000");
	CHECK_INT(f->reads, 2);
	interp__free(s);
}

TEST(a_prefetched_name_is_recorded_by_the_consumer_at_its_next_event)
{
	char path[] = "/tmp/sfprof-test-interp-XXXXXX";
	int fd = mkstemp(path);
	struct capfile_meta meta = { .event = "cpu", .command = "x", .hz = 99, .stack_size = 16384 };
	struct capfile_writer *w;
	struct interp_session *s = interp__new(&fake_kind);
	struct sfprof_event *e = sample(42, (uint64_t[]){ 0x7000 }, 1, TEST_FLAG);
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	CHECK(fd >= 0);
	close(fd);
	CHECK((w = capfile_writer__create(path, &meta)) != NULL);
	interp__set_writer(s, w);
	prefetch_on_a_thread(s, 42, 0x7000);
	m = open_memstream(&buf, &len);
	interp__attach(s, 42);
	interp__print_stats(s, m);
	fflush(m);
	/* the prefetch thread never writes the capture */
	CHECK_MSG(strstr(buf, "fake_names_recorded: 0\n") != NULL, "%s", buf);
	CHECK(strstr(buf, "fake_names_prefetched: 1\n") != NULL);
	interp__event(s, e);
	interp__event(s, e);
	interp__print_stats(s, m);
	fclose(m);
	CHECK_MSG(strstr(buf, "fake_names_recorded: 1\n") != NULL, "%s", buf);
	interp__set_writer(s, NULL);
	CHECK_INT(capfile_writer__close(w), 0);
	unlink(path);
	free(buf);
	free(e);
	interp__free(s);
}

TEST_MAIN()

// SPDX-License-Identifier: MIT
/*
 * The CRuby offset tables (rboffsets.h): every field of every table
 * names the source declaration it was read from (a field without one
 * fails), and, for the interpreter on this machine (Debian's ruby3.1,
 * required), the values are checked against the live interpreter: the
 * image's version and TLS relocations (rbprocs__image), then strings,
 * arrays, an iseq's label, path and first line, the line of every
 * instruction of it, and the names of IDs through ruby_global_symbols
 * (found in the code of rb_id2str), and the classes of method entries
 * (class paths, singletons, ICLASSes) from the frames Ruby's profiler
 * API gives, read through the reader from the memory of a ruby
 * that reports those objects' addresses and Ruby's own view of them
 * (tests/workloads/ruby/probe.rb). No expected number is in this file.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model/elfread.h"
#include "model/procmaps.h"
#include "runtimes/ruby/rboffsets.h"
#include "runtimes/ruby/rbprocs.h"
#include "runtimes/ruby/rbreader.h"
#include "testlib.h"

#define LIBRUBY "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1"
#define RUBY "/usr/bin/ruby3.1"
#define PROBE "tests/workloads/ruby/probe.rb"
/* (CHECK_STR's message would not fit a long string) */
#define SAME(got, want) \
	CHECK_MSG(!strcmp(got, want), "%s: got \"%.80s\", want \"%.80s\"", #got, got, want)

TEST(every_field_has_its_source)
{
	for (size_t t = 0; t < rboffsets_count; t++) {
		const struct rboffsets *o = &rboffsets_table[t];

		for (uint32_t f = 0; f < RBOFF_NFIELDS; f++) {
			int found = 0;

			for (size_t i = 0; i < rboffsets_sources_count; i++) {
				const struct rboff_source *s = &rboffsets_sources[i];

				found += s->major == o->major && s->minor == o->minor && s->field == f &&
					 s->where && *s->where;
			}
			CHECK_MSG(found == 1, "%u.%u: field %u has %d sources", o->major, o->minor, f,
				  found);
		}
	}
	for (size_t i = 0; i < rboffsets_sources_count; i++)
		CHECK(rboffsets_sources[i].field < RBOFF_NFIELDS &&
		      rboffsets__find(rboffsets_sources[i].major, rboffsets_sources[i].minor));
}

TEST(debian_libruby_is_found)
{
	struct elfread *e = elfread__open(LIBRUBY);
	struct rbimage im;

	CHECK_MSG(e, "%s: %s (tests/install-deps.sh installs ruby)", LIBRUBY, strerror(errno));
	if (!e)
		return;
	CHECK_INT(rbprocs__image(e, &im), 0);
	CHECK_INT(im.major, 3);
	CHECK_INT(im.minor, 1);
	CHECK(rboffsets__find(im.major, im.minor) != NULL);
	/* a shared libruby reaches ruby_current_ec general-dynamic */
	CHECK(im.got_module && im.got_offset);
	elfread__free(e);
}

static int read_pid(void *ctx, uint64_t addr, void *buf, size_t len)
{
	pid_t pid = *(const pid_t *)ctx;
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);

	return n == (ssize_t)len ? 0 : -EFAULT;
}

/* &ruby_global_symbols in pid, as rbprocs finds it. */
static uint64_t libruby_symbols(pid_t pid)
{
	struct procmaps *m = NULL;
	uint64_t out = 0;

	if (procmaps__read((uint32_t)pid, &m))
		return 0;
	for (size_t i = 0; i < m->nr && !out; i++) {
		const struct procmaps_entry *me = &m->entries[i];
		struct elfread *e;
		struct rbimage im;
		int64_t bias;

		if (me->offset || !strstr(me->path, "/libruby-3.1.so") || !(e = elfread__open(me->path)))
			continue;
		if (!rbprocs__image(e, &im) && im.symbols &&
		    !elfread__mapping_bias(e, me->start, me->offset, &bias))
			out = im.symbols + (uint64_t)bias;
		elfread__free(e);
	}
	procmaps__free(m);
	return out;
}

static void chomp(char *s)
{
	s[strcspn(s, "\n")] = 0;
}

TEST(live_interpreter_agrees)
{
	const struct rboffsets *o = rboffsets__find(3, 1);
	int in[2], out[2];
	char lines[12][1024], *table = NULL;
	size_t tlen = 0;
	uint64_t iseqw, str_short, str_long, ary, big, iseq;
	FILE *f;
	pid_t pid;

	CHECK(o != NULL && access(RUBY, X_OK) == 0);
	if (!o || access(RUBY, X_OK) || pipe(in) || pipe(out))
		return;
	pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(RUBY, RUBY, "--disable-gems", PROBE, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	f = fdopen(out[0], "r");
	for (int i = 0; i < 12; i++)
		if (!fgets(lines[i], sizeof(lines[i]), f))
			lines[i][0] = 0;
	CHECK(getline(&table, &tlen, f) > 0);
	for (int i = 0; i < 12; i++)
		chomp(lines[i]);
	iseqw = strtoull(lines[0], NULL, 10);
	str_short = strtoull(lines[1], NULL, 10);
	str_long = strtoull(lines[2], NULL, 10);
	ary = strtoull(lines[3], NULL, 10);
	big = strtoull(lines[4], NULL, 10);

	struct rbreader_src src = { o, read_pid, &pid };
	char buf[RBREADER_STR_MAX];
	struct rbiseq_name nm;
	int cut = 0;

	CHECK(rbreader__string(&src, str_short, buf, sizeof(buf), &cut) > 0);
	SAME(buf, lines[10]);
	CHECK(rbreader__string(&src, str_long, buf, sizeof(buf), &cut) > 0);
	SAME(buf, lines[11]);
	CHECK(rbreader__path(&src, ary, buf, sizeof(buf), &cut) > 0);
	SAME(buf, lines[10]); /* an embedded array: [short, long] */
	CHECK(rbreader__path(&src, big, buf, sizeof(buf), &cut) > 0);
	SAME(buf, "1"); /* a heap array: ("1".."40") */
	/* the wrapper is an RTypedData (basic, type, typed_flag, data): its
	 * data is the rb_iseq_t (iseq.c iseqw_new; a test-only offset) */
	CHECK_INT(read_pid(&pid, iseqw + 32, &iseq, sizeof(iseq)), 0);
	CHECK_INT(rbreader__iseq(&src, iseq, -1, &nm), 0);
	SAME(nm.label, lines[7]);
	SAME(nm.path, lines[8]);
	CHECK_INT(nm.first_lineno, atoi(lines[9]));
	CHECK_INT(nm.line, atoi(lines[9]));
	/* "pos:line" of every instruction: a frame whose pc is the next
	 * instruction's (pos + 1 words at least) is on that line */
	int n = 0;

	for (char *p = table; p && *p && *p != '\n';) {
		unsigned pos, line;
		int used;

		if (sscanf(p, "%u:%u%n", &pos, &line, &used) != 2)
			break;
		CHECK_INT(rbreader__iseq(&src, iseq, (int32_t)pos + 1, &nm), 0);
		CHECK_MSG(nm.line == (int32_t)line, "pos %u: line %d, Ruby says %u", pos, nm.line, line);
		n++;
		p += used;
		while (*p == ' ')
			p++;
	}
	CHECK_MSG(n >= 8, "%d instructions checked", n);
	/* IDs by name through ruby_global_symbols, found in rb_id2str's code */
	uint64_t symbols = libruby_symbols(pid);

	CHECK_MSG(symbols, "ruby_global_symbols not found");
	CHECK(rbreader__id_name(&src, symbols, strtoull(lines[5], NULL, 10) >> 8, buf, sizeof(buf),
				&cut) > 0);
	SAME(buf, "a_probe_symbol_name");
	CHECK(rbreader__id_name(&src, symbols, strtoull(lines[6], NULL, 10) >> 8, buf, sizeof(buf),
				&cut) > 0);
	SAME(buf, "+");
	/* method entries' classes, as Ruby's profiler API says them: a C
	 * method's, a module function's on its module (singleton), an
	 * included module's (ICLASS), a nested class's, a singleton's; and
	 * frames with no class (iseqs) give none */
	int classes = 0, none = 0;
	char *l = NULL;
	size_t llen = 0;

	while (getline(&l, &llen, f) > 0 && strncmp(l, "end", 3)) {
		char want[256];
		unsigned long long v;
		int single, got_single = -1, rc;

		if (sscanf(l, "%llu %255s %d", &v, want, &single) != 3)
			break;
		rc = rbreader__class_path(&src, symbols, v, buf, sizeof(buf), &got_single, &cut);
		if (!strcmp(want, "-")) {
			CHECK_MSG(rc < 0, "frame %llx: class %.80s, Ruby says none", v, buf);
			none++;
			continue;
		}
		CHECK_MSG(rc > 0, "frame %llx (%s): %d", v, want, rc);
		SAME(buf, want);
		CHECK_INT(got_single, single);
		classes++;
	}
	free(l);
	CHECK_MSG(classes >= 5 && none >= 1, "%d classes, %d frames without checked", classes, none);
	free(table);
	close(in[1]);
	fclose(f);
	waitpid(pid, NULL, 0);
}

TEST_MAIN()

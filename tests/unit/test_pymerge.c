// SPDX-License-Identifier: MIT
/* Python frames into stacks: the record section, its groups, the frames
 * made of them, their folded form, PYFRAME capture records, the name
 * table, and the BPF walk's configuration for CPython 3.11. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capfile/capfile.h"
#include "profile/profile.h"
#include "runtimes/python/pymerge.h"
#include "runtimes/python/pynames.h"
#include "runtimes/python/pyoffsets.h"
#include "runtimes/python/pyprocs.h"
#include "runtimes/python/pysession.h"
#include "profile/profile_int.h"
#include "testlib.h"
#include "util.h"

/* An event with stack_len bytes of stack and n Python frames behind it;
 * frames[i].code = 0x1000 + i, instr = 2 * i, entry where entry_mask has bit i. */
static struct sfprof_event *py_event(uint32_t stack_len, uint32_t n, uint64_t entry_mask,
				     uint32_t sflags)
{
	uint32_t off = SFPROF_PY_SECTION_OFF(stack_len), size = off + SFPROF_PY_SECTION_SIZE(n);
	struct sfprof_event *e = calloc(1, size);
	struct sfprof_py_section *sec = (void *)((uint8_t *)e + off);

	e->size = size;
	e->kind = SFPROF_EV_CPU;
	e->flags = SFPROF_EVF_PYTHON;
	e->stack_len = stack_len;
	sec->nframes = n;
	sec->flags = sflags;
	for (uint32_t i = 0; i < n; i++) {
		sec->frames[i].code = 0x1000 + i;
		sec->frames[i].instr = (int32_t)(2 * i);
		sec->frames[i].flags = (entry_mask >> i) & 1 ? SFPROF_PYF_ENTRY : 0;
	}
	return e;
}

TEST(section_should_be_found_behind_the_stack_and_checked_against_the_size)
{
	struct sfprof_event *e = py_event(13, 3, 0, 0);
	const struct sfprof_py_section *sec;
	int bad = 0;

	sec = pymerge__section(e, &bad);
	CHECK(sec && !bad);
	CHECK_INT(sec->nframes, 3);
	CHECK_U64(sec->frames[2].code, 0x1002);
	/* one frame more than the record holds */
	((struct sfprof_py_section *)(void *)sec)->nframes = 4;
	CHECK(!pymerge__section(e, &bad) && bad);
	bad = 0;
	((struct sfprof_py_section *)(void *)sec)->nframes = SFPROF_PY_FRAMES_MAX + 1;
	CHECK(!pymerge__section(e, &bad) && bad);
	/* no flag: no section, and nothing wrong */
	bad = 0;
	e->flags = 0;
	CHECK(!pymerge__section(e, &bad) && !bad);
	/* flag, but the record ends with its stack */
	e->flags = SFPROF_EVF_PYTHON;
	e->size = SFPROF_PY_SECTION_OFF(13);
	CHECK(!pymerge__section(e, &bad) && bad);
	free(e);
}

TEST(groups_should_end_at_each_entry_frame_innermost_first)
{
	/* frames 0..5: entries at 1 and 4 -> [0,2) [2,5) [5,6) */
	struct sfprof_event *e = py_event(0, 6, (1u << 1) | (1u << 4), 0);
	int bad = 0;
	const struct sfprof_py_section *sec = pymerge__section(e, &bad);
	uint32_t st[8];

	CHECK(sec);
	CHECK_INT(pymerge__groups(sec, st, 8), 3);
	CHECK_INT(st[0], 0);
	CHECK_INT(st[1], 2);
	CHECK_INT(st[2], 5);
	/* the last frame an entry (the usual case): no empty group after it */
	free(e);
	e = py_event(0, 3, 1u << 2, 0);
	sec = pymerge__section(e, &bad);
	CHECK_INT(pymerge__groups(sec, st, 8), 1);
	CHECK_INT(pymerge__groups(sec, st, 0), 0);
	free(e);
}

static int fake_name(void *ctx, uint32_t pid, uint64_t code, int32_t instr, const char **q,
		     const char **file, uint32_t *line, uint32_t *first)
{
	static char buf[8][32];
	int i = (int)(code - 0x1000);

	(void)ctx;
	if (pid != 42 || i < 0 || i >= 8 || i == 3)
		return -EFAULT;
	snprintf(buf[i], sizeof(buf[i]), "f%d", i);
	*q = buf[i];
	*file = "/src/app/mod.py";
	*line = 10 + (uint32_t)instr;
	*first = 100 + (uint32_t)i; /* co_firstlineno */
	return 0;
}

static char *folded(struct profile *p)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	profile__write_folded(p, f);
	fclose(f);
	return text;
}

TEST(ids_should_be_oldest_first_named_with_file_and_line_and_marked_when_cut)
{
	struct profile_meta meta = { .kind = PROFILE_CPU, .hz = 99 };
	struct profile *p = profile__new(&meta);
	struct sfprof_event *e = py_event(0, 5, 0, SFPROF_PYS_CUT);
	struct pymerge_stats st = { 0 };
	struct pymerge_ctx c = { p, fake_name, NULL, 42, &st };
	int bad = 0;
	const struct sfprof_py_section *sec = pymerge__section(e, &bad);
	uint32_t ids[16];
	int n;
	char *text;

	CHECK(p && sec);
	/* frames 0..4, 3 unreadable; the cut marker first */
	n = pymerge__ids(&c, sec, 0, 5, 1, ids, 16);
	CHECK_INT(n, 6);
	CHECK(profile__add_ids(p, "app", ids, (size_t)n, 1) == 0);
	text = folded(p);
	CHECK_STR(text, "app;[python: more frames];f4 (mod.py:18);[python: unreadable frame];"
			"f2 (mod.py:14);f1 (mod.py:12);f0 (mod.py:10) 1\n");
	CHECK_U64(st.frames, 5);
	CHECK_U64(st.frames_failed, 1);
	{
		/* each frame's start_line is its code object's co_firstlineno */
		uint32_t nfr;
		const struct prof_frame *fr = prof__frames(p, &nfr);

		CHECK(ids[1] < nfr && ids[2] < nfr && ids[3] < nfr);
		CHECK_INT(fr[ids[1]].start_line, 104);
		CHECK_INT(fr[ids[2]].start_line, 0); /* the unreadable marker */
		CHECK_INT(fr[ids[3]].start_line, 102);
	}
	/* room for two: the two oldest */
	CHECK_INT(pymerge__ids(&c, sec, 0, 5, 0, ids, 2), 2);
	free(text);
	free(e);
	profile__free(p);
}

TEST(markers_should_name_the_frames_own_interpreter)
{
	static const struct {
		uint32_t flag;
		const char *want;
	} cases[] = {
		{ SFPROF_PYS_RUBY, "app;[ruby: more frames];f4 (mod.py:18);[ruby: unreadable frame];" },
		{ SFPROF_PYS_PHP, "app;[php: more frames];f4 (mod.py:18);[php: unreadable frame];" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct profile_meta meta = { .kind = PROFILE_CPU, .hz = 99 };
		struct profile *p = profile__new(&meta);
		struct sfprof_event *e = py_event(0, 5, 0, SFPROF_PYS_CUT | cases[i].flag);
		struct pymerge_stats st = { 0 };
		struct pymerge_ctx c = { p, fake_name, NULL, 42, &st };
		int bad = 0;
		const struct sfprof_py_section *sec = pymerge__section(e, &bad);
		uint32_t ids[16];
		int n;
		char *text;

		CHECK(p && sec);
		n = pymerge__ids(&c, sec, 0, 5, 1, ids, 16);
		CHECK_INT(n, 6);
		CHECK(profile__add_ids(p, "app", ids, (size_t)n, 1) == 0);
		text = folded(p);
		CHECK_MSG(!strncmp(text, cases[i].want, strlen(cases[i].want)), "%s", text);
		free(text);
		free(e);
		profile__free(p);
	}
}

TEST(pyframe_records_should_round_trip_and_malformed_ones_be_refused)
{
	char path[] = "/tmp/sfprof-test-pyframe.XXXXXX";
	int fd = mkstemp(path);
	struct capfile_meta meta = { .event = "cpu", .command = "python3" };
	struct capfile_writer *w;
	struct capfile_reader *r;
	struct capfile_record rec;
	int got = 0, err = 0;

	CHECK(fd >= 0);
	close(fd);
	w = capfile_writer__create(path, &meta);
	CHECK(w);
	CHECK(capfile_writer__pyframe(w, 7, 0x7f00aa, -2, 31, 29, "Worker.compute", "/x/a.py") == 0);
	CHECK(capfile_writer__pyframe(w, 7, 0x7f00ab, 4, 0, 0, "<module>", "") == 0);
	CHECK(capfile_writer__pyframe(w, 7, 1, 0, 0, 1, "", "/x") == -EINVAL);
	CHECK(capfile_writer__close(w) == 0);
	r = capfile_reader__open(path, &err);
	CHECK(r);
	while (capfile_reader__next(r, &rec) == 1) {
		if (rec.type != CAPFILE_REC_PYFRAME)
			continue;
		if (got++ == 0) {
			CHECK_INT(rec.pyframe.pid, 7);
			CHECK_U64(rec.pyframe.code, 0x7f00aa);
			CHECK_INT(rec.pyframe.instr, -2);
			CHECK_INT(rec.pyframe.line, 31);
			CHECK_INT(rec.pyframe.firstlineno, 29);
			CHECK_STR(rec.pyframe.qualname, "Worker.compute");
			CHECK_STR(rec.pyframe.file, "/x/a.py");
		} else {
			CHECK_INT(rec.pyframe.firstlineno, 0);
			CHECK_STR(rec.pyframe.qualname, "<module>");
			CHECK_STR(rec.pyframe.file, "");
		}
	}
	CHECK_INT(got, 2);
	capfile_reader__free(r);

	/* a qualname length that points past its NUL: corrupt */
	{
		uint8_t buf[4096];
		FILE *f = fopen(path, "rb");
		size_t len = fread(buf, 1, sizeof(buf), f), off = CAPFILE_HDR_SIZE;

		fclose(f);
		while (off + CAPFILE_REC_HDR <= len && util__get32(buf + off) != CAPFILE_REC_PYFRAME)
			off += CAPFILE_REC_HDR + ((util__get32(buf + off + 4) + 7) & ~7u);
		CHECK(off + CAPFILE_REC_HDR + 28 <= len);
		buf[off + CAPFILE_REC_HDR + 20] = 3; /* "Wor" then 'k', no NUL */
		/* checksums fixed up: only the field is wrong */
		uint32_t rlen = util__get32(buf + off + 4);
		util__put32(buf + off + 8, util__crc32c(util__crc32c(0, buf + off, 8),
						       buf + off + CAPFILE_REC_HDR, rlen));
		util__put32(buf + off + 12, util__crc32c(0, buf + off, 12));
		r = capfile_reader__new_mem(buf, len, &err);
		CHECK(r);
		int rc;
		while ((rc = capfile_reader__next(r, &rec)) == 1)
			CHECK(rec.type != CAPFILE_REC_PYFRAME);
		CHECK(rc < 0);
		CHECK(strstr(capfile_reader__error(r), "PYFRAME"));
		capfile_reader__free(r);
	}
	unlink(path);
}

TEST(names_should_be_kept_replaced_and_forgotten_by_pid)
{
	struct pynames *n = pynames__new(NULL);
	const char *q, *f;
	uint32_t line, first;

	CHECK(n);
	CHECK(pynames__name(n, 1, 0x10, 4, &q, &f, &line, &first) == -ENOENT);
	for (uint32_t i = 0; i < 3000; i++)
		CHECK(pynames__put(n, 1 + i % 3, 0x10 + i, 4, i, i / 2, "g", "a.py") == 0);
	CHECK(pynames__put(n, 1, 0x10, 4, 7, 5, "f", "a.py") == 0);
	CHECK(pynames__name(n, 1, 0x10, 4, &q, &f, &line, &first) == 0);
	CHECK_STR(q, "f");
	CHECK_INT(line, 7);
	CHECK_INT(first, 5);
	CHECK_U64(pynames__count(n), 3000);
	pynames__forget_pid(n, 1);
	CHECK_U64(pynames__count(n), 2000);
	CHECK(pynames__name(n, 1, 0x10, 4, &q, &f, &line, &first) == -ENOENT);
	CHECK(pynames__name(n, 2, 0x11, 4, &q, &f, &line, &first) == 0);
	CHECK_INT(line, 1);
	CHECK_INT(first, 0);
	pynames__free(n);
}

static int put_name(struct pysession *ps, uint32_t pid, uint64_t code, const char *q)
{
	struct capfile_record rec = { .type = CAPFILE_REC_PYFRAME };

	rec.pyframe.pid = pid;
	rec.pyframe.code = code;
	rec.pyframe.instr = 4;
	rec.pyframe.line = 9;
	rec.pyframe.qualname = q;
	rec.pyframe.file = "a.py";
	return pysession__record(ps, &rec);
}

static int has_name(struct pysession *ps, uint32_t pid, uint64_t code)
{
	void *ctx;
	pyname_fn fn = pysession__namer(ps, &ctx);
	const char *q, *f;
	uint32_t line, first;

	return fn(ctx, pid, code, 4, &q, &f, &line, &first) == 0;
}

TEST(session_should_drop_an_exited_process_names_only_once_its_events_are_in)
{
	struct pysession *ps = pysession__new(0);

	CHECK(ps);
	CHECK_INT(put_name(ps, 7, 0x100, "f"), 0);
	CHECK_INT(put_name(ps, 8, 0x200, "g"), 0);
	CHECK_INT(put_name(ps, 9, 0x300, "h"), 0);
	pysession__exit(ps, 7, 1000);
	pysession__exit(ps, 8, 2000);
	/* events still in flight: nothing goes before the bound */
	CHECK_INT(pysession__reap(ps, 999), 0);
	CHECK(has_name(ps, 7, 0x100));
	/* pid 8 comes back (a new process) before its old exit is reaped */
	pysession__fork(ps, 1, 8);
	CHECK_INT(put_name(ps, 8, 0x200, "g2"), 0);
	CHECK_INT(pysession__reap(ps, 5000), 1);
	CHECK(!has_name(ps, 7, 0x100));
	CHECK(has_name(ps, 8, 0x200));
	CHECK(has_name(ps, 9, 0x300));
	CHECK_INT(pysession__exited_pending(ps), 0);
	/* many short processes: the names do not pile up */
	for (uint32_t pid = 100; pid < 1100; pid++) {
		CHECK_INT(put_name(ps, pid, 0x400, "k"), 0);
		pysession__exit(ps, pid, 10000 + pid);
	}
	CHECK_INT(pysession__reap(ps, 20000), 1000);
	CHECK(!has_name(ps, 500, 0x400));
	CHECK(has_name(ps, 9, 0x300));
	pysession__free(ps);
}

TEST(bpf_config_for_3_11_should_put_every_frame_field_in_one_window)
{
	const struct pyoffsets *o;
	struct sfprof_py_proc c;

	CHECK(pyoffsets_for_version(3, 11, &o) == 0);
	CHECK(pyprocs__bpf_config(o, 0x555500000000ull, &c) == 0);
	CHECK_U64(c.tss_addr, 0x555500000000ull + o->rt_tss_initialized);
	CHECK_INT(c.tss_key_off, 4);
	CHECK_INT(c.win_base + c.w_code, o->frame_code);
	CHECK_INT(c.win_base + c.w_previous, o->frame_previous);
	CHECK_INT(c.win_base + c.w_instr, o->frame_instr);
	CHECK_INT(c.win_base + c.w_entry, o->frame_is_entry);
	CHECK(c.w_code + 8u <= SFPROF_PY_WIN && c.w_previous + 8u <= SFPROF_PY_WIN &&
	      c.w_instr + 8u <= SFPROF_PY_WIN && c.w_entry < SFPROF_PY_WIN);
	CHECK_INT(c.owner_cstack, SFPROF_PY_NONE);
	CHECK_INT(c.cframe_current, o->cframe_current_frame);
	/* glibc 2.36: specific_1stblock[key].data, 16 bytes a key */
	CHECK_INT(c.specific, o->glibc_specific_1stblock + 8);
	CHECK_INT(c.key_data_size, 16);
	CHECK_INT(c.key_max, 32);
	/* a version whose fields do not fit one window is refused */
	struct pyoffsets far = *o;
	far.frame_previous = o->frame_code + 200;
	CHECK(pyprocs__bpf_config(&far, 0, &c) == -EPROTONOSUPPORT);
}

TEST_MAIN()

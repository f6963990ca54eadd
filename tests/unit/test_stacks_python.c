// SPDX-License-Identifier: MIT
/*
 * Python frames merged into a real native stack: this process plays the
 * interpreter. Its own _PyEval_EvalFrameDefault (two calls of it, with a
 * C function between them, as when C code calls back into Python) is
 * sampled, the event gets a Python section as the BPF walk makes it,
 * and the stacks pipeline must put each group of Python frames in place
 * of its eval frame, in order, whatever the number of groups.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "selfstack.h"
#include "runtimes/runtime.h"
#include "stacks/stacks.h"
#include "testlib.h"

static uint8_t evbuf[SFPROF_EVENT_HDR_SIZE + 16384 + SFPROF_PY_SECTION_SIZE(8) + 8]
	__attribute__((aligned(8)));

__attribute__((noinline)) static void fill_event(uint64_t ip, uint64_t sp, uint64_t bp)
{
	struct sfprof_event *e = (void *)evbuf;
	uint64_t end = mapping_end(sp), len = end > sp ? end - sp : 0;

	memset(e, 0, SFPROF_EVENT_HDR_SIZE);
	if (len > 16384)
		len = 16384;
	copy_stack(e->stack, (const uint8_t *)sp, len);
	e->size = (uint32_t)((SFPROF_EVENT_HDR_SIZE + len + 7) & ~7ull);
	e->kind = SFPROF_EV_CPU;
	e->pid = (uint32_t)getpid();
	e->tid = (uint32_t)syscall(SYS_gettid);
	e->stack_len = (uint32_t)len;
	e->weight = 1;
	strcpy(e->comm, "pyproc");
	e->regs.ip = ip;
	e->regs.sp = sp;
	e->regs.bp = bp;
}

/* The sampled C code "called from Python". */
__attribute__((noinline)) static void c_leaf(void)
{
	uint64_t ip, sp, bp;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(bp));
	fill_event(ip, sp, bp);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void _PyEval_EvalFrameDefault(int n);

/* C code between two eval calls (a C extension calling back). */
__attribute__((noinline)) static void c_between(int n)
{
	_PyEval_EvalFrameDefault(n);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void _PyEval_EvalFrameDefault(int n)
{
	if (n > 0)
		c_between(n - 1);
	else
		c_leaf();
	__asm__ volatile("" ::: "memory");
}

/* Appends a section of n frames (code 0x1000 + i), entries as in mask. */
static struct sfprof_event *with_python(uint32_t n, uint32_t entry_mask, uint32_t sflags)
{
	struct sfprof_event *e = (void *)evbuf;
	struct sfprof_py_section *sec = (void *)(evbuf + SFPROF_PY_SECTION_OFF(e->stack_len));

	sec->nframes = n;
	sec->flags = sflags;
	for (uint32_t i = 0; i < n; i++) {
		sec->frames[i].code = 0x1000 + i;
		sec->frames[i].instr = (int32_t)i;
		sec->frames[i].flags = (entry_mask >> i) & 1 ? SFPROF_PYF_ENTRY : 0;
	}
	e->flags |= SFPROF_EVF_PYTHON;
	e->size = SFPROF_PY_SECTION_OFF(e->stack_len) + SFPROF_PY_SECTION_SIZE(n);
	return e;
}

static int namer(void *ctx, uint32_t pid, uint64_t code, int32_t instr, const char **q,
		 const char **file, uint32_t *line, uint32_t *first)
{
	static char names[8][8];
	unsigned i = (unsigned)(code - 0x1000);

	(void)ctx;
	(void)pid;
	if (i >= 8)
		return -EFAULT;
	snprintf(names[i], sizeof(names[i]), "f%u", i);
	*q = names[i];
	*file = "/app/m.py";
	*line = (uint32_t)instr;
	*first = 1;
	return 0;
}

static char folded[65536];

/* The event through the pipeline; its folded line into `folded`. */
static int merge(struct sfprof_event *e, int no_python, struct stacks_stats *st)
{
	struct proc_cache_opts po = { .quiet = 1 };
	struct profile_meta pm = { .kind = PROFILE_CPU, .hz = 99 };
	struct stacks_opts so = { .kind = PROFILE_CPU, .no_inline = 1, .no_python = no_python };
	struct proc_cache *pc = proc_cache__new(&po);
	struct profile *prof = profile__new(&pm);
	struct stacks *s = pc && prof ? stacks__new(pc, prof, &so) : NULL;
	int err = s ? 0 : -ENOMEM;
	FILE *f;

	if (s) {
		stacks__set_namer(s, (size_t)runtime__find("python"), namer, NULL);
		err = stacks__add_event(s, e, NULL, 0);
		if (!err)
			err = stacks__flush(s);
		stacks__stats(s, st);
	}
	memset(folded, 0, sizeof(folded));
	f = fmemopen(folded, sizeof(folded), "w");
	if (prof)
		profile__write_folded(prof, f);
	fclose(f);
	stacks__free(s);
	profile__free(prof);
	proc_cache__free(pc);
	return err;
}

#define EVAL "_PyEval_EvalFrameDefault"

TEST(each_eval_frame_should_become_its_group_of_python_frames_in_order)
{
	struct stacks_stats st;

	_PyEval_EvalFrameDefault(1);
	/* the native stack itself, first: two eval frames, C between */
	CHECK(merge((void *)evbuf, 1, &st) == 0);
	CHECK_MSG(strstr(folded, EVAL ";c_between;" EVAL ";c_leaf 1"), "native: %.400s", folded);
	/* groups innermost first: f0 (entry) | f1, f2 (entry) */
	CHECK(merge(with_python(3, 1u << 0 | 1u << 2, 0), 0, &st) == 0);
	CHECK_MSG(strstr(folded, ";f2 (m.py:2);f1 (m.py:1);c_between;f0 (m.py:0);c_leaf 1"),
		  "merged: %.400s", folded);
	CHECK_MSG(!strstr(folded, EVAL), "an eval frame stayed: %.400s", folded);
	CHECK_U64(st.python.sections, 1);
	CHECK_U64(st.python.frames, 3);
	CHECK_U64(st.python.unmatched, 0);
}

TEST(groups_left_over_should_go_with_the_outermost_eval_frame)
{
	struct stacks_stats st;

	/* three groups, two eval frames: the oldest joins the outer one */
	_PyEval_EvalFrameDefault(1);
	CHECK(merge(with_python(3, 1u << 0 | 1u << 1 | 1u << 2, 0), 0, &st) == 0);
	CHECK_MSG(strstr(folded, ";f2 (m.py:2);f1 (m.py:1);c_between;f0 (m.py:0);c_leaf 1"),
		  "merged: %.400s", folded);
	CHECK_U64(st.python.unmatched, 1);
}

TEST(eval_frames_past_a_cut_walk_should_stay_native_under_the_marker)
{
	struct stacks_stats st;

	/* one group (no entry frame read: the walk was cut), two eval
	 * frames: the inner one is the group, the outer stays native */
	_PyEval_EvalFrameDefault(1);
	CHECK(merge(with_python(2, 0, SFPROF_PYS_CUT), 0, &st) == 0);
	CHECK_MSG(strstr(folded, EVAL ";c_between;[python: more frames];f1 (m.py:1);f0 (m.py:0);"
			       "c_leaf 1"), "merged: %.400s", folded);
	CHECK_U64(st.python.cut, 1);
}

TEST(python_frames_of_a_stack_without_eval_frames_should_go_at_its_root)
{
	struct stacks_stats st;

	c_leaf();
	CHECK(merge(with_python(2, 1u << 1, 0), 0, &st) == 0);
	CHECK_MSG(strstr(folded, "pyproc;f1 (m.py:1);f0 (m.py:0);"), "merged: %.400s", folded);
	CHECK_U64(st.python.no_eval, 1);
	/* --no-python: the section is ignored */
	CHECK(merge(with_python(2, 1u << 1, 0), 1, &st) == 0);
	CHECK_MSG(!strstr(folded, "m.py"), "--no-python: %.400s", folded);
}

/* Fails the first name read of code 0x1001, as a late read of a frame
 * whose code a PHP-FPM request freed at its end and the next request
 * compiled again where it was. */
static int fails_once;

static int namer_failing_once(void *ctx, uint32_t pid, uint64_t code, int32_t instr,
			      const char **q, const char **file, uint32_t *line, uint32_t *first)
{
	if (code == 0x1001 && fails_once) {
		fails_once = 0;
		return -EFAULT;
	}
	return namer(ctx, pid, code, instr, q, file, line, first);
}

TEST(a_frame_whose_first_name_read_failed_should_be_named_at_the_flush)
{
	struct proc_cache_opts po = { .quiet = 1 };
	struct profile_meta pm = { .kind = PROFILE_CPU, .hz = 99 };
	struct stacks_opts so = { .kind = PROFILE_CPU, .no_inline = 1 };
	struct proc_cache *pc = proc_cache__new(&po);
	struct profile *prof = profile__new(&pm);
	struct stacks *s = pc && prof ? stacks__new(pc, prof, &so) : NULL;
	struct stacks_stats st;
	FILE *f;

	CHECK(s != NULL);
	c_leaf();
	with_python(2, 1u << 1, 0);
	fails_once = 1;
	stacks__set_namer(s, (size_t)runtime__find("python"), namer_failing_once, NULL);
	/* three samples of one raw stack: the first one's read fails, and
	 * the stack is kept by its raw frames, named once */
	for (int i = 0; i < 3; i++)
		CHECK(stacks__add_event(s, (void *)evbuf, NULL, 0) == 0);
	CHECK(stacks__flush(s) == 0);
	stacks__stats(s, &st);
	memset(folded, 0, sizeof(folded));
	f = fmemopen(folded, sizeof(folded), "w");
	profile__write_folded(prof, f);
	fclose(f);
	CHECK_MSG(strstr(folded, "pyproc;f1 (m.py:1);f0 (m.py:0);") && strstr(folded, " 3\n"),
		  "the three samples named: %.400s", folded);
	CHECK_MSG(!strstr(folded, "unreadable"), "a marker stayed: %.400s", folded);
	/* the failed read is counted, and so is the naming again */
	CHECK_U64(st.python.frames_failed, 1);
	CHECK_U64(st.python.renamed, 1);
	stacks__free(s);
	profile__free(prof);
	proc_cache__free(pc);
}

TEST_MAIN()

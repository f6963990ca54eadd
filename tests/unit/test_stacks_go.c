// SPDX-License-Identifier: MIT
/*
 * Go past the stack switch (src/stacks/stacks_go.c), on this process's
 * own stack: a runtime registered for this executable says switcher() is
 * a stack-switching function, so a walk from there stops at once; the
 * record's Go section then carries this thread's real context and stack
 * (as bpf/go.bpf.h sends a goroutine's), and the walk goes on there to
 * main. Without the section the stack stays [truncated] at switcher().
 */
#include <errno.h>
#include <link.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "model/dso.h"
#include "model/proc.h"
#include "profile/profile.h"
#include "runtimes/runtime.h"
#include "unwind/sframe.h"
#include "stacks/stacks.h"
#include "testlib.h"
#include "selfstack.h"

TEST_MAIN();

#define STACK1 64u     /* the fake g0 snapshot */
#define STACK2 16384u  /* the "goroutine's" snapshot, at most */
static uint8_t evbuf[SFPROF_EVENT_HDR_SIZE + STACK1 + SFPROF_GO_SECTION_HDR + STACK2]
	__attribute__((aligned(8)));
static char self[PATH_MAX];
static uint64_t switch_vaddr;
static int token;

__attribute__((noinline)) static void switcher(void)
{
	__asm__ volatile("nop\n\tnop\n\tnop\n\tnop" ::: "memory");
}

static int bias_of_main(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uint64_t *)data = info->dlpi_addr;
	return 1; /* the first is the program */
}

static void *fake_probe(struct dso *d)
{
	char real[PATH_MAX];

	return realpath(dso__path(d), real) && !strcmp(real, self) ? &token : NULL;
}

static int fake_special_row(void *bin, uint64_t vaddr, struct sframe_row *row,
			    struct sframe_func *fn)
{
	(void)bin;
	if (vaddr != switch_vaddr)
		return 0;
	memset(row, 0, sizeof(*row));
	row->flags = SFRAME_ROW_STACK_SWITCH;
	if (fn) {
		memset(fn, 0, sizeof(*fn));
		fn->start = switch_vaddr;
		fn->size = 1;
		fn->num_rows = 1;
	}
	return 1;
}

static const struct runtime_ops fakego_ops = {
	.name = "fakego",
	.probe = fake_probe,
	.special_row = fake_special_row,
};

/* A record at switcher() on a fake stack; with `go`, the Go section of
 * this thread's context in the caller (its IP, SP and FP, and its stack). */
__attribute__((noinline)) static struct sfprof_event *goroutine_frame(int go)
{
	struct sfprof_event *e = (void *)evbuf;
	struct sfprof_go_section *g =
		(void *)(evbuf + SFPROF_PY_SECTION_OFF(STACK1));
	uint64_t ip, sp, bp, len;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(bp));
	memset(evbuf, 0, sizeof(evbuf));
	e->kind = SFPROF_EV_CPU;
	e->pid = (uint32_t)getpid();
	e->tid = (uint32_t)syscall(SYS_gettid);
	e->weight = 1;
	strcpy(e->comm, "test_stacks_go");
	e->regs.ip = (uint64_t)(uintptr_t)switcher;
	e->regs.sp = (uint64_t)(uintptr_t)(evbuf + sizeof(evbuf) - STACK1); /* any */
	e->stack_len = STACK1;
	e->size = SFPROF_PY_SECTION_OFF(STACK1);
	if (go) {
		len = mapping_end(sp) - sp;
		if (len > STACK2)
			len = STACK2;
		g->sp = sp;
		g->pc = ip;
		g->bp = bp;
		g->len = (uint32_t)len;
		copy_stack(evbuf + SFPROF_PY_SECTION_OFF(STACK1) + SFPROF_GO_SECTION_HDR,
			   (const uint8_t *)(uintptr_t)sp, len);
		e->flags |= SFPROF_EVF_GO;
		e->size += (uint32_t)((SFPROF_GO_SECTION_HDR + len + 7) & ~7ull);
	}
	return e;
}

static char folded[65536];

static int run(struct sfprof_event *e, struct stacks_stats *st)
{
	struct proc_cache_opts po = { .quiet = 1 };
	struct profile_meta pm = { .kind = PROFILE_CPU, .hz = 99 };
	struct stacks_opts so = { .kind = PROFILE_CPU };
	struct proc_cache *pc = proc_cache__new(&po);
	struct profile *prof = profile__new(&pm);
	struct stacks *s = pc && prof ? stacks__new(pc, prof, &so) : NULL;
	FILE *f;
	int err = s ? 0 : -ENOMEM;

	if (!err)
		err = stacks__add_event(s, e, NULL, 0);
	if (!err)
		err = stacks__flush(s);
	memset(folded, 0, sizeof(folded));
	f = fmemopen(folded, sizeof(folded) - 1, "w");
	if (f) {
		profile__write_folded(prof, f);
		fclose(f);
	}
	if (s)
		stacks__stats(s, st);
	stacks__free(s);
	profile__free(prof);
	proc_cache__free(pc);
	return err;
}

static int setup(void)
{
	uint64_t bias = 0;

	if (!realpath("/proc/self/exe", self))
		return -errno;
	dl_iterate_phdr(bias_of_main, &bias);
	switch_vaddr = (uint64_t)(uintptr_t)switcher - bias;
	return runtime__register(&fakego_ops) < 0 ? -EEXIST : 0;
}

TEST(a_walk_stopped_at_a_go_stack_switch_should_go_on_over_the_goroutine_stack)
{
	struct stacks_stats st;

	CHECK_INT(setup(), 0);
	CHECK_INT(run(goroutine_frame(1), &st), 0);
	CHECK_MSG(strstr(folded, ";main;") && strstr(folded, ";goroutine_frame;switcher 1\n"),
		  "folded: %.400s", folded);
	CHECK_MSG(!strstr(folded, "[truncated]"), "truncated: %.400s", folded);
	CHECK_U64(st.go_switch_continued, 1);
	CHECK_U64(st.go_switch_stopped, 0);
	CHECK_U64(st.truncated, 0);

	/* no section: cut at the switch, counted */
	CHECK_INT(run(goroutine_frame(0), &st), 0);
	CHECK_MSG(strstr(folded, "test_stacks_go;[truncated];switcher 1\n") != NULL,
		  "folded: %.400s", folded);
	CHECK_U64(st.go_switch_continued, 0);
	CHECK_U64(st.go_switch_stopped, 1);

	/* a section that does not fit its record: cut, counted as bad */
	{
		struct sfprof_event *e = goroutine_frame(1);

		e->size = SFPROF_PY_SECTION_OFF(STACK1) + 16;
		CHECK_INT(run(e, &st), 0);
		CHECK(strstr(folded, "[truncated];switcher 1\n") != NULL);
		CHECK_U64(st.go_bad_sections, 1);
	}
	runtime__unregister_all();
}

/* A g0-base section (SFPROF_GOS_G0: no goroutine, g0.sched) fits only
 * the walk of the switch that put SP at its sp: here the leaf, so the
 * sample's SP must be sp or sp - 8 (mcall's push); a vDSO call on g0
 * (with SFPROF_GOS_VDSO) fits any walk whose SP is below its sp. */
TEST(a_g0_base_section_should_continue_only_the_switch_that_set_sp_there)
{
	struct stacks_stats st;
	struct sfprof_event *e;
	struct sfprof_go_section *g = (void *)(evbuf + SFPROF_PY_SECTION_OFF(STACK1));

	CHECK_INT(setup(), 0);
	e = goroutine_frame(1);
	g->flags = SFPROF_GOS_G0;
	e->regs.sp = g->sp;
	CHECK_INT(run(e, &st), 0);
	CHECK_MSG(strstr(folded, ";main;") && !strstr(folded, "[truncated]"), "folded: %.400s",
		  folded);
	CHECK_U64(st.go_switch_continued, 1);
	CHECK_U64(st.go_switch_g0, 1);

	e = goroutine_frame(1);
	g->flags = SFPROF_GOS_G0;
	e->regs.sp = g->sp - 8;
	CHECK_INT(run(e, &st), 0);
	CHECK_U64(st.go_switch_g0, 1);

	/* a switch somewhere else on g0: its SP is not g0.sched.sp */
	e = goroutine_frame(1);
	g->flags = SFPROF_GOS_G0;
	e->regs.sp = g->sp - 4096;
	CHECK_INT(run(e, &st), 0);
	CHECK_MSG(strstr(folded, "test_stacks_go;[truncated];switcher 1\n") != NULL,
		  "folded: %.400s", folded);
	CHECK_U64(st.go_switch_continued, 0);
	CHECK_U64(st.go_switch_stopped, 1);

	/* a vDSO call on g0: its caller's frame is above the sample's SP */
	e = goroutine_frame(1);
	g->flags = SFPROF_GOS_G0 | SFPROF_GOS_VDSO;
	e->regs.sp = g->sp - 4096;
	CHECK_INT(run(e, &st), 0);
	CHECK_U64(st.go_switch_continued, 1);
	e = goroutine_frame(1);
	g->flags = SFPROF_GOS_G0 | SFPROF_GOS_VDSO;
	e->regs.sp = g->sp + 8;
	CHECK_INT(run(e, &st), 0);
	CHECK_U64(st.go_switch_stopped, 1);
	runtime__unregister_all();
}

// SPDX-License-Identifier: MIT
/*
 * The stacks pipeline on this very process: registers and a stack copy
 * taken here, unwound through the live proc cache (this binary's tables,
 * libc's), symbolized and aggregated into folded lines.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "selfstack.h"
#include "stacks/stacks.h"
#include "testlib.h"
#include "profile/profile_int.h" /* to see the profile's stacks and frames */

static uint8_t evbuf[SFPROF_EVENT_HDR_SIZE + 16384] __attribute__((aligned(8)));

/*
 * Fill an event as if a sample had hit the instruction after the asm in
 * the calling function: its IP, SP and FP there, and a copy of the stack
 * from that SP (what lies above is not touched by the call below it).
 */
#define SNAPSHOT(kind, weight)                                                \
	({                                                                    \
		uint64_t ip_, sp_, bp_;                                       \
		__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\t"      \
				 "mov %%rbp, %2"                              \
				 : "=r"(ip_), "=r"(sp_), "=r"(bp_));          \
		fill_event(kind, weight, ip_, sp_, bp_);                      \
	})

__attribute__((noinline)) static struct sfprof_event *
fill_event(uint16_t kind, uint64_t weight, uint64_t ip, uint64_t sp, uint64_t bp)
{
	struct sfprof_event *e = (void *)evbuf;
	uint64_t end, len;

	memset(e, 0, SFPROF_EVENT_HDR_SIZE);
	end = mapping_end(sp);
	len = end > sp ? end - sp : 0;
	if (len > 16384)
		len = 16384;
	copy_stack(e->stack, (const uint8_t *)sp, len);
	e->size = (uint32_t)((SFPROF_EVENT_HDR_SIZE + len + 7) & ~7ull);
	e->kind = kind;
	e->pid = (uint32_t)getpid();
	e->tid = (uint32_t)syscall(SYS_gettid);
	e->stack_len = (uint32_t)len;
	e->weight = weight;
	strcpy(e->comm, "test_stacks");
	e->regs.ip = ip;
	e->regs.sp = sp;
	e->regs.bp = bp;
	return e;
}

static char folded_buf[65536];
static char *folded = folded_buf;

/* A proc cache, a profile and the stacks that feed it. */
struct fixture {
	struct proc_cache *pc;
	struct profile *prof;
	struct stacks *s;
};

static int fixture_new(struct fixture *x, const struct stacks_opts *so)
{
	struct proc_cache_opts po = { .quiet = 1 };
	struct profile_meta pm = { .kind = so->kind, .hz = 99 };

	x->pc = proc_cache__new(&po);
	x->prof = profile__new(&pm);
	x->s = x->pc && x->prof ? stacks__new(x->pc, x->prof, so) : NULL;
	return x->s ? 0 : -ENOMEM;
}

static void fixture_free(struct fixture *x)
{
	stacks__free(x->s);
	profile__free(x->prof);
	proc_cache__free(x->pc);
}

/* The profile's folded text into folded_buf. */
static void fold(const struct profile *prof)
{
	FILE *f;

	memset(folded_buf, 0, sizeof(folded_buf));
	f = fmemopen(folded_buf, sizeof(folded_buf), "w");
	profile__write_folded(prof, f);
	fclose(f);
}

static int run(struct sfprof_event *e, const struct stacks_opts *so,
	       struct stacks_stats *st)
{
	struct fixture x;
	int err = fixture_new(&x, so);

	if (!err)
		err = stacks__add_event(x.s, e, NULL, 0);
	if (!err)
		err = stacks__flush(x.s);
	fold(x.prof);
	if (x.s)
		stacks__stats(x.s, st);
	fixture_free(&x);
	return err;
}

__attribute__((noinline)) static struct sfprof_event *middle_frame(uint16_t kind, uint64_t w)
{
	struct sfprof_event *e = SNAPSHOT(kind, w);
	__asm__ volatile("" ::: "memory");
	return e;
}

TEST(live_stack_should_unwind_to_the_entry_and_name_every_frame)
{
	struct stacks_opts so = { .kind = PROFILE_CPU };
	struct stacks_stats st;
	struct sfprof_event *e = middle_frame(SFPROF_EV_CPU, 1);

	CHECK_INT(run(e, &so, &st), 0);
	CHECK_MSG(strncmp(folded, "test_stacks;", 12) == 0, "folded: %.300s", folded);
	CHECK_MSG(strstr(folded, ";main;") != NULL, "no main in: %.300s (stops: snap %d nomap %d norow %d badcfa %d rule %d)", folded, (int)st.unwind.stop[2], (int)st.unwind.stop[3], (int)st.unwind.stop[4], (int)st.unwind.stop[5], (int)st.unwind.stop[6]);
	CHECK_MSG(strstr(folded, ";middle_frame 1\n") != NULL, "leaf: %.300s", folded);
	CHECK_MSG(strstr(folded, "[truncated]") == NULL, "truncated: %.300s", folded);
	CHECK_MSG(strstr(folded, "_start") != NULL, "no _start: %.300s", folded);
	CHECK_U64(st.complete, 1);
	CHECK_U64(st.truncated, 0);
}

TEST(a_stack_seen_again_should_be_walked_from_the_row_memo_and_merged)
{
	struct stacks_opts so = { .kind = PROFILE_CPU };
	struct sfprof_event *e = middle_frame(SFPROF_EV_CPU, 1);
	struct stacks_stats a, b;
	struct fixture x;

	CHECK_INT(fixture_new(&x, &so), 0);
	CHECK_INT(stacks__add_event(x.s, e, NULL, 0), 0);
	stacks__stats(x.s, &a);
	CHECK_INT(stacks__add_event(x.s, e, NULL, 0), 0);
	stacks__stats(x.s, &b);
	CHECK_INT(stacks__flush(x.s), 0);
	/* every row of the second walk came from the memo: as many hits as
	 * the first walk made lookups, and no new miss */
	CHECK_U64(b.memo_misses, a.memo_misses);
	CHECK_U64(b.memo_hits - a.memo_hits, a.memo_hits + a.memo_misses);
	CHECK_U64(b.frames, 2 * a.frames);
	fold(x.prof);
	CHECK_MSG(strstr(folded, ";middle_frame 2\n") != NULL, "folded: %.300s", folded);
	CHECK_MSG(strchr(folded, '\n') == strrchr(folded, '\n'), "one line: %.300s", folded);
	fixture_free(&x);
}

/*
 * --interval frees the binaries no process maps at an interval's end
 * while the next interval's stacks live on: after forgetting, that stacks
 * object walks and names afresh (no memo hit into freed binaries) and
 * still merges into the stacks it had.
 */
TEST(stacks_should_walk_afresh_after_forgetting_binaries_that_were_then_freed)
{
	struct stacks_opts so = { .kind = PROFILE_CPU };
	struct sfprof_event *e = middle_frame(SFPROF_EV_CPU, 1);
	struct stacks_stats a, b;
	struct dso_stats ds;
	struct fixture x;

	CHECK_INT(fixture_new(&x, &so), 0);
	CHECK_INT(stacks__add_event(x.s, e, NULL, 0), 0);
	stacks__stats(x.s, &a);
	CHECK(a.memo_misses > 0);
	/* forgotten: the same stack is walked again, none of it from the
	 * memo (a_stack_seen_again... shows it all would be) */
	stacks__forget_binaries(x.s);
	CHECK_INT(stacks__add_event(x.s, e, NULL, 0), 0);
	stacks__stats(x.s, &b);
	CHECK_U64(b.memo_misses - a.memo_misses, a.memo_misses);
	CHECK_U64(b.memo_hits, a.memo_hits);
	/* the process "is gone": its binaries are freed under the stacks */
	stacks__forget_binaries(x.s);
	CHECK_INT(proc_cache__remove(x.pc, getpid()), 0);
	CHECK(proc_cache__evict_unused(x.pc) >= 2);
	dso_cache__stats(proc_cache__dsos(x.pc), &ds);
	CHECK_U64(ds.loads - ds.evicted, 0);
	CHECK_U64(proc_cache__nr_paths(x.pc), 0);
	/* and come back, named as before, merged into the same stack */
	CHECK_INT(stacks__add_event(x.s, e, NULL, 0), 0);
	CHECK_INT(stacks__flush(x.s), 0);
	fold(x.prof);
	CHECK_MSG(strstr(folded, ";middle_frame 3\n") != NULL, "folded: %.300s", folded);
	CHECK_MSG(strchr(folded, '\n') == strrchr(folded, '\n'), "one line: %.300s", folded);
	fixture_free(&x);
}

TEST(raw_stacks_past_the_bound_should_reach_the_profile_early_and_whole)
{
	struct stacks_opts so = { .kind = PROFILE_CPU, .per_thread = 1, .agg_max = 2 };
	struct sfprof_event *e = middle_frame(SFPROF_EV_CPU, 1);
	struct stacks_stats st;
	struct fixture x;
	uint64_t total = 0;

	CHECK_INT(fixture_new(&x, &so), 0);
	/* five roots (tids), each twice: distinct raw stacks past the bound */
	for (int round = 0; round < 2; round++)
		for (uint32_t t = 1; t <= 5; t++) {
			e->tid = 100000 + t;
			CHECK_INT(stacks__add_event(x.s, e, NULL, 0), 0);
		}
	stacks__stats(x.s, &st);
	CHECK_MSG(st.agg_flushes >= 4, "flushes %" PRIu64, st.agg_flushes);
	CHECK_INT(stacks__flush(x.s), 0);
	fold(x.prof);
	/* nothing lost or doubled: five lines of 2 */
	for (const char *l = folded, *nl; (nl = strchr(l, '\n')); l = nl + 1) {
		CHECK_MSG(nl - l > 2 && !strncmp(nl - 2, " 2", 2), "line %.*s", (int)(nl - l), l);
		total += 2;
	}
	CHECK_U64(total, 10);
	fixture_free(&x);
}

TEST(comm_root_should_end_at_its_nul_whatever_follows_and_keep_16_chars)
{
	struct stacks_opts so = { .kind = PROFILE_CPU };
	struct sfprof_event *e = middle_frame(SFPROF_EV_CPU, 1);
	struct fixture x;
	struct stacks *s;

	CHECK_INT(fixture_new(&x, &so), 0);
	s = x.s;
	/* "ab" then bytes an older capture may hold after the NUL */
	memcpy(e->comm, "ab\0garbage_here", 16);
	CHECK_INT(stacks__add_event(s, e, NULL, 0), 0);
	memcpy(e->comm, "ab\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
	CHECK_INT(stacks__add_event(s, e, NULL, 0), 0);
	/* the same up to byte 10, then different */
	memcpy(e->comm, "abcdefghij\0xxxxx", 16);
	CHECK_INT(stacks__add_event(s, e, NULL, 0), 0);
	memcpy(e->comm, "abcdefghijk\0yyyy", 16);
	CHECK_INT(stacks__add_event(s, e, NULL, 0), 0);
	/* 16 characters, no NUL */
	memcpy(e->comm, "0123456789abcdef", 16);
	CHECK_INT(stacks__add_event(s, e, NULL, 0), 0);
	CHECK_INT(stacks__flush(s), 0);
	fold(x.prof);
	CHECK_MSG(strncmp(folded, "0123456789abcdef;", 17) == 0, "folded: %.400s", folded);
	CHECK_MSG(strstr(folded, "\nab;") && strstr(strstr(folded, "\nab;"), ";middle_frame 2\n"),
		  "folded: %.400s", folded);
	CHECK_MSG(strstr(folded, "\nabcdefghij;") != NULL, "folded: %.400s", folded);
	CHECK_MSG(strstr(folded, "\nabcdefghijk;") != NULL, "folded: %.400s", folded);
	CHECK_U64(profile__nr_stacks(x.prof), 4); /* distinct stacks handed over */
	CHECK_U64(profile__nr_events(x.prof), 5); /* with their sample counts */
	fixture_free(&x);
}

TEST(cpu_samples_should_carry_thread_labels_counts_and_runtime_mappings)
{
	struct stacks_opts so = { .kind = PROFILE_CPU };
	struct sfprof_event *e = middle_frame(SFPROF_EV_CPU, 1);
	const struct prof_stack *st;
	const struct prof_frame *fr;
	uint32_t tid = e->tid, nfr;
	struct fixture x;
	size_t nst;
	int leaf_ok = 0;

	CHECK_INT(fixture_new(&x, &so), 0);
	for (int i = 0; i < 3; i++)
		CHECK_INT(stacks__add_event(x.s, e, NULL, 0), 0);
	e->tid = tid + 1; /* another thread, the same stack */
	CHECK_INT(stacks__add_event(x.s, e, NULL, 0), 0);
	CHECK_INT(stacks__flush(x.s), 0);
	fold(x.prof);
	CHECK_MSG(strchr(folded, '\n') == strrchr(folded, '\n') && strstr(folded, ";middle_frame 4\n"),
		  "folded merges the threads: %.300s", folded);
	st = prof__stacks(x.prof, &nst);
	CHECK_U64(nst, 2);
	for (size_t i = 0; i < nst; i++) {
		CHECK(st[i].has_labels);
		CHECK_U64(st[i].pid, e->pid);
		CHECK_STR(prof__str(x.prof, st[i].thread), "test_stacks");
		CHECK_U64(st[i].count, st[i].tid == tid ? 3 : 1);
		CHECK(st[i].tid == tid || st[i].tid == tid + 1);
	}
	/* the leaf: its runtime PC in this binary's executable mapping */
	fr = prof__frames(x.prof, &nfr);
	for (uint32_t i = 0; i < nfr; i++) {
		if (strstr(prof__str(x.prof, fr[i].dso), "/libc.so"))
			CHECK_MSG(!fr[i].map_exec, "libc is a library: %s", prof__str(x.prof, fr[i].name));
		if (strcmp(prof__str(x.prof, fr[i].name), "middle_frame"))
			continue;
		CHECK_U64(fr[i].addr, e->regs.ip);
		CHECK_U64(fr[i].pid, e->pid);
		CHECK(fr[i].map_start <= e->regs.ip && e->regs.ip < fr[i].map_end);
		CHECK_U64(mapping_end(e->regs.ip), fr[i].map_end);
		CHECK(fr[i].map_exec); /* a program, not a library */
		leaf_ok = 1;
	}
	CHECK(leaf_ok);
	fixture_free(&x);
}

TEST(stack_cut_short_should_get_the_truncated_marker_at_its_root)
{
	struct stacks_opts so = { .kind = PROFILE_CPU };
	struct stacks_stats st;
	struct sfprof_event *e = middle_frame(SFPROF_EV_CPU, 1);

	e->stack_len = 0; /* the caller's return address is past the copy */
	CHECK_INT(run(e, &so, &st), 0);
	CHECK_MSG(strncmp(folded, "test_stacks;[truncated];", 24) == 0,
		  "folded: %.300s", folded);
	CHECK_U64(st.truncated, 1);
	CHECK_U64(st.unwind.stop[UNWIND_STOP_SNAPSHOT], 1);
}

TEST(futex_wait_should_be_weighted_in_microseconds)
{
	struct stacks_opts so = { .kind = PROFILE_FUTEX };
	struct stacks_stats st;
	struct sfprof_event *e = middle_frame(SFPROF_EV_FUTEX, 1500000);

	CHECK_INT(run(e, &so, &st), 0);
	CHECK_MSG(strstr(folded, ";middle_frame 1500\n") != NULL, "folded: %.300s", folded);
}

static int test_lock_word; /* a global lock's futex word */

TEST(futex_wait_should_carry_its_lock_as_a_label_without_by_lock)
{
	struct stacks_opts so = { .kind = PROFILE_FUTEX };
	struct sfprof_event *e = middle_frame(SFPROF_EV_FUTEX, 2000);
	const struct prof_stack *st;
	struct fixture x;
	size_t nst;

	e->futex.addr = (uint64_t)(uintptr_t)&test_lock_word;
	CHECK_INT(fixture_new(&x, &so), 0);
	CHECK_INT(stacks__add_event(x.s, e, NULL, 0), 0);
	fold(x.prof);
	CHECK_MSG(strncmp(folded, "test_stacks;", 12) == 0, "root stays the comm: %.200s", folded);
	st = prof__stacks(x.prof, &nst);
	CHECK_U64(nst, 1);
	CHECK_STR(prof__str(x.prof, st[0].lock), "test_lock_word");
	CHECK_U64(st[0].lock_addr, e->futex.addr);
	CHECK_U64(st[0].tid, e->tid);
	CHECK_U64(st[0].count, 1);
	CHECK_U64(st[0].weight, 2000);
	fixture_free(&x);
}

TEST(events_of_the_other_kind_should_be_skipped_and_counted)
{
	struct stacks_opts so = { .kind = PROFILE_FUTEX };
	struct stacks_stats st;
	struct sfprof_event *e = middle_frame(SFPROF_EV_CPU, 1);

	CHECK_INT(run(e, &so, &st), 0);
	CHECK_MSG(folded[0] == 0, "folded: %.200s", folded);
	CHECK_U64(st.events_skipped, 1);
}

TEST(per_thread_should_root_stacks_at_comm_pid_tid)
{
	struct stacks_opts so = { .kind = PROFILE_CPU, .per_thread = 1 };
	struct stacks_stats st;
	char want[64];
	struct sfprof_event *e = middle_frame(SFPROF_EV_CPU, 1);

	snprintf(want, sizeof(want), "test_stacks-%u/%u;", e->pid, e->tid);
	CHECK_INT(run(e, &so, &st), 0);
	CHECK_MSG(strncmp(folded, want, strlen(want)) == 0, "folded: %.200s", folded);
}

TEST(event_without_user_registers_should_be_marked_truncated)
{
	struct stacks_opts so = { .kind = PROFILE_CPU };
	struct stacks_stats st;
	struct sfprof_event *e = middle_frame(SFPROF_EV_CPU, 1);

	e->flags |= SFPROF_EVF_NO_USER_REGS;
	CHECK_INT(run(e, &so, &st), 0);
	CHECK_MSG(strcmp(folded, "test_stacks;[truncated] 1\n") == 0,
		  "folded: %.200s", folded);
	CHECK_U64(st.no_user_regs, 1);
	CHECK_U64(st.unwind.stop[UNWIND_STOP_NO_REGS], 1);
}

TEST(entry_symbols_should_match_with_or_without_a_version)
{
	CHECK(stacks__is_entry_symbol("_start"));
	CHECK(stacks__is_entry_symbol("__libc_start_main@@GLIBC_2.34"));
	CHECK(stacks__is_entry_symbol("start_thread"));
	CHECK(stacks__is_entry_symbol("clone3"));
	CHECK(!stacks__is_entry_symbol("main"));
	CHECK(!stacks__is_entry_symbol("_start_x"));
	CHECK(!stacks__is_entry_symbol(NULL));
}

TEST_MAIN()

// SPDX-License-Identifier: MIT
/*
 * The one pipeline (session/pipeline.c): which runtime sessions a run
 * makes in each mode, which session names each runtime's frames (live its
 * own, a replay through names_from), the stacks options of each event
 * kind, and that release frees every session. Two fake runtimes,
 * registered only here: "fksrc", and "fkuser", named offline from fksrc's
 * session as Ruby and PHP are from CPython's.
 */
#include <errno.h>
#include <string.h>

#include "cli/options.h"
#include "model/proc.h"
#include "profile/profile.h"
#include "runtimes/runtime.h"
#include "session/pipeline.h"
#include "stacks/stacks.h"
#include "testlib.h"

TEST_MAIN()

/* what each fake runtime saw: [0] fksrc, [1] fkuser */
static struct {
	int made, made_live, freed;
	int namers;   /* session_namer() calls */
	int disabled; /* enabled() says no */
} fk[2];
static int fk_ids[2]; /* each session's identity: &fk_ids[i] */

static int fk_name(void *ctx, uint32_t pid, uint64_t code, int32_t instr, const char **qualname,
		   const char **file, uint32_t *line, uint32_t *firstlineno)
{
	(void)ctx, (void)pid, (void)code, (void)instr, (void)qualname;
	(void)file, (void)line, (void)firstlineno;
	return -ENOENT;
}

#define FK_OPS(i, nm, from)                                                    \
	static bool fk_enabled##i(const struct sfprof_opts *o)                 \
	{                                                                      \
		(void)o;                                                       \
		return !fk[i].disabled;                                        \
	}                                                                      \
	static int fk_new##i(int live, void **out)                             \
	{                                                                      \
		fk[i].made++;                                                  \
		fk[i].made_live += live;                                       \
		*out = &fk_ids[i];                                             \
		return 0;                                                      \
	}                                                                      \
	static void fk_free##i(void *ss)                                       \
	{                                                                      \
		fk[i].freed += ss == &fk_ids[i];                               \
	}                                                                      \
	static runtime_name_fn fk_namer##i(void *ss, void **ctx)               \
	{                                                                      \
		*ctx = ss;                                                     \
		fk[i].namers++;                                                \
		return fk_name;                                                \
	}                                                                      \
	static int fk_is_eval##i(const char *name)                             \
	{                                                                      \
		return !strcmp(name, nm "_eval");                              \
	}                                                                      \
	static const struct runtime_ops fk_ops##i = {                          \
		.name = nm,                                                    \
		.enabled = fk_enabled##i,                                      \
		.session_new = fk_new##i,                                      \
		.session_free = fk_free##i,                                    \
		.session_namer = fk_namer##i,                                  \
		.names_from = from,                                            \
		.is_eval = fk_is_eval##i,                                      \
	};

FK_OPS(0, "fksrc", NULL)
FK_OPS(1, "fkuser", "fksrc")

/* The built-in runtimes stay out: no Python, Ruby or PHP, and no Go
 * session beyond what it makes of its own (not counted here). */
static struct sfprof_opts fk_opts(int cmd)
{
	struct sfprof_opts o;

	memset(&o, 0, sizeof(o));
	o.cmd = cmd;
	o.event = SFPROF_SEL_CPU;
	o.freq = 99;
	o.quiet = 1;
	o.no_python = o.no_ruby = o.no_php = 1;
	return o;
}

static void fk_register(void)
{
	memset(fk, 0, sizeof(fk));
	CHECK(runtime__register(&fk_ops0) >= 0);
	CHECK(runtime__register(&fk_ops1) >= 0);
}

/* Make event 0's profile and stacks in p, then free them. */
static int fk_make(struct pipeline *p)
{
	struct profile_meta meta = { .kind = PROFILE_CPU, .hz = 99 };
	struct profile *prof = NULL;
	struct stacks *stk = NULL;
	int err = pipeline__make(p, 0, &meta, &prof, &stk);

	if (!err && (!prof || !stk))
		err = -EFAULT;
	stacks__free(stk);
	profile__free(prof);
	return err;
}

TEST(pipeline_live_gives_each_runtime_its_own_session_and_namer)
{
	struct proc_cache_opts po = { 0 };
	struct proc_cache *pc = proc_cache__new(&po);
	struct sfprof_opts o = fk_opts(SFPROF_CMD_LIVE);
	struct ksyms ks = { 0 };
	struct pipeline p;

	CHECK(pc);
	fk_register();
	CHECK_INT(pipeline__mode(&o), PIPELINE_LIVE);
	CHECK_INT(pipeline__init(&p, PIPELINE_LIVE, &o, 99, pc, &ks), 0);
	CHECK_INT(fk[0].made, 1);
	CHECK_INT(fk[0].made_live, 1);
	CHECK_INT(fk[1].made, 1); /* live: its own, read from the target */
	CHECK_INT(fk[1].made_live, 1);
	CHECK_INT(fk_make(&p), 0);
	CHECK_INT(fk[0].namers, 1);
	CHECK_INT(fk[1].namers, 1);
	pipeline__release(&p);
	CHECK_INT(fk[0].freed, 1);
	CHECK_INT(fk[1].freed, 1);
	proc_cache__free(pc);
	runtime__unregister_all();
}

TEST(pipeline_replay_names_a_runtime_through_its_names_from_session)
{
	struct proc_cache_opts po = { .offline = 1 };
	struct proc_cache *pc = proc_cache__new(&po);
	struct sfprof_opts o = fk_opts(SFPROF_CMD_REPORT);
	struct ksyms ks = { .loaded = 1 };
	struct pipeline p;

	CHECK(pc);
	fk_register();
	CHECK_INT(pipeline__mode(&o), PIPELINE_REPLAY);
	CHECK_INT(pipeline__init(&p, PIPELINE_REPLAY, &o, 99, pc, &ks), 0);
	/* one session, fksrc's, offline: fkuser's frames are named from it */
	CHECK_INT(fk[0].made, 1);
	CHECK_INT(fk[0].made_live, 0);
	CHECK_INT(fk[1].made, 0);
	CHECK_INT(fk_make(&p), 0);
	CHECK_INT(fk[0].namers, 2); /* for fksrc, and for fkuser */
	CHECK_INT(fk[1].namers, 0);
	pipeline__release(&p);
	CHECK_INT(fk[0].freed, 1);
	proc_cache__free(pc);
	runtime__unregister_all();
}

TEST(pipeline_disabled_runtime_gets_no_session_and_no_namer)
{
	struct proc_cache_opts po = { .offline = 1 };
	struct proc_cache *pc = proc_cache__new(&po);
	struct sfprof_opts o = fk_opts(SFPROF_CMD_REPORT);
	struct ksyms ks = { .loaded = 1 };
	struct pipeline p;

	CHECK(pc);
	fk_register();
	fk[1].disabled = 1; /* --no-fkuser: its source is still made for fksrc */
	CHECK_INT(pipeline__init(&p, PIPELINE_REPLAY, &o, 99, pc, &ks), 0);
	CHECK_INT(fk[0].made, 1);
	CHECK_INT(fk_make(&p), 0);
	CHECK_INT(fk[0].namers, 1); /* fksrc's own only */
	pipeline__release(&p);
	memset(fk, 0, sizeof(fk));
	fk[0].disabled = fk[1].disabled = 1;
	CHECK_INT(pipeline__init(&p, PIPELINE_REPLAY, &o, 99, pc, &ks), 0);
	CHECK_INT(fk[0].made + fk[1].made, 0);
	CHECK_INT(fk_make(&p), 0);
	CHECK_INT(fk[0].namers + fk[1].namers, 0);
	pipeline__release(&p);
	proc_cache__free(pc);
	runtime__unregister_all();
}

TEST(pipeline_stacks_options_follow_the_event_and_the_mode)
{
	struct sfprof_opts o = fk_opts(SFPROF_CMD_LIVE);
	int wall = __builtin_ctz(SFPROF_SEL_WALL), cpu = __builtin_ctz(SFPROF_SEL_CPU);
	struct ksyms ks = { 0 };
	struct stacks_opts so;
	struct pipeline p;
	uint32_t hs, v8;

	o.no_python = o.no_ruby = o.no_php = 1;
	CHECK_INT(pipeline__init(&p, PIPELINE_LIVE, &o, 250, NULL, &ks), 0);
	so = pipeline__stacks_opts(&p, cpu);
	CHECK_INT(so.kind, PROFILE_CPU);
	CHECK_INT(so.per_thread, 0);
	CHECK_U64(so.period_ns, 4000000); /* 250 Hz */
	CHECK_INT(so.perf_maps, 1);
	CHECK_INT(so.jit_record, 0);
	/* wall is per thread, unless --per-process */
	CHECK_INT(pipeline__stacks_opts(&p, wall).per_thread, 1);
	p.o.per_process = 1;
	CHECK_INT(pipeline__stacks_opts(&p, wall).per_thread, 0);
	CHECK_INT(pipeline__stacks_opts(&p, wall).per_process, 1);
	p.o.per_thread = 1;
	CHECK_INT(pipeline__stacks_opts(&p, cpu).per_thread, 1);
	pipeline__release(&p);

	/* live, every VM runtime reads its VM; --no-jvm turns HotSpot's off
	 * only, --no-v8 V8's only (--no-python and the like their own) */
	hs = 1u << runtime__find("hotspot");
	v8 = 1u << runtime__find("v8");
	CHECK_INT(pipeline__stacks_opts(&p, cpu).runtimes_off & (hs | v8), 0);
	p.o.no_jvm = 1;
	CHECK_INT(pipeline__stacks_opts(&p, cpu).runtimes_off & (hs | v8), hs);
	p.o.no_jvm = 0;
	p.o.no_v8 = 1;
	CHECK_INT(pipeline__stacks_opts(&p, cpu).runtimes_off & (hs | v8), v8);
	p.o.no_jvm = 1;
	CHECK_INT(pipeline__stacks_opts(&p, cpu).runtimes_off & (hs | v8), hs | v8);
	/* (a runtime without enabled() is never off) */
	CHECK_INT(pipeline__stacks_opts(&p, cpu).runtimes_off &
			  (1u << runtime__find("python-perf-trampolines")),
		  0);
	pipeline__release(&p);

	/* record resolves JIT names for the capture, reads no perf map */
	o = fk_opts(SFPROF_CMD_RECORD);
	CHECK_INT(pipeline__mode(&o), PIPELINE_RECORD);
	CHECK_INT(pipeline__init(&p, PIPELINE_RECORD, &o, 99, NULL, &ks), 0);
	so = pipeline__stacks_opts(&p, cpu);
	CHECK_INT(so.perf_maps, 0);
	CHECK_INT(so.jit_record, 1);
	pipeline__release(&p);

	/* a replay reads neither the machine's maps nor a VM's memory */
	o = fk_opts(SFPROF_CMD_REPORT);
	o.no_v8 = 0;
	CHECK_INT(pipeline__init(&p, PIPELINE_REPLAY, &o, 0, NULL, &ks), 0);
	so = pipeline__stacks_opts(&p, cpu);
	CHECK_INT(so.perf_maps, 0);
	CHECK_INT(so.jit_record, 0);
	CHECK_U64(so.period_ns, 0); /* no rate known */
	pipeline__release(&p);
}

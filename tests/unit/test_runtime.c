// SPDX-License-Identifier: MIT
/*
 * A runtime plugs in through its ops table alone (runtimes/runtime.h):
 * "fakert", a tiny fake interpreter registered only here, keeps its
 * function table in a section of its own (.fakert: "NAME VADDR SIZE
 * CFA" lines, written into a stripped binary after the link). Registered,
 * it names the binary's functions (dso__symbolize: "fakert:NAME", its
 * SYMSRC bit) and gives their rows before the binary's own (dso__find_row:
 * its CFA offset); its per-binary state is made once per binary that is
 * its own, never for another, and released with the cache. Not
 * registered, the same binary is named and unwound as before. Per
 * process: a capture's record of its own type reaches it (report's
 * stacks__runtime_record()), another type is not its, and its state is
 * attached once per stacks and detached with it. Per run: its session
 * is made by the live sink when enabled() says so (never when not),
 * follows the run (targets, events, forks and exits, execs, reaps),
 * names its frames (its namer reaches each stacks pipeline)
 * and is freed with the sink: no call of the sink names it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/dso.h"
#include "model/elfread.h"
#include "cli/options.h"
#include "model/proc.h"
#include "session/report.h"
#include "capture/sideband.h"
#include "profile/profile.h"
#include "runtimes/runtime.h"
#include "unwind/sframe.h"
#include "stacks/stacks.h"
#include "symbols/symbolize.h"
#include "testlib.h"

#define FAKERT_SYMSRC (1u << 15)
#define FAKERT_MAX 8

static const char interp_c[] =
	"__attribute__((noinline)) int fakert_step(int x) { return x * 7 + 3; }\n"
	"__attribute__((noinline)) int fakert_loop(int n)\n"
	"{ int a = 0; for (int i = 0; i < n; i++) a += fakert_step(i); return a; }\n"
	"int main(int argc, char **argv) { (void)argv; return fakert_loop(argc) == 42; }\n";

static const char *dir = "";

/* interp: the fake interpreter, stripped, its table in .fakert; plain: the
 * same program built apart (another build-id: not the same dso), without
 * the section. */
static int build_fixtures(const char *d)
{
	dir = d;
	if (test_write_file(dir, "interp.c", interp_c))
		return -1;
	return test_sh("cd '%s' && gcc -O1 -o full interp.c && "
		       "nm full | awk '$3 == \"fakert_step\" || $3 == \"fakert_loop\" "
		       "{ print $3, \"0x\" $1 }' > addrs && "
		       "nm -S full | awk '$4 == \"fakert_step\" || $4 == \"fakert_loop\" "
		       "{ print \"0x\" $2 }' > sizes && "
		       "paste -d' ' addrs sizes | awk '{ print $1, $2, $3, 24 }' > table && "
		       "test $(wc -l < table) = 2 && "
		       "gcc -O1 -Wl,--build-id=0x0123456789abcdef -o plain interp.c && strip -s plain && "
		       "objcopy --add-section .fakert=table full interp && strip -s interp",
		       dir);
}

#define NEED_FIXTURES() NEED_FIXTURES_OF("runtime", build_fixtures)

struct fake_fn {
	char name[32];
	uint64_t start, size;
	int cfa;
};

struct fake_bin {
	struct fake_fn fn[FAKERT_MAX];
	int n;
};

static int probes, bins, releases;

/* The table of e's .fakert section: how many functions, 0 without one. */
static int fake_parse(const struct elfread *e, struct fake_bin *b)
{
	struct elfread_section s;
	char text[1024], *line, *save;

	b->n = 0;
	if (elfread__section(e, ".fakert", &s) || !s.data || !s.size || s.size >= sizeof(text))
		return 0;
	memcpy(text, s.data, s.size);
	text[s.size] = 0;
	for (line = strtok_r(text, "\n", &save); line && b->n < FAKERT_MAX;
	     line = strtok_r(NULL, "\n", &save)) {
		struct fake_fn *f = &b->fn[b->n];
		unsigned long long start, size;

		if (sscanf(line, "%31s %llx %llx %d", f->name, &start, &size, &f->cfa) != 4)
			continue;
		f->start = start;
		f->size = size;
		b->n++;
	}
	return b->n;
}

static void *fake_probe(struct dso *d)
{
	struct fake_bin *b = calloc(1, sizeof(*b));

	probes++;
	if (b && !fake_parse(dso__elf(d), b)) {
		free(b);
		return NULL;
	}
	bins += b != NULL;
	return b;
}

static void fake_release(void *bin)
{
	releases++;
	free(bin);
}

static int fake_special_row(void *bin, uint64_t vaddr, struct sframe_row *row,
			    struct sframe_func *fn)
{
	struct fake_bin *b = bin;

	for (int i = 0; i < b->n; i++) {
		if (vaddr < b->fn[i].start || vaddr >= b->fn[i].start + b->fn[i].size)
			continue;
		memset(row, 0, sizeof(*row));
		row->cfa = sframe_rule__make(SFRAME_RULE_REG, 7 /* rsp */, b->fn[i].cfa);
		row->ra = sframe_rule__make(SFRAME_RULE_CFA_DEREF, 0, -8);
		if (fn) {
			memset(fn, 0, sizeof(*fn));
			fn->start = b->fn[i].start;
			fn->size = (uint32_t)b->fn[i].size;
			fn->num_rows = 1;
		}
		return 1;
	}
	return 0;
}

static int fake_add_symbols(struct symtab *s, const struct elfread *e, int have_full)
{
	struct fake_bin b;
	char name[64];

	(void)have_full;
	fake_parse(e, &b);
	for (int i = 0; i < b.n; i++) {
		snprintf(name, sizeof(name), "fakert:%s", b.fn[i].name);
		if (symtab__add(s, name, b.fn[i].start, b.fn[i].size, 0, 1 /* STB_GLOBAL */))
			return -ENOMEM;
	}
	return b.n;
}

#define FAKERT_REC 77

struct fake_state {
	uint32_t pid;
	char text[16];
};

static int attaches, detaches;

static void *fake_attach(void)
{
	attaches++;
	return calloc(1, sizeof(struct fake_state));
}

static void fake_detach(void *state)
{
	detaches++;
	free(state);
}

static int fake_on_capture_record(void *state, unsigned type, uint32_t pid,
				  const uint8_t *data, size_t len)
{
	struct fake_state *st = state;

	if (type != FAKERT_REC)
		return -ENOENT;
	if (len >= sizeof(st->text))
		return -EINVAL;
	st->pid = pid;
	memcpy(st->text, data, len);
	st->text[len] = 0;
	return 0;
}

static struct fake_state *last_state;

static void *fake_attach_seen(void)
{
	return last_state = fake_attach();
}

static const struct runtime_ops fakert_ops = {
	.name = "fakert",
	.symsrc = FAKERT_SYMSRC,
	.probe = fake_probe,
	.release = fake_release,
	.special_row = fake_special_row,
	.add_symbols = fake_add_symbols,
	.attach = fake_attach_seen,
	.detach = fake_detach,
	.on_capture_record = fake_on_capture_record,
};

static struct dso *open_fix(struct dso_cache *c, const char *name)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return dso_cache__open_path(c, p);
}

/* The table's line for name: its vaddr and CFA offset. */
static int table_of(const char *name, uint64_t *start, int *cfa)
{
	struct fake_bin b;
	struct dso_cache *c = dso_cache__new(NULL);
	struct dso *d = c ? open_fix(c, "interp") : NULL;
	int rc = -ENOENT;

	if (d && fake_parse(dso__elf(d), &b)) {
		for (int i = 0; i < b.n; i++) {
			if (!strcmp(b.fn[i].name, name)) {
				*start = b.fn[i].start;
				*cfa = b.fn[i].cfa;
				rc = 0;
			}
		}
	}
	dso_cache__free(c);
	return rc;
}

TEST(runtime_unregistered_changes_nothing)
{
	struct dso_cache *c;
	struct dso *d;
	struct sframe_row row;
	const char *name = NULL;
	uint64_t start, off;
	int cfa;

	NEED_FIXTURES();
	CHECK_INT(table_of("fakert_step", &start, &cfa), 0);
	c = dso_cache__new(NULL);
	CHECK(c && (d = open_fix(c, "interp")));
	/* stripped: no name of its own there */
	CHECK_MSG(dso__symbolize(d, start + 1, &name, NULL, &off) != 0 || strncmp(name, "fakert:", 7),
		  "named %s without the runtime", name);
	/* its row is the binary's own (.eh_frame), not the table's */
	if (!dso__find_row(d, start + 1, &row, NULL))
		CHECK(row.cfa.off != cfa);
	dso_cache__free(c);
}

TEST(runtime_names_and_unwinds_through_its_table)
{
	struct dso_cache *c;
	struct dso *d, *plain;
	struct sframe_row row;
	struct sframe_func fn;
	const char *name = NULL;
	uint64_t step, loop, off;
	int cfa_step, cfa_loop;

	NEED_FIXTURES();
	CHECK_INT(table_of("fakert_step", &step, &cfa_step), 0);
	CHECK_INT(table_of("fakert_loop", &loop, &cfa_loop), 0);
	probes = bins = releases = 0;
	CHECK(runtime__register(&fakert_ops) >= 0);
	CHECK_INT(runtime__register(&fakert_ops), -EEXIST);
	c = dso_cache__new(NULL);
	CHECK(c && (d = open_fix(c, "interp")) && (plain = open_fix(c, "plain")));

	CHECK_INT(dso__symbolize(d, step + 1, &name, NULL, &off), 0);
	CHECK_STR(name, "fakert:fakert_step");
	CHECK_INT(off, 1);
	CHECK_INT(dso__symbolize(d, loop, &name, NULL, &off), 0);
	CHECK_STR(name, "fakert:fakert_loop");
	CHECK(symtab__sources(dso__symtab(d)) & FAKERT_SYMSRC);

	memset(&fn, 0, sizeof(fn));
	CHECK_INT(dso__find_row(d, step + 1, &row, &fn), 0);
	CHECK_INT(row.cfa.off, cfa_step);
	CHECK_U64(fn.start, step);
	CHECK_INT(dso__find_row(d, loop + 2, &row, NULL), 0);
	CHECK_INT(row.cfa.off, cfa_loop);
	CHECK_INT(bins, 1); /* one state for the binary, made once */

	/* another binary is asked once and is not the runtime's */
	CHECK(!dso__symbolize(plain, step + 1, &name, NULL, &off) ? strncmp(name, "fakert:", 7) != 0 : 1);
	dso__find_row(plain, step + 1, &row, NULL);
	dso__find_row(plain, step + 2, &row, NULL);
	CHECK_INT(probes, 2);
	CHECK_INT(bins, 1);
	CHECK(!(symtab__sources(dso__symtab(plain)) & FAKERT_SYMSRC));

	dso_cache__free(c);
	CHECK_INT(releases, 1);
	runtime__unregister_all();
	CHECK(runtime__count() >= 1); /* the built-in ones stay */
}

TEST(runtime_gets_its_capture_records)
{
	struct proc_cache_opts po = { .quiet = 1 };
	struct profile_meta pm = { .kind = PROFILE_CPU, .hz = 99 };
	struct stacks_opts so = { .kind = PROFILE_CPU };
	struct proc_cache *pc = proc_cache__new(&po);
	struct profile *prof = profile__new(&pm);
	struct stacks *s = pc && prof ? stacks__new(pc, prof, &so) : NULL;

	CHECK(s);
	attaches = detaches = 0;
	last_state = NULL;
	CHECK_INT(stacks__runtime_record(s, FAKERT_REC, 42, (const uint8_t *)"frame", 5), -ENOENT);
	CHECK_INT(attaches, 0);
	CHECK(runtime__register(&fakert_ops) >= 0);
	CHECK_INT(stacks__runtime_record(s, FAKERT_REC, 42, (const uint8_t *)"frame", 5), 0);
	CHECK(last_state && last_state->pid == 42);
	CHECK_STR(last_state->text, "frame");
	CHECK_INT(stacks__runtime_record(s, FAKERT_REC, 43, (const uint8_t *)"a too long record", 17),
		  -EINVAL);
	/* a type of no runtime */
	CHECK_INT(stacks__runtime_record(s, 12345, 42, (const uint8_t *)"x", 1), -ENOENT);
	CHECK_INT(attaches, 1);
	stacks__free(s);
	CHECK_INT(detaches, 1);
	profile__free(prof);
	proc_cache__free(pc);
	runtime__unregister_all();
}

TEST(runtime_turned_off_is_never_attached_nor_asked)
{
	struct proc_cache_opts po = { .quiet = 1 };
	struct profile_meta pm = { .kind = PROFILE_CPU, .hz = 99 };
	struct stacks_opts so = { .kind = PROFILE_CPU };
	struct proc_cache *pc = proc_cache__new(&po);
	struct profile *prof = profile__new(&pm);
	struct stacks *s = NULL;
	int i;

	CHECK(pc && prof);
	attaches = detaches = 0;
	last_state = NULL;
	CHECK((i = runtime__register(&fakert_ops)) >= 0);
	/* (--no-X: its bit; the others stay on) */
	so.runtimes_off = 1u << i;
	CHECK((s = stacks__new(pc, prof, &so)));
	CHECK_INT(stacks__runtime_record(s, FAKERT_REC, 42, (const uint8_t *)"frame", 5), -ENOENT);
	CHECK_INT(attaches, 0);
	CHECK(last_state == NULL);
	stacks__free(s);
	/* the same runtime on: asked */
	so.runtimes_off = ~(1u << i);
	CHECK((s = stacks__new(pc, prof, &so)));
	CHECK_INT(stacks__runtime_record(s, FAKERT_REC, 42, (const uint8_t *)"frame", 5), 0);
	CHECK_INT(attaches, 1);
	stacks__free(s);
	CHECK_INT(detaches, 1);
	profile__free(prof);
	proc_cache__free(pc);
	runtime__unregister_all();
}

/* The fake's session: what the run told it. */
static struct fakesess {
	int made, freed, attached, events, tasks, execs, reaps, namers;
	uint32_t last_pid;
	bool enabled;
} fs;

static bool fs_enabled(const struct sfprof_opts *o)
{
	(void)o;
	return fs.enabled;
}

static int fs_new(int live, void **out)
{
	fs.made += live;
	*out = live ? &fs : NULL;
	return 0;
}

static void fs_free(void *ss)
{
	fs.freed += ss == &fs;
}

static void fs_attach(void *ss, uint32_t pid)
{
	(void)ss;
	fs.attached++;
	fs.last_pid = pid;
}

static void fs_event(void *ss, const struct sfprof_event *e)
{
	(void)ss;
	fs.events++;
	fs.last_pid = e->pid;
}

static void fs_task(void *ss, const struct sfprof_event *e)
{
	(void)ss;
	fs.tasks += e->kind == SFPROF_EV_FORK || e->kind == SFPROF_EV_EXIT;
}

static void fs_exec(void *ss, uint32_t pid)
{
	(void)ss;
	fs.execs++;
	fs.last_pid = pid;
}

static void fs_reap(void *ss, uint64_t before)
{
	(void)ss;
	fs.reaps += before > 0;
}

static int fs_name(void *ctx, uint32_t pid, uint64_t code, int32_t instr, const char **qualname,
		   const char **file, uint32_t *line, uint32_t *firstlineno)
{
	(void)ctx, (void)pid, (void)code, (void)instr, (void)qualname;
	(void)file, (void)line, (void)firstlineno;
	return -ENOENT;
}

static runtime_name_fn fs_namer(void *ss, void **ctx)
{
	*ctx = ss;
	fs.namers++;
	return fs_name;
}

static const struct runtime_ops fakesess_ops = {
	.name = "fakesess",
	.enabled = fs_enabled,
	.session_new = fs_new,
	.session_free = fs_free,
	.session_attach = fs_attach,
	.session_event = fs_event,
	.session_task = fs_task,
	.session_exec = fs_exec,
	.session_reap = fs_reap,
	.session_namer = fs_namer,
};

/* A live run (no Python, Ruby or PHP of its own) with fakesess registered. */
static struct report_sink *fs_sink(void)
{
	struct sfprof_opts o;

	memset(&o, 0, sizeof(o));
	o.cmd = SFPROF_CMD_LIVE;
	o.event = SFPROF_SEL_CPU;
	o.freq = 99;
	o.quiet = 1;
	o.no_python = o.no_ruby = o.no_php = 1;
	return report_sink__new(&o);
}

TEST(runtime_session_follows_the_run_through_its_table)
{
	struct sideband_rec exec = { .kind = SIDEBAND_EXEC, .ts_ns = 1, .path = "fake" };
	struct sfprof_event e;
	struct report_sink *s;
	pid_t me = getpid();

	memset(&fs, 0, sizeof(fs));
	CHECK(runtime__register(&fakesess_ops) >= 0);
	/* not enabled: no session, nothing reaches it */
	s = fs_sink();
	CHECK(s);
	report_sink__add_targets(s, &me, 1);
	report_sink__free(s);
	CHECK_INT(fs.made, 0);
	CHECK_INT(fs.attached, 0);

	fs.enabled = true;
	s = fs_sink();
	CHECK(s);
	CHECK_INT(fs.made, 1);
	CHECK_INT(report_sink__add_targets(s, &me, 1), 0);
	CHECK_INT(fs.attached, 1);
	CHECK_INT(fs.last_pid, (uint32_t)me);
	exec.pid = exec.tid = (uint32_t)me;
	CHECK_INT(report_sink__sideband(s, &exec), 0);
	CHECK_INT(fs.execs, 1);

	memset(&e, 0, sizeof(e));
	e.kind = SFPROF_EV_CPU;
	e.pid = e.tid = (uint32_t)me;
	e.ts_ns = 2;
	e.kstack_id = -1;
	CHECK_INT(report_sink__event(s, &e, sizeof(e)), 0);
	CHECK_INT(fs.events, 1);
	CHECK_INT(fs.namers, 1); /* the event's pipeline got its namer */
	e.kind = SFPROF_EV_FORK;
	e.fork.ppid = (uint32_t)me;
	e.pid = (uint32_t)me + 1;
	report_sink__event(s, &e, sizeof(e));
	e.kind = SFPROF_EV_EXIT;
	report_sink__event(s, &e, sizeof(e));
	CHECK_INT(fs.tasks, 2);
	CHECK_INT(fs.events, 1); /* a FORK or EXIT is a task, not a sample */
	report_sink__drained(s, 10ull * 1000000000);
	CHECK_INT(fs.reaps, 1);
	report_sink__free(s);
	CHECK_INT(fs.freed, 1);
	runtime__unregister_all();
}

TEST_MAIN()

// SPDX-License-Identifier: MIT
/*
 * The live and record sink (src/session/report.h): every event of the run,
 * in order with the address-space changes, through the unwinder's stacks
 * pipeline into a profile, or into a capture file. --interval's cut of
 * the profiles by time is report_interval.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "model/buildid_cache.h"
#include "model/elfread.h"
#include "output/output.h"
#include "output/progress.h"
#include "runtimes/runtime.h"
#include "session/report_sink_int.h"
#include "util.h"

/* How long after its EXIT a process's model is kept for events still in
 * flight (they are microseconds behind; a drain runs every 25 ms). */
#define REPORT_SINK_REAP_AFTER_NS (200 * 1000000ull)

/* argv joined by spaces into buf (truncated to fit); returns buf. */
static const char *join_argv(char *buf, size_t size, char **argv, int argc)
{
	buf[0] = 0;
	for (int i = 0; i < argc; i++) {
		size_t l = strlen(buf);

		snprintf(buf + l, size - l, "%s%s", i ? " " : "", argv[i]);
	}
	return buf;
}

/* live and record both unwind every event: what a complete walk learns
 * about a thread's frame top goes back to the capture */
static void report_sink__thread_top(void *ctx, uint32_t tid, uint64_t sp)
{
	capture__set_thread_top(ctx, tid, sp);
}

/* stacks_pytramp_fn: a runtime's record the capture carries (a CPython
 * trampoline template its own PYTRAMP record, the others RUNTIME ones) */
static int sink_pytramp(void *ctx, unsigned type, uint32_t pid, const uint8_t *code, size_t len)
{
	struct capfile_writer *w = ((struct report_sink *)ctx)->w;

	if (type == RUNTIME_REC_PYTRAMP)
		return capfile_writer__pytramp(w, pid, code, len);
	return capfile_writer__runtime(w, type, pid, code, len);
}

/* A profile of event `idx` for meta and its stacks pipeline; 0 or -ENOMEM. */
int report_sink__pipeline(struct report_sink *s, int idx, const struct profile_meta *meta,
			  struct profile **prof, struct stacks **stacks)
{
	return pipeline__make(&s->pl, idx, meta, prof, stacks);
}

/*
 * From the attach to now (what was sampled, not the BPF load before it),
 * and never more than -d: pprof divides by it for utilisation.
 */
static uint64_t profiled_window(const struct report_sink *s, const struct sfprof_opts *o)
{
	uint64_t now = util__now_ns(), from = s->attached_mono ? s->attached_mono : s->start_mono;
	uint64_t d = now > from ? now - from : 0;

	return o->duration_ns && d > o->duration_ns ? o->duration_ns : d;
}

/* The end-of-run lines: one per profile written (progress__summary). */
static void sink_summary(struct report_sink *s, const struct sfprof_opts *o,
			 const struct capture_stats *st)
{
	uint64_t lost = st ? capture_stats__lost(st) : 0;
	char path[4096];

	if (o->quiet)
		return;
	if (s->record) {
		uint64_t n = st ? st->events_cpu + st->events_futex + st->events_offcpu : 0;

		progress__summary(stderr, 0, o->output, n, "events", lost);
		return;
	}
	for (int i = 0; i < SINK_EVENTS; i++) {
		const char *out = o->output;

		if (!(o->event & (1u << i)) || !s->profs[i])
			continue;
		if ((o->event & (o->event - 1)) &&
		    report__event_path(path, sizeof(path), o->output, report__event_name(1u << i)) >= 0)
			out = path;
		progress__summary(stderr, 0, out, profile__nr_events(s->profs[i]),
				  report__counted(profile__meta(s->profs[i])->kind), lost);
		lost = 0; /* the run's: warned once */
	}
}

/* The profile and stacks of event `idx`, made at its first record. */
struct stacks *report_sink__stacks(struct report_sink *s, int idx,
				   const struct sfprof_event *e)
{
	char comm[SFPROF_COMM_LEN + 1], cmdline[512], kbid[2 * ELFREAD_BUILD_ID_MAX + 1];
	struct profile_meta meta = {
		.kind = report__profile_kind(1u << idx),
		.hz = s->o.freq,
		.start_unix_ns = util__clock_ns(CLOCK_REALTIME),
	};

	if (s->stackss[idx])
		return s->stackss[idx];
	/* the process's name, as report of the capture says, not the
	 * first sampled thread's (worker-1) */
	report__target_comm(&s->o, comm, sizeof(comm));
	if (!comm[0])
		snprintf(comm, sizeof(comm), "%.*s", SFPROF_COMM_LEN, e->comm);
	meta.target_pid = s->o.nr_pids == 1 || s->o.command ? e->pid : 0;
	/* pprof's Mapping 1: the first target's executable */
	meta.main_pid = s->o.nr_pids ? (uint32_t)s->o.pids[0] : meta.target_pid;
	meta.target_comm = comm;
	if (!ksyms__running_build_id(kbid, sizeof(kbid)))
		meta.kernel_build_id = kbid;
	/* arguments leave the machine only when asked: they hold secrets */
	if (s->o.command && s->o.keep_cmdline)
		meta.target_cmdline = join_argv(cmdline, sizeof(cmdline),
						s->o.command, s->o.command_argc);
	else if (s->o.command)
		meta.target_cmdline = s->o.command[0];
	if (s->o.all || s->o.cgroup || s->o.nr_pids > 1)
		meta.target_comm = NULL;
	if (s->o.interval_ns)
		meta.start_unix_ns = (uint64_t)((int64_t)s->iv_start + s->unix_minus_mono);
	if (report_sink__pipeline(s, idx, &meta, &s->profs[idx], &s->stackss[idx]))
		return NULL;
	return s->stackss[idx];
}

/*
 * record: every change the live model applies goes into the capture in
 * the order applied, between the events, so report rebuilds each process
 * as it was at each event.
 */
static void record_change(void *ctx, uint32_t what, uint32_t pid, uint32_t ppid,
			  uint64_t ts, const struct proc_mapping_rec *m)
{
	struct report_sink *s = ctx;
	int err;

	if (!s->w || s->werr)
		return;
	if (what == PROC_CHANGE_MAPPING) {
		err = capfile_writer__mapping(s->w, pid, ts, m);
		/* a binary gone from its path is copied now, while mapped */
		buildid_keeper__mapping(s->keeper, pid, m);
	} else
		err = capfile_writer__task(s->w, what, pid, ppid, ts);
	if (err && err != -EINVAL)
		s->werr = err;
}

struct report_sink *report_sink__new(const struct sfprof_opts *o)
{
	struct report_sink *s = calloc(1, sizeof(*s));
	/* a process that stays up (--interval, the agent) keeps what it
	 * reads of big DWARF in the page cache, not in its own memory */
	struct proc_cache_opts po = { .no_demangle = o->no_demangle,
				      .full_names = o->full_names,
				      .lean_dwarf = o->interval_ns != 0 };

	if (!s)
		return NULL;
	s->create_procs = o->all;
	s->o = *o;
	s->record = o->cmd == SFPROF_CMD_RECORD;
	s->start_mono = util__now_ns();
	s->unix_minus_mono = (int64_t)util__clock_ns(CLOCK_REALTIME) - (int64_t)s->start_mono;
	/* --interval takes one event (the agent several: all are cut) */
	s->iv_idx = o->event ? __builtin_ctz(o->event) : 0;
	s->iv_start = s->start_mono;
	s->iv_end = o->interval_ns ? s->start_mono + o->interval_ns : UINT64_MAX;
	s->pc = proc_cache__new(&po);
	if (!s->pc || pipeline__init(&s->pl, pipeline__mode(o), o, o->freq, s->pc, &s->ksyms))
		goto err_out;
	if (s->record) {
		char cmd[512] = "", events[64] = "";

		/* several events: "cpu,futex,offcpu" */
		for (int i = 0; i < SINK_EVENTS; i++)
			if (o->event & (1u << i))
				snprintf(events + strlen(events), sizeof(events) - strlen(events),
					 "%s%s", events[0] ? "," : "", report__event_name(1u << i));
		struct capfile_meta m = {
			.event = events,
			.hz = o->freq,
			.stack_size = o->stack_size,
			.pid = o->nr_pids ? (uint32_t)o->pids[0] : 0,
			.start_mono_ns = s->start_mono,
			.start_unix_ns = util__clock_ns(CLOCK_REALTIME),
			.command = cmd,
			.kernel_stacks = o->kernel ? 1 : 0,
		};
		char comm[SFPROF_COMM_LEN + 1] = "";

		/* report's titles name the target as live ones do */
		report__target_comm(o, comm, sizeof(comm));
		m.comm = comm;
		/* the whole command line: a capture stays 0600 on this
		 * machine, and report --keep-cmdline may want it */
		if (o->command)
			join_argv(cmd, sizeof(cmd), o->command, o->command_argc);
		s->w = capfile_writer__create(o->output, &m);
		if (!s->w) {
			fprintf(stderr, "sfprof: cannot write %s: %s\n", o->output,
				util__strerror(-errno));
			goto err_out;
		}
		s->record_profile = getenv("SFPROF_RECORD_PROFILE");
		char dir[4096];
		const char *bd = report__buildid_dir(o, dir, sizeof(dir));
		if (bd && !(s->keeper = buildid_keeper__new(bd)))
			goto err_out;
		proc_cache__set_observer(s->pc, record_change, s);
		s->pl.pytramp_writer = sink_pytramp;
		s->pl.pytramp_ctx = s;
		sink_for_each_session(s, r, ss)
			if (r->session_set_writer)
				r->session_set_writer(ss, s->w);
	}
	return s;

err_out:
	report_sink__free(s);
	return NULL;
}

void report_sink__set_slice_hook(struct report_sink *s, report_slice_fn fn, void *ctx,
				 stacks_label_fn labeler, void *labeler_ctx)
{
	s->slice_fn = fn;
	s->slice_ctx = ctx;
	s->pl.mode = PIPELINE_AGENT;
	s->pl.labeler = labeler;
	s->pl.labeler_ctx = labeler_ctx;
}

void report_sink__proc_stats(const struct report_sink *s, struct proc_stats *out)
{
	proc_cache__stats(s->pc, out);
}

void report_sink__set_capture(struct report_sink *s, struct capture *c)
{
	s->cap = c;
	s->pl.thread_top = c ? report_sink__thread_top : NULL;
	s->pl.thread_top_ctx = c;
	if (c && !s->attached_mono)
		s->attached_mono = util__now_ns();
	sink_for_each_session(s, r, ss)
		if (r->session_set_capture)
			r->session_set_capture(ss, c);
	for (int i = 0; i < SINK_EVENTS; i++)
		if (s->stackss[i] && c)
			stacks__set_thread_top(s->stackss[i], report_sink__thread_top, c);
}

int report_sink__add_targets(struct report_sink *s, const pid_t *pids, int n)
{
	/* changes arrive in order from now on; the processes that exist now
	 * are read from /proc at once, so that every later change is
	 * applied to the address space it changed */
	proc_cache__set_ordered(s->pc, 1);
	/* the run starts now (attaching took a while): so does the first
	 * interval */
	if (s->o.interval_ns && !s->profs[s->iv_idx]) {
		s->iv_start = util__now_ns();
		s->iv_end = s->iv_start + s->o.interval_ns;
	}
	if (n > 0 && !s->iv_pid)
		s->iv_pid = (uint32_t)pids[0];
	for (int i = 0; i < n; i++) {
		if (!proc_cache__get(s->pc, (uint32_t)pids[i]))
			return -ENOMEM;
		sink_for_each_session(s, r, ss)
			if (r->session_attach)
				r->session_attach(ss, (uint32_t)pids[i]);
	}
	return s->werr;
}

void report_sink__starting(struct report_sink *s, const char *file)
{
	sink_for_each_session(s, r, ss)
		if (r->session_starting)
			r->session_starting(ss, file);
}

void report_sink__started(struct report_sink *s, pid_t pid)
{
	sink_for_each_session(s, r, ss)
		if (r->session_started)
			r->session_started(ss, (uint32_t)pid);
}

int report_sink__sideband(void *ctx, const struct sideband_rec *r)
{
	struct report_sink *s = ctx;
	struct proc_mapping_rec m;
	int err = 0;

	switch (r->kind) {
	case SIDEBAND_MMAP:
		memset(&m, 0, sizeof(m));
		m.start = r->start;
		m.end = r->start + r->len;
		m.offset = r->pgoff;
		m.inode = r->inode;
		m.dev_major = r->dev_major;
		m.dev_minor = r->dev_minor;
		m.prot = r->prot;
		m.path = r->path;
		err = proc_cache__map(s->pc, r->pid, r->ts_ns, &m, s->create_procs);
		break;
	case SIDEBAND_EXEC:
		err = proc_cache__reset(s->pc, r->pid, r->ts_ns, s->create_procs);
		sink_for_each_session(s, rt, ss)
			if (rt->session_exec)
				rt->session_exec(ss, r->pid);
		break;
	case SIDEBAND_LOST:
		proc_cache__changes_lost(s->pc, r->lost);
		break;
	}
	/* a record that cannot apply costs its mapping, never the run */
	if (err == -ENOMEM)
		return err;
	return s->werr;
}

void report_sink__drained(void *ctx, uint64_t now_ns)
{
	struct report_sink *s = ctx;

	report_interval__drained(s, now_ns);

	/* record: what is buffered reaches the file within about a second,
	 * even with no event to carry it (an error shows at the next one) */
	if (s->w)
		capfile_writer__flush_due(s->w);
	/* an exited process's events are all in after this long */
	if (now_ns > REPORT_SINK_REAP_AFTER_NS) {
		proc_cache__reap(s->pc, now_ns - REPORT_SINK_REAP_AFTER_NS);
		sink_for_each_session(s, r, ss)
			if (r->session_reap)
				r->session_reap(ss, now_ns - REPORT_SINK_REAP_AFTER_NS);
	}
}

void report_sink__free(struct report_sink *s)
{
	if (!s)
		return;
	/* still open: the run failed before report_sink__finish. With no
	 * event yet (the target, cgroup or command was refused) the old
	 * file under -o is left as it was; with events, they are kept. */
	if (s->w && capfile_writer__events(s->w))
		capfile_writer__close(s->w);
	else
		capfile_writer__abort(s->w);
	buildid_keeper__free(s->keeper);
	pipeline__release(&s->pl);
	for (int i = 0; i < SINK_EVENTS; i++) {
		stacks__free(s->stackss[i]);
		profile__free(s->profs[i]);
	}
	for (int i = 0; i < SINK_EVENTS; i++) {
		stacks__free(s->next_stacks[i]);
		profile__free(s->next_prof[i]);
	}
	proc_cache__free(s->pc);
	ksyms__free(&s->ksyms);
	free(s);
}

static int record_kstack(struct report_sink *s, const struct sfprof_event *e)
{
	uint64_t ips[CAPFILE_KSTACK_MAX];
	int n, err;

	n = capture__kstack(s->cap, e->kstack_id, ips, CAPFILE_KSTACK_MAX);
	if (n <= 0)
		return 0;
	err = capfile_writer__kstack(s->w, e->kstack_id, ips, (uint32_t)n);
	/* name every kernel address once, as this kernel knows it */
	for (int i = 0; i < n && !err; i++) {
		const char *name = ksyms__name(&s->ksyms, ips[i]);
		if (name)
			err = capfile_writer__ksym(s->w, ips[i], name);
	}
	return err;
}

/* stacks_jit_fn: a JIT name the capture carries */
static int sink_jit(void *ctx, uint32_t pid, uint64_t start, uint64_t size, const char *name)
{
	int err = capfile_writer__jit(((struct report_sink *)ctx)->w, pid, start, size, name);

	return err == -EINVAL ? 0 : err; /* (a name too long for a record) */
}

/* A process began (FORK) or ended (EXIT): its model follows. */
static int sink_task(struct report_sink *s, const struct sfprof_event *e)
{
	sink_for_each_session(s, r, ss)
		if (r->session_task)
			r->session_task(ss, e);
	if (e->kind == SFPROF_EV_FORK)
		return proc_cache__fork(s->pc, e->fork.ppid, e->pid, e->ts_ns) == -ENOMEM ? -ENOMEM : 0;
	proc_cache__exit(s->pc, e->pid, e->ts_ns);
	return 0;
}

int report_sink__event(void *ctx, const struct sfprof_event *e, size_t len)
{
	struct report_sink *s = ctx;
	uint64_t kips[CAPFILE_KSTACK_MAX];
	struct stacks *stk;
	int nk = 0, err;

	(void)len;
	if (e->kind == SFPROF_EV_FORK || e->kind == SFPROF_EV_EXIT)
		return sink_task(s, e);
	sink_for_each_session(s, r, ss)
		if (r->session_event)
			r->session_event(ss, e);
	int idx = sink_index(e, s->o.event);

	if (!(stk = report_sink__stacks(s, idx, e)))
		return -ENOMEM;
	/* a waker's kernel stack is part of its record, --kernel or not */
	int want_k = s->o.kernel || e->kind == SFPROF_EV_WAKER;

	if (want_k && s->cap && e->kstack_id >= 0 && !s->record) {
		nk = capture__kstack(s->cap, e->kstack_id, kips, CAPFILE_KSTACK_MAX);
		if (nk < 0)
			nk = 0;
	}
	if (!s->record) {
		stk = report_interval__stacks(s, idx, e, stk);
		return stk ? stacks__add_event(stk, e, kips, (size_t)nk) : -ENOMEM;
	}

	/* record: resolve the stack now (maps re-read for new mappings),
	 * then write what the event needs before the event itself */
	if (s->record_profile) {
		if (want_k && s->cap && e->kstack_id >= 0) {
			nk = capture__kstack(s->cap, e->kstack_id, kips,
					     CAPFILE_KSTACK_MAX);
			if (nk < 0)
				nk = 0;
		}
		stacks__add_event(stk, e, kips, (size_t)nk);
	} else {
		stacks__resolve_event(stk, e);
	}
	err = s->werr;
	if (!err)
		err = stacks__record_jit(stk, sink_jit, s);
	if (!err && want_k && s->cap && e->kstack_id >= 0)
		err = record_kstack(s, e);
	if (!err)
		err = capfile_writer__event(s->w, e);
	if (err && err != -ENOMEM) {
		/* a full disk: said once, here, naming the file */
		fprintf(stderr, "sfprof: writing %s: %s\n", s->o.output,
			util__strerror(err));
		s->failed = 1;
		err = REPORT_E_REPORTED;
	}
	return err;
}

void report_sink__print_stats(struct report_sink *s)
{
	struct stacks_stats st;
	struct proc_stats ps;

	for (int i = 0; i < SINK_EVENTS; i++) {
		if (!s->stackss[i])
			continue;
		/* (a comment line between the events of a multi-event run) */
		if (s->o.event & (s->o.event - 1))
			fprintf(stderr, "# %s\n", report__event_name(1u << i));
		stacks__stats(s->stackss[i], &st);
		stacks_stats__print(&st, stderr);
	}
	proc_cache__stats(s->pc, &ps);
	proc_stats__print(&ps, stderr);
	sink_for_each_session(s, r, ss)
		if (r->session_print_stats)
			r->session_print_stats(ss, stderr);
}

int report_sink__finish(void *ctx, const struct sfprof_opts *o,
			const struct capture_stats *st)
{
	struct report_sink *s = ctx;
	int err = 0;

	if (s->o.interval_ns && !s->record)
		return report_interval__finish(s, o, st);
	for (int i = 0; i < SINK_EVENTS; i++) {
		if (!(o->event & (1u << i)))
			continue;
		if (!s->stackss[i]) {
			/* no event at all: still an (empty) valid output */
			struct sfprof_event e0;
			memset(&e0, 0, sizeof(e0));
			e0.pid = o->nr_pids ? (uint32_t)o->pids[0] : 0;
			if (!report_sink__stacks(s, i, &e0))
				return -ENOMEM;
		}
		profile__set_duration(s->profs[i], profiled_window(s, o));
		if (stacks__flush(s->stackss[i]))
			return -ENOMEM;
	}
	for (int i = 0; i < SINK_EVENTS && s->record && !err; i++)
		if (s->stackss[i])
			err = stacks__record_jit_finish(s->stackss[i], sink_jit, s);
	if (s->record) {
		char v[SFPROF_CNT_MAX + 12][24];
		struct capfile_kv kv[SFPROF_CNT_MAX + 12];
		size_t n = 0;

		if (st) {
#define KV(name, val)                                                          \
	do {                                                                   \
		snprintf(v[n], sizeof(v[n]), "%" PRIu64, (uint64_t)(val));     \
		kv[n].key = name;                                              \
		kv[n].value = v[n];                                            \
		n++;                                                           \
	} while (0)
			KV("events_cpu", st->events_cpu);
			KV("events_futex", st->events_futex);
			KV("events_fork", st->events_fork);
			KV("events_exit", st->events_exit);
			KV("sideband_records", st->sideband.records);
			KV("sideband_lost", st->sideband.lost);
			KV("futex_wait_ns", st->futex_wait_ns);
			KV("events_offcpu", st->events_offcpu);
			KV("offcpu_ns", st->offcpu_ns);
			for (int i = 0; i < SFPROF_CNT_MAX; i++)
				KV(capture_counter__name(i), st->bpf[i]);
#undef KV
			capfile_writer__stats(s->w, kv, n);
		}
		int kept = 0;

		err = capfile_writer__close_partial(s->w, &kept);
		s->w = NULL;
		if (kept)
			fprintf(stderr, "sfprof: %s: kept the capture as far as it was written; "
				"`sfprof report` reads the events before the cut\n", o->output);
		if (err && s->failed)
			err = REPORT_E_REPORTED;
		else if (err)
			fprintf(stderr, "sfprof: writing %s: %s\n", o->output,
				util__strerror(err));
		if (err)
			err = REPORT_E_REPORTED;
		if (!err && s->keeper) {
			unsigned kept, failed;
			int kerr = buildid_keeper__finish(s->keeper, &kept, &failed);
			char dir[4096];

			if (failed)
				fprintf(stderr,
					"sfprof: build-id cache %s: %u of %u binaries not kept "
					"(%s); report may not name their frames\n",
					report__buildid_dir(o, dir, sizeof(dir)), failed,
					kept + failed, util__strerror(kerr));
			if (kept)
				report__cache_trim(o);
		}
		for (int i = 0; i < SINK_EVENTS && !err && s->record_profile; i++) {
			struct sfprof_opts rp = *o;

			if (!(o->event & (1u << i)))
				continue;
			rp.output = s->record_profile;
			rp.format = PROFILE_FMT_FOLDED;
			err = report__write_event_profile(s->profs[i], &rp, 1u << i);
		}
	} else {
		for (int i = 0; i < SINK_EVENTS && !err; i++)
			if (o->event & (1u << i))
				err = report__write_event_profile(s->profs[i], o, 1u << i);
		if (err)
			err = REPORT_E_REPORTED;
	}
	proc_cache__for_each_problem(s->pc, report__print_problem, NULL);
	if (o->stats)
		report_sink__print_stats(s);
	if (!err)
		sink_summary(s, o, st);
	return err;
}

// SPDX-License-Identifier: MIT
/*
 * The live and record sink (include/report.h): every event of the run,
 * in order with the address-space changes, through the unwinder's stacks
 * pipeline into a profile, or into a capture file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capfile.h"
#include "interval.h"
#include "ksyms.h"
#include "report.h"
#include "stacks.h"
#include "util.h"

/* How long after its EXIT a process's model is kept for events still in
 * flight (they are microseconds behind; a drain runs every 25 ms). */
#define REPORT_SINK_REAP_AFTER_NS (200 * 1000000ull)

/* --interval: an interval is written this long after its end, when the
 * events stamped before its end have all been drained */
#define REPORT_SINK_INTERVAL_SLACK_NS (100 * 1000000ull)

volatile sig_atomic_t report_sink_cut_requested;


void report__print_problem(void *ctx, const char *path, const char *what,
			  const char *detail)
{
	(void)ctx;
	fprintf(stderr, "sfprof: %s: %s%s%s\n", path, what,
		detail && *detail ? ": " : "", detail ? detail : "");
}

int report__write_profile(struct profile *prof, const struct sfprof_opts *o)
{
	int err = profile__write(prof, o->format, o->output);

	if (err)
		fprintf(stderr, "sfprof: writing %s: %s\n",
			o->output ? o->output : "stdout", strerror(-err));
	return err;
}


struct report_sink {
	int record;
	struct proc_cache *pc;
	struct profile *prof; /* created at the first event */
	struct stacks *stacks;
	struct capfile_writer *w;
	struct capture *cap;
	struct ksyms ksyms;
	uint64_t start_mono;
	struct sfprof_opts o;
	const char *record_profile; /* SFPROF_RECORD_PROFILE */
	int create_procs; /* -a: a process first seen in the side-band is in scope */
	int werr;	  /* record: the first write error of an observed change */
	/* --interval: prof/stacks hold [iv_start, iv_end) (CLOCK_MONOTONIC,
	 * as event timestamps); events stamped later go to the next one,
	 * made when the first arrives, until the current one is written */
	uint64_t iv_start, iv_end;
	struct profile *next_prof;
	struct stacks *next_stacks;
	int64_t unix_minus_mono; /* wall clock = monotonic + this */
	int iv_err;		 /* the first write error of an interval */
	uint64_t iv_written;
	char iv_last[4096];	 /* the last interval's name, %t/%p expanded */
	unsigned iv_same;	 /* how many had that name */
};

/* live and record both unwind every event: what a complete walk learns
 * about a thread's frame top goes back to the capture */
static void report_sink__thread_top(void *ctx, uint32_t tid, uint64_t sp)
{
	capture__set_thread_top(ctx, tid, sp);
}

/* A profile and its stacks pipeline for meta; 0 or -ENOMEM. */
static int sink_new_profile(struct report_sink *s, const struct profile_meta *meta,
			    struct profile **prof, struct stacks **stacks)
{
	struct stacks_opts so = {
		.kind = meta->kind,
		.per_thread = s->o.per_thread,
		.per_process = s->o.per_process,
		.by_lock = s->o.by_lock,
		.kernel = s->o.kernel,
	};

	*prof = profile__new(meta);
	if (!*prof)
		return -ENOMEM;
	*stacks = stacks__new(s->pc, *prof, &so);
	if (!*stacks) {
		profile__free(*prof);
		*prof = NULL;
		return -ENOMEM;
	}
	stacks__set_ksym(*stacks, ksyms__name, &s->ksyms);
	if (s->cap)
		stacks__set_thread_top(*stacks, report_sink__thread_top, s->cap);
	return 0;
}

static struct profile *sink_profile(struct report_sink *s,
				    const struct sfprof_event *e)
{
	char comm[SFPROF_COMM_LEN + 1];
	struct profile_meta meta = {
		.kind = s->o.event == SFPROF_SEL_FUTEX ? PROFILE_FUTEX : PROFILE_CPU,
		.hz = s->o.freq,
		.start_unix_ns = util__clock_ns(CLOCK_REALTIME),
	};

	if (s->prof)
		return s->prof;
	snprintf(comm, sizeof(comm), "%.*s", SFPROF_COMM_LEN, e->comm);
	meta.target_pid = s->o.nr_pids == 1 || s->o.command ? e->pid : 0;
	meta.main_pid = s->o.nr_pids ? (uint32_t)s->o.pids[0] : meta.target_pid;
	meta.target_comm = comm;
	if (s->o.command)
		meta.target_cmdline = s->o.command[0];
	if (s->o.all || s->o.cgroup || s->o.nr_pids > 1)
		meta.target_comm = NULL;
	if (s->o.interval_ns)
		meta.start_unix_ns = (uint64_t)((int64_t)s->iv_start + s->unix_minus_mono);
	if (sink_new_profile(s, &meta, &s->prof, &s->stacks))
		return NULL;
	return s->prof;
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
	if (what == PROC_CHANGE_MAPPING)
		err = capfile_writer__mapping(s->w, pid, ts, m);
	else
		err = capfile_writer__task(s->w, what, pid, ppid, ts);
	if (err && err != -EINVAL)
		s->werr = err;
}

struct report_sink *report_sink__new(const struct sfprof_opts *o)
{
	struct report_sink *s = calloc(1, sizeof(*s));
	struct proc_cache_opts po = { .no_demangle = o->no_demangle };

	if (!s)
		return NULL;
	s->create_procs = o->all;
	s->o = *o;
	s->record = o->cmd == SFPROF_CMD_RECORD;
	s->start_mono = util__now_ns();
	s->unix_minus_mono = (int64_t)util__clock_ns(CLOCK_REALTIME) - (int64_t)s->start_mono;
	s->iv_start = s->start_mono;
	s->iv_end = o->interval_ns ? s->start_mono + o->interval_ns : UINT64_MAX;
	s->pc = proc_cache__new(&po);
	if (!s->pc)
		goto err_out;
	if (s->record) {
		char cmd[512] = "";
		struct capfile_meta m = {
			.event = o->event == SFPROF_SEL_FUTEX ? "futex" : "cpu",
			.hz = o->freq,
			.stack_size = o->stack_size,
			.pid = o->nr_pids ? (uint32_t)o->pids[0] : 0,
			.start_mono_ns = s->start_mono,
			.start_unix_ns = util__clock_ns(CLOCK_REALTIME),
			.command = cmd,
			.kernel_stacks = o->kernel ? 1 : 0,
		};
		for (int i = 0; o->command && i < o->command_argc; i++) {
			size_t l = strlen(cmd);
			snprintf(cmd + l, sizeof(cmd) - l, "%s%s", i ? " " : "",
				 o->command[i]);
		}
		s->w = capfile_writer__create(o->output, &m);
		if (!s->w) {
			fprintf(stderr, "sfprof: cannot write %s: %s\n", o->output,
				strerror(errno));
			goto err_out;
		}
		s->record_profile = getenv("SFPROF_RECORD_PROFILE");
		proc_cache__set_observer(s->pc, record_change, s);
	}
	return s;

err_out:
	report_sink__free(s);
	return NULL;
}

void report_sink__set_capture(struct report_sink *s, struct capture *c)
{
	s->cap = c;
	if (s->stacks && c)
		stacks__set_thread_top(s->stacks, report_sink__thread_top, c);
}

int report_sink__add_targets(struct report_sink *s, const pid_t *pids, int n)
{
	/* changes arrive in order from now on; the processes that exist now
	 * are read from /proc at once, so that every later change is
	 * applied to the address space it changed */
	proc_cache__set_ordered(s->pc, 1);
	/* the run starts now (attaching took a while): so does the first
	 * interval */
	if (s->o.interval_ns && !s->prof) {
		s->iv_start = util__now_ns();
		s->iv_end = s->iv_start + s->o.interval_ns;
	}
	for (int i = 0; i < n; i++)
		if (!proc_cache__get(s->pc, (uint32_t)pids[i]))
			return -ENOMEM;
	return s->werr;
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
		m.build_id_len = r->build_id_len;
		memcpy(m.build_id, r->build_id, r->build_id_len);
		m.path = r->path;
		err = proc_cache__map(s->pc, r->pid, r->ts_ns, &m, s->create_procs);
		break;
	case SIDEBAND_EXEC:
		err = proc_cache__reset(s->pc, r->pid, r->ts_ns, s->create_procs);
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

/* The output name of the interval that starts at mono (ns). */
static int interval_path(struct report_sink *s, uint64_t mono, char *buf, size_t size)
{
	const struct profile_meta *m = s->prof ? profile__meta(s->prof) : NULL;
	uint32_t pid = m && m->target_pid ? m->target_pid : (uint32_t)getpid();

	return interval__expand_path(buf, size, s->o.output, (uint64_t)((int64_t)mono +
									s->unix_minus_mono), pid);
}

/* Write the current interval [iv_start, end) and free it. */
static int interval_write(struct report_sink *s, uint64_t end)
{
	char path[4096];
	int err;

	if (!s->prof)
		return 0;
	profile__set_duration(s->prof, end > s->iv_start ? end - s->iv_start : 0);
	err = s->stacks ? stacks__flush(s->stacks) : 0;
	if (!err)
		err = interval_path(s, s->iv_start, path, sizeof(path));
	/* another interval began in the same second: number this one
	 * (without %t, each interval replaces the last on purpose) */
	if (!err && strstr(s->o.output, "%t") && !strcmp(path, s->iv_last)) {
		err = interval__number_path(path, sizeof(path), ++s->iv_same + 1);
	} else if (!err) {
		snprintf(s->iv_last, sizeof(s->iv_last), "%s", path);
		s->iv_same = 0;
	}
	if (!err)
		err = profile__write(s->prof, s->o.format, path);
	if (err)
		fprintf(stderr, "sfprof: writing %s: %s\n", err == -EINVAL ? s->o.output : path,
			strerror(-err));
	else
		s->iv_written++;
	stacks__free(s->stacks);
	profile__free(s->prof);
	s->stacks = NULL;
	s->prof = NULL;
	return err;
}

/*
 * End the current interval: write it, and make the next one current (the
 * one its late events already went to, or a new empty one). The next
 * interval starts where this one ended, so every event lands in exactly
 * one profile, cut by its timestamp.
 */
static int interval_rotate(struct report_sink *s)
{
	struct profile_meta meta;
	int err;

	if (!s->prof)
		return 0;
	meta = *profile__meta(s->prof);
	err = interval_write(s, s->iv_end);
	s->iv_start = s->iv_end;
	s->iv_end = s->iv_start + s->o.interval_ns;
	if (s->next_prof) {
		s->prof = s->next_prof;
		s->stacks = s->next_stacks;
		s->next_prof = NULL;
		s->next_stacks = NULL;
	} else {
		/* no pipeline holds a binary's strings now: free the ones no
		 * process maps any more, so a long run stays flat */
		proc_cache__evict_unused(s->pc);
		meta.start_unix_ns = (uint64_t)((int64_t)s->iv_start + s->unix_minus_mono);
		meta.duration_ns = 0;
		if (sink_new_profile(s, &meta, &s->prof, &s->stacks))
			return -ENOMEM;
	}
	return err;
}

/* Which pipeline an event belongs to: the current interval's, or the
 * next one's when it is stamped at or after the current one's end. */
static struct stacks *interval_stacks(struct report_sink *s, const struct sfprof_event *e)
{
	struct profile_meta meta;

	if (!s->o.interval_ns || e->ts_ns < s->iv_end)
		return s->stacks;
	if (!s->next_prof) {
		meta = *profile__meta(s->prof);
		meta.start_unix_ns = (uint64_t)((int64_t)s->iv_end + s->unix_minus_mono);
		if (sink_new_profile(s, &meta, &s->next_prof, &s->next_stacks))
			return NULL;
	}
	return s->next_stacks;
}

void report_sink__drained(void *ctx, uint64_t now_ns)
{
	struct report_sink *s = ctx;

	if (s->o.interval_ns && !s->record && s->prof) {
		/* SIGHUP: the current interval ends now (the next one, if
		 * events for it came already, began at the old end) */
		if (report_sink_cut_requested) {
			report_sink_cut_requested = 0;
			if (!s->next_prof && now_ns > s->iv_start && now_ns < s->iv_end)
				s->iv_end = now_ns;
		}
		while (now_ns >= s->iv_end + REPORT_SINK_INTERVAL_SLACK_NS) {
			int err = interval_rotate(s);

			if (err && !s->iv_err)
				s->iv_err = err;
			if (err == -ENOMEM)
				break;
		}
	}

	/* an exited process's events are all in after this long */
	if (now_ns > REPORT_SINK_REAP_AFTER_NS)
		proc_cache__reap(s->pc, now_ns - REPORT_SINK_REAP_AFTER_NS);
}

void report_sink__free(struct report_sink *s)
{
	if (!s)
		return;
	if (s->w)
		capfile_writer__close(s->w);
	stacks__free(s->stacks);
	profile__free(s->prof);
	stacks__free(s->next_stacks);
	profile__free(s->next_prof);
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

/* A process began (FORK) or ended (EXIT): its model follows. */
static int sink_task(struct report_sink *s, const struct sfprof_event *e)
{
	if (e->kind == SFPROF_EV_FORK)
		return proc_cache__fork(s->pc, e->ppid, e->pid, e->ts_ns) == -ENOMEM ? -ENOMEM : 0;
	proc_cache__exit(s->pc, e->pid, e->ts_ns);
	return 0;
}

int report_sink__event(void *ctx, const struct sfprof_event *e, size_t len)
{
	struct report_sink *s = ctx;
	uint64_t kips[CAPFILE_KSTACK_MAX];
	int nk = 0, err;

	(void)len;
	if (e->kind == SFPROF_EV_FORK || e->kind == SFPROF_EV_EXIT)
		return sink_task(s, e);
	if (!sink_profile(s, e))
		return -ENOMEM;
	if (s->o.kernel && s->cap && e->kstack_id >= 0 && !s->record) {
		nk = capture__kstack(s->cap, e->kstack_id, kips, CAPFILE_KSTACK_MAX);
		if (nk < 0)
			nk = 0;
	}
	if (!s->record) {
		struct stacks *st = interval_stacks(s, e);

		return st ? stacks__add_event(st, e, kips, (size_t)nk) : -ENOMEM;
	}

	/* record: resolve the stack now (maps re-read for new mappings),
	 * then write what the event needs before the event itself */
	if (s->record_profile) {
		if (s->o.kernel && s->cap && e->kstack_id >= 0) {
			nk = capture__kstack(s->cap, e->kstack_id, kips,
					     CAPFILE_KSTACK_MAX);
			if (nk < 0)
				nk = 0;
		}
		stacks__add_event(s->stacks, e, kips, (size_t)nk);
	} else {
		stacks__resolve_event(s->stacks, e);
	}
	err = s->werr;
	if (!err && s->o.kernel && s->cap && e->kstack_id >= 0)
		err = record_kstack(s, e);
	if (!err)
		err = capfile_writer__event(s->w, e);
	return err;
}

static void print_stats(struct report_sink *s)
{
	struct stacks_stats st;
	struct proc_stats ps;

	if (s->stacks) {
		stacks__stats(s->stacks, &st);
		stacks_stats__print(&st, stderr);
	}
	proc_cache__stats(s->pc, &ps);
	proc_stats__print(&ps, stderr);
}

int report_sink__finish(void *ctx, const struct sfprof_opts *o,
			const struct capture_stats *st)
{
	struct report_sink *s = ctx;
	int err = 0;

	if (!s->prof) {
		/* no event at all: still an (empty) valid output */
		struct sfprof_event e0;
		memset(&e0, 0, sizeof(e0));
		e0.pid = o->nr_pids ? (uint32_t)o->pids[0] : 0;
		if (!sink_profile(s, &e0))
			return -ENOMEM;
	}
	if (s->o.interval_ns && !s->record) {
		/* the last, partial interval (and the one after it, if its
		 * events came before this one was due) */
		uint64_t now = util__now_ns();

		if (s->next_prof) {
			err = interval_rotate(s);
			if (!s->iv_err)
				s->iv_err = err;
		}
		err = interval_write(s, now > s->iv_end ? s->iv_end : now);
		if (!s->iv_err)
			s->iv_err = err;
		proc_cache__for_each_problem(s->pc, report__print_problem, NULL);
		if (o->stats) {
			fprintf(stderr, "intervals_written: %" PRIu64 "\n", s->iv_written);
			print_stats(s);
		}
		return s->iv_err;
	}
	profile__set_duration(s->prof, util__now_ns() - s->start_mono);
	if (s->stacks && stacks__flush(s->stacks))
		return -ENOMEM;
	if (s->record) {
		char v[SFPROF_CNT_MAX + 8][24];
		struct capfile_kv kv[SFPROF_CNT_MAX + 8];
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
			for (int i = 0; i < SFPROF_CNT_MAX; i++)
				KV(capture_counter__name(i), st->bpf[i]);
#undef KV
			capfile_writer__stats(s->w, kv, n);
		}
		err = capfile_writer__close(s->w);
		s->w = NULL;
		if (err)
			fprintf(stderr, "sfprof: writing %s: %s\n", o->output,
				strerror(-err));
		if (!err && s->record_profile)
			err = profile__write(s->prof, PROFILE_FMT_FOLDED,
					     s->record_profile);
	} else {
		err = report__write_profile(s->prof, o);
	}
	proc_cache__for_each_problem(s->pc, report__print_problem, NULL);
	if (o->stats)
		print_stats(s);
	return err;
}

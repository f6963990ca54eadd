// SPDX-License-Identifier: MIT
/* `sfprof report FILE`: a capture through the stacks pipeline. */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capfile.h"
#include "cmd.h"
#include "ksyms.h"
#include "report.h"
#include "stacks.h"
#include "util.h"

/* An event to the profile of its kind (REPORT_EVENTS), if selected. */
static int report_event(struct stacks **stks, struct kstacks *ks,
			const struct sfprof_opts *o, const struct sfprof_event *e)
{
	struct stacks *stk = stks[report__event_index(e, o->event)];
	const struct kstack_ent *k = NULL;

	if (!stk)
		return 0;
	if ((o->kernel || e->kind == SFPROF_EV_WAKER) && e->kstack_id >= 0)
		k = kstacks__get(ks, e->kstack_id, 0);
	return stacks__add_event(stk, e, k ? k->ips : NULL, k ? k->nr : 0);
}

/* A recorded address-space change, applied as the live run applied it. */
static int report_task(struct proc_cache *pc, const struct capfile_record *rec)
{
	int err = 0;

	switch (rec->task.what) {
	case CAPFILE_TASK_RESET:
		err = proc_cache__reset(pc, rec->task.pid, rec->task.ts_ns, 1);
		break;
	case CAPFILE_TASK_FORK:
		err = proc_cache__fork(pc, rec->task.ppid, rec->task.pid, rec->task.ts_ns);
		break;
	case CAPFILE_TASK_EXIT:
		proc_cache__exit(pc, rec->task.pid, rec->task.ts_ns);
		break;
	}
	return err == -ENOMEM ? err : 0;
}

static int event_given(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strncmp(argv[i], "-e", 2) == 0 ||
		    strncmp(argv[i], "--event", 7) == 0)
			return 1;
	}
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct sfprof_opts o;
	struct capfile_reader *r = NULL;
	struct capfile_record rec;
	struct proc_cache *pc = NULL;
	struct profile *prof[REPORT_EVENTS] = { NULL };
	struct stacks *stk[REPORT_EVENTS] = { NULL };
	struct kstacks ks = { 0 };
	struct ksyms ksyms = { 0 };
	const struct capfile_meta *meta;
	struct stacks_opts so = { 0 };
	uint64_t first_ts = 0, last_ts = 0, events = 0, problems = 0;
	uint64_t t0, pass_ns[16] = { 0 };
	int err = 0, rc, status = 1, repeat;

	/*
	 * A report is one short batch: freed memory stays in the heap for
	 * the next allocation instead of going back to the kernel (a symbol
	 * table's sort scratch, the tables that grow by doubling), and the
	 * heap grows in large steps. Every fresh page costs a fault (1.7 us
	 * each on the VM this was measured on): 1225 -> 920 faults and 6%
	 * less CPU time for a 5 s capture.
	 */
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	mallopt(M_TOP_PAD, 8 << 20);

	sfprof_opts__init(&o, SFPROF_CMD_REPORT);
	if (sfprof_opts__parse(&o, argc, argv, stdout, stderr))
		return SFPROF_EXIT_USAGE;
	if (o.help)
		return 0;
	r = capfile_reader__open(o.input, &err);
	if (!r) {
		fprintf(stderr, "sfprof: %s: %s\n", o.input,
			err <= -2000 ? capfile_strerror(err) : strerror(-err));
		return err == -ENOENT || err <= -2000 ? SFPROF_EXIT_USAGE : 1;
	}
	meta = capfile_reader__meta(r);
	if (!event_given(argc, argv) && report__event_sel(meta->event))
		o.event = report__event_sel(meta->event);
	if ((o.event & (o.event - 1)) && (!o.output || !strcmp(o.output, "-"))) {
		fprintf(stderr, "sfprof: %s holds several events (%s): give -o FILE, which "
			"names one output each (prof.svg -> prof.cpu.svg...), or -e EVENT\n",
			o.input, meta->event);
		capfile_reader__free(r);
		return SFPROF_EXIT_USAGE;
	}
	/* a capture recorded with --kernel reports its kernel frames */
	if (meta->kernel_stacks)
		o.kernel = 1;
	so.per_thread = o.per_thread;
	so.per_process = o.per_process;
	so.by_lock = o.by_lock;
	so.kernel = o.kernel;
	/* benchmarks: measure unwinding + symbolization without aggregation */
	so.no_profile = getenv("SFPROF_REPORT_NO_PROFILE") != NULL;

	struct proc_cache_opts po = { .offline = 1, .no_demangle = o.no_demangle };
	pc = proc_cache__new(&po);
	for (int i = 0; i < REPORT_EVENTS; i++) {
		struct profile_meta pm = {
			.kind = report__profile_kind(1u << i),
			.hz = meta->hz,
			.target_pid = meta->pid,
			.target_cmdline = meta->command[0] ? meta->command : NULL,
			.start_unix_ns = meta->start_unix_ns,
		};

		if (!(o.event & (1u << i)))
			continue;
		so.kind = pm.kind;
		so.per_thread = o.per_thread || (pm.kind == PROFILE_WALL && !o.per_process);
		so.period_ns = meta->hz ? 1000000000ull / meta->hz : 0;
		prof[i] = pc ? profile__new(&pm) : NULL;
		stk[i] = prof[i] ? stacks__new(pc, prof[i], &so) : NULL;
		if (!stk[i]) {
			fprintf(stderr, "sfprof: out of memory\n");
			goto out;
		}
		stacks__set_ksym(stk[i], ksyms__name, &ksyms);
	}
	ksyms.loaded = 1; /* names come from the capture, not this kernel */

	/* pass timing in CPU time: benchmarks run on shared machines */
	t0 = util__clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	while ((rc = capfile_reader__next(r, &rec)) == 1) {
		switch (rec.type) {
		case CAPFILE_REC_MAPPING:
			err = proc_cache__add_mapping(pc, rec.mapping.pid,
						      &rec.mapping.m);
			if (err && err != -EINVAL)
				goto out_err;
			break;
		case CAPFILE_REC_TASK:
			err = report_task(pc, &rec);
			if (err)
				goto out_err;
			break;
		case CAPFILE_REC_KSTACK: {
			struct kstack_ent *k = kstacks__get(&ks, rec.kstack.id, 1);
			if (!k)
				goto out_err;
			k->nr = rec.kstack.nr;
			memcpy(k->ips, rec.kstack.ips, (size_t)k->nr * 8);
			break;
		}
		case CAPFILE_REC_KSYM:
			if (ksyms__add(&ksyms, rec.ksym.addr, rec.ksym.name))
				goto out_err;
			break;
		case CAPFILE_REC_STATS:
			if (o.stats)
				for (size_t i = 0; i < rec.kv.nr_kv; i++)
					fprintf(stderr, "capture_%s: %s\n",
						rec.kv.kv[i].key,
						rec.kv.kv[i].value);
			break;
		case CAPFILE_REC_EVENT:
			if (!events++)
				first_ts = rec.event.e->ts_ns;
			last_ts = rec.event.e->ts_ns;
			if (report_event(stk, &ks, &o, rec.event.e))
				goto out_err;
			break;
		default:
			break;
		}
	}
	pass_ns[0] = util__clock_ns(CLOCK_PROCESS_CPUTIME_ID) - t0;
	/*
	 * Benchmarks: SFPROF_REPORT_REPEAT=N runs the events N-1 more times
	 * with every cache warm (weights in the output scale by N) and
	 * prints the CPU time of each pass per event.
	 */
	repeat = getenv("SFPROF_REPORT_REPEAT") ? atoi(getenv("SFPROF_REPORT_REPEAT")) : 1;
	for (int pass = 1; pass < repeat && pass < 16 && rc == 0; pass++) {
		struct capfile_reader *r2 = capfile_reader__open(o.input, NULL);
		if (!r2)
			break;
		t0 = util__clock_ns(CLOCK_PROCESS_CPUTIME_ID);
		while (capfile_reader__next(r2, &rec) == 1)
			if (rec.type == CAPFILE_REC_EVENT &&
			    report_event(stk, &ks, &o, rec.event.e)) {
				capfile_reader__free(r2);
				goto out_err;
			}
		pass_ns[pass] = util__clock_ns(CLOCK_PROCESS_CPUTIME_ID) - t0;
		capfile_reader__free(r2);
	}
	for (int pass = 0; pass < repeat && pass < 16 && repeat > 1; pass++)
		fprintf(stderr, "report_pass_%d_ns_per_event: %.0f\n", pass + 1,
			events ? (double)pass_ns[pass] / (double)events : 0.0);
	if (rc < 0) {
		fprintf(stderr,
			"sfprof: %s: %s\nsfprof: the report covers the %" PRIu64
			" events before the damage\n",
			o.input, capfile_reader__error(r), events);
	} else if (!capfile_reader__complete(r)) {
		fprintf(stderr,
			"sfprof: %s: the capture has no end record (was `sfprof record` "
			"interrupted?); the report covers its %" PRIu64 " events\n",
			o.input, events);
	}
	for (int i = 0; i < REPORT_EVENTS; i++) {
		if (!stk[i])
			continue;
		profile__set_duration(prof[i], last_ts - first_ts);
		if (stacks__flush(stk[i]))
			goto out_err;
	}
	proc_cache__for_each_problem(pc, report__print_problem, &problems);
	err = 0;
	for (int i = 0; i < REPORT_EVENTS && !err; i++)
		if (stk[i])
			err = report__write_event_profile(prof[i], &o, 1u << i);
	if (o.stats) {
		struct stacks_stats st;
		struct proc_stats ps;
		fprintf(stderr, "report_events: %" PRIu64 "\n", events);
		for (int i = 0; i < REPORT_EVENTS; i++) {
			if (!stk[i])
				continue;
			if (o.event & (o.event - 1))
				fprintf(stderr, "# %s\n", report__event_name(1u << i));
			stacks__stats(stk[i], &st);
			stacks_stats__print(&st, stderr);
		}
		proc_cache__stats(pc, &ps);
		proc_stats__print(&ps, stderr);
	}
	status = err ? 1 : 0;
	goto out;

out_err:
	fprintf(stderr, "sfprof: report: out of memory\n");
out:
	for (int i = 0; i < REPORT_EVENTS; i++) {
		stacks__free(stk[i]);
		profile__free(prof[i]);
	}
	proc_cache__free(pc);
	capfile_reader__free(r);
	ksyms__free(&ksyms);
	free(ks.v);
	return status;
}

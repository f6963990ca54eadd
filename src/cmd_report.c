// SPDX-License-Identifier: MIT
/*
 * `sfprof report FILE` and the live/record sink (include/report.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capfile.h"
#include "cmd.h"
#include "report.h"
#include "stacks.h"

/* ------------------------------------------------------------ ksyms */

/* Kernel symbols: /proc/kallsyms live, KSYM records offline. */
struct ksym {
	uint64_t addr;
	char *name;
};

struct ksyms {
	struct ksym *v;
	size_t n, cap;
	int sorted, loaded;
};

static int ksyms__add(struct ksyms *k, uint64_t addr, const char *name)
{
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 4096;
		struct ksym *nv = realloc(k->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		k->v = nv;
		k->cap = cap;
	}
	k->v[k->n].addr = addr;
	k->v[k->n].name = strdup(name);
	if (!k->v[k->n].name)
		return -ENOMEM;
	k->n++;
	k->sorted = 0;
	return 0;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void ksyms__load_kallsyms(struct ksyms *k)
{
	char line[512], type, name[256];
	unsigned long long addr;
	FILE *f;

	k->loaded = 1;
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (addr && (type == 't' || type == 'T' || type == 'w' ||
			     type == 'W'))
			if (ksyms__add(k, addr, name))
				break;
	}
	fclose(f);
}

/* The symbol holding addr (largest start <= addr). */
static const struct ksym *ksyms__find(struct ksyms *k, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!k->sorted) {
		qsort(k->v, k->n, sizeof(*k->v), ksym_cmp);
		k->sorted = 1;
	}
	hi = k->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &k->v[lo - 1] : NULL;
}

static const char *ksyms__name(void *ctx, uint64_t addr)
{
	struct ksyms *k = ctx;
	const struct ksym *s;

	if (!k->loaded)
		ksyms__load_kallsyms(k);
	s = ksyms__find(k, addr);
	return s ? s->name : NULL;
}

static void ksyms__free(struct ksyms *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->v[i].name);
	free(k->v);
	memset(k, 0, sizeof(*k));
}

/* Kernel stacks of a capture file, by stack id (last one wins). */
struct kstack_ent {
	int32_t id;
	uint32_t nr;
	uint64_t ips[CAPFILE_KSTACK_MAX];
};

struct kstacks {
	struct kstack_ent *v;
	size_t n, cap;
};

static struct kstack_ent *kstacks__get(struct kstacks *t, int32_t id, int add)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].id == id)
			return &t->v[i];
	if (!add)
		return NULL;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct kstack_ent *nv = realloc(t->v, cap * sizeof(*nv));
		if (!nv)
			return NULL;
		t->v = nv;
		t->cap = cap;
	}
	t->v[t->n].id = id;
	t->v[t->n].nr = 0;
	return &t->v[t->n++];
}

/* ------------------------------------------------------------ common */

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void print_problem(void *ctx, const char *path, const char *what,
			  const char *detail)
{
	(void)ctx;
	fprintf(stderr, "sfprof: %s: %s%s%s\n", path, what,
		detail && *detail ? ": " : "", detail ? detail : "");
}

static int write_profile(struct profile *prof, const struct sfprof_opts *o)
{
	int err = profile__write(prof, o->format, o->output);

	if (err)
		fprintf(stderr, "sfprof: writing %s: %s\n",
			o->output ? o->output : "stdout", strerror(-err));
	return err;
}

/* ------------------------------------------------------------ the sink */

#define PID_GENS 64

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
	struct {
		uint32_t pid;
		uint64_t gen;
	} gens[PID_GENS];
	size_t ngens;
	uint64_t written_ksyms;
	int failed;
};

/* live and record both unwind every event: what a complete walk learns
 * about a thread's frame top goes back to the capture */
static void report_sink__thread_top(void *ctx, uint32_t tid, uint64_t sp)
{
	capture__set_thread_top(ctx, tid, sp);
}

static struct profile *sink_profile(struct report_sink *s,
				    const struct sfprof_event *e)
{
	char comm[SFPROF_COMM_LEN + 1];
	struct stacks_opts so = {
		.kind = s->o.event == SFPROF_SEL_FUTEX ? PROFILE_FUTEX : PROFILE_CPU,
		.per_thread = s->o.per_thread,
		.by_lock = s->o.by_lock,
		.kernel = s->o.kernel,
		.no_inline = s->o.no_inline,
		/* live: the pid is the process the map is for */
		.perf_maps = !s->record,
	};
	struct profile_meta meta = {
		.kind = so.kind,
		.hz = s->o.freq,
		.start_unix_ns = now_ns(CLOCK_REALTIME),
	};

	if (s->prof)
		return s->prof;
	snprintf(comm, sizeof(comm), "%.*s", SFPROF_COMM_LEN, e->comm);
	meta.target_pid = e->pid;
	meta.target_comm = comm;
	if (s->o.command)
		meta.target_cmdline = s->o.command[0];
	s->prof = profile__new(&meta);
	if (!s->prof)
		return NULL;
	s->stacks = stacks__new(s->pc, s->prof, &so);
	if (!s->stacks) {
		profile__free(s->prof);
		s->prof = NULL;
		return NULL;
	}
	stacks__set_ksym(s->stacks, ksyms__name, &s->ksyms);
	if (s->cap)
		stacks__set_thread_top(s->stacks, report_sink__thread_top, s->cap);
	return s->prof;
}

struct report_sink *report_sink__new(const struct sfprof_opts *o)
{
	struct report_sink *s = calloc(1, sizeof(*s));
	struct proc_cache_opts po = { .no_demangle = o->no_demangle,
				      .full_names = o->full_names };

	if (!s)
		return NULL;
	s->o = *o;
	s->record = o->cmd == SFPROF_CMD_RECORD;
	s->start_mono = now_ns(CLOCK_MONOTONIC);
	s->pc = proc_cache__new(&po);
	if (!s->pc)
		goto err_out;
	if (s->record) {
		char cmd[512] = "";
		struct capfile_meta m = {
			.event = o->event == SFPROF_SEL_FUTEX ? "futex" : "cpu",
			.hz = o->freq,
			.stack_size = o->stack_size,
			.pid = (uint32_t)o->pid,
			.start_mono_ns = s->start_mono,
			.start_unix_ns = now_ns(CLOCK_REALTIME),
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

void report_sink__free(struct report_sink *s)
{
	if (!s)
		return;
	if (s->w)
		capfile_writer__close(s->w);
	stacks__free(s->stacks);
	profile__free(s->prof);
	proc_cache__free(s->pc);
	ksyms__free(&s->ksyms);
	free(s);
}

/* Write the mappings of e's process if they changed since last written. */
static int record_maps(struct report_sink *s, struct proc *p,
		       const struct sfprof_event *e)
{
	struct proc_mapping_rec *recs = NULL;
	size_t nr = 0, i;
	uint64_t gen = proc__generation(p);
	int err;

	for (i = 0; i < s->ngens; i++)
		if (s->gens[i].pid == e->pid)
			break;
	if (i < s->ngens && s->gens[i].gen == gen)
		return 0;
	if (i == s->ngens) {
		if (s->ngens == PID_GENS) /* many processes: reuse a slot */
			i = e->pid % PID_GENS;
		else
			s->ngens++;
	}
	s->gens[i].pid = e->pid;
	s->gens[i].gen = gen;
	err = proc__snapshot_maps(p, &recs, &nr);
	if (err)
		return 0; /* no maps (process gone): events still recorded */
	for (size_t j = 0; j < nr && !err; j++)
		err = capfile_writer__mapping(s->w, e->pid, e->ts_ns, &recs[j]);
	free(recs);
	return err;
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

int report_sink__event(void *ctx, const struct sfprof_event *e, size_t len)
{
	struct report_sink *s = ctx;
	uint64_t kips[CAPFILE_KSTACK_MAX];
	int nk = 0, err;

	(void)len;
	if (!sink_profile(s, e))
		return -ENOMEM;
	if (s->o.kernel && s->cap && e->kstack_id >= 0 && !s->record) {
		nk = capture__kstack(s->cap, e->kstack_id, kips, CAPFILE_KSTACK_MAX);
		if (nk < 0)
			nk = 0;
	}
	if (!s->record)
		return stacks__add_event(s->stacks, e, kips, (size_t)nk);

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
	struct proc *p = proc_cache__lookup(s->pc, e->pid);
	err = p ? record_maps(s, p, e) : 0;
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
		e0.pid = (uint32_t)o->pid;
		if (!sink_profile(s, &e0))
			return -ENOMEM;
	}
	profile__set_duration(s->prof, now_ns(CLOCK_MONOTONIC) - s->start_mono);
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
		err = write_profile(s->prof, o);
	}
	proc_cache__for_each_problem(s->pc, print_problem, NULL);
	if (o->stats)
		print_stats(s);
	return err;
}

/* ------------------------------------------------------------ report */

static int report_event(struct stacks *stk, struct kstacks *ks,
			const struct sfprof_opts *o, const struct sfprof_event *e)
{
	const struct kstack_ent *k = NULL;

	if (o->kernel && e->kstack_id >= 0)
		k = kstacks__get(ks, e->kstack_id, 0);
	return stacks__add_event(stk, e, k ? k->ips : NULL, k ? k->nr : 0);
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
	struct profile *prof = NULL;
	struct stacks *stk = NULL;
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
	if (!event_given(argc, argv) && strcmp(meta->event, "futex") == 0)
		o.event = SFPROF_SEL_FUTEX;
	so.kind = o.event == SFPROF_SEL_FUTEX ? PROFILE_FUTEX : PROFILE_CPU;
	/* a capture recorded with --kernel reports its kernel frames */
	if (meta->kernel_stacks)
		o.kernel = 1;
	so.per_thread = o.per_thread;
	so.by_lock = o.by_lock;
	so.kernel = o.kernel;
	so.no_inline = o.no_inline;
	/* benchmarks: measure unwinding + symbolization without aggregation */
	so.no_profile = getenv("SFPROF_REPORT_NO_PROFILE") != NULL;

	struct proc_cache_opts po = { .offline = 1, .no_demangle = o.no_demangle,
				      .full_names = o.full_names };
	pc = proc_cache__new(&po);
	struct profile_meta pm = {
		.kind = so.kind,
		.hz = meta->hz,
		.target_pid = meta->pid,
		.target_cmdline = meta->command[0] ? meta->command : NULL,
		.start_unix_ns = meta->start_unix_ns,
	};
	prof = pc ? profile__new(&pm) : NULL;
	stk = prof ? stacks__new(pc, prof, &so) : NULL;
	if (!stk) {
		fprintf(stderr, "sfprof: out of memory\n");
		goto out;
	}
	stacks__set_ksym(stk, ksyms__name, &ksyms);
	ksyms.loaded = 1; /* names come from the capture, not this kernel */

	/* pass timing in CPU time: benchmarks run on shared machines */
	t0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	while ((rc = capfile_reader__next(r, &rec)) == 1) {
		switch (rec.type) {
		case CAPFILE_REC_MAPPING:
			err = proc_cache__add_mapping(pc, rec.mapping.pid,
						      &rec.mapping.m);
			if (err && err != -EINVAL)
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
	pass_ns[0] = now_ns(CLOCK_PROCESS_CPUTIME_ID) - t0;
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
		t0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
		while (capfile_reader__next(r2, &rec) == 1)
			if (rec.type == CAPFILE_REC_EVENT &&
			    report_event(stk, &ks, &o, rec.event.e)) {
				capfile_reader__free(r2);
				goto out_err;
			}
		pass_ns[pass] = now_ns(CLOCK_PROCESS_CPUTIME_ID) - t0;
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
	profile__set_duration(prof, last_ts - first_ts);
	if (stacks__flush(stk))
		goto out_err;
	proc_cache__for_each_problem(pc, print_problem, &problems);
	err = write_profile(prof, &o);
	if (o.stats) {
		struct stacks_stats st;
		struct proc_stats ps;
		fprintf(stderr, "report_events: %" PRIu64 "\n", events);
		stacks__stats(stk, &st);
		stacks_stats__print(&st, stderr);
		proc_cache__stats(pc, &ps);
		proc_stats__print(&ps, stderr);
	}
	status = err ? 1 : 0;
	goto out;

out_err:
	fprintf(stderr, "sfprof: report: out of memory\n");
out:
	stacks__free(stk);
	profile__free(prof);
	proc_cache__free(pc);
	capfile_reader__free(r);
	ksyms__free(&ksyms);
	free(ks.v);
	return status;
}

// SPDX-License-Identifier: MIT
/*
 * `sfprof agent`: the live pipeline (main.c's, through run_int.h's hooks)
 * run until SIGTERM/SIGINT, cut into one-second slices that src/agent/
 * keeps for --retention seconds and serves over HTTP. --interval/-o files
 * are made from the same slices. Its own options are taken out of argv
 * here; the rest are the one-shot options (-p, --cgroup, -e, -F ...),
 * with -a when no target is given.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "agent/agent.h"
#include "cli/cmd.h"
#include "output/interval.h"
#include "cli/options.h"
#include "session/report.h"
#include "cli/run_int.h"
#include "util.h"

#define AGENT_SLICE_NS 1000000000ull
#define AGENT_DEFAULT_RETENTION 60u
#define AGENT_DEFAULT_PORT 6060u
/* an exited process's labels are kept this long for its last samples */
#define AGENT_PIDS_KEEP_NS (5 * AGENT_SLICE_NS)
#define AGENT_SECRET_MAX 65536

struct agent_opts {
	const char *listen;
	unsigned retention;
	const char *token_file, *tls_cert, *tls_key;
	uint64_t interval_ns;
	unsigned header_timeout;
};

struct agent_run {
	struct agent a;
	struct sfprof_opts o;
	struct agent_opts ao;
	struct agent_pids *pids;
	struct report_sink *rs;
	struct capture *cap;
	uint64_t last_snap, last_sweep, last_mem;
	uint64_t rss, pss, priv; /* the last smaps_rollup read */
	/* what the capture thread counts between snapshots */
	uint64_t samples[4], stops[UNWIND_STOP__NR];
	/* --interval: the current file interval, one profile per event */
	struct profile *acc[4];
	uint64_t iv_start, iv_end, iv_unix_start;
	int64_t unix_minus_mono;
	int file_err;
};

static void usage(FILE *f)
{
	fputs("usage: sfprof agent [agent options] [options] [-a | -p PID | --cgroup DIR]\n"
	      "Profile the whole machine (-a, the default) until SIGTERM/SIGINT, keep the last\n"
	      "--retention seconds in memory and serve them over HTTP as Go's net/http/pprof:\n"
	      "  /debug/pprof/profile?seconds=N  on-CPU samples (-e cpu)\n"
	      "  /debug/pprof/block?seconds=N    time off CPU (-e offcpu)\n"
	      "  /debug/pprof/mutex?seconds=N    futex waits (-e futex)\n"
	      "  (filters: pid=, comm=, cgroup=; N up to 3600: past --retention it waits)\n"
	      "  /metrics (Prometheus), /healthz\n"
	      "\nAgent options:\n"
	      "      --listen HOST:PORT    address to serve on (default: 127.0.0.1:6060);\n"
	      "                            another than loopback needs a token or TLS\n"
	      "      --retention SEC       seconds kept in memory, 2..3600 (default: 60)\n"
	      "      --auth-token-file F   require 'Authorization: Bearer TOKEN', TOKEN\n"
	      "                            the file's first line\n"
	      "      --tls-cert F --tls-key F  serve HTTPS with this PEM certificate and key\n"
	      "      --interval SEC        also write one profile per SEC to -o FILE (%t: the\n"
	      "                            start); without it, -o gets the last retention\n"
	      "                            at exit\n"
	      "      --header-timeout SEC  close a connection whose request header is not in\n"
	      "                            within SEC (default: 10)\n"
	      "Limits: 1024 connections, 128 per address, 16 KiB per request, 60 s idle,\n"
	      "4 profile requests at once (more get 503).\n"
	      "\nThe one-shot options follow (`sfprof --help` explains them):\n", f);
}

static int bad(const char *msg, const char *arg)
{
	fprintf(stderr, "sfprof: agent: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	return -EINVAL;
}

static int parse_uint(const char *s, unsigned min, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

/*
 * Take the agent's options out of argv into ao; the rest go to fwd
 * (argv[0] first), with "-a" added when no target is named. 0, 1 for
 * --help, or -EINVAL (said).
 */
static int agent_opts__split(int argc, char **argv, struct agent_opts *ao, char **fwd, int *nfwd,
			     int *no_output)
{
	static const char *const with_value[] = { "--listen", "--retention", "--auth-token-file",
						  "--tls-cert", "--tls-key", "--interval",
						  "--header-timeout" };
	int target = 0, output = 0, n = 0;

	fwd[n++] = argv[0];
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		size_t k, nk = sizeof(with_value) / sizeof(with_value[0]);

		if (!strcmp(a, "--"))
			return bad("profiles processes that run: give -a, -p PID or --cgroup DIR, "
				   "not a COMMAND", NULL);
		if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			return 1;
		for (k = 0; k < nk; k++) {
			size_t l = strlen(with_value[k]);

			if (!strncmp(a, with_value[k], l) && (a[l] == 0 || a[l] == '=')) {
				if (a[l] == '=')
					val = a + l + 1;
				else if (i + 1 < argc)
					val = argv[++i];
				else
					return bad("option needs a value", a);
				break;
			}
		}
		if (k == nk) {
			if (!strcmp(a, "-a") || !strcmp(a, "--all") || !strncmp(a, "-p", 2) ||
			    !strncmp(a, "--pid", 5) || !strncmp(a, "--cgroup", 8))
				target = 1;
			if (!strncmp(a, "-o", 2) || !strncmp(a, "--output", 8))
				output = 1;
			fwd[n++] = argv[i];
			continue;
		}
		switch (k) {
		case 0:
			ao->listen = val;
			break;
		case 1:
			if (parse_uint(val, 2, AGENT_MAX_SECONDS, &ao->retention))
				return bad("--retention: expected seconds from 2 to 3600", val);
			break;
		case 2:
			ao->token_file = val;
			break;
		case 3:
			ao->tls_cert = val;
			break;
		case 4:
			ao->tls_key = val;
			break;
		case 6:
			if (parse_uint(val, 1, 600, &ao->header_timeout))
				return bad("--header-timeout: expected seconds from 1 to 600", val);
			break;
		default: {
			unsigned sec;

			if (parse_uint(val, 1, 86400, &sec))
				return bad("--interval: expected whole seconds from 1 to 86400", val);
			ao->interval_ns = (uint64_t)sec * 1000000000ull;
		}
		}
	}
	if (!target)
		fwd[n++] = "-a";
	/* the one-shot parser wants -o for several events (it writes a
	 * file each); the agent writes none without -o: a placeholder the
	 * caller clears (*no_output) */
	if (!output) {
		fwd[n++] = "-o";
		fwd[n++] = "/dev/null";
	}
	*no_output = !output;
	fwd[n] = NULL;
	*nfwd = n;
	return 0;
}

/* HOST:PORT or [V6]:PORT into host (numeric) and port. */
static int parse_listen(const char *s, char *host, size_t size, unsigned *port)
{
	const char *colon;
	size_t hl;

	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			return -EINVAL;
		hl = (size_t)(close - s - 1);
		colon = close + 1;
		s++;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -EINVAL;
		hl = (size_t)(colon - s);
	}
	if (!hl || hl >= size)
		return -EINVAL;
	memcpy(host, s, hl);
	host[hl] = 0;
	return parse_uint(colon + 1, 0, 65535, port);
}

static int is_loopback(const char *host)
{
	return !strncmp(host, "127.", 4) || !strcmp(host, "::1");
}

/* A secret file (token, key) into a malloc'd string; its trailing
 * newline dropped. NULL after a message. */
static char *read_secret(const char *what, const char *path)
{
	char *buf = malloc(AGENT_SECRET_MAX + 1);
	ssize_t n, got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (!buf || fd < 0) {
		fprintf(stderr, "sfprof: agent: cannot read %s %s: %s\n", what, path,
			strerror(errno));
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while (got < AGENT_SECRET_MAX && (n = read(fd, buf + got, AGENT_SECRET_MAX - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got] = 0;
	while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == '\r'))
		buf[--got] = 0;
	if (!got || got >= AGENT_SECRET_MAX || strlen(buf) != (size_t)got) {
		fprintf(stderr, "sfprof: agent: %s %s is empty, binary or over 64 KiB\n", what, path);
		free(buf);
		return NULL;
	}
	return buf;
}

/* ---- file output (--interval, -o) ---- */

static int write_event(struct agent_run *r, struct profile *p, uint32_t sel, const char *path)
{
	struct sfprof_opts one = r->o;
	int err;

	one.output = path;
	err = report__write_event_profile(p, &one, sel);
	if (err && !r->file_err)
		r->file_err = err;
	return err;
}

/* The current --interval's profiles to files, and a new interval. */
static void interval_flush(struct agent_run *r, uint64_t end_mono)
{
	char path[4096];

	if (interval__expand_path(path, sizeof(path), r->o.output, r->iv_unix_start,
				  (uint32_t)getpid())) {
		fprintf(stderr, "sfprof: -o %s: name too long\n", r->o.output);
		r->file_err = -ENAMETOOLONG;
		path[0] = 0;
	}
	for (int i = 0; i < 4; i++) {
		if (!r->acc[i])
			continue;
		profile__set_duration(r->acc[i], end_mono - r->iv_start);
		if (path[0])
			write_event(r, r->acc[i], 1u << i, path);
		profile__free(r->acc[i]);
		r->acc[i] = NULL;
	}
	r->iv_start = end_mono;
	r->iv_end = end_mono + r->ao.interval_ns;
	r->iv_unix_start = (uint64_t)((int64_t)end_mono + r->unix_minus_mono);
}

static void interval_add(struct agent_run *r, int idx, const struct profile *p, uint64_t start,
			 uint64_t end)
{
	uint64_t dropped = 0;

	if (!r->iv_end) {
		r->iv_start = start;
		r->iv_end = start + r->ao.interval_ns;
		r->iv_unix_start = profile__meta(p)->start_unix_ns;
	}
	if (end > r->iv_end)
		interval_flush(r, r->iv_end);
	if (!r->acc[idx]) {
		struct profile_meta m = *profile__meta(p);

		m.start_unix_ns = r->iv_unix_start;
		if (!(r->acc[idx] = profile__new(&m)))
			return;
	}
	if (agent_profile__merge(r->acc[idx], p, NULL, AGENT_MERGE_MAX_STACKS, &dropped))
		r->file_err = -ENOMEM;
}

/* No --interval: the retention held at exit, per event, to -o. */
static void retention_write(struct agent_run *r)
{
	for (int i = 0; i < 4; i++) {
		struct agent_slice *v[64];
		struct profile *p = NULL;
		uint64_t last = 0, first = 0, dropped = 0;
		size_t n;

		if (!(r->o.event & (1u << i)))
			continue;
		while ((n = agent_slices__get(r->a.slices, 1u << i, last, 0, UINT64_MAX, v, 64))) {
			for (size_t k = 0; k < n; k++) {
				if (!p) {
					p = profile__new(profile__meta(v[k]->prof));
					first = v[k]->start_mono;
				}
				if (p)
					agent_profile__merge(p, v[k]->prof, NULL,
							     AGENT_MERGE_MAX_STACKS, &dropped);
				profile__set_duration(p, v[k]->end_mono - first);
				last = v[k]->seq;
				agent_slices__put(r->a.slices, v[k]);
			}
		}
		if (p)
			write_event(r, p, 1u << i, r->o.output);
		profile__free(p);
	}
}

/* ---- the hooks ---- */

static void on_slice(void *ctx, uint32_t sel, struct profile *prof, uint64_t start,
		     uint64_t end, const struct stacks_stats *st)
{
	struct agent_run *r = ctx;
	int idx = __builtin_ctz(sel);

	r->samples[idx] += profile__nr_events(prof);
	if (st)
		for (int i = 0; i < UNWIND_STOP__NR; i++)
			r->stops[i] += st->unwind.stop[i];
	if (r->ao.interval_ns)
		interval_add(r, idx, prof, start, end);
	agent_slices__add(r->a.slices, sel, prof, start, end);
}

static int on_sink(void *ctx, struct report_sink *rs)
{
	struct agent_run *r = ctx;

	r->rs = rs;
	report_sink__set_slice_hook(rs, on_slice, r, agent_pids__label, r->pids);
	return 0;
}

static void on_capture(void *ctx, struct capture *c)
{
	((struct agent_run *)ctx)->cap = c;
}

static void on_event(void *ctx, const struct sfprof_event *e)
{
	struct agent_run *r = ctx;

	if (e->kind == SFPROF_EV_EXIT)
		agent_pids__exit(r->pids, e->pid, e->ts_ns);
	else if (e->kind != SFPROF_EV_FORK) {
		char comm[SFPROF_COMM_LEN + 1];

		snprintf(comm, sizeof(comm), "%.*s", SFPROF_COMM_LEN, e->comm);
		agent_pids__touch(r->pids, e->pid, e->pid == e->tid ? comm : NULL);
	}
}

static void on_sideband(void *ctx, const struct sideband_rec *rec)
{
	if (rec->kind == SIDEBAND_EXEC)
		agent_pids__exec(((struct agent_run *)ctx)->pids, rec->pid);
}

static uint64_t prog_ns(const struct capture_stats *st, uint64_t *cnt)
{
	uint64_t ns = 0;

	*cnt = 0;
	for (size_t i = 0; i < st->nr_prog; i++) {
		ns += st->prog[i].run_ns;
		*cnt += st->prog[i].run_cnt;
	}
	return ns;
}

/* The counters /metrics shows, refreshed at most twice a second. */
static void snapshot(struct agent_run *r)
{
	struct agent_counters c;
	struct capture_stats st;
	struct agent_pids_stats ps;
	struct proc_stats pr;

	uint64_t now = util__now_ns();

	memset(&st, 0, sizeof(st));
	if (r->cap)
		capture__stats(r->cap, &st);
	/* smaps_rollup walks every mapping: every 2 s is enough */
	if (now - r->last_mem >= 2000000000ull) {
		r->last_mem = now;
		agent_metrics__memory(&r->rss, &r->pss, &r->priv);
	}
	agent_pids__stats(r->pids, &ps);
	memset(&pr, 0, sizeof(pr));
	if (r->rs)
		report_sink__proc_stats(r->rs, &pr);
	pthread_mutex_lock(&r->a.mu);
	c = r->a.c;
	c.events[0] = st.events_cpu;
	c.events[1] = st.events_futex;
	c.events[2] = st.events_offcpu;
	memcpy(c.samples, r->samples, sizeof(c.samples));
	memcpy(c.unwind_stop, r->stops, sizeof(c.unwind_stop));
	c.lost_ringbuf = st.bpf[SFPROF_CNT_LOST_RINGBUF];
	c.lost_stack_read = st.bpf[SFPROF_CNT_LOST_STACK_READ];
	c.stack_reads_deferrable = (uint64_t)st.defer_reads;
	c.lost_busy = st.bpf[SFPROF_CNT_LOST_BUSY];
	c.lost_entry_map = st.bpf[SFPROF_CNT_LOST_ENTRY_MAP];
	c.lost_task = st.bpf[SFPROF_CNT_LOST_TASK];
	c.lost_target_map = st.bpf[SFPROF_CNT_LOST_TARGET_MAP];
	c.lost_offcpu_map = st.bpf[SFPROF_CNT_LOST_OFFCPU_MAP];
	c.lost_py_busy = st.bpf[SFPROF_CNT_PY_LOST_BUSY];
	c.lost_sideband = st.sideband.lost;
	c.procs_created = pr.procs;
	c.procs_tracked = pr.procs - pr.procs_reaped;
	c.binaries_loaded = pr.dso.loads;
	c.binaries_evicted = pr.dso.evicted;
	c.binaries_shed = pr.dso.shed;
	c.binaries_shed_hot = pr.dso.shed_hot;
	c.dwarf_trims = pr.dso.dwarf_trims;
	c.dwarf_closes = pr.dso.dwarf_closes;
	c.labelled_procs = ps.tracked;
	c.label_reads = ps.reads;
	c.label_table_full = ps.full;
	c.bpf_run_ns = prog_ns(&st, &c.bpf_run_cnt);
	c.rss = r->rss;
	c.pss = r->pss;
	c.priv = r->priv;
	r->a.c = c;
	r->a.running = 1;
	pthread_mutex_unlock(&r->a.mu);
}

static void on_drained(void *ctx, uint64_t now_ns)
{
	struct agent_run *r = ctx;

	if (now_ns - r->last_snap >= 500000000ull) {
		r->last_snap = now_ns;
		snapshot(r);
	}
	if (now_ns - r->last_sweep >= AGENT_SLICE_NS) {
		r->last_sweep = now_ns;
		agent_pids__sweep(r->pids, now_ns, AGENT_PIDS_KEEP_NS);
	}
}

/* ---- the command ---- */

/* The HTTP options from ao; 0, or an exit status after a message. */
static int http_opts(const struct agent_opts *ao, struct agent_http_opts *ho, char *host,
		     size_t size)
{
	if (parse_listen(ao->listen ? ao->listen : "127.0.0.1:6060", host, size, &ho->port)) {
		bad("--listen: expected HOST:PORT or [IPV6]:PORT with a numeric address",
		    ao->listen);
		return SFPROF_EXIT_USAGE;
	}
	ho->host = host;
	if (!!ao->tls_cert != !!ao->tls_key) {
		bad("TLS needs both --tls-cert and --tls-key", NULL);
		return SFPROF_EXIT_USAGE;
	}
	if (!is_loopback(host) && !ao->token_file && !ao->tls_cert) {
		fprintf(stderr, "sfprof: agent: --listen %s is reachable from other machines: "
			"give --auth-token-file FILE or --tls-cert/--tls-key (or listen on "
			"127.0.0.1)\n", ao->listen);
		return SFPROF_EXIT_USAGE;
	}
	if (ao->token_file && !(ho->token = read_secret("token file", ao->token_file)))
		return SFPROF_EXIT_USAGE;
	if (ao->tls_cert && (!(ho->tls_cert = read_secret("certificate", ao->tls_cert)) ||
			     !(ho->tls_key = read_secret("key", ao->tls_key))))
		return SFPROF_EXIT_USAGE;
	ho->max_conns = 1024;
	ho->max_per_ip = 128;
	ho->max_profiles = 4;
	ho->header_timeout_s = ao->header_timeout;
	ho->idle_timeout_s = 60;
	return 0;
}

int cmd_agent_run(int argc, char **argv, run_stacks_fn run)
{
	struct run_hooks hooks = { .on_sink = on_sink, .on_capture = on_capture,
				   .on_event = on_event, .on_sideband = on_sideband,
				   .on_drained = on_drained };
	struct agent_http_opts ho = { 0 };
	struct agent_http *http = NULL;
	struct agent_run *r = calloc(1, sizeof(*r));
	char **fwd = calloc((size_t)argc + 4, sizeof(*fwd)), host[256];
	struct rlimit rl;
	int nfwd = 0, status = 1, err, no_output = 0;

	if (!r || !fwd)
		goto out;
	r->ao.retention = AGENT_DEFAULT_RETENTION;
	r->ao.header_timeout = 10;
	err = agent_opts__split(argc, argv, &r->ao, fwd, &nfwd, &no_output);
	if (err == 1) {
		usage(stdout);
		sfprof_opts__usage(SFPROF_CMD_LIVE, stdout);
		status = 0;
		goto out;
	}
	status = SFPROF_EXIT_USAGE;
	if (err)
		goto out;
	sfprof_opts__init(&r->o, SFPROF_CMD_LIVE);
	if (sfprof_opts__parse(&r->o, nfwd, fwd, stdout, stderr))
		goto out;
	if (r->o.help) {
		status = 0;
		goto out;
	}
	if (no_output)
		r->o.output = NULL;
	if (r->o.command) {
		bad("profiles processes that run: give -a, -p PID or --cgroup DIR", NULL);
		goto out;
	}
	if (r->ao.interval_ns && (!r->o.output || !strcmp(r->o.output, "-") ||
				  interval__check_template(r->o.output))) {
		bad("--interval writes a file per interval: give -o FILE (%t: the start)", NULL);
		goto out;
	}
	if (report_output__check(r->o.output))
		goto out;
	if ((status = http_opts(&r->ao, &ho, host, sizeof(host))))
		goto out;
	status = 1;
	r->o.quiet = 1;
	r->o.interval_ns = AGENT_SLICE_NS; /* the sink cuts slices */
	r->a.retention_ns = (uint64_t)r->ao.retention * 1000000000ull;
	r->a.slice_ns = AGENT_SLICE_NS;
	r->a.events = r->o.event;
	r->a.hz = r->o.freq;
	r->a.start_mono = util__now_ns();
	r->unix_minus_mono = (int64_t)util__clock_ns(CLOCK_REALTIME) - (int64_t)r->a.start_mono;
	pthread_mutex_init(&r->a.mu, NULL);
	r->a.slices = agent_slices__new(r->a.retention_ns);
	r->pids = agent_pids__new(NULL);
	if (!r->a.slices || !r->pids)
		goto out;
	/* idle connections cost a descriptor each */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < 4096 && rl.rlim_max > rl.rlim_cur) {
		rl.rlim_cur = rl.rlim_max < 4096 ? rl.rlim_max : 4096;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	http = agent_http__start(&ho, &r->a);
	if (!http)
		goto out;
	fprintf(stderr, "sfprof agent: listening on %s://%s%s%s:%u/\n", ho.tls_cert ? "https" : "http",
		strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "",
		agent_http__port(http));
	hooks.ctx = r;
	status = run(&r->o, &hooks);
	/* the last slices are in: the files, then the server */
	agent_slices__close(r->a.slices);
	if (r->ao.interval_ns && r->iv_end)
		interval_flush(r, util__now_ns() < r->iv_end ? util__now_ns() : r->iv_end);
	else if (r->o.output && !r->ao.interval_ns)
		retention_write(r);
	if (r->file_err && !status)
		status = 1;
	if (agent_http__stop(http))
		return status; /* a job still reads r: the exit frees it */
	http = NULL;
out:
	if (r) {
		for (int i = 0; i < 4; i++)
			profile__free(r->acc[i]);
		agent_slices__free(r->a.slices);
		agent_pids__free(r->pids);
	}
	free((char *)ho.token);
	free((char *)ho.tls_cert);
	free((char *)ho.tls_key);
	free(fwd);
	free(r);
	return status;
}

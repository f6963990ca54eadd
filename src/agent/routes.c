// SPDX-License-Identifier: MIT
/*
 * The profile routes, as Go's net/http/pprof names them:
 *   /debug/pprof/profile  on-CPU samples      (-e cpu)
 *   /debug/pprof/block    time off CPU, ns    (-e offcpu)
 *   /debug/pprof/mutex    futex waits: count and ns (-e futex)
 * ?seconds=N (1..AGENT_MAX_SECONDS; profile's default 30 as Go's, block's
 * and mutex's the whole retention), and filters pid=, comm= (process
 * name), cgroup= (a cgroup v2 path and the cgroups below it).
 *
 * The window is the latest N seconds the slices can cover: answered at
 * once when they hold N seconds already; otherwise (N past --retention,
 * or an agent younger than N) the job waits for the slices that complete
 * it, as Go's handler waits N seconds, merging each as it comes so
 * nothing falls out of the retention meanwhile.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_int.h"
#include "cli/options.h"
#include "output/output.h"
#include "session/report.h"
#include "util.h"

#define BADREQ(r, ...)                                                         \
	do {                                                                   \
		snprintf((r)->error, sizeof((r)->error), "sfprof agent: " __VA_ARGS__); \
		strncat((r)->error, "\n", sizeof((r)->error) - strlen((r)->error) - 1); \
		(r)->code = 400;                                               \
	} while (0)

struct parse_ctx {
	struct agent_req *r;
	unsigned given; /* bit per parameter */
};

static int parse_uint(const char *v, uint64_t max, uint64_t *out)
{
	uint64_t n = 0;

	if (!v || !*v || strlen(v) > 10)
		return -EINVAL;
	for (const char *p = v; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		n = n * 10 + (uint64_t)(*p - '0');
	}
	if (n == 0 || n > max)
		return -EINVAL;
	*out = n;
	return 0;
}

static int printable(const char *v)
{
	for (const unsigned char *p = (const unsigned char *)v; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return 0;
	return 1;
}

static enum MHD_Result on_arg(void *cls, enum MHD_ValueKind kind, const char *key,
			      const char *value)
{
	struct parse_ctx *pc = cls;
	struct agent_req *r = pc->r;
	static const char *const names[] = { "seconds", "pid", "comm", "cgroup" };
	unsigned i;
	uint64_t n;

	(void)kind;
	for (i = 0; i < 4 && strcmp(key, names[i]); i++)
		;
	if (i == 4) {
		BADREQ(r, "unknown parameter (expected seconds, pid, comm, cgroup)");
		return MHD_NO;
	}
	if (pc->given & (1u << i)) {
		BADREQ(r, "%s given twice", names[i]);
		return MHD_NO;
	}
	pc->given |= 1u << i;
	switch (i) {
	case 0:
		if (parse_uint(value, AGENT_MAX_SECONDS, &n)) {
			BADREQ(r, "seconds: expected a whole number from 1 to %u", AGENT_MAX_SECONDS);
			return MHD_NO;
		}
		r->seconds = (unsigned)n;
		break;
	case 1:
		if (parse_uint(value, 4194304, &n)) {
			BADREQ(r, "pid: expected a process ID from 1 to 4194304");
			return MHD_NO;
		}
		r->f.pid = (uint32_t)n;
		break;
	case 2:
		if (!value || !*value || strlen(value) > 15 || !printable(value)) {
			BADREQ(r, "comm: expected a process name of 1 to 15 printable bytes");
			return MHD_NO;
		}
		strcpy(r->comm, value);
		r->f.comm = r->comm;
		break;
	default:
		if (!value || value[0] != '/' || strlen(value) >= sizeof(r->cgroup) ||
		    !printable(value)) {
			BADREQ(r, "cgroup: expected a cgroup v2 path starting with '/'");
			return MHD_NO;
		}
		strcpy(r->cgroup, value);
		r->f.cgroup = r->cgroup;
	}
	return MHD_YES;
}

int agent_route__parse(struct agent *a, struct MHD_Connection *c, const char *url,
		       struct agent_req *r)
{
	static const struct {
		const char *path;
		uint32_t sel;
		const char *ev;
	} routes[] = {
		{ "/debug/pprof/profile", SFPROF_SEL_CPU, "cpu" },
		{ "/debug/pprof/block", SFPROF_SEL_OFFCPU, "offcpu" },
		{ "/debug/pprof/mutex", SFPROF_SEL_FUTEX, "futex" },
	};
	struct parse_ctx pc = { .r = r };
	size_t i;

	for (i = 0; i < sizeof(routes) / sizeof(routes[0]) && strcmp(url, routes[i].path); i++)
		;
	if (i == sizeof(routes) / sizeof(routes[0])) {
		snprintf(r->error, sizeof(r->error), "sfprof agent: no such page (see "
			 "/debug/pprof/profile, block, mutex, /metrics, /healthz)\n");
		r->code = 404;
		return -ENOENT;
	}
	if (!(a->events & routes[i].sel)) {
		snprintf(r->error, sizeof(r->error), "sfprof agent: %s is not profiled: start "
			 "the agent with -e %s\n", routes[i].ev, routes[i].ev);
		r->code = 404;
		return -ENOENT;
	}
	r->sel = routes[i].sel;
	r->seconds = r->sel == SFPROF_SEL_CPU ? 30 : (unsigned)(a->retention_ns / 1000000000ull);
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, on_arg, &pc);
	return r->code ? -EINVAL : 0;
}

static void answer_text(struct agent_req *r, unsigned code, const char *text)
{
	r->code = code;
	r->ctype = "text/plain; charset=utf-8";
	r->body = strdup(text);
	r->len = r->body ? strlen(r->body) : 0;
}

void agent_route__profile(struct agent *a, struct agent_req *r)
{
	uint64_t n_ns = (uint64_t)r->seconds * 1000000000ull, newest, oldest, end, from;
	uint64_t last_seq = 0, first_start = 0, last_end = 0, dropped = 0;
	struct agent_slice *v[32];
	struct profile *acc = NULL;
	char *buf = NULL;
	size_t len = 0, got;
	int err = 0;
	FILE *f;

	/* the oldest data held: the first slice's start (now, before any),
	 * or the retention's */
	newest = agent_slices__newest_end(a->slices, &oldest);
	if (!oldest)
		oldest = util__now_ns();
	if (newest > a->retention_ns && newest - a->retention_ns > oldest)
		oldest = newest - a->retention_ns;
	end = newest > oldest + n_ns ? newest : oldest + n_ns;
	from = end - n_ns;
	for (;;) {
		int complete = agent_slices__newest_end(a->slices, NULL) >= end;

		/* (+ slice_ns: the slice that holds `end` counts whole) */
		while (!err && (got = agent_slices__get(a->slices, r->sel, last_seq, from,
							end + a->slice_ns - 1, v, 32)) > 0) {
			for (size_t i = 0; i < got; i++) {
				struct agent_slice *sl = v[i];

				if (!acc && !err) {
					struct profile_meta m = *profile__meta(sl->prof);

					m.duration_ns = 0;
					if (!(acc = profile__new(&m)))
						err = -ENOMEM;
					first_start = sl->start_mono;
				}
				if (!err)
					err = agent_profile__merge(acc, sl->prof, &r->f,
								   AGENT_MERGE_MAX_STACKS,
								   &dropped);
				if (sl->end_mono > last_end)
					last_end = sl->end_mono;
				if (sl->seq > last_seq)
					last_seq = sl->seq;
				agent_slices__put(a->slices, sl);
			}
		}
		if (complete || err || agent_slices__closed(a->slices))
			break;
		agent_slices__wait(a->slices, end, util__now_ns() + 1000000000ull);
	}
	if (dropped) {
		pthread_mutex_lock(&a->mu);
		a->c.merge_dropped += dropped;
		pthread_mutex_unlock(&a->mu);
	}
	if (!err && !acc && agent_slices__closed(a->slices)) {
		answer_text(r, 503, "sfprof agent: shutting down\n");
		return;
	}
	if (!err && !acc) {
		struct profile_meta m = { .kind = report__profile_kind(r->sel), .hz = a->hz,
					  .start_unix_ns = util__clock_ns(CLOCK_REALTIME) };

		if (!(acc = profile__new(&m)))
			err = -ENOMEM;
	}
	if (!err) {
		profile__set_duration(acc, last_end > first_start ? last_end - first_start : 0);
		if (!(f = open_memstream(&buf, &len)))
			err = -ENOMEM;
		else if ((err = profile__write_pprof(acc, f)) | fclose(f))
			err = err ? err : -EIO;
	}
	profile__free(acc);
	if (err) {
		free(buf);
		answer_text(r, 503, "sfprof agent: out of memory for this profile; ask fewer "
			    "seconds or filter by pid=, comm=, cgroup=\n");
		return;
	}
	r->code = 200;
	r->ctype = "application/octet-stream";
	r->body = buf;
	r->len = len;
}

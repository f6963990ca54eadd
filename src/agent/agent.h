/* SPDX-License-Identifier: MIT */
/*
 * sfprof agent (src/agent/): a long-running profile kept in memory as
 * short slices, served over HTTP as Go's net/http/pprof serves it, with
 * Prometheus metrics. The pieces, each testable alone:
 *
 *  - cgroup_path__parse(): the container id and systemd unit a cgroup v2
 *    path names (pure; /proc text is untrusted, so it is fuzzed);
 *  - agent_pids: per process, the labels every sample carries (process
 *    name, executable, cgroup, container, unit), read from /proc once;
 *  - agent_slices: the last --retention seconds as one profile per slice
 *    and event, shared read-only with the HTTP threads (refcounted);
 *    agent_slices__merge() folds slices into one bounded profile;
 *  - agent_http: the libmicrohttpd server (src/agent/http.c) and its
 *    routes (src/agent/routes.c), metrics text (src/agent/metrics.c).
 *
 * Threads: the capture's thread adds slices and owns agent_pids; the
 * HTTP threads only read slices and the metrics snapshot, under locks.
 */
#ifndef SFPROF_AGENT_H
#define SFPROF_AGENT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "model/proc.h"
#include "stacks/stacks.h"

/* ---- cgroup paths ---- */

#define AGENT_CONTAINER_MAX 64 /* hex digits of a container id */
#define AGENT_UNIT_MAX 255     /* systemd's longest unit name */

struct cgroup_ids {
	char container[AGENT_CONTAINER_MAX + 1]; /* "" when none */
	char unit[AGENT_UNIT_MAX + 1];		 /* "" when none */
	const char *runtime; /* "docker", "containerd", "cri-o", "podman", NULL */
};

/*
 * The container id and the innermost systemd unit (*.service or *.scope)
 * in a cgroup v2 path of len bytes (not NUL-terminated): docker
 * (/docker/ID, docker-ID.scope), containerd (cri-containerd-ID.scope, a
 * bare ID under kubepods), cri-o (crio-ID.scope), podman (libpod-ID.scope;
 * not their conmon scopes). ID: 64 hex digits. 0 always (nothing found
 * leaves both empty); -EINVAL for a path not starting with '/' or with a
 * NUL byte.
 */
int cgroup_path__parse(const char *path, size_t len, struct cgroup_ids *out);

/*
 * The cgroup v2 path in /proc/PID/cgroup text (the "0::PATH" line) into
 * buf (NUL-terminated). 0, -ENOENT (no such line), -ENAMETOOLONG.
 */
int proc_cgroup__v2_path(const char *text, size_t len, char *buf, size_t size);

/* ---- per-process labels ---- */

/* processes whose labels are kept at once; more are not labelled
 * (counted) until exited ones are swept */
#define AGENT_PIDS_MAX 16384u

struct agent_pids;
struct agent_pids *agent_pids__new(const char *proc_root); /* NULL: "/proc" */
void agent_pids__free(struct agent_pids *t);
/* A sample of pid: read its labels if new. main_comm (may be NULL): the
 * comm of its main thread, if the sample is of that thread, the process
 * name when /proc has it no more (a process that lived for milliseconds). */
void agent_pids__touch(struct agent_pids *t, uint32_t pid, const char *main_comm);
/* pid exec'd (re-read at its next sample) or exited (swept later). */
void agent_pids__exec(struct agent_pids *t, uint32_t pid);
void agent_pids__exit(struct agent_pids *t, uint32_t pid, uint64_t now_ns);
/* Forget processes exited more than keep_ns before now_ns. */
void agent_pids__sweep(struct agent_pids *t, uint64_t now_ns, uint64_t keep_ns);
/* stacks_label_fn */
void agent_pids__label(void *ctx, uint32_t pid, struct profile_labels *l);
struct agent_pids_stats {
	uint64_t tracked, reads, full, evicted;
};
void agent_pids__stats(const struct agent_pids *t, struct agent_pids_stats *st);

/* ---- slices ---- */

/*
 * The newest AGENT_FINE_NS of each event are kept as the one-second
 * slices the capture cuts; older ones are merged AGENT_COARSE_NS at a time
 * into one slice, which replaces them: a profile's frames and strings are
 * then held once per 10 s instead of once per second (the retention's
 * memory is mostly those). A window reaching past the fine part covers
 * whole coarse slices.
 */
#define AGENT_FINE_NS (10 * 1000000000ull)
#define AGENT_COARSE_NS (10 * 1000000000ull)

struct agent_slice {
	struct profile *prof; /* immutable once added */
	uint32_t sel;	      /* SFPROF_SEL_* */
	int coarse;	      /* merged from the fine slices first_seq..seq */
	uint64_t start_mono, end_mono;
	uint64_t seq;	    /* 1, 2, ... in the order added (coarse: its last's) */
	uint64_t first_seq; /* fine: seq */
	int refs;
};

struct agent_slices;
struct agent_slices *agent_slices__new(uint64_t retention_ns);
void agent_slices__free(struct agent_slices *s);
/* Takes prof; drops slices older than the retention. 0 or -ENOMEM
 * (prof freed). */
int agent_slices__add(struct agent_slices *s, uint32_t sel, struct profile *prof,
		      uint64_t start_mono, uint64_t end_mono);
/*
 * Up to max slices of event sel with seq > after_seq that end after
 * from_mono and no later than to_mono, oldest first, each referenced
 * (agent_slices__put them). The count. (A coarse slice holding some
 * slices at or before after_seq is not given: its newest part was.)
 */
size_t agent_slices__get(struct agent_slices *s, uint32_t sel, uint64_t after_seq,
			 uint64_t from_mono, uint64_t to_mono, struct agent_slice **out,
			 size_t max);
void agent_slices__put(struct agent_slices *s, struct agent_slice *sl);
/* The end of the newest slice (0: none yet); *first_start (may be NULL):
 * the start of the first slice ever added (0: none yet). */
uint64_t agent_slices__newest_end(struct agent_slices *s, uint64_t *first_start);
/* Wait until a slice ends at or after mono, or deadline_mono, or close.
 * 1 when such a slice is there. */
int agent_slices__wait(struct agent_slices *s, uint64_t mono, uint64_t deadline_mono);
/* Wake every waiter for good (shutdown). */
void agent_slices__close(struct agent_slices *s);
int agent_slices__closed(struct agent_slices *s);
size_t agent_slices__count(struct agent_slices *s, uint64_t *bytes_stacks);

/* What a request keeps: 0 / NULL fields match all. */
struct agent_filter {
	uint32_t pid;
	const char *comm;   /* the process name, exactly */
	const char *cgroup; /* a cgroup path prefix (at a '/' boundary) */
};

/* a merged profile holds at most this many stacks; the rest is dropped
 * and counted (*dropped) */
#define AGENT_MERGE_MAX_STACKS 262144u

/*
 * Add the stacks of src that pass f to dst (same kind), in time linear in
 * src's size. Bounded: once dst holds max_stacks distinct stacks, every
 * further stack of src is left out and counted in *dropped (the answer
 * says so in /metrics). 0 or -ENOMEM.
 */
int agent_profile__merge(struct profile *dst, const struct profile *src,
			 const struct agent_filter *f, size_t max_stacks, uint64_t *dropped);

/* ---- the HTTP side ---- */

#define AGENT_MAX_SECONDS 3600u

struct agent;

struct agent_http_opts {
	const char *host;	/* numeric address */
	unsigned port;
	const char *token;	/* bearer token, NULL: none */
	const char *tls_cert;	/* PEM text, NULL: plain HTTP */
	const char *tls_key;
	unsigned max_conns;	/* all connections */
	unsigned max_per_ip;
	unsigned max_profiles;	/* profile requests at once */
	unsigned header_timeout_s;
	unsigned idle_timeout_s;
};

struct agent_http;
/* NULL + errno (a message on stderr). */
struct agent_http *agent_http__start(const struct agent_http_opts *o, struct agent *a);
/* -EBUSY: a job still runs past the 2 s allowed (the agent, which it
 * reads, must then be left to the exit) */
int agent_http__stop(struct agent_http *h);
/* the port listened on (for --listen HOST:0) */
unsigned agent_http__port(const struct agent_http *h);

/* ---- the agent (src/cli/cmd_agent.c; /metrics in src/agent/metrics.c) ---- */

/* What /metrics shows that the capture thread knows: a snapshot it
 * refreshes after drains. */
struct agent_counters {
	uint64_t events[4];	      /* cpu, futex, offcpu, wall */
	uint64_t samples[4];	      /* in slices, by event */
	uint64_t lost_ringbuf, lost_stack_read, lost_busy, lost_entry_map, lost_task,
		lost_target_map, lost_offcpu_map, lost_sideband, lost_py_busy;
	uint64_t unwind_stop[UNWIND_STOP__NR];
	uint64_t stack_reads_deferrable; /* 1: a stack page not resident is read by its task */
	uint64_t procs_tracked, procs_created, binaries_loaded, binaries_evicted;
	uint64_t binaries_shed; /* tables freed while mapped (dso_shed) */
	uint64_t binaries_shed_hot; /* ... used in the last second (dso_shed_hot) */
	uint64_t dwarf_trims;	/* DWARF images' pages given back (dso_dwarf_trims) */
	uint64_t dwarf_closes;	/* libdw handles freed, answers kept (dso_dwarf_closes) */
	uint64_t labelled_procs, label_reads, label_table_full;
	uint64_t bpf_run_ns, bpf_run_cnt;
	uint64_t slices, slices_dropped, merge_dropped;
	uint64_t rss, pss, priv; /* bytes, agent_metrics__memory() */
};

struct agent {
	struct agent_slices *slices;
	uint64_t retention_ns, slice_ns;
	uint32_t events; /* SFPROF_SEL_* profiled */
	uint32_t hz;
	pthread_mutex_t mu; /* counters, http counts */
	struct agent_counters c;
	uint64_t http_codes[7]; /* 200, 400, 401, 404, 405, 503, other */
	int running; /* the capture is attached (/healthz says ok) */
	uint64_t http_header_timeouts; /* the watchdog's (one writer) */
	uint64_t start_mono;
};

/* The /metrics text into a malloc'd buffer (*len). NULL on ENOMEM. */
char *agent_metrics__text(struct agent *a, size_t *len);
/* Rss, Pss and private bytes of /proc/self/smaps_rollup (0 if unreadable). */
void agent_metrics__memory(uint64_t *rss, uint64_t *pss, uint64_t *priv);
void agent__count_http(struct agent *a, unsigned code);

#endif

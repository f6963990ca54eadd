/* SPDX-License-Identifier: MIT */
/*
 * The event sources of the capture: one BPF object each
 * (bpf/<name>.bpf.c: task, cpu, futex, offcpu) and its user side beside
 * it (src/capture/source_<name>.c), after bcc's
 * one-BPF-file-one-user-file pairing. A source says which -e selection
 * loads it, which programs it attaches (in order, each when its
 * condition holds) and how its object is opened, loaded and freed; the
 * capture (capture.c) runs the table in source.c in order: every
 * selected source loaded, then attached (so the task programs, first,
 * follow every process before a sample is taken), detached and freed in
 * reverse. Adding a source is its BPF file, its source_<name>.c and one line
 * of the table (and its bit in enum capture_kind).
 *
 * A source's programs share the task object's maps (capture__share_maps):
 * one ring, one target set, one set of counters.
 */
#ifndef SFPROF_CAPTURE_SOURCE_H
#define SFPROF_CAPTURE_SOURCE_H

#include <stdio.h>

#include <bpf/libbpf.h>

#include "capture/capture.h"

struct capture;

/* When a program of a source is attached. */
enum capture_when {
	CAPTURE_ALWAYS = 0,
	CAPTURE_IF_KSTACK,	/* kernel stacks asked (--kernel) */
	CAPTURE_IF_WAKERS,	/* wakers asked (--wakers with futex or offcpu) */
	CAPTURE_IF_WAIT_EXEC,	/* the target is a COMMAND, a target from its exec */
	CAPTURE_NEVER,		/* attached by the source's own attach() */
};

/* One BPF program of a source. */
struct capture_prog {
	const char *name;	/* the program ("sfprof_sys_enter") */
	const char *what;	/* its attach point, in errors ("sys_enter") */
	enum capture_when when;
	/* --stats shows its kernel-measured cost, as bpf_run_ns_<name
	 * without "sfprof_"> and bpf_run_cnt_... */
	int cost;
};

#define CAPTURE_SOURCE_PROGS 6

/* A loaded source: its skeleton, its object, its generic links. */
struct capture_loaded {
	void *skel;		/* the source's (a struct X_bpf *), NULL: not loaded */
	struct bpf_object *obj;
	struct bpf_link *links[CAPTURE_SOURCE_PROGS]; /* by progs[] index */
	void *priv;		/* the source's own attach state (cpu: perf events) */
};

struct capture_source {
	const char *name;	/* in load errors: "loading the %s programs" */
	enum capture_kind bit;	/* the selections that load it; 0: always */
	struct capture_prog progs[CAPTURE_SOURCE_PROGS]; /* ends at a NULL name */
	/*
	 * Open the object, configure it (cfg, and o for what only it sizes),
	 * share the task object's maps (the task's own load makes them) and
	 * load it: 0 with l->skel and l->obj set, or -errno, said on err
	 * (capture__load_error). l->skel is set even on failure, for destroy.
	 */
	int (*load)(struct capture *c, struct capture_loaded *l, const struct capture_opts *o,
		    const struct sfprof_config *cfg, FILE *err);
	/* After the generic attach of progs[]: what else it attaches (the
	 * perf events of cpu); NULL: nothing. 0 or -errno, said on err. */
	int (*attach)(struct capture *c, struct capture_loaded *l, const struct capture_opts *o,
		      FILE *err);
	/* Before its links go: what its attach() made; NULL: nothing. */
	void (*detach)(struct capture *c, struct capture_loaded *l);
	/* Frees l->skel (NULL: a no-op) and l->priv. */
	void (*destroy)(struct capture_loaded *l);
};

/* source.c: the table, in load and attach order; the task's first. */
extern const struct capture_source *const capture_sources[];
extern const size_t capture_nr_sources;
#define CAPTURE_SOURCES_MAX 8

/* The sources of the table (each source_<name>.c defines its one). */
extern const struct capture_source capture_source_task;
extern const struct capture_source capture_source_cpu;
extern const struct capture_source capture_source_futex;
extern const struct capture_source capture_source_offcpu;

/* The selections some source loads (every bit of capture_opts.kind known). */
enum capture_kind capture_sources__kinds(void);

/* source.c: the loops over the table, each 0 or -errno (said on err) */
int capture_sources__load(struct capture *c, const struct capture_opts *o,
			  const struct sfprof_config *cfg, FILE *err);
int capture_sources__attach(struct capture *c, const struct capture_opts *o, FILE *err);
void capture_sources__detach(struct capture *c);
void capture_sources__destroy(struct capture *c);
/* The kernel-measured cost of every program with `cost`, of the sources
 * loaded, into st->prog[] (st->nr_prog of them). */
void capture_sources__cost(struct capture *c, struct capture_stats *st);

/*
 * Open-configure-share-load of a skeleton type: the common body of the
 * sources' load() (every skeleton has rodata->cfg, a struct
 * sfprof_config). `open`, `load` are X_bpf__open and X_bpf__load.
 *
 * CAPTURE_LOAD_SKEL_DEFERRING, for the objects built with
 * SFPROF_DEFER_READS (cpu, offcpu): a load the verifier refuses is tried
 * once more with cfg.defer_reads 0, and the sources after it start so
 * (c->defer_refused). Kernels differ here: 6.18.44's verifier refuses a
 * task_work callback scheduled from a perf_event or tp_btf program
 * ("sleepable callback in a program that is not sleepable") that
 * earlier 6.18 kernels took. Without it a sample whose stack page is
 * not resident is lost as lost_stack_read, and stack_reads_deferrable
 * says 0.
 */
#define CAPTURE_LOAD_SKEL_(c, l, skel_t, cfg, what, err, defers)                              \
	({                                                                                  \
		struct sfprof_config cfg__ = *(cfg);                                        \
		int r__;                                                                    \
		if ((c)->defer_refused)                                                     \
			cfg__.defer_reads = 0;                                              \
		for (;;) {                                                                  \
			struct skel_t *s__ = skel_t##__open();                               \
			(l)->skel = s__;                                                    \
			if (!s__) {                                                         \
				r__ = -errno;                                               \
				break;                                                      \
			}                                                                   \
			(l)->obj = s__->obj;                                                \
			s__->rodata->cfg = cfg__;                                           \
			r__ = capture__share_maps(s__->obj, (c)->task->obj);                 \
			if (!r__)                                                           \
				r__ = skel_t##__load(s__);                                  \
			if (r__ && (defers) && cfg__.defer_reads) {                         \
				skel_t##__destroy(s__);                                     \
				(l)->skel = NULL;                                           \
				(l)->obj = NULL;                                            \
				(c)->defer_refused = 1;                                     \
				cfg__.defer_reads = 0;                                      \
				continue;                                                   \
			}                                                                   \
			if (!r__ && (defers))                                               \
				(c)->st.defer_reads = (int)cfg__.defer_reads;               \
			break;                                                              \
		}                                                                           \
		if (r__)                                                                    \
			r__ = capture__load_error(err, r__ < 0 ? r__ : -errno, what);         \
		r__;                                                                        \
	})
#define CAPTURE_LOAD_SKEL(c, l, skel_t, cfg, what, err)                                       \
	CAPTURE_LOAD_SKEL_(c, l, skel_t, cfg, what, err, 0)
#define CAPTURE_LOAD_SKEL_DEFERRING(c, l, skel_t, cfg, what, err)                             \
	CAPTURE_LOAD_SKEL_(c, l, skel_t, cfg, what, err, 1)

#endif

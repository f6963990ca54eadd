/* SPDX-License-Identifier: MIT */
/* Internals of the capture shared by src/capture/capture.c (the run: load,
 * drain, counters), capture_attach.c (shared maps, targets, cgroup) and
 * the event sources (source.h, one source_<name>.c each). */
#ifndef SFPROF_CAPTURE_INT_H
#define SFPROF_CAPTURE_INT_H

#include <stdio.h>

#include <bpf/libbpf.h>

#include "capture/capture.h"
#include "capture/source.h"
#include "task.skel.h"

#define CAPTURE_DEFAULT_RING (16u << 20)
#define CAPTURE_SLOT_KINDS 4 /* bpf/sfprof.bpf.h: SFPROF_SLOT_KINDS */
/*
 * Side-band records are delivered up to this far behind the drain's
 * start when no event asks for them sooner: a BPF record stamped just
 * before the drain may still be in flight on another CPU, and must not
 * find its process's later mappings applied.
 */
#define CAPTURE_SIDEBAND_LAG_NS (5 * 1000000ull)
#define CAPTURE_KSTACK_DEPTH 127
#define CAPTURE_KSTACK_ENTRIES 16384

/* Thread tops set from user space: an open-addressing set of tids. */
#define CAPTURE_TOPS 16384

struct capture {
	struct task_bpf *task;	/* lifecycle; creates the shared maps (src[0]'s) */
	struct capture_loaded src[CAPTURE_SOURCES_MAX]; /* by capture_sources[] index */
	struct ring_buffer *rb;
	struct sideband *sb;
	capture_sideband_fn sb_fn;
	uint64_t sb_until;	/* side-band delivered up to here */
	int sb_err;		/* the side-band callback's error */
	int nr_cpus;
	int *pidfds;		/* one per listed target; -1 once it exited */
	int nr_pidfds;
	int detached;
	int defer_refused;	/* the verifier refused deferred reads (source.h) */
	capture_event_fn fn;
	void *fn_ctx;
	struct capture_stats st; /* user-space part; bpf[] filled on demand */
	uint32_t tops[CAPTURE_TOPS]; /* tids given a thread top (0: empty slot) */
	uint32_t nr_tops;
};

/* "sfprof: " + a line on err (NULL: nothing). */
void capture__say(FILE *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Words of a bitmap by tgid with `per_word` tgids a word, up to pid_max. */
uint32_t capture__pid_words(long per_word);

/* capture_attach.c: each 0 or -errno, with a line on err */
int capture__share_maps(struct bpf_object *obj, struct bpf_object *owner);
int capture__load_error(FILE *err, int ret, const char *what);
int capture__set_cgroup(struct capture *c, const char *dir, FILE *err);
int capture__set_targets(struct capture *c, const struct capture_opts *o, FILE *err);
struct bpf_link *capture__attach_prog(struct bpf_program *prog, const char *what, FILE *err,
				      int *ret);

#endif

// SPDX-License-Identifier: MIT
/*
 * The task source (bpf/task.bpf.c), loaded in every run and first: the
 * process lifecycle (which processes are targets, FORK and EXIT records,
 * a COMMAND armed at its exec), and the maps every other source shares,
 * sized here.
 */
#include <errno.h>
#include <string.h>

#include "capture/capture_int.h"
#include "capture/source.h"

static int task_load(struct capture *c, struct capture_loaded *l, const struct capture_opts *o,
		     const struct sfprof_config *cfg, FILE *err)
{
	uint32_t ring = o->ring_bytes ? o->ring_bytes : CAPTURE_DEFAULT_RING;
	struct task_bpf *t = task_bpf__open();
	int ret;

	l->skel = c->task = t;
	if (!t) {
		ret = -errno;
		capture__say(err, "opening the BPF object: %s", strerror(-ret));
		return ret;
	}
	l->obj = t->obj;
	t->rodata->cfg = *cfg;
	bpf_map__set_max_entries(t->maps.events, ring);
	/* the direct path never touches a slot */
	bpf_map__set_max_entries(t->maps.scratch,
				 c->st.direct_copy ? 1 : c->nr_cpus * CAPTURE_SLOT_KINDS);
	if (cfg->want_kstack || cfg->wakers)
		bpf_map__set_max_entries(t->maps.kstacks, CAPTURE_KSTACK_ENTRIES);
	bpf_map__set_max_entries(t->maps.target_bits, capture__pid_words(64));
	bpf_map__set_max_entries(t->maps.rt_tgids, capture__pid_words(SFPROF_RT_TGIDS_PER_WORD));
	bpf_map__set_max_entries(t->maps.deferred, c->nr_cpus);
	bpf_program__set_autoload(t->progs.sfprof_exec, !!o->wait_exec);
	ret = task_bpf__load(t);
	return ret ? capture__load_error(err, ret < 0 ? ret : -errno, "process-tracking") : 0;
}

static void task_destroy(struct capture_loaded *l)
{
	task_bpf__destroy(l->skel);
}

const struct capture_source capture_source_task = {
	.name = "process-tracking",
	.bit = 0,
	.progs = {
		{ "sfprof_fork", "sched_process_fork", CAPTURE_ALWAYS, 0 },
		{ "sfprof_exit", "sched_process_exit", CAPTURE_ALWAYS, 0 },
		{ "sfprof_exec", "sched_process_exec", CAPTURE_IF_WAIT_EXEC, 0 },
	},
	.load = task_load,
	.destroy = task_destroy,
};

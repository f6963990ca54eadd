// SPDX-License-Identifier: MIT
/*
 * The off-CPU source (bpf/offcpu.bpf.c): a target thread's block from its
 * switch-out (sched_switch) to its switch-in (sched_exit_tp, attached
 * first: no block is timed before it can end); with --wakers the wakers'
 * records (sched_waking, bpf/waker.bpf.h).
 */
#include <errno.h>

#include "capture/capture_int.h"
#include "offcpu.skel.h"
#include "capture/source.h"

static int offcpu_load(struct capture *c, struct capture_loaded *l, const struct capture_opts *o,
		       const struct sfprof_config *cfg, FILE *err)
{
	(void)o;
	return CAPTURE_LOAD_SKEL_DEFERRING(c, l, offcpu_bpf, cfg, "off-CPU", err);
}

static void offcpu_destroy(struct capture_loaded *l)
{
	offcpu_bpf__destroy(l->skel);
}

const struct capture_source capture_source_offcpu = {
	.name = "off-CPU",
	.bit = CAPTURE_OFFCPU,
	.progs = {
		{ "sfprof_switch_in", "sched_exit_tp", CAPTURE_ALWAYS, 1 },
		{ "sfprof_switch_out", "sched_switch", CAPTURE_ALWAYS, 1 },
		{ "sfprof_waking", "sched_waking", CAPTURE_IF_WAKERS, 1 },
	},
	.load = offcpu_load,
	.destroy = offcpu_destroy,
};

// SPDX-License-Identifier: MIT
/*
 * The futex source (bpf/futex.bpf.c): futex waits timed from sys_enter to
 * sys_exit; with --kernel the kernel stack where the wait blocked
 * (sched_switch), with --wakers the wakers' records (sched_waking,
 * bpf/waker.bpf.h).
 */
#include <errno.h>

#include "capture/capture_int.h"
#include "futex.skel.h"
#include "capture/source.h"

static int futex_load(struct capture *c, struct capture_loaded *l, const struct capture_opts *o,
		      const struct sfprof_config *cfg, FILE *err)
{
	(void)o;
	return CAPTURE_LOAD_SKEL(c, l, futex_bpf, cfg, "futex", err);
}

static void futex_destroy(struct capture_loaded *l)
{
	futex_bpf__destroy(l->skel);
}

const struct capture_source capture_source_futex = {
	.name = "futex",
	.bit = CAPTURE_FUTEX,
	.progs = {
		{ "sfprof_sys_enter", "sys_enter", CAPTURE_ALWAYS, 1 },
		{ "sfprof_sys_exit", "sys_exit", CAPTURE_ALWAYS, 1 },
		{ "sfprof_futex_switch", "sched_switch", CAPTURE_IF_KSTACK, 1 },
		{ "sfprof_futex_waking", "sched_waking", CAPTURE_IF_WAKERS, 1 },
	},
	.load = futex_load,
	.destroy = futex_destroy,
};

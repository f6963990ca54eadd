/* SPDX-License-Identifier: MIT */
/*
 * The live pipeline of src/cli/main.c (capture -> report_sink) with hooks
 * for `sfprof agent` (src/cli/cmd_agent.c): the agent sees what the sink
 * sees, first, without a copy of the wiring.
 */
#ifndef SFPROF_RUN_INT_H
#define SFPROF_RUN_INT_H

#include <stdint.h>

#include "capture/capture.h"
#include "cli/options.h"
#include "session/report.h"

struct run_hooks {
	void *ctx;
	/* the sink, once made (set its slice hook there); 0 or -errno */
	int (*on_sink)(void *ctx, struct report_sink *rs);
	void (*on_capture)(void *ctx, struct capture *c);
	/* every event and side-band record, before the sink has it */
	void (*on_event)(void *ctx, const struct sfprof_event *e);
	void (*on_sideband)(void *ctx, const struct sideband_rec *r);
	/* after each drain, once the sink has cut its intervals */
	void (*on_drained)(void *ctx, uint64_t now_ns);
};

/* A live run as main.c's: the exit status. h may be NULL. */
int run_stacks_hooked(struct sfprof_opts *o, const struct run_hooks *h);

/* `sfprof agent`, given main.c's runner (the library, which the fuzz
 * and test programs link without main.c, does not call into main.c) */
typedef int (*run_stacks_fn)(struct sfprof_opts *o, const struct run_hooks *h);
int cmd_agent_run(int argc, char **argv, run_stacks_fn run);

#endif

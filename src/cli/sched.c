// SPDX-License-Identifier: MIT
/*
 * The CPU priority of a live or record run: SCHED_RR 1, else nice -20
 * (sched_int.h says why).
 *
 * SCHED_RR rather than SCHED_FIFO: sfprof's threads (the drain, a
 * runtime's prefetch) take turns on a CPU. The kernel's real-time
 * throttling (sched_rt_runtime_us, 95% of each second by default) or its
 * fair server keeps part of every CPU for the others whatever sfprof
 * does; --no-realtime leaves the caller's priority alone.
 */
#include <errno.h>
#include <sched.h>
#include <sys/resource.h>

#include "cli/sched_int.h"

#define RUN_SCHED_NICE_LEVEL (-20)

void run_sched__raise(struct run_sched *s)
{
	struct sched_param rt = { .sched_priority = 1 };

	s->how = RUN_SCHED_KEPT;
	s->policy = sched_getscheduler(0);
	if (s->policy < 0 || sched_getparam(0, &s->param))
		return;
	errno = 0;
	s->nice = getpriority(PRIO_PROCESS, 0);
	/* the caller chose: a real-time, deadline, batch or idle policy, or
	 * a lower priority (nice 1-19) */
	if (errno || s->policy != SCHED_OTHER || s->nice > 0)
		return;
	if (!sched_setscheduler(0, SCHED_RR, &rt)) {
		s->how = RUN_SCHED_RR;
		return;
	}
	if (!setpriority(PRIO_PROCESS, 0, RUN_SCHED_NICE_LEVEL))
		s->how = RUN_SCHED_NICE;
}

void run_sched__restore(const struct run_sched *s)
{
	if (s->how == RUN_SCHED_KEPT)
		return;
	(void)sched_setscheduler(0, s->policy, &s->param);
	(void)setpriority(PRIO_PROCESS, 0, s->nice);
}

const char *run_sched__name(const struct run_sched *s)
{
	return s->how == RUN_SCHED_RR ? "rr" : s->how == RUN_SCHED_NICE ? "nice" : "kept";
}

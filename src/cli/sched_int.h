/* SPDX-License-Identifier: MIT */
/*
 * The CPU priority of a live or record run (src/cli/sched.c).
 *
 * The kernel's fair scheduler weighs each runnable thread alike: 2000
 * spinning threads of a target in sfprof's scheduling group (a session's
 * autogroup, a cgroup) leave sfprof a 2000th of the machine, so the BPF
 * programs' 0.3 s of loading took 30 s (49-139 s in issue 23) and the
 * drain saw 0-3 samples of a second's 40. nice -20 (87 threads' weight)
 * still gets a tenth of a CPU against 1000 spinners per CPU: 2-12 s.
 *
 * So once its options are parsed, sfprof runs SCHED_RR at the lowest
 * real-time priority (1), which no fair-scheduled thread can starve, to
 * its exit, report included (dropping back to the fair class for the
 * report was tried: at nice -20 the main thread then waited 12 s for
 * the CPU). Where the kernel refuses SCHED_RR (no CAP_SYS_NICE or
 * RLIMIT_RTPRIO, a cgroup without real-time runtime) it runs at nice -20,
 * and where it refuses that too, as the caller had it. A caller that
 * chose its policy (real-time, deadline, batch, idle) or a positive nice
 * keeps it; so does --no-realtime; -- COMMAND is forked back at the
 * caller's priority.
 */
#ifndef SFPROF_SCHED_INT_H
#define SFPROF_SCHED_INT_H

#include <sched.h>

enum run_sched_how {
	RUN_SCHED_KEPT = 0,	/* as the caller had it (its choice, or not allowed) */
	RUN_SCHED_NICE,		/* nice -20: SCHED_RR was refused */
	RUN_SCHED_RR,		/* SCHED_RR, priority 1 */
};

struct run_sched {
	enum run_sched_how how;
	int policy;		/* the caller's, to give back */
	struct sched_param param;
	int nice;
};

/*
 * The calling thread raised (threads it creates later inherit it). Call
 * it before any other thread exists.
 */
void run_sched__raise(struct run_sched *s);
/* The calling thread back at the caller's policy and nice (-- COMMAND's child). */
void run_sched__restore(const struct run_sched *s);
/* "rr", "nice" or "kept", for --stats */
const char *run_sched__name(const struct run_sched *s);

#endif

// SPDX-License-Identifier: MIT
/*
 * A process tree made while a profiler watches, each member burning CPU
 * in a function of its own:
 *   forker tree SECS   print "pid PID", wait for a line on stdin (the
 *                      profiler is attached), then make, each burning
 *                      SECS seconds of CPU time:
 *                      - a forked child            (fork_child_work)
 *                      - a double-forked daemon    (daemon_work)
 *                      - a posix_spawn()ed child   (spawned_work)
 *                      - an exec chain: a child that execs itself twice
 *                        before burning            (chain_work)
 *                      while the parent burns too  (parent_work)
 * The other modes are the steps of the tree.
 */
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload.h"

extern char **environ;

/* CPU seconds of this process: each member burns the same CPU time
 * however loaded the machine is */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* a constant of its own in each, and noipa: gcc's identical code folding
 * would otherwise make the five one function */
#define WORK(name, k)                                                       \
	__attribute__((noinline, noipa)) static unsigned long name(double secs) \
	{                                                                   \
		double end = cpu_s() + secs;                                \
		unsigned long x = k;                                        \
		while (cpu_s() < end)                                       \
			x = burn(x + k);                                    \
		return x;                                                   \
	}

WORK(parent_work, 1)
WORK(fork_child_work, 2)
WORK(daemon_work, 3)
WORK(spawned_work, 4)
WORK(chain_work, 5)

static volatile unsigned long sink;

static void reexec(const char *mode, const char *secs)
{
	execl("/proc/self/exe", "forker", mode, secs, (char *)NULL);
	_exit(127);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "tree";
	const char *arg = argc > 2 ? argv[2] : "1";
	double secs = atof(arg);
	char line[16];
	pid_t kids[3], p;
	int nk = 0;

	if (!strcmp(mode, "spawned")) {
		sink = spawned_work(secs);
		return 0;
	}
	if (!strcmp(mode, "chain1"))
		reexec("chain2", arg);
	if (!strcmp(mode, "chain2")) {
		sink = chain_work(secs);
		return 0;
	}
	if (strcmp(mode, "tree"))
		return 2;

	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;

	if ((p = fork()) == 0) {
		sink = fork_child_work(secs);
		_exit(0);
	}
	kids[nk++] = p;
	if ((p = fork()) == 0) {
		/* the middle process exits at once: the daemon is re-parented */
		if (fork() == 0) {
			setsid();
			sink = daemon_work(secs);
			_exit(0);
		}
		_exit(0);
	}
	waitpid(p, NULL, 0);
	{
		char *av[] = { "forker", "spawned", (char *)arg, NULL };

		if (posix_spawn(&p, "/proc/self/exe", NULL, NULL, av, environ) == 0)
			kids[nk++] = p;
	}
	if ((p = fork()) == 0)
		reexec("chain1", arg);
	kids[nk++] = p;
	sink = parent_work(secs);
	for (int i = 0; i < nk; i++)
		waitpid(kids[i], NULL, 0);
	return 0;
}

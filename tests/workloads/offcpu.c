// SPDX-License-Identifier: MIT
/*
 * Threads that each block in one known way, for the off-CPU tests:
 *   offcpu SECONDS            the four blockers below, for SECONDS each
 *   offcpu SECONDS mixed      the same, plus oc-burn, on CPU all along in
 *                             burn_loop (for runs of several events)
 *   offcpu SECONDS storm [KB [WORK]]
 *                             a pipe ping-pong between two threads, as
 *                             fast as they go (a context-switch storm),
 *                             the pinger KB below its entry frame (touched
 *                             stack, so each snapshot has that to copy);
 *                             with WORK, each side runs WORK steps of a
 *                             dependent multiply-add chain between its
 *                             read and its write (bench/offcpu_cost.py
 *                             calibrates WORK to a given switch rate)
 *
 *   oc-sleep  clock_nanosleep, 100 ms at a time      (S)   sleep_block
 *   oc-pipe   read() on a pipe fed every 20 ms       (S)   pipe_block
 *   oc-cond   pthread_cond_wait, signalled every 50 ms (S) cond_block
 *   oc-vfork  a vfork-style clone whose child sleeps 30 ms: the parent
 *             waits uninterruptibly in wait_for_vfork_done (D) vfork_block
 * plus their helpers oc-feed (the pipe's writer) and oc-signal (the
 * condvar's), which sleep between their writes and signals.
 *
 * Prints "tid NAME TID" for every thread as it starts, "ran NAME SECONDS"
 * as it ends (its own clock), "cpu oc-burn SECONDS" (its CPU time), and in storm mode "rate R cpu_ns_per_rt C
 * csw_per_s S" (round trips a second, CPU time per round trip, the
 * process's context switches a second) every second, then "round_trips N" and "round_trips_per_s R".
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

static double secs, t_end;
static int feed_pipe[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static unsigned long signals, consumed;
static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;

static void say_tid(const char *name)
{
	pthread_setname_np(pthread_self(), name);
	pthread_mutex_lock(&out_mu);
	printf("tid %s %ld\n", name, (long)syscall(SYS_gettid));
	fflush(stdout);
	pthread_mutex_unlock(&out_mu);
}

static void say_ran(const char *name, double t0)
{
	pthread_mutex_lock(&out_mu);
	printf("ran %s %.6f\n", name, now_s() - t0);
	fflush(stdout);
	pthread_mutex_unlock(&out_mu);
}

static void sleep_until(double t)
{
	struct timespec ts = { (time_t)t, (long)((t - (time_t)t) * 1e9) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
		;
}

__attribute__((noinline)) static void sleep_block(void)
{
	struct timespec d = { 0, 100 * 1000000 };

	clock_nanosleep(CLOCK_MONOTONIC, 0, &d, NULL);
}

static void *sleeper(void *arg)
{
	double t0 = now_s();

	(void)arg;
	say_tid("oc-sleep");
	while (now_s() < t_end)
		sleep_block();
	say_ran("oc-sleep", t0);
	return NULL;
}

__attribute__((noinline)) static int pipe_block(void)
{
	char c;

	return (int)read(feed_pipe[0], &c, 1);
}

static void *pipe_reader(void *arg)
{
	double t0 = now_s();

	(void)arg;
	say_tid("oc-pipe");
	while (pipe_block() == 1 && now_s() < t_end)
		;
	say_ran("oc-pipe", t0);
	return NULL;
}

static void *pipe_feeder(void *arg)
{
	double t = now_s();

	(void)arg;
	say_tid("oc-feed");
	/* one more byte after the end, so the reader sees it */
	for (; t < t_end + 0.02; ) {
		t += 0.02;
		sleep_until(t);
		if (write(feed_pipe[1], "x", 1) != 1)
			break;
	}
	return NULL;
}

__attribute__((noinline)) static void cond_block(unsigned long seen)
{
	pthread_mutex_lock(&mu);
	while (signals == seen)
		pthread_cond_wait(&cv, &mu);
	consumed = signals;
	pthread_mutex_unlock(&mu);
}

static void *cond_waiter(void *arg)
{
	double t0 = now_s();

	(void)arg;
	say_tid("oc-cond");
	while (now_s() < t_end)
		cond_block(consumed);
	say_ran("oc-cond", t0);
	return NULL;
}

static void *cond_signaller(void *arg)
{
	double t = now_s();

	(void)arg;
	say_tid("oc-signal");
	while (t < t_end + 0.05) {
		t += 0.05;
		sleep_until(t);
		pthread_mutex_lock(&mu);
		signals++;
		pthread_cond_signal(&cv);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

/* The child shares the parent's memory and TLS: raw syscalls only. */
__attribute__((noreturn, used)) void offcpu_vfork_child(void)
{
	struct timespec d = { 0, 30 * 1000000 };

	syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &d, NULL);
	for (;;)
		syscall(SYS_exit, 0);
}

/*
 * clone(CLONE_VM | CLONE_VFORK) issued right here, not through glibc's
 * vfork() (which pops its return address into a register around the
 * syscall) or clone() (whose unwind rows end the stack): the parent
 * blocks with this function as its leaf frame. The child starts on its
 * own stack and never returns.
 */
__attribute__((noinline)) static void vfork_block(char *stack_top)
{
	register long r10 __asm__("r10") = 0;
	register long r8 __asm__("r8") = 0;
	long ret;

	__asm__ volatile("syscall\n\t"
			 "test %%rax, %%rax\n\t"
			 "jnz 1f\n\t"
			 "call offcpu_vfork_child\n"
			 "1:"
			 : "=a"(ret)
			 : "0"((long)SYS_clone), "D"((long)(CLONE_VM | CLONE_VFORK | SIGCHLD)),
			   "S"(stack_top), "d"(0L), "r"(r10), "r"(r8)
			 : "rcx", "r11", "memory");
	if (ret > 0)
		waitpid((pid_t)ret, NULL, 0);
}

static void *vforker(void *arg)
{
	static char stack[64 << 10] __attribute__((aligned(16)));
	double t0 = now_s();

	(void)arg;
	say_tid("oc-vfork");
	while (now_s() < t_end)
		vfork_block(stack + sizeof(stack));
	say_ran("oc-vfork", t0);
	return NULL;
}

static void *burner(void *arg)
{
	unsigned long x = 1;
	double t0 = now_s();
	struct timespec cpu;

	(void)arg;
	say_tid("oc-burn");

	while (now_s() < t_end)
		x = burn(x);
	say_ran("oc-burn", t0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
	printf("cpu oc-burn %.6f\n", cpu.tv_sec + cpu.tv_nsec / 1e9);
	return (void *)x;
}

/* ---- storm: a pipe ping-pong ---- */

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* the process's context switches so far, voluntary or not */
static long csw(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

static int ping[2], pong[2];
static unsigned long storm_work;
static volatile unsigned long storm_sink;

/* `n` steps of a dependent chain: a fixed amount of CPU per message */
__attribute__((noinline)) static unsigned long storm_spin(unsigned long n, unsigned long x)
{
	for (unsigned long i = 0; i < n; i++) {
		x = x * 2862933555777941757ul + 3037000493ul;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

__attribute__((noinline)) static void *storm_ponger(void *arg)
{
	unsigned long x = 1;
	char c;

	(void)arg;
	say_tid("oc-pong");
	while (read(ping[0], &c, 1) == 1 && c == 'x') {
		x = storm_spin(storm_work, x);
		if (write(pong[1], &c, 1) != 1)
			break;
	}
	return (void *)x;
}

__attribute__((noinline)) static int storm_pinger(void)
{
	unsigned long n = 0, n_sec = 0, x = 1;
	double t0, t, t_sec, cpu_sec = cpu_s();
	long csw_sec = csw();
	char c = 'x';

	t0 = t_sec = now_s();
	while ((t = now_s()) - t0 < secs) {
		/* each second's rate, for benchmarks that attach mid-run, and
		 * the process's CPU time per round trip (both threads, user and
		 * kernel, BPF programs in their context included): on a shared
		 * machine the rate depends on the neighbours, this much less */
		if (t - t_sec >= 1.0) {
			double cpu = cpu_s();
			long sw = csw();

			printf("rate %.0f cpu_ns_per_rt %.0f csw_per_s %.0f\n",
			       (n - n_sec) / (t - t_sec),
			       (cpu - cpu_sec) * 1e9 / (double)(n - n_sec),
			       (sw - csw_sec) / (t - t_sec));
			n_sec = n;
			t_sec = t;
			cpu_sec = cpu;
			csw_sec = sw;
		}
		for (int i = 0; i < 100; i++, n++) {
			x = storm_spin(storm_work, x);
			if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
				return 1;
		}
	}
	c = 'q';
	if (write(ping[1], &c, 1) != 1)
		return 1;
	printf("round_trips %lu\nround_trips_per_s %.0f\n", n, n / (now_s() - t0));
	storm_sink = x;
	return 0;
}

static int storm(size_t pad)
{
	volatile char *p = __builtin_alloca(pad + 1);
	pthread_t t;
	int ret;

	for (size_t i = 0; i < pad; i += 64)
		p[i] = (char)i;
	if (pipe(ping) || pipe(pong))
		return 1;
	pthread_create(&t, NULL, storm_ponger, NULL);
	say_tid("oc-ping");
	ret = storm_pinger();
	pthread_join(t, NULL);
	p[0] = 1;
	return ret;
}

int main(int argc, char **argv)
{
	void *(*fns[])(void *) = { sleeper, pipe_reader, pipe_feeder, cond_waiter,
				   cond_signaller, vforker, burner };
	pthread_t t[sizeof(fns) / sizeof(fns[0])];
	size_t nr = sizeof(fns) / sizeof(fns[0]) - 1;

	secs = argc > 1 ? atof(argv[1]) : 4;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("pid %d\n", getpid());
	if (argc > 2 && !strcmp(argv[2], "storm")) {
		storm_work = argc > 4 ? strtoul(argv[4], NULL, 10) : 0;
		return storm(argc > 3 ? (size_t)atol(argv[3]) * 1024 : 0);
	}
	if (argc > 2 && !strcmp(argv[2], "mixed"))
		nr++;
	if (pipe(feed_pipe))
		return 1;
	t_end = now_s() + secs;
	for (size_t i = 0; i < nr; i++)
		pthread_create(&t[i], NULL, fns[i], NULL);
	for (size_t i = 0; i < nr; i++)
		pthread_join(t[i], NULL);
	return 0;
}

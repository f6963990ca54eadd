// SPDX-License-Identifier: MIT
/*
 * Unwinder workload: one thread per part, each spinning in leaf functions
 * that have exactly one call chain, so every sample of such a leaf must
 * show that chain (tests/e2e/unwind_*.py checks it frame by frame).
 *   uwmix [--main] SECONDS PART[,PART...]
 * Parts:
 *   chain    uw_chain_thread -> uw_chain_a -> uw_chain_b -> uw_chain_leaf
 *   recurse  uw_rec_thread -> uw_rec_top -> uw_rec x UW_REC_DEPTH -> uw_rec_leaf
 *   qsort    uw_qsort_thread -> uw_sort_driver -> qsort (libc) -> uw_cmp_leaf
 *   signal   uw_sig_thread -> uw_sig_loop, interrupted every 4 ms by
 *            SIGALRM: __restore_rt -> uw_sig_handler -> uw_sig_leaf
 *   dlopen   uw_dl_thread -> uw_call_lib -> lib_uw_work -> lib_uw_inner
 *            (through the library's PLT) -> lib_uw_leaf, in libuwlib.so
 *            dlopen()ed 1 s after start (after the profiler attached)
 * --main runs the first part on the main thread (single-threaded case).
 * Prints "ready" when every part runs.
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NI __attribute__((noipa))
#define UW_REC_DEPTH 250

static atomic_int stop;
static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void burn(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		sink += i * 2654435761u;
}

/* ---- chain ---- */
NI void uw_chain_leaf(void)
{
	burn(200000);
}
NI void uw_chain_b(void)
{
	uw_chain_leaf();
	asm volatile("" ::: "memory");
}
NI void uw_chain_a(void)
{
	uw_chain_b();
	asm volatile("" ::: "memory");
}
NI void *uw_chain_thread(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		uw_chain_a();
	return NULL;
}

/* ---- recurse ---- */
NI void uw_rec_leaf(void)
{
	burn(200000);
}
NI int uw_rec(int n)
{
	int r;
	if (n == 0) {
		uw_rec_leaf();
		return 1;
	}
	r = uw_rec(n - 1);
	asm volatile("" : "+r"(r)); /* no tail call, no loop */
	return r + 1;
}
NI void uw_rec_top(void)
{
	int r = uw_rec(UW_REC_DEPTH);
	asm volatile("" : "+r"(r));
}
NI void *uw_rec_thread(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop))
		uw_rec_top();
	return NULL;
}

/* ---- qsort callback through libc ---- */
NI int uw_cmp_leaf(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	burn(40);
	return (x > y) - (x < y);
}
NI void uw_sort_driver(int *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		v[i] = (int)((i * 2654435761u) % 100003);
	qsort(v, n, sizeof(*v), uw_cmp_leaf);
	asm volatile("" ::: "memory");
}
NI void *uw_qsort_thread(void *arg)
{
	static int v[4096];
	(void)arg;
	while (!atomic_load(&stop))
		uw_sort_driver(v, 4096);
	return NULL;
}

/* ---- signal handler running while sampled ---- */
NI void uw_sig_leaf(void)
{
	burn(300000);
}
NI void uw_sig_handler(int sig)
{
	(void)sig;
	uw_sig_leaf();
	asm volatile("" ::: "memory");
}
NI void uw_sig_loop(void)
{
	while (!atomic_load(&stop))
		for (int i = 0; i < 1000; i++)
			sink += i;
}
NI void *uw_sig_thread(void *arg)
{
	struct sigaction sa;
	struct sigevent sev;
	struct itimerspec its = { { 0, 4000000 }, { 0, 4000000 } };
	timer_t t;

	(void)arg;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = uw_sig_handler;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGALRM;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &sev, &t) == 0)
		timer_settime(t, 0, &its, NULL);
	uw_sig_loop();
	timer_delete(t);
	return NULL;
}

/* ---- dlopen after attach, PLT inside the library ---- */
static char libpath[PATH_MAX];

NI void uw_call_lib(void (*fn)(void))
{
	fn();
	asm volatile("" ::: "memory");
}
NI void *uw_dl_thread(void *arg)
{
	void *h;
	void (*fn)(void);

	(void)arg;
	while (!atomic_load(&stop) && now() - *(double *)arg < 1.0)
		usleep(10000);
	h = dlopen(libpath, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "uwmix: dlopen %s: %s\n", libpath, dlerror());
		return NULL;
	}
	fn = (void (*)(void))dlsym(h, "lib_uw_work");
	while (fn && !atomic_load(&stop))
		uw_call_lib(fn);
	return NULL;
}

static void *stopper_thread(void *arg)
{
	const double *a = arg;
	while (now() - a[0] < a[1])
		usleep(20000);
	atomic_store(&stop, 1);
	return NULL;
}

struct part {
	const char *name;
	void *(*fn)(void *);
};

static const struct part parts[] = {
	{ "chain", uw_chain_thread },	{ "recurse", uw_rec_thread },
	{ "qsort", uw_qsort_thread },	{ "signal", uw_sig_thread },
	{ "dlopen", uw_dl_thread },
};

int main(int argc, char **argv)
{
	pthread_t th[16];
	int nth = 0, on_main = -1, a = 1;
	double t0 = now(), secs;
	char *list, *tok, *save = NULL;
	char self[PATH_MAX];
	ssize_t n;

	if (a < argc && strcmp(argv[a], "--main") == 0) {
		on_main = 1;
		a++;
	}
	if (argc - a != 2) {
		fprintf(stderr, "usage: uwmix [--main] SECONDS PART[,PART...]\n");
		return 2;
	}
	secs = atof(argv[a]);
	/* libuwlib.so (or libuwlib-ehframe.so) beside this binary */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = 0;
	*strrchr(self, '/') = 0;
	snprintf(libpath, sizeof(libpath), "%s/libuwlib%s.so", self,
		 strstr(argv[0], "-ehframe") ? "-ehframe" : "");

	list = strdup(argv[a + 1]);
	const struct part *main_part = NULL;
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		const struct part *p = NULL;
		for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
			if (strcmp(parts[i].name, tok) == 0)
				p = &parts[i];
		if (!p) {
			fprintf(stderr, "uwmix: unknown part %s\n", tok);
			return 2;
		}
		if (on_main == 1) {
			main_part = p;
			on_main = 0;
			continue;
		}
		pthread_create(&th[nth++], NULL, p->fn, &t0);
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (main_part) {
		/* stopped by a helper thread after SECONDS */
		pthread_t stopper;
		static double arg[2];
		arg[0] = t0;
		arg[1] = secs;
		pthread_create(&stopper, NULL, stopper_thread, arg);
		main_part->fn(&t0);
		pthread_join(stopper, NULL);
	} else {
		while (now() - t0 < secs)
			usleep(20000);
		atomic_store(&stop, 1);
	}
	for (int i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	free(list);
	return 0;
}

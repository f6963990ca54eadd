// SPDX-License-Identifier: MIT
/*
 * Lazy binding, over and over: for SECONDS, dlopen LIB (liblazy.so) with
 * RTLD_LAZY, call its lazy_run (500 calls of functions never bound yet,
 * each through ld.so's _dl_runtime_resolve and _dl_fixup), dlclose it.
 *
 * Usage: lazybind LIB SECONDS
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "workload.h"

typedef unsigned long (*run_fn)(unsigned long);

int main(int argc, char **argv)
{
	double until = now_s() + (argc > 2 ? atof(argv[2]) : 3);
	unsigned long acc = 1, rounds = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: lazybind LIB SECONDS\n");
		return 2;
	}
	while (now_s() < until) {
		void *h = dlopen(argv[1], RTLD_LAZY | RTLD_LOCAL);
		run_fn run;

		if (!h) {
			fprintf(stderr, "lazybind: %s\n", dlerror());
			return 1;
		}
		run = (run_fn)dlsym(h, "lazy_run");
		if (!run) {
			fprintf(stderr, "lazybind: no lazy_run\n");
			return 1;
		}
		acc += run(acc);
		dlclose(h);
		rounds++;
	}
	printf("%lu rounds (%lu)\n", rounds, acc & 0xff);
	return 0;
}

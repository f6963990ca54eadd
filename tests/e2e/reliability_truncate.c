// SPDX-License-Identifier: MIT
/*
 * A hostile target for reliability_truncate.sh: it dlopen()s its own copy
 * of a -g library (LIB), runs its code for SECONDS, and once someone else
 * has opened LIB (inotify IN_OPEN: sfprof reading it, once per mapping;
 * the cut waits until 3 ms pass without another open), cuts the file
 * after its loaded segments. Its own code keeps running (the cut
 * spares every loaded page); a reader that mapped the whole file finds
 * its DWARF and section headers gone (SIGBUS).
 *
 * usage: reliability_truncate LIB SECONDS
 */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The end of the last PT_LOAD, rounded up to a page. */
static long loads_end(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	long end = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh))
		return -1;
	for (int i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != sizeof(ph))
			return -1;
		if (ph.p_type == PT_LOAD && (long)(ph.p_offset + ph.p_filesz) > end)
			end = (long)(ph.p_offset + ph.p_filesz);
	}
	close(fd);
	return (end + 4095) & ~4095L;
}

int main(int argc, char **argv)
{
	double (*work)(double);
	double t0, x = 1;
	struct pollfd p;
	int cut = 0;
	long end;
	void *h;

	if (argc != 3)
		return 2;
	end = loads_end(argv[1]);
	h = dlopen(argv[1], RTLD_NOW);
	if (end <= 0 || !h) {
		fprintf(stderr, "reliability_truncate: %s\n", h ? "bad ELF" : dlerror());
		return 1;
	}
	work = (double (*)(double))dlsym(h, "work");
	p.fd = inotify_init1(IN_NONBLOCK);
	p.events = POLLIN;
	if (!work || p.fd < 0 || inotify_add_watch(p.fd, argv[1], IN_OPEN) < 0) {
		perror("reliability_truncate: inotify");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	t0 = now();
	while (now() - t0 < atof(argv[2])) {
		x = work(x);
		if (!cut && poll(&p, 1, 0) == 1) {
			char ev[4096];

			/* every mapping opened, then cut */
			while (poll(&p, 1, 3) == 1)
				if (read(p.fd, ev, sizeof(ev)) < 0)
					break;
			if (truncate(argv[1], end)) {
				perror("reliability_truncate: truncate");
				return 1;
			}
			cut = 1;
			printf("cut\n");
			fflush(stdout);
		}
	}
	return x == 42; /* keep x */
}

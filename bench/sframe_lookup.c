// SPDX-License-Identifier: MIT
/*
 * SFrame lookup throughput: sframe_table__find() per second on one core,
 * for the .sframe section of an ELF file.
 *
 *   sframe_lookup FILE [SECONDS_PER_PATTERN]
 *
 * Patterns:
 *   random  PCs uniform over the covered text (every lookup a cold path
 *           through the function index)
 *   stacks  PCs in call-stack order: 2000 synthetic stacks of 8-40 frames
 *           (a return address inside a random function each), sampled with
 *           a skewed (Zipf-like) popularity, frames leaf to root, as the
 *           unwinder asks for them
 * Also: the time to validate and index the section (sframe_table__new).
 * Times are the thread's CPU time (CLOCK_THREAD_CPUTIME_ID).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "unwind/sframe.h"

/* CPU time of this thread: the machine is shared, and a lookup rate per
 * core is what the goal is stated in. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int load_sframe(const char *path, const uint8_t **data, size_t *len,
		       uint64_t *vaddr)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	void *img;

	if (fd < 0 || fstat(fd, &st))
		return -errno;
	img = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (img == MAP_FAILED)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_memory(img, st.st_size);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return -EINVAL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			return -EINVAL;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".sframe") &&
		    sh.sh_offset + sh.sh_size <= (uint64_t)st.st_size) {
			*data = (const uint8_t *)img + sh.sh_offset;
			*len = sh.sh_size;
			*vaddr = sh.sh_addr;
			return 0; /* the mapping stays for the process's life */
		}
	}
	return -ENOENT;
}

/* A PC inside function i (past its first byte, like a return address). */
static uint64_t pc_in(const struct sframe_table *t, size_t i)
{
	struct sframe_func f;

	sframe_table__func(t, i, &f);
	return f.start + (f.size > 1 ? 1 + rnd() % (f.size - 1) : 0);
}

static double run(const struct sframe_table *t, const uint64_t *pcs, size_t n,
		  double seconds, unsigned long *found)
{
	struct sframe_row row;
	unsigned long iters = 0, ok = 0;
	double t0 = now(), el;

	do {
		for (size_t i = 0; i < n; i++)
			ok += sframe_table__find(t, pcs[i], &row, NULL) == 0;
		iters++;
		el = now() - t0;
	} while (el < seconds);
	*found = ok / iters; /* rows found in one pass */
	return (double)iters * n / el;
}

int main(int argc, char **argv)
{
	const uint8_t *data = NULL;
	size_t len = 0, nf, n = 1u << 20;
	uint64_t vaddr = 0, lo, hi;
	struct sframe_table *t = NULL;
	struct sframe_func f;
	double secs = argc > 2 ? atof(argv[2]) : 3.0, t0, load_us, rate;
	uint64_t *pcs;
	unsigned long found;
	int err, reps = 20;

	if (argc < 2) {
		fprintf(stderr, "usage: %s ELF-FILE [SECONDS]\n", argv[0]);
		return 2;
	}
	err = load_sframe(argv[1], &data, &len, &vaddr);
	if (err) {
		fprintf(stderr, "%s: no usable .sframe (%s)\n", argv[1],
			strerror(-err));
		return 1;
	}
	t0 = now();
	for (int i = 0; i < reps; i++) {
		sframe_table__free(t);
		err = sframe_table__new(data, len, vaddr, &t);
		if (err) {
			fprintf(stderr, "%s: %s\n", argv[1], sframe_strerror(err));
			return 1;
		}
	}
	load_us = (now() - t0) / reps * 1e6;
	nf = sframe_table__nr_funcs(t);
	printf("table: %zu bytes, SFrame v%d, %zu FDEs, %zu FREs; "
	       "validate+index %.0f us (%.1f ns/FRE)\n",
	       len, sframe_table__version(t), nf, sframe_table__nr_rows(t),
	       load_us, load_us * 1e3 / (double)sframe_table__nr_rows(t));
	if (!nf)
		return 1;
	sframe_table__func(t, 0, &f);
	lo = f.start;
	sframe_table__func(t, nf - 1, &f);
	hi = f.start + f.size;

	pcs = malloc(n * sizeof(*pcs));
	if (!pcs)
		return 1;
	for (size_t i = 0; i < n; i++)
		pcs[i] = lo + rnd() % (hi - lo);
	rate = run(t, pcs, n, secs, &found);
	printf("random PCs:       %6.1f M lookups/s  (%.1f ns each, %.0f%% "
	       "found a row)\n",
	       rate / 1e6, 1e9 / rate, 100.0 * found / n);

	{
		enum { NSTACKS = 2000 };
		static uint64_t *stacks[NSTACKS];
		static unsigned depth[NSTACKS];
		double cdf[NSTACKS], sum = 0;
		size_t k = 0;

		for (int s = 0; s < NSTACKS; s++) {
			depth[s] = 8 + rnd() % 33;
			stacks[s] = malloc(depth[s] * sizeof(uint64_t));
			for (unsigned d = 0; d < depth[s]; d++)
				stacks[s][d] = pc_in(t, rnd() % nf);
			sum += 1.0 / (s + 1);
			cdf[s] = sum;
		}
		while (k < n) {
			double u = (double)(rnd() % 1000000) / 1e6 * sum;
			int s = 0;

			while (s < NSTACKS - 1 && cdf[s] < u)
				s++;
			for (unsigned d = 0; d < depth[s] && k < n; d++)
				pcs[k++] = stacks[s][d];
		}
		rate = run(t, pcs, n, secs, &found);
		printf("call-stack order: %6.1f M lookups/s  (%.1f ns each, %.0f%% "
		       "found a row)\n",
		       rate / 1e6, 1e9 / rate, 100.0 * found / n);
	}
	free(pcs);
	sframe_table__free(t);
	return 0;
}

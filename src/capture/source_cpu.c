// SPDX-License-Identifier: MIT
/*
 * The on-CPU source (bpf/cpu.bpf.c): its one perf_event program on a
 * sampler per CPU (pid -1: every thread, filtered in BPF), hardware
 * cycles where there is a PMU, else cpu-clock.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "capture/capture_int.h"
#include "cpu.skel.h"
#include "capture/source.h"

/* The samplers: a perf event fd and its link per possible CPU. */
struct cpu_samplers {
	int *fds;		/* -1 when not opened */
	struct bpf_link **links;
	int nr;
};

static int perf_open_sampler(int cpu, uint32_t freq, int cycles)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	if (cycles) {
		/* cycles have no fixed rate: the kernel adapts the period so
		 * the CPU is sampled freq times a second of its cycles */
		attr.type = PERF_TYPE_HARDWARE;
		attr.config = PERF_COUNT_HW_CPU_CYCLES;
		attr.freq = 1;
		attr.sample_freq = freq;
	} else {
		/* cpu-clock counts nanoseconds: a fixed period gives exactly
		 * freq Hz of on-CPU time per thread, no frequency-mode ramp-up */
		attr.type = PERF_TYPE_SOFTWARE;
		attr.config = PERF_COUNT_SW_CPU_CLOCK;
		attr.sample_period = 1000000000ull / freq;
	}
	attr.disabled = 0;
	return syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/*
 * Hardware cycles, where the machine has a PMU that counts them: a VM
 * without one (this project's machines) fails the open with ENOENT,
 * EOPNOTSUPP or ENODEV. Probed on the first CPU that takes an event.
 */
static int pick_clock(struct capture *c, enum capture_clock want, uint32_t freq, FILE *err)
{
	int i, fd = -1;

	c->st.cycles = 0;
	if (want == CAPTURE_CLOCK_CPU)
		return 0;
	for (i = 0; i < c->nr_cpus && fd < 0; i++) {
		fd = perf_open_sampler(i, freq, 1);
		if (fd < 0 && errno != ENODEV) /* ENODEV: offline CPU, or no PMU */
			break;
	}
	if (fd >= 0) {
		close(fd);
		c->st.cycles = 1;
		return 0;
	}
	if (want == CAPTURE_CLOCK_AUTO)
		return 0;
	capture__say(err, "hardware cycles cannot be sampled on this machine (%s): "
	    "use --cpu-event cpu-clock", strerror(errno));
	return -EOPNOTSUPP;
}

static int cpu_load(struct capture *c, struct capture_loaded *l, const struct capture_opts *o,
		    const struct sfprof_config *cfg, FILE *err)
{
	struct cpu_samplers *s = calloc(1, sizeof(*s));

	(void)o;
	l->priv = s;
	if (!s || !(s->fds = malloc(sizeof(*s->fds) * c->nr_cpus)) ||
	    !(s->links = calloc(c->nr_cpus, sizeof(*s->links))))
		return -ENOMEM;
	s->nr = c->nr_cpus;
	for (int i = 0; i < s->nr; i++)
		s->fds[i] = -1;
	return CAPTURE_LOAD_SKEL_DEFERRING(c, l, cpu_bpf, cfg, "on-CPU", err);
}

static int cpu_attach(struct capture *c, struct capture_loaded *l, const struct capture_opts *o,
		      FILE *err)
{
	struct cpu_samplers *s = l->priv;
	struct cpu_bpf *skel = l->skel;
	const char *what;
	int attached = 0, i, ret;

	ret = pick_clock(c, o->clock, o->freq, err);
	if (ret)
		return ret;
	what = c->st.cycles ? "cycles" : "cpu-clock";
	for (i = 0; i < s->nr; i++) {
		int fd = perf_open_sampler(i, o->freq, c->st.cycles);

		if (fd < 0) {
			if (errno == ENODEV) /* offline CPU */
				continue;
			ret = -errno;
			capture__say(err, "perf_event_open(%s, cpu %d): %s%s", what, i, strerror(-ret),
			    ret == -EACCES || ret == -EPERM ? " (needs CAP_PERFMON or root)" : "");
			return ret;
		}
		s->fds[i] = fd;
		s->links[i] = bpf_program__attach_perf_event(skel->progs.sfprof_cpu, fd);
		if (!s->links[i]) {
			ret = -errno;
			capture__say(err, "attaching the %s program on cpu %d: %s", what, i, strerror(-ret));
			return ret;
		}
		attached++;
	}
	if (!attached) {
		capture__say(err, "no online CPU to attach to");
		return -ENODEV;
	}
	return 0;
}

static void cpu_detach(struct capture *c, struct capture_loaded *l)
{
	struct cpu_samplers *s = l->priv;

	(void)c;
	for (int i = 0; s && i < s->nr; i++) {
		bpf_link__destroy(s->links[i]);
		s->links[i] = NULL;
		if (s->fds[i] >= 0)
			close(s->fds[i]);
		s->fds[i] = -1;
	}
}

static void cpu_destroy(struct capture_loaded *l)
{
	struct cpu_samplers *s = l->priv;

	cpu_detach(NULL, l);
	if (s) {
		free(s->links);
		free(s->fds);
		free(s);
	}
	cpu_bpf__destroy(l->skel);
}

const struct capture_source capture_source_cpu = {
	.name = "on-CPU",
	.bit = CAPTURE_CPU,
	.progs = {
		{ "sfprof_cpu", "perf_event", CAPTURE_NEVER, 1 },
	},
	.load = cpu_load,
	.attach = cpu_attach,
	.detach = cpu_detach,
	.destroy = cpu_destroy,
};

// SPDX-License-Identifier: MIT
/* Capture: BPF load/configure/attach and the ring buffer drain loop. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "capture.h"
#include "sfprof.skel.h"
#include "util.h"

#define CAPTURE_DEFAULT_RING (16u << 20)
#define CAPTURE_SLOT_KINDS 2 /* bpf/sfprof.bpf.h: SFPROF_SLOT_KINDS */
#define CAPTURE_KSTACK_DEPTH 127
#define CAPTURE_KSTACK_ENTRIES 16384

/* Thread tops set from user space: an open-addressing set of tids. */
#define CAPTURE_TOPS 16384

struct capture {
	struct sfprof_bpf *skel;
	struct ring_buffer *rb;
	int *perf_fds;		/* per possible CPU, -1 when not opened */
	struct bpf_link **perf_links;
	int nr_cpus;
	int pidfd;
	int detached;
	pid_t pid;
	capture_event_fn fn;
	void *fn_ctx;
	struct capture_stats st; /* user-space part; bpf[] filled on demand */
	uint32_t tops[CAPTURE_TOPS]; /* tids given a thread top (0: empty slot) */
	uint32_t nr_tops;
};

/*
 * Whether the BPF programs copy stacks straight into ring buffer records:
 * the kernel has the bpf_probe_read_user_dynptr kfunc (Linux 6.16), the
 * same fact the loaded program tests through its __weak declaration.
 * SFPROF_CAPTURE_SCRATCH=1 forces the older kernels' path (tests).
 */
static bool capture__direct_copy(void)
{
	struct btf *vmlinux;
	bool ok;

	if (getenv("SFPROF_CAPTURE_SCRATCH"))
		return false;
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux)
		return false;
	ok = btf__find_by_name_kind(vmlinux, "bpf_probe_read_user_dynptr", BTF_KIND_FUNC) > 0;
	btf__free(vmlinux);
	return ok;
}

static const char *const counter_names[SFPROF_CNT_MAX] = {
	[SFPROF_CNT_LOST_RINGBUF] = "lost_ringbuf",
	[SFPROF_CNT_LOST_STACK_READ] = "lost_stack_read",
	[SFPROF_CNT_LOST_BUSY] = "lost_busy",
	[SFPROF_CNT_LOST_ENTRY_MAP] = "lost_entry_map",
	[SFPROF_CNT_NO_USER_REGS] = "no_user_regs",
	[SFPROF_CNT_FUTEX_SHORT] = "futex_short",
	[SFPROF_CNT_SAMPLES_SEEN] = "samples_seen",
	[SFPROF_CNT_FUTEX_WAITS_SEEN] = "futex_waits_seen",
	[SFPROF_CNT_FUTEX_STALE] = "futex_stale",
};

const char *capture_counter__name(enum sfprof_counter c)
{
	if ((unsigned)c >= SFPROF_CNT_MAX || !counter_names[c])
		return "unknown";
	return counter_names[c];
}

static void say(FILE *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	fputs("sfprof: ", err);
	vfprintf(err, fmt, ap);
	fputc('\n', err);
	va_end(ap);
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* verifier logs and load errors only when asked: SFPROF_DEBUG=1 */
	if (level == LIBBPF_DEBUG || !getenv("SFPROF_DEBUG"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

const char *capture__missing_privileges(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	int bpf, perfmon, admin;

	if (geteuid() == 0)
		return NULL;
	if (syscall(SYS_capget, &hdr, data))
		return "CAP_BPF and CAP_PERFMON (or root)";
#define HAS_CAP(n) (!!(data[(n) / 32].effective & (1u << ((n) % 32))))
	bpf = HAS_CAP(39);	/* CAP_BPF */
	perfmon = HAS_CAP(38);	/* CAP_PERFMON */
	admin = HAS_CAP(21);	/* CAP_SYS_ADMIN implies both */
#undef HAS_CAP
	if (admin || (bpf && perfmon))
		return NULL;
	if (!bpf && !perfmon)
		return "CAP_BPF and CAP_PERFMON (or root)";
	return bpf ? "CAP_PERFMON (or root)" : "CAP_BPF (or root)";
}

/* Ring buffer callback: validate, count, hand over. */
static int capture__on_record(void *ctx, void *data, size_t len)
{
	struct capture *c = ctx;
	const struct sfprof_event *e = data;

	if (len < SFPROF_EVENT_HDR_SIZE || e->size > len ||
	    e->stack_len > e->size - SFPROF_EVENT_HDR_SIZE) {
		c->st.bad_records++;
		return 0;
	}
	c->st.bytes += len;
	c->st.stack_bytes += e->stack_len;
	if (e->flags & SFPROF_EVF_STACK_FULL)
		c->st.stack_full++;
	if (e->kind == SFPROF_EV_CPU) {
		c->st.events_cpu++;
		if (e->flags & SFPROF_EVF_KERNEL_MODE)
			c->st.kernel_mode++;
	} else if (e->kind == SFPROF_EV_FUTEX) {
		c->st.events_futex++;
		c->st.futex_wait_ns += e->weight;
	} else {
		c->st.bad_records++;
		return 0;
	}
	return c->fn ? c->fn(c->fn_ctx, e, len) : 0;
}

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
static int capture__pick_clock(struct capture *c, enum capture_clock want, uint32_t freq,
			       FILE *err)
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
	say(err, "hardware cycles cannot be sampled on this machine (%s): "
	    "use --cpu-event cpu-clock", strerror(errno));
	return -EOPNOTSUPP;
}

static int capture__attach_cpu(struct capture *c, uint32_t freq, enum capture_clock clock,
				FILE *err)
{
	const char *what;
	int attached = 0, i, ret;

	ret = capture__pick_clock(c, clock, freq, err);
	if (ret)
		return ret;
	what = c->st.cycles ? "cycles" : "cpu-clock";
	for (i = 0; i < c->nr_cpus; i++) {
		int fd = perf_open_sampler(i, freq, c->st.cycles);

		if (fd < 0) {
			if (errno == ENODEV) /* offline CPU */
				continue;
			ret = -errno;
			say(err, "perf_event_open(%s, cpu %d): %s%s", what, i, strerror(-ret),
			    ret == -EACCES || ret == -EPERM ? " (needs CAP_PERFMON or root)" : "");
			return ret;
		}
		c->perf_fds[i] = fd;
		c->perf_links[i] = bpf_program__attach_perf_event(c->skel->progs.sfprof_cpu, fd);
		if (!c->perf_links[i]) {
			ret = -errno;
			c->perf_links[i] = NULL;
			say(err, "attaching the %s program on cpu %d: %s", what, i, strerror(-ret));
			return ret;
		}
		attached++;
	}
	if (!attached) {
		say(err, "no online CPU to attach to");
		return -ENODEV;
	}
	return 0;
}

struct capture *capture__new(const struct capture_opts *o, capture_event_fn fn,
			     void *ctx, FILE *err)
{
	struct capture *c = NULL;
	uint32_t ring = o->ring_bytes ? o->ring_bytes : CAPTURE_DEFAULT_RING;
	const char *missing;
	int ret, i;

	if (o->pid <= 0 || (o->kind != CAPTURE_CPU && o->kind != CAPTURE_FUTEX) ||
	    o->stack_size > SFPROF_STACK_MAX || (ring & (ring - 1)) ||
	    (o->kind == CAPTURE_CPU && (o->freq == 0 || o->freq > 1000000000u))) {
		say(err, "invalid capture options");
		errno = EINVAL;
		return NULL;
	}
	missing = capture__missing_privileges();
	if (missing) {
		say(err, "profiling needs %s", missing);
		errno = EPERM;
		return NULL;
	}
	if (kill(o->pid, 0) && errno == ESRCH) {
		say(err, "no such process: %d", (int)o->pid);
		errno = ESRCH;
		return NULL;
	}

	libbpf_set_print(libbpf_quiet);
	c = calloc(1, sizeof(*c));
	if (!c) {
		ret = -ENOMEM;
		goto err_out;
	}
	c->pidfd = -1;
	c->pid = o->pid;
	c->fn = fn;
	c->fn_ctx = ctx;
	c->nr_cpus = libbpf_num_possible_cpus();
	if (c->nr_cpus <= 0) {
		ret = c->nr_cpus ? c->nr_cpus : -ENODEV;
		say(err, "cannot count CPUs: %s", strerror(-ret));
		goto err_out;
	}
	c->perf_fds = malloc(sizeof(*c->perf_fds) * c->nr_cpus);
	c->perf_links = calloc(c->nr_cpus, sizeof(*c->perf_links));
	if (!c->perf_fds || !c->perf_links) {
		ret = -ENOMEM;
		goto err_out;
	}
	for (i = 0; i < c->nr_cpus; i++)
		c->perf_fds[i] = -1;

	c->skel = sfprof_bpf__open();
	if (!c->skel) {
		ret = -errno;
		say(err, "opening the BPF object: %s", strerror(-ret));
		goto err_out;
	}
	c->skel->rodata->target_tgid = (uint32_t)o->pid;
	c->skel->rodata->stack_size = o->stack_size;
	c->skel->rodata->wait_exec = !!o->wait_exec;
	c->skel->rodata->min_wait_ns = o->min_wait_ns;
	c->skel->rodata->want_kstack = o->kind == CAPTURE_CPU && o->kernel_stacks;
	/* a forced wakeup only as a safety net when half the ring is pending;
	 * the timer drains long before that at any sane rate */
	c->skel->rodata->wakeup_bytes = ring / 2;
	c->st.direct_copy = capture__direct_copy();
	c->skel->rodata->force_scratch = !c->st.direct_copy;
	bpf_map__set_max_entries(c->skel->maps.events, ring);
	/* the direct path never touches a slot */
	bpf_map__set_max_entries(c->skel->maps.scratch,
				 c->st.direct_copy ? 1 : c->nr_cpus * CAPTURE_SLOT_KINDS);
	if (c->skel->rodata->want_kstack)
		bpf_map__set_max_entries(c->skel->maps.kstacks, CAPTURE_KSTACK_ENTRIES);
	bpf_program__set_autoload(c->skel->progs.sfprof_cpu, o->kind == CAPTURE_CPU);
	bpf_program__set_autoload(c->skel->progs.sfprof_exec, !!o->wait_exec);
	bpf_program__set_autoload(c->skel->progs.sfprof_sys_enter, o->kind == CAPTURE_FUTEX);
	bpf_program__set_autoload(c->skel->progs.sfprof_sys_exit, o->kind == CAPTURE_FUTEX);

	ret = sfprof_bpf__load(c->skel);
	if (ret) {
		ret = ret < 0 ? ret : -errno;
		if (ret == -EPERM)
			say(err, "loading BPF programs: %s (needs CAP_BPF and CAP_PERFMON, or root)",
			    strerror(-ret));
		else if (ret == -EACCES)
			say(err, "the kernel's verifier rejected the BPF programs "
			    "(SFPROF_DEBUG=1 shows its log)");
		else
			say(err, "loading BPF programs: %s (SFPROF_DEBUG=1 shows the verifier log)",
			    strerror(-ret));
		goto err_out;
	}

	/* before the samplers: a thread created from now on has its stack top */
	c->skel->links.sfprof_fork = bpf_program__attach(c->skel->progs.sfprof_fork);
	if (!c->skel->links.sfprof_fork) {
		ret = -errno;
		say(err, "attaching to sched_process_fork: %s", strerror(-ret));
		goto err_out;
	}
	if (o->wait_exec) {
		c->skel->links.sfprof_exec = bpf_program__attach(c->skel->progs.sfprof_exec);
		if (!c->skel->links.sfprof_exec) {
			ret = -errno;
			say(err, "attaching to sched_process_exec: %s", strerror(-ret));
			goto err_out;
		}
	}
	if (o->kind == CAPTURE_CPU) {
		ret = capture__attach_cpu(c, o->freq, o->clock, err);
		if (ret)
			goto err_out;
	} else {
		c->skel->links.sfprof_sys_enter = bpf_program__attach(c->skel->progs.sfprof_sys_enter);
		c->skel->links.sfprof_sys_exit = c->skel->links.sfprof_sys_enter ?
			bpf_program__attach(c->skel->progs.sfprof_sys_exit) : NULL;
		if (!c->skel->links.sfprof_sys_exit) {
			ret = -errno;
			say(err, "attaching to sys_enter/sys_exit: %s", strerror(-ret));
			goto err_out;
		}
	}

	c->rb = ring_buffer__new(bpf_map__fd(c->skel->maps.events), capture__on_record, c, NULL);
	if (!c->rb) {
		ret = -errno;
		say(err, "ring buffer: %s", strerror(-ret));
		goto err_out;
	}
	c->pidfd = syscall(SYS_pidfd_open, o->pid, 0);
	if (c->pidfd < 0) {
		ret = -errno;
		if (ret == -ESRCH)
			say(err, "no such process: %d", (int)o->pid);
		else
			say(err, "pidfd_open(%d): %s", (int)o->pid, strerror(-ret));
		goto err_out;
	}
	return c;

err_out:
	capture__free(c);
	errno = -ret;
	return NULL;
}

void capture__free(struct capture *c)
{
	int i;

	if (!c)
		return;
	ring_buffer__free(c->rb);
	for (i = 0; c->perf_links && i < c->nr_cpus; i++)
		bpf_link__destroy(c->perf_links[i]);
	for (i = 0; c->perf_fds && i < c->nr_cpus; i++)
		if (c->perf_fds[i] >= 0)
			close(c->perf_fds[i]);
	sfprof_bpf__destroy(c->skel);
	if (c->pidfd >= 0)
		close(c->pidfd);
	free(c->perf_links);
	free(c->perf_fds);
	free(c);
}

void capture__detach(struct capture *c)
{
	int i;

	if (c->detached)
		return;
	c->detached = 1;
	for (i = 0; i < c->nr_cpus; i++) {
		bpf_link__destroy(c->perf_links[i]);
		c->perf_links[i] = NULL;
		if (c->perf_fds[i] >= 0)
			close(c->perf_fds[i]);
		c->perf_fds[i] = -1;
	}
	sfprof_bpf__detach(c->skel);
	/* a program already running on another CPU finishes within
	 * microseconds; let it, so the drain that follows sees its record */
	usleep(2000);
}

int capture__poll(struct capture *c, int timeout_ms)
{
	int n, m;

	/* poll() only drains rings that woke it, and the perf program never
	 * wakes anyone: always consume after the wait */
	n = ring_buffer__poll(c->rb, timeout_ms);
	if (n == -EINTR)
		n = 0;
	if (n < 0)
		return n;
	m = ring_buffer__consume(c->rb);
	if (m < 0)
		return m;
	return n + m;
}

int capture__drain(struct capture *c)
{
	int n = ring_buffer__consume(c->rb);

	return n == -EINTR ? 0 : n;
}

static int target_exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP));
}

int capture__run(struct capture *c, const struct capture_run_opts *ro)
{
	int poll_ms = ro->poll_ms > 0 ? ro->poll_ms : 25;
	uint64_t end = ro->duration_ns ? util__now_ns() + ro->duration_ns : 0;
	int why = 0, ret;

	while (!why) {
		int wait = poll_ms;

		if (end) {
			uint64_t t = util__now_ns();

			if (t >= end) {
				why = CAPTURE_END_DURATION;
				break;
			}
			if ((end - t) / 1000000 < (uint64_t)wait)
				wait = (int)((end - t) / 1000000) + 1;
		}
		ret = capture__poll(c, wait);
		if (ret < 0)
			return ret;
		if (ro->on_tick) {
			capture__stats(c, &c->st);
			ro->on_tick(ro->tick_ctx, &c->st);
		}
		if (ro->stop && *ro->stop)
			why = CAPTURE_END_STOP;
		else if (target_exited(c->pidfd))
			why = CAPTURE_END_TARGET_EXIT;
	}
	/* stop producing, then drain: every record the programs submitted is
	 * delivered and the counters read afterwards add up exactly */
	capture__detach(c);
	ret = capture__drain(c);
	return ret < 0 ? ret : why;
}

static void prog_cost(const struct bpf_program *prog, struct capture_prog_cost *out)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	int fd = bpf_program__fd(prog);

	memset(out, 0, sizeof(*out));
	memset(&info, 0, sizeof(info));
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return;
	out->run_ns = info.run_time_ns;
	out->run_cnt = info.run_cnt;
	out->misses = info.recursion_misses;
}

int capture__stats(struct capture *c, struct capture_stats *st)
{
	uint64_t *vals;
	int fd = bpf_map__fd(c->skel->maps.counters);
	uint32_t k;
	int i, ret = 0;

	vals = calloc(c->nr_cpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	if (st != &c->st)
		*st = c->st;
	for (k = 0; k < SFPROF_CNT_MAX; k++) {
		uint64_t sum = 0;

		if (bpf_map_lookup_elem(fd, &k, vals)) {
			ret = -errno;
			break;
		}
		for (i = 0; i < c->nr_cpus; i++)
			sum += vals[i];
		st->bpf[k] = sum;
	}
	free(vals);
	prog_cost(c->skel->progs.sfprof_cpu, &st->prog_cpu);
	prog_cost(c->skel->progs.sfprof_sys_enter, &st->prog_sys_enter);
	prog_cost(c->skel->progs.sfprof_sys_exit, &st->prog_sys_exit);
	return ret;
}

uint64_t capture_stats__lost(const struct capture_stats *st)
{
	return st->bpf[SFPROF_CNT_LOST_RINGBUF] + st->bpf[SFPROF_CNT_LOST_STACK_READ] +
	       st->bpf[SFPROF_CNT_LOST_BUSY] + st->bpf[SFPROF_CNT_LOST_ENTRY_MAP] +
	       st->bad_records + st->prog_cpu.misses + st->prog_sys_enter.misses +
	       st->prog_sys_exit.misses;
}

void capture_stats__print(const struct capture_stats *st, FILE *f)
{
	int k;

	fprintf(f, "events_cpu: %llu\n", (unsigned long long)st->events_cpu);
	fprintf(f, "events_futex: %llu\n", (unsigned long long)st->events_futex);
	fprintf(f, "futex_wait_ns: %llu\n", (unsigned long long)st->futex_wait_ns);
	for (k = 0; k < SFPROF_CNT_MAX; k++)
		fprintf(f, "%s: %llu\n", capture_counter__name(k),
			(unsigned long long)st->bpf[k]);
	fprintf(f, "lost_bad_record: %llu\n", (unsigned long long)st->bad_records);
	fprintf(f, "lost_recursion: %llu\n", (unsigned long long)(st->prog_cpu.misses +
		st->prog_sys_enter.misses + st->prog_sys_exit.misses));
	fprintf(f, "lost_total: %llu\n", (unsigned long long)capture_stats__lost(st));
	fprintf(f, "kernel_mode_samples: %llu\n", (unsigned long long)st->kernel_mode);
	fprintf(f, "stack_full: %llu\n", (unsigned long long)st->stack_full);
	fprintf(f, "record_bytes: %llu\n", (unsigned long long)st->bytes);
	fprintf(f, "stack_bytes: %llu\n", (unsigned long long)st->stack_bytes);
	fprintf(f, "stack_copy_direct: %d\n", st->direct_copy);
	fprintf(f, "thread_tops_learned: %llu\n", (unsigned long long)st->thread_tops_learned);
	if (st->events_cpu || st->cycles)
		fprintf(f, "sample_event_cycles: %d\n", st->cycles);
	if (st->prog_cpu.run_cnt | st->prog_sys_enter.run_cnt | st->prog_sys_exit.run_cnt) {
		const struct capture_prog_cost *pc[3] = { &st->prog_cpu, &st->prog_sys_enter,
							  &st->prog_sys_exit };
		static const char *const names[3] = { "cpu", "sys_enter", "sys_exit" };

		for (k = 0; k < 3; k++) {
			if (!pc[k]->run_cnt)
				continue;
			fprintf(f, "bpf_run_ns_%s: %llu\n", names[k], (unsigned long long)pc[k]->run_ns);
			fprintf(f, "bpf_run_cnt_%s: %llu\n", names[k], (unsigned long long)pc[k]->run_cnt);
		}
	}
}

int capture__set_thread_top(struct capture *c, uint32_t tid, uint64_t sp)
{
	uint32_t h;

	if (!tid)
		return -EINVAL;
	for (h = (tid * 2654435761u) % CAPTURE_TOPS; c->tops[h]; h = (h + 1) % CAPTURE_TOPS)
		if (c->tops[h] == tid)
			return 0;
	/* a full set (a process that made 8k threads): learn no more */
	if (c->nr_tops >= CAPTURE_TOPS / 2)
		return -ENOSPC;
	c->tops[h] = tid;
	c->nr_tops++;
	/* BPF_NOEXIST: a top recorded when the thread was created stays */
	if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.thread_top), &tid, &sp, BPF_NOEXIST))
		return errno == EEXIST ? 0 : -errno;
	c->st.thread_tops_learned++;
	return 0;
}

int capture__kstack(struct capture *c, int32_t id, uint64_t *ips, size_t max)
{
	uint64_t buf[CAPTURE_KSTACK_DEPTH];
	uint32_t key = (uint32_t)id;
	size_t n = 0;

	if (id < 0 || !c->skel->rodata->want_kstack)
		return -ENOENT;
	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.kstacks), &key, buf))
		return -errno;
	while (n < max && n < CAPTURE_KSTACK_DEPTH && buf[n])
		ips[n] = buf[n], n++;
	return (int)n;
}

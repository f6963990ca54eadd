// SPDX-License-Identifier: MIT
/* Capture: BPF load and configuration, the ring buffer drain loop with the
 * side-band in order, counters. What is attached where: capture_attach.c. */
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
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "capture/capture_int.h"
#include "util.h"

/* Words of a bitmap by tgid with `per_word` tgids a word, up to pid_max
 * (the kernel's default upper limit, 2^22, when it cannot be read). */
uint32_t capture__pid_words(long per_word)
{
	char buf[32];
	long max = 1l << 22;
	ssize_t n;
	int fd = open("/proc/sys/kernel/pid_max", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = 0;
			max = strtol(buf, NULL, 10);
		}
	}
	if (max <= 0 || max > 1l << 22)
		max = 1l << 22;
	return (uint32_t)((max + per_word - 1) / per_word);
}

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
	[SFPROF_CNT_LOST_TASK] = "lost_task",
	[SFPROF_CNT_LOST_TARGET_MAP] = "lost_target_map",
	[SFPROF_CNT_FORKS] = "processes_followed",
	[SFPROF_CNT_EXITS] = "processes_exited",
	[SFPROF_CNT_OFFCPU_SEEN] = "offcpu_seen",
	[SFPROF_CNT_OFFCPU_SHORT] = "offcpu_short",
	[SFPROF_CNT_LOST_OFFCPU_MAP] = "lost_offcpu_map",
	[SFPROF_CNT_WAKERS] = "wakers_seen",
	[SFPROF_CNT_PY_WALKS] = "python_walks",
	[SFPROF_CNT_PY_FRAMES] = "python_frames_read",
	[SFPROF_CNT_PY_FAILED] = "python_walks_failed",
	[SFPROF_CNT_PY_CUT] = "python_walks_cut",
	[SFPROF_CNT_PY_LOST_BUSY] = "python_lost_busy",
	[SFPROF_CNT_RB_WALKS] = "ruby_walks",
	[SFPROF_CNT_RB_FRAMES] = "ruby_frames_read",
	[SFPROF_CNT_RB_FAILED] = "ruby_walks_failed",
	[SFPROF_CNT_RB_CUT] = "ruby_walks_cut",
	[SFPROF_CNT_PHP_WALKS] = "php_walks",
	[SFPROF_CNT_PHP_FRAMES] = "php_frames_read",
	[SFPROF_CNT_PHP_FAILED] = "php_walks_failed",
	[SFPROF_CNT_PHP_CUT] = "php_walks_cut",
	[SFPROF_CNT_STACK_DEFERRED] = "stack_reads_deferred",
	[SFPROF_CNT_STACK_DEFERRED_READ] = "stack_reads_deferred_read",
	[SFPROF_CNT_STACK_DEFER_FAILED] = "stack_reads_defer_failed",
	[SFPROF_CNT_NO_USER_STACK] = "no_user_stack_exit_exec",
	[SFPROF_CNT_PHP_LIVE_OPLINE] = "php_live_oplines",
};

const char *capture_counter__name(enum sfprof_counter c)
{
	if ((unsigned)c >= SFPROF_CNT_MAX || !counter_names[c])
		return "unknown";
	return counter_names[c];
}

void capture__say(FILE *err, const char *fmt, ...)
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
	/* every mapping change up to this record's time is applied first */
	if (c->sb && e->ts_ns > c->sb_until) {
		int n = sideband__deliver(c->sb, e->ts_ns, c->sb_fn, c->fn_ctx);

		if (n < 0)
			return n;
		c->sb_until = e->ts_ns;
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
	} else if (e->kind == SFPROF_EV_OFFCPU) {
		c->st.events_offcpu++;
		c->st.offcpu_ns += e->weight;
	} else if (e->kind == SFPROF_EV_WAKER) {
		c->st.events_waker++;
	} else if (e->kind == SFPROF_EV_FORK) {
		c->st.events_fork++;
	} else if (e->kind == SFPROF_EV_EXIT) {
		c->st.events_exit++;
	} else {
		c->st.bad_records++;
		return 0;
	}
	return c->fn ? c->fn(c->fn_ctx, e, len) : 0;
}

struct capture *capture__new(const struct capture_opts *o, capture_event_fn fn,
			     void *ctx, FILE *err)
{
	struct capture *c = NULL;
	uint32_t ring = o->ring_bytes ? o->ring_bytes : CAPTURE_DEFAULT_RING;
	struct sfprof_config cfg;
	const char *missing;
	int ret = 0, i;

	if ((o->nr_pids <= 0 && !o->all && !o->cgroup) || o->nr_pids < 0 ||
	    (o->nr_pids && !o->pids) || !o->kind ||
	    (o->kind & ~capture_sources__kinds()) ||
	    o->stack_size > SFPROF_STACK_MAX || (ring & (ring - 1)) ||
	    (o->wait_exec && o->nr_pids != 1) ||
	    ((o->kind & CAPTURE_CPU) && (o->freq == 0 || o->freq > 1000000000u))) {
		capture__say(err, "invalid capture options");
		errno = EINVAL;
		return NULL;
	}
	missing = capture__missing_privileges();
	if (missing) {
		capture__say(err, "profiling needs %s", missing);
		errno = EPERM;
		return NULL;
	}
	for (i = 0; i < o->nr_pids; i++) {
		if (o->pids[i] <= 0 || (kill(o->pids[i], 0) && errno == ESRCH)) {
			capture__say(err, "no such process: %d", (int)o->pids[i]);
			errno = ESRCH;
			return NULL;
		}
	}

	libbpf_set_print(libbpf_quiet);
	c = calloc(1, sizeof(*c));
	if (!c) {
		ret = -ENOMEM;
		goto err_out;
	}
	c->fn = fn;
	c->fn_ctx = ctx;
	c->nr_cpus = libbpf_num_possible_cpus();
	if (c->nr_cpus <= 0) {
		ret = c->nr_cpus ? c->nr_cpus : -ENODEV;
		capture__say(err, "cannot count CPUs: %s", strerror(-ret));
		goto err_out;
	}

	memset(&cfg, 0, sizeof(cfg));
	cfg.scope_all = !!o->all;
	cfg.use_cgroup = o->cgroup != NULL;
	cfg.self_tgid = (uint32_t)getpid();
	cfg.inherit = !o->no_inherit;
	cfg.stack_size = o->stack_size;
	cfg.min_wait_ns = o->min_wait_ns;
	cfg.min_block_ns = o->min_block_ns;
	cfg.offcpu_states = o->offcpu_states ? o->offcpu_states : SFPROF_OFFCPU_ALL;
	cfg.want_kstack = !!o->kernel_stacks;
	cfg.wakers = (o->kind & (CAPTURE_OFFCPU | CAPTURE_FUTEX)) && o->wakers;
	cfg.rt_walk = o->runtimes & SFPROF_RT_ALL;
	/* a forced wakeup only as a safety net when half the ring is pending;
	 * the timer drains long before that at any sane rate */
	cfg.wakeup_bytes = ring / 2;
	c->st.direct_copy = capture__direct_copy();
	cfg.force_scratch = !c->st.direct_copy;
	cfg.defer_reads = 1; /* until a source's load finds it refused */

	/* every selected source's object, the task's first (source.h) */
	ret = capture_sources__load(c, o, &cfg, err);
	if (ret)
		goto err_out;
	if (o->cgroup && (ret = capture__set_cgroup(c, o->cgroup, err)))
		goto err_out;
	ret = capture__set_targets(c, o, err);
	if (ret)
		goto err_out;

	/* before the samplers: a process or thread created from now on is
	 * followed, and every mapping change is seen */
	if (o->on_sideband) {
		c->sb = sideband__open(0, err);
		if (!c->sb) {
			ret = -errno;
			goto err_out;
		}
		c->sb_fn = o->on_sideband;
	}
	ret = capture_sources__attach(c, o, err);
	if (ret)
		goto err_out;

	c->rb = ring_buffer__new(bpf_map__fd(c->task->maps.events), capture__on_record, c, NULL);
	if (!c->rb) {
		ret = -errno;
		capture__say(err, "ring buffer: %s", strerror(-ret));
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
	capture_sources__destroy(c);
	sideband__close(c->sb);
	for (i = 0; i < c->nr_pidfds; i++)
		if (c->pidfds[i] >= 0)
			close(c->pidfds[i]);
	free(c->pidfds);
	free(c);
}

void capture__detach(struct capture *c)
{
	if (c->detached)
		return;
	c->detached = 1;
	capture_sources__detach(c);
	/* a program already running on another CPU finishes within
	 * microseconds; let it, so the drain that follows sees its record */
	usleep(2000);
}

/* The side-band up to `until`, when no event has asked for it yet. */
static int sideband_catch_up(struct capture *c, uint64_t until)
{
	int n;

	if (!c->sb || until <= c->sb_until)
		return 0;
	n = sideband__deliver(c->sb, until, c->sb_fn, c->fn_ctx);
	if (n < 0)
		return n;
	c->sb_until = until;
	return 0;
}

int capture__poll(struct capture *c, int timeout_ms)
{
	uint64_t t0;
	int n, m, ret;

	/* poll() only drains rings that woke it, and the perf program never
	 * wakes anyone: always consume after the wait */
	n = ring_buffer__poll(c->rb, timeout_ms);
	if (n == -EINTR)
		n = 0;
	if (n < 0)
		return n;
	t0 = util__now_ns();
	m = ring_buffer__consume(c->rb);
	if (m < 0)
		return m;
	ret = sideband_catch_up(c, t0 > CAPTURE_SIDEBAND_LAG_NS ? t0 - CAPTURE_SIDEBAND_LAG_NS : 0);
	return ret < 0 ? ret : n + m;
}

int capture__drain(struct capture *c)
{
	int n = ring_buffer__consume(c->rb), ret;

	if (n == -EINTR)
		n = 0;
	if (n < 0)
		return n;
	/* after detach nothing is in flight: the side-band's whole rest */
	ret = c->detached ? sideband_catch_up(c, UINT64_MAX) : 0;
	return ret < 0 ? ret : n;
}

uint64_t capture__delivered_ns(const struct capture *c)
{
	return c->sb_until;
}

/* Whether every listed target has exited (never, for a scope). */
static int targets_exited(struct capture *c)
{
	int alive = 0;

	for (int i = 0; i < c->nr_pidfds; i++) {
		struct pollfd p = { .fd = c->pidfds[i], .events = POLLIN };

		if (c->pidfds[i] < 0)
			continue;
		if (poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP))) {
			close(c->pidfds[i]);
			c->pidfds[i] = -1;
		} else {
			alive++;
		}
	}
	return c->nr_pidfds && !alive;
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
		if (ro->on_drained)
			ro->on_drained(ro->drained_ctx, util__now_ns());
		if (ro->on_tick) {
			capture__stats(c, &c->st);
			ro->on_tick(ro->tick_ctx, &c->st);
		}
		if (ro->stop && *ro->stop)
			why = CAPTURE_END_STOP;
		else if (targets_exited(c))
			why = CAPTURE_END_TARGET_EXIT;
	}
	/* stop producing, then drain: every record the programs submitted is
	 * delivered and the counters read afterwards add up exactly */
	capture__detach(c);
	ret = capture__drain(c);
	return ret < 0 ? ret : why;
}

int capture__stats(struct capture *c, struct capture_stats *st)
{
	uint64_t *vals;
	int fd = bpf_map__fd(c->task->maps.counters);
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
	/* the BPF side counts each block once: as short, or as seen */
	if (!ret)
		st->bpf[SFPROF_CNT_OFFCPU_SEEN] += st->bpf[SFPROF_CNT_OFFCPU_SHORT];
	capture_sources__cost(c, st);
	if (c->sb)
		sideband__stats(c->sb, &st->sideband);
	return ret;
}

/* Invocations the kernel skipped (another BPF program ran on the CPU). */
static uint64_t capture_stats__misses(const struct capture_stats *st)
{
	uint64_t n = 0;

	for (size_t i = 0; i < st->nr_prog; i++)
		n += st->prog[i].misses;
	return n;
}

uint64_t capture_stats__lost(const struct capture_stats *st)
{
	return st->bpf[SFPROF_CNT_LOST_RINGBUF] + st->bpf[SFPROF_CNT_LOST_STACK_READ] +
	       st->bpf[SFPROF_CNT_LOST_BUSY] + st->bpf[SFPROF_CNT_LOST_ENTRY_MAP] +
	       st->bpf[SFPROF_CNT_LOST_OFFCPU_MAP] + st->bad_records + capture_stats__misses(st);
}

void capture_stats__print(const struct capture_stats *st, FILE *f)
{
	int k;

	fprintf(f, "events_cpu: %llu\n", (unsigned long long)st->events_cpu);
	fprintf(f, "events_futex: %llu\n", (unsigned long long)st->events_futex);
	fprintf(f, "futex_wait_ns: %llu\n", (unsigned long long)st->futex_wait_ns);
	fprintf(f, "events_offcpu: %llu\n", (unsigned long long)st->events_offcpu);
	fprintf(f, "offcpu_ns: %llu\n", (unsigned long long)st->offcpu_ns);
	fprintf(f, "events_waker: %llu\n", (unsigned long long)st->events_waker);
	for (k = 0; k < SFPROF_CNT_MAX; k++)
		fprintf(f, "%s: %llu\n", capture_counter__name(k),
			(unsigned long long)st->bpf[k]);
	fprintf(f, "lost_bad_record: %llu\n", (unsigned long long)st->bad_records);
	fprintf(f, "lost_recursion: %llu\n", (unsigned long long)capture_stats__misses(st));
	fprintf(f, "lost_total: %llu\n", (unsigned long long)capture_stats__lost(st));
	fprintf(f, "kernel_mode_samples: %llu\n", (unsigned long long)st->kernel_mode);
	fprintf(f, "stack_full: %llu\n", (unsigned long long)st->stack_full);
	fprintf(f, "record_bytes: %llu\n", (unsigned long long)st->bytes);
	fprintf(f, "stack_bytes: %llu\n", (unsigned long long)st->stack_bytes);
	fprintf(f, "stack_copy_direct: %d\n", st->direct_copy);
	fprintf(f, "stack_reads_deferrable: %d\n", st->defer_reads);
	fprintf(f, "thread_tops_learned: %llu\n", (unsigned long long)st->thread_tops_learned);
	fprintf(f, "events_fork: %llu\n", (unsigned long long)st->events_fork);
	fprintf(f, "events_exit: %llu\n", (unsigned long long)st->events_exit);
	fprintf(f, "sideband_records: %llu\n", (unsigned long long)st->sideband.records);
	fprintf(f, "sideband_mmaps: %llu\n", (unsigned long long)st->sideband.mmaps);
	fprintf(f, "sideband_execs: %llu\n", (unsigned long long)st->sideband.execs);
	/* changes the kernel could not write, and records that did not parse:
	 * mapping changes sfprof could not see */
	fprintf(f, "sideband_lost: %llu\n", (unsigned long long)st->sideband.lost);
	fprintf(f, "sideband_bad: %llu\n", (unsigned long long)st->sideband.bad);
	if (st->events_cpu || st->cycles)
		fprintf(f, "sample_event_cycles: %d\n", st->cycles);
	for (size_t i = 0; i < st->nr_prog; i++) {
		const struct capture_prog_cost *pc = &st->prog[i];

		if (!pc->run_cnt)
			continue;
		fprintf(f, "bpf_run_ns_%s: %llu\n", pc->name, (unsigned long long)pc->run_ns);
		fprintf(f, "bpf_run_cnt_%s: %llu\n", pc->name, (unsigned long long)pc->run_cnt);
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
	if (bpf_map_update_elem(bpf_map__fd(c->task->maps.thread_top), &tid, &sp, BPF_NOEXIST))
		return errno == EEXIST ? 0 : -errno;
	c->st.thread_tops_learned++;
	return 0;
}

/*
 * Runtime bit `bit` of tgid in the rt_tgids bitmap (bpf/target.bpf.h) to
 * `on`. Only this thread writes the map, so read, change, write is not a
 * race. A tgid past the map (pid_max raised since) needs no bit: BPF
 * asks every runtime's hash for it.
 */
static int set_rt_bit(struct capture *c, uint32_t tgid, uint64_t bit, int on)
{
	int fd = bpf_map__fd(c->task->maps.rt_tgids);
	uint32_t word = tgid / SFPROF_RT_TGIDS_PER_WORD;
	uint64_t bits = 0, mask = bit << (tgid % SFPROF_RT_TGIDS_PER_WORD * 4);

	if (word >= bpf_map__max_entries(c->task->maps.rt_tgids))
		return 0;
	if (bpf_map_lookup_elem(fd, &word, &bits))
		return -errno;
	bits = on ? bits | mask : bits & ~mask;
	return bpf_map_update_elem(fd, &word, &bits, BPF_ANY) ? -errno : 0;
}

/* A runtime's entry for tgid in its map (`p`, or none when NULL) and its
 * rt_tgids bit. The entry before the bit, the bit cleared before the
 * entry goes: BPF never finds a bit without its entry. */
static int set_runtime(struct capture *c, struct bpf_map *map, uint32_t tgid, uint64_t bit,
		       const void *p)
{
	int fd = bpf_map__fd(map), err;

	if (!p) {
		err = set_rt_bit(c, tgid, bit, 0);
		if (bpf_map_delete_elem(fd, &tgid) && errno != ENOENT)
			return -errno;
		return err;
	}
	if (bpf_map_update_elem(fd, &tgid, p, BPF_ANY))
		return -errno;
	return set_rt_bit(c, tgid, bit, 1);
}

/* A map of the task object that a walked runtime (rt_bit) owns, or NULL. */
static struct bpf_map *runtime_map(struct capture *c, uint32_t rt_bit, const char *name)
{
	if (!(c->task->rodata->cfg.rt_walk & rt_bit) || !name)
		return NULL;
	return bpf_object__find_map_by_name(c->task->obj, name);
}

int capture__set_runtime_proc(struct capture *c, uint32_t rt_bit, const char *map, uint32_t tgid,
			      const void *proc, size_t len)
{
	struct bpf_map *m;

	if (!(c->task->rodata->cfg.rt_walk & rt_bit))
		return 0;
	if (!rt_bit || (rt_bit & (rt_bit - 1)) || (rt_bit & ~SFPROF_RT_ALL))
		return -EINVAL;
	if (!(m = runtime_map(c, rt_bit, map)))
		return -ENOENT;
	if (proc && len != bpf_map__value_size(m))
		return -EINVAL;
	return set_runtime(c, m, tgid, rt_bit, proc);
}

int capture__runtime_map(struct capture *c, uint32_t rt_bit, const char *map)
{
	struct bpf_map *m = runtime_map(c, rt_bit, map);

	return m ? bpf_map__fd(m) : -ENOENT;
}

int capture__kstack(struct capture *c, int32_t id, uint64_t *ips, size_t max)
{
	uint64_t buf[CAPTURE_KSTACK_DEPTH];
	uint32_t key = (uint32_t)id;
	size_t n = 0;

	if (id < 0 || !(c->task->rodata->cfg.want_kstack || c->task->rodata->cfg.wakers))
		return -ENOENT;
	if (bpf_map_lookup_elem(bpf_map__fd(c->task->maps.kstacks), &key, buf))
		return -errno;
	while (n < max && n < CAPTURE_KSTACK_DEPTH && buf[n])
		ips[n] = buf[n], n++;
	return (int)n;
}

// SPDX-License-Identifier: MIT
/*
 * The sfprof command: subcommand dispatch, the target (-p PID or a
 * started COMMAND), signals, and the live/record sinks that consume
 * capture events.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture/capture.h"
#include "cli/cmd.h"
#include "cli/options.h"
#include "model/procmaps.h"
#include "output/progress.h"
#include "session/report.h"
#include "cli/run_int.h"
#include "runtimes/runtime.h"
#include "cli/sched_int.h"
#include "util.h"

_Static_assert((int)SFPROF_SEL_CPU == (int)CAPTURE_CPU &&
	       (int)SFPROF_SEL_FUTEX == (int)CAPTURE_FUTEX &&
	       (int)SFPROF_SEL_OFFCPU == (int)CAPTURE_OFFCPU,
	       "-e selections are capture kinds");

static volatile sig_atomic_t stop_requested;
/* live and record: the run's priority, and the caller's (sched_int.h) */
static struct run_sched run_sched = { .how = RUN_SCHED_KEPT };

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void on_cut_signal(int sig)
{
	(void)sig;
	report_sink_cut_requested = 1;
}

/* No SA_RESTART: the drain loop's epoll_wait returns at once. */
static void install_stop_handlers(const struct sfprof_opts *o)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (o->interval_ns) { /* --interval: SIGHUP ends an interval early */
		sa.sa_handler = on_cut_signal;
		sigaction(SIGHUP, &sa, NULL);
	} else {
		/* a dropped ssh session: end the run and write the profile */
		sigaction(SIGHUP, &sa, NULL);
	}
}

/*
 * A sink consumes events during the run and writes its result at the end.
 * The live and record paths are sinks: the unwinder's stacks pipeline
 * (src/session/report.h), plus --dump-events raw records for the tests.
 */
struct sink {
	capture_event_fn on_event;
	int (*finish)(void *ctx, const struct sfprof_opts *o, const struct capture_stats *st);
	void *ctx;
	/* optional: told the capture once it exists (kernel stacks), and
	 * the processes that exist at the start */
	void (*on_capture)(void *ctx, struct capture *c);
	int (*add_targets)(void *ctx, const pid_t *pids, int n);
	/* optional: COMMAND is about to exec file, then has exec'd as pid
	 * (before the first drain) */
	void (*on_starting)(void *ctx, const char *file);
	void (*on_started)(void *ctx, pid_t pid);
	capture_sideband_fn on_sideband;
	void (*on_drained)(void *ctx, uint64_t now_ns);
};

/* ---- raw records to a file (record, and --dump-events for tests) ---- */

/* File: 8-byte magic, then records exactly as they left the ring
 * (struct sfprof_event, e->size bytes each). */
#define SFPROF_RAW_MAGIC "SFPREV01"

static FILE *raw_open(const char *path)
{
	struct util_out out;
	int fd, err;
	FILE *f;

	/* raw memory: 0600; a device refused (util.h). Renamed at once:
	 * a test reads it only after the run. */
	err = util__out_open(&out, path, 0600);
	if (err) {
		errno = -err;
		return NULL;
	}
	fd = dup(out.fd);
	err = fd < 0 ? -errno : util__out_commit(&out, 0);
	if (err) {
		if (fd >= 0)
			close(fd);
		util__out_abort(&out);
		errno = -err;
		return NULL;
	}
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return NULL;
	}
	if (fwrite(SFPROF_RAW_MAGIC, 8, 1, f) != 1) {
		fclose(f);
		return NULL;
	}
	return f;
}

static int raw_write(FILE *f, const struct sfprof_event *e)
{
	return fwrite(e, e->size, 1, f) == 1 ? 0 : -EIO;
}

/* ---- the target ---- */

struct child {
	pid_t pid;
	int go_fd;   /* write one byte: exec */
	int err_fd;  /* EOF: exec happened; an int: its errno */
	int group;   /* the child leads its own process group */
	pid_t guard; /* group_guard's process, or 0 */
	int guard_fd; /* write one byte: stand down; EOF: kill the group */
};

/*
 * Fork COMMAND, held before exec until child_release(), so the programs
 * are attached before its first instruction.
 */
static int child_spawn(char **argv, struct child *ch)
{
	int go[2], er[2];
	pid_t pid, parent;

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(er, O_CLOEXEC)) {
		int ret = -errno;

		close(go[0]);
		close(go[1]);
		return ret;
	}
	fflush(NULL);
	parent = getpid();
	pid = fork();
	if (pid < 0) {
		int ret = -errno;

		close(go[0]), close(go[1]), close(er[0]), close(er[1]);
		return ret;
	}
	if (pid == 0) {
		char c;
		int e;

		close(go[1]);
		close(er[0]);
		/*
		 * The COMMAND must not outlive a killed sfprof (a SIGKILL
		 * cannot be caught, so child_reap() never runs). SIGKILL, not
		 * SIGTERM: a command that catches or ignores SIGTERM would run
		 * on unprofiled. The setting survives exec, except of a
		 * set-user-ID or file-capability binary. getppid() closes the
		 * race with a parent that died before the prctl.
		 */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
			_exit(127);
		if (ch->group && setpgid(0, 0) != 0)
			_exit(127);
		/* COMMAND runs at its caller's priority, not sfprof's */
		run_sched__restore(&run_sched);
		if (read(go[0], &c, 1) != 1)
			_exit(127); /* sfprof gave up */
		execvp(argv[0], argv);
		e = errno;
		if (write(er[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(er[1]);
	/* (both sides: whichever runs first, the group exists before exec) */
	if (ch->group)
		(void)setpgid(pid, pid);
	ch->pid = pid;
	ch->go_fd = go[1];
	ch->err_fd = er[0];
	return 0;
}

/*
 * PR_SET_PDEATHSIG reaches only the direct child: what COMMAND starts
 * (`sh -c 'a & b'`) would outlive a SIGKILLed sfprof. The child leads a
 * process group of its own, and a small process outside it holds a pipe
 * to sfprof: when the pipe ends without a word (sfprof died, however),
 * it kills the whole group. At a normal end sfprof tells it to stand
 * down (group_guard_release). Not on an interactive terminal, where a
 * second process group could not read it (SIGTTIN): there the command
 * stays in sfprof's group, which the terminal's signals reach whole.
 */
static int child_wants_group(void)
{
	return !(isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp());
}

static void group_guard(struct child *ch)
{
	int p[2];
	pid_t pid;

	if (!ch->group || ch->pid <= 0 || pipe2(p, O_CLOEXEC))
		return;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		char c;
		ssize_t n;

		/* hold nothing of sfprof's: not the child's pipes, not the
		 * output a caller waits to see closed. (It keeps sfprof's
		 * priority, asleep: when sfprof dies, it acts at once.) */
		close(p[1]);
		close(ch->go_fd);
		close(ch->err_fd);
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		do
			n = read(p[0], &c, 1);
		while (n < 0 && errno == EINTR);
		if (n <= 0)
			kill(-ch->pid, SIGKILL);
		_exit(0);
	}
	close(p[0]);
	ch->guard = pid;
	ch->guard_fd = p[1];
}

/* sfprof ends as it should: the guard leaves the group alone. */
static void group_guard_release(struct child *ch)
{
	if (ch->guard <= 0)
		return;
	if (write(ch->guard_fd, "k", 1) != 1)
		kill(ch->guard, SIGKILL);
	close(ch->guard_fd);
	while (waitpid(ch->guard, NULL, 0) < 0 && errno == EINTR)
		;
	ch->guard = 0;
	ch->guard_fd = -1;
}

/* Let the child exec; 0 or the exec's -errno. */
static int child_release(struct child *ch)
{
	int e = 0;
	ssize_t n;

	if (write(ch->go_fd, "g", 1) != 1)
		e = errno;
	close(ch->go_fd);
	ch->go_fd = -1;
	if (e)
		return -e;
	do
		n = read(ch->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(ch->err_fd);
	ch->err_fd = -1;
	return n == (ssize_t)sizeof(e) ? -e : 0;
}

/*
 * End the child: a held one exits when go_fd closes; a running one that
 * is still there when the profile ends (-d, or a signal to sfprof) gets
 * SIGTERM. Returns its exit status as a shell gives it (128 + signal
 * when a signal ended it), or -1 when there was no child.
 */
static int child_reap(struct child *ch)
{
	int status = 0;
	pid_t r;

	if (ch->go_fd >= 0)
		close(ch->go_fd);
	if (ch->err_fd >= 0)
		close(ch->err_fd);
	ch->go_fd = ch->err_fd = -1;
	if (ch->pid <= 0)
		return -1;
	r = waitpid(ch->pid, &status, WNOHANG);
	if (r == 0) {
		/* the command's whole group when it has one */
		kill(ch->group ? -ch->pid : ch->pid, SIGTERM);
		while ((r = waitpid(ch->pid, &status, 0)) < 0 && errno == EINTR)
			;
	}
	ch->pid = 0;
	if (r < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Status line on a terminal (progress.h), fed after every drain. */
static void on_tick_progress(void *ctx, const struct capture_stats *st)
{
	progress__update(ctx, st->events_cpu + st->events_futex + st->events_offcpu,
			 capture_stats__lost(st));
}

/*
 * A -p PID as the process it names (-p may name any of its threads), or
 * an error line and -ESRCH / -EINVAL: no such process, a kernel thread
 * (no user stack), a zombie (nothing left to profile).
 */
static int check_pid(pid_t pid, pid_t *tgid)
{
	struct procmaps_status st;
	int err = procmaps__read_status((uint32_t)pid, &st);

	if (err == -ENOENT || err == -ESRCH || (err && kill(pid, 0) && errno == ESRCH)) {
		fprintf(stderr, "sfprof: no such process: %d\n", (int)pid);
		return -ESRCH;
	}
	if (err) {
		fprintf(stderr, "sfprof: -p %d: cannot read /proc/%d/status: %s\n", (int)pid,
			(int)pid, strerror(-err));
		return err;
	}
	if (st.kthread) {
		fprintf(stderr, "sfprof: -p %d is a kernel thread: it has no user stack to "
			"profile (--kernel adds kernel frames to a user process)\n", (int)pid);
		return -EINVAL;
	}
	/* a leader that called pthread_exit shows Z while its other threads
	 * run: only a process with no live thread is gone */
	if ((st.state == 'Z' && st.threads <= 1) || st.state == 'X') {
		fprintf(stderr, "sfprof: -p %d has exited (a zombie waiting for its parent): "
			"nothing left to profile\n", (int)pid);
		return -EINVAL;
	}
	*tgid = st.tgid ? (pid_t)st.tgid : pid;
	return 0;
}

/* Load, attach, run, drain; the sink gets every event. Returns the exit
 * status: with -- COMMAND, COMMAND's once the profile is written. */
static int profile_target(struct sfprof_opts *o, struct sink *sink)
{
	struct capture_opts co = {
		.all = o->all,
		.cgroup = o->cgroup,
		.no_inherit = o->no_inherit,
		/* SFPROF_SEL_* and CAPTURE_* are the same bits; wall is both
		 * cpu and offcpu, sampled by time */
		.kind = o->event == SFPROF_SEL_WALL ? CAPTURE_CPU | CAPTURE_OFFCPU :
			(enum capture_kind)o->event,
		.freq = o->freq,
		.clock = o->event == SFPROF_SEL_WALL ? CAPTURE_CLOCK_CPU :
			 o->cpu_event == SFPROF_CPU_EVENT_CYCLES ? CAPTURE_CLOCK_CYCLES :
			 o->cpu_event == SFPROF_CPU_EVENT_CPU_CLOCK ? CAPTURE_CLOCK_CPU :
			 CAPTURE_CLOCK_AUTO,
		.stack_size = o->stack_size,
		.min_wait_ns = o->min_wait_us * 1000,
		.min_block_ns = o->min_block_us * 1000,
		.offcpu_states = o->offcpu_states,
		.wakers = o->wakers,
		.ring_bytes = sfprof_opts__ring_mb(o) << 20,
		.kernel_stacks = o->kernel,
		.on_sideband = sink->on_sideband,
		.runtimes = runtime__capture_bits(o),
	};
	struct capture_run_opts ro = {
		.duration_ns = o->duration_ns,
		.stop = &stop_requested,
		.on_drained = sink->on_drained,
		.drained_ctx = sink->ctx,
	};
	struct child ch = { .pid = 0, .go_fd = -1, .err_fd = -1, .guard_fd = -1 };
	pid_t pids[SFPROF_MAX_PIDS];
	struct capture_stats st;
	struct capture *c = NULL;
	struct progress *pg = NULL;
	int ret, why, status = 1, cmd_status;

	if (o->command) {
		const char *missing = capture__missing_privileges();

		/* say it before starting anything */
		if (missing) {
			fprintf(stderr, "sfprof: profiling needs %s\n", missing);
			return 1;
		}
		ch.group = child_wants_group();
		ret = child_spawn(o->command, &ch);
		if (ret) {
			fprintf(stderr, "sfprof: cannot start %s: %s\n", o->command[0], strerror(-ret));
			return 1;
		}
		group_guard(&ch);
		pids[0] = ch.pid;
		co.nr_pids = 1;
		co.wait_exec = 1; /* the child is sfprof until it execs */
	} else {
		/* the BPF filter is by process: a thread ID means its process */
		for (int i = 0; i < o->nr_pids; i++) {
			ret = check_pid(o->pids[i], &pids[co.nr_pids]);
			if (ret)
				return SFPROF_EXIT_USAGE;
			for (int k = 0; k < co.nr_pids; k++)
				if (pids[k] == pids[co.nr_pids])
					co.nr_pids--; /* two threads of one process */
			co.nr_pids++;
		}
		memcpy(o->pids, pids, sizeof(pids[0]) * (size_t)co.nr_pids);
		o->nr_pids = co.nr_pids;
	}
	co.pids = pids;

	install_stop_handlers(o);
	c = capture__new(&co, sink->on_event, sink->ctx, stderr);
	if (!c) {
		status = errno == ESRCH || errno == ENOENT || errno == ENOTDIR ? SFPROF_EXIT_USAGE : 1;
		goto out;
	}
	if (sink->on_capture)
		sink->on_capture(sink->ctx, c);
	if (sink->add_targets && (ret = sink->add_targets(sink->ctx, pids, co.nr_pids))) {
		fprintf(stderr, "sfprof: reading the targets' mappings: %s\n", strerror(-ret));
		goto out;
	}
	if (ch.pid) {
		if (sink->on_starting)
			sink->on_starting(sink->ctx, o->command[0]);
		ret = child_release(&ch);
		if (ret) {
			fprintf(stderr, "sfprof: cannot run '%s': %s\n", o->command[0], strerror(-ret));
			status = SFPROF_EXIT_USAGE;
			goto out;
		}
		if (sink->on_started)
			sink->on_started(sink->ctx, ch.pid);
	}

	pg = progress__new(stderr, o->quiet, o->duration_ns);
	if (pg && progress__active(pg)) {
		ro.on_tick = on_tick_progress;
		ro.tick_ctx = pg;
	}
	why = capture__run(c, &ro);
	progress__end(pg);
	if (why < 0 && why != REPORT_E_REPORTED) {
		fprintf(stderr, "sfprof: capture failed: %s\n", strerror(-why));
		/* still write what was collected */
	}
	ret = capture__stats(c, &st);
	if (ret)
		fprintf(stderr, "sfprof: reading counters: %s\n", strerror(-ret));
	ret = sink->finish(sink->ctx, o, &st);
	if (ret && ret != REPORT_E_REPORTED)
		fprintf(stderr, "sfprof: writing the output: %s\n", strerror(-ret));
	if (o->stats) {
		capture_stats__print(&st, stderr);
		fprintf(stderr, "capture_sched: %s\n", run_sched__name(&run_sched));
	}
	status = (why < 0 || ret) ? 1 : 0;
	/* -- COMMAND: its exit status, as time(1) gives it, once the profile
	 * is safe; a COMMAND still running when -d or a signal ends the run
	 * is sent SIGTERM, and sfprof's status is then the profile's */
	if (!status && why == CAPTURE_END_TARGET_EXIT && ch.pid) {
		cmd_status = child_reap(&ch);
		if (cmd_status >= 0)
			status = cmd_status;
	}
out:
	progress__free(pg);
	capture__free(c);
	child_reap(&ch);
	group_guard_release(&ch);
	return status;
}

/* ---- live and record: the unwinder's stacks pipeline (src/cli/cmd_report.c) ---- */

struct stacks_sink {
	struct report_sink *rs;
	FILE *dump; /* --dump-events, may be NULL */
	const struct run_hooks *h; /* sfprof agent's, may be NULL */
};

static int stacks_sink__event(void *ctx, const struct sfprof_event *e, size_t len)
{
	struct stacks_sink *s = ctx;

	if (s->dump && raw_write(s->dump, e))
		return -EIO;
	if (s->h && s->h->on_event)
		s->h->on_event(s->h->ctx, e);
	return report_sink__event(s->rs, e, len);
}

static int stacks_sink__finish(void *ctx, const struct sfprof_opts *o,
			       const struct capture_stats *st)
{
	struct stacks_sink *s = ctx;

	return report_sink__finish(s->rs, o, st);
}

static void stacks_sink__capture(void *ctx, struct capture *c)
{
	struct stacks_sink *s = ctx;

	report_sink__set_capture(s->rs, c);
	if (s->h && s->h->on_capture)
		s->h->on_capture(s->h->ctx, c);
}

static int stacks_sink__targets(void *ctx, const pid_t *pids, int n)
{
	struct stacks_sink *s = ctx;

	return report_sink__add_targets(s->rs, pids, n);
}

static void stacks_sink__starting(void *ctx, const char *file)
{
	struct stacks_sink *s = ctx;

	report_sink__starting(s->rs, file);
}

static void stacks_sink__started(void *ctx, pid_t pid)
{
	struct stacks_sink *s = ctx;

	report_sink__started(s->rs, pid);
}

static int stacks_sink__sideband(void *ctx, const struct sideband_rec *r)
{
	struct stacks_sink *s = ctx;

	if (s->h && s->h->on_sideband)
		s->h->on_sideband(s->h->ctx, r);
	return report_sink__sideband(s->rs, r);
}

static void stacks_sink__drained(void *ctx, uint64_t now_ns)
{
	struct stacks_sink *s = ctx;

	report_sink__drained(s->rs, now_ns);
	if (s->h && s->h->on_drained)
		s->h->on_drained(s->h->ctx, now_ns);
}

int run_stacks_hooked(struct sfprof_opts *o, const struct run_hooks *h)
{
	struct stacks_sink ss = { NULL, NULL, h };
	struct sink sink = {
		.on_event = stacks_sink__event,
		.finish = stacks_sink__finish,
		.ctx = &ss,
		.on_capture = stacks_sink__capture,
		.add_targets = stacks_sink__targets,
		.on_starting = stacks_sink__starting,
		.on_started = stacks_sink__started,
		.on_sideband = stacks_sink__sideband,
		.on_drained = stacks_sink__drained,
	};
	int status;

	if (o->dump_events && !(ss.dump = raw_open(o->dump_events))) {
		fprintf(stderr, "sfprof: cannot write %s: %s\n", o->dump_events,
			util__strerror(-errno));
		return 1;
	}
	ss.rs = report_sink__new(o);
	if (!ss.rs || (h && h->on_sink && h->on_sink(h->ctx, ss.rs))) {
		report_sink__free(ss.rs);
		if (ss.dump)
			fclose(ss.dump);
		return 1;
	}
	status = profile_target(o, &sink);
	if (ss.dump && fclose(ss.dump) && !status) {
		fprintf(stderr, "sfprof: writing %s: %s\n", o->dump_events, strerror(errno));
		status = 1;
	}
	report_sink__free(ss.rs);
	return status;
}

/* COMMAND as execvp() would find it: 0, or -errno. */
static int command_runnable(const char *cmd)
{
	const char *path = getenv("PATH"), *p;
	char buf[4096];
	int err = -ENOENT;

	if (strchr(cmd, '/'))
		return access(cmd, X_OK) ? -errno : 0;
	for (p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin"; p;) {
		const char *colon = strchr(p, ':');
		int n = colon ? (int)(colon - p) : (int)strlen(p);

		if ((size_t)snprintf(buf, sizeof(buf), "%.*s/%s", n, n ? p : ".", cmd) <
		    sizeof(buf)) {
			if (!access(buf, X_OK))
				return 0;
			if (errno == EACCES)
				err = -EACCES; /* as execvp says it */
		}
		p = colon ? colon + 1 : NULL;
	}
	return err;
}

/*
 * What a run needs that the user named, checked before -o is opened, so
 * that a failed start touches no file at all: the privileges, each -p
 * target, the --cgroup directory, the command. The same words and exit
 * statuses as the checks of the run itself (which stay, for the races).
 */
static int preflight(const struct sfprof_opts *o)
{
	const char *missing = capture__missing_privileges();
	pid_t tgid;
	int err, fd;

	for (int i = 0; i < o->nr_pids && !o->command; i++)
		if (check_pid(o->pids[i], &tgid))
			return SFPROF_EXIT_USAGE;
	if (o->cgroup) {
		fd = open(o->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "sfprof: --cgroup %s: %s\n", o->cgroup, strerror(errno));
			return SFPROF_EXIT_USAGE;
		}
		close(fd);
	}
	if (o->command && (err = command_runnable(o->command[0]))) {
		fprintf(stderr, "sfprof: cannot run '%s': %s\n", o->command[0], strerror(-err));
		return SFPROF_EXIT_USAGE;
	}
	if (missing) {
		fprintf(stderr, "sfprof: profiling needs %s\n", missing);
		return 1;
	}
	return 0;
}

/* live and record: the same run; the parsed options tell them apart. */
static int parse_and_run(enum sfprof_subcmd cmd, int argc, char **argv)
{
	struct sfprof_opts o;
	int status;

	sfprof_opts__init(&o, cmd);
	if (sfprof_opts__parse(&o, argc, argv, stdout, stderr))
		return SFPROF_EXIT_USAGE;
	if (o.help)
		return 0;
	/* before the checks: a target's runnable threads would starve them */
	if (!o.no_realtime)
		run_sched__raise(&run_sched);
	/* the target first: a failed start leaves no file, not even a probe */
	if ((status = preflight(&o)))
		return status;
	/* a refused -o says so now, not after the run */
	if (report_output__check(o.output) ||
	    (cmd == SFPROF_CMD_LIVE && report_output__check_events(o.output, o.event)))
		return SFPROF_EXIT_USAGE;
	return run_stacks_hooked(&o, NULL);
}

int cmd_live(int argc, char **argv)
{
	return parse_and_run(SFPROF_CMD_LIVE, argc, argv);
}

int cmd_record(int argc, char **argv)
{
	return parse_and_run(SFPROF_CMD_RECORD, argc, argv);
}

static int cmd_agent(int argc, char **argv)
{
	return cmd_agent_run(argc, argv, run_stacks_hooked);
}

struct subcmd {
	const char *name;
	int (*fn)(int argc, char **argv);
};

/* Subcommands whose owners have landed them; add a line when yours links. */
static const struct subcmd subcmds[] = {
	{ "record", cmd_record },
	{ "report", cmd_report },
	{ "sframe-dump", cmd_sframe_dump },
	{ "diff", cmd_diff },
	{ "agent", cmd_agent },
};

int main(int argc, char **argv)
{
	size_t i;

	if (argc >= 2) {
		for (i = 0; i < sizeof(subcmds) / sizeof(subcmds[0]); i++)
			if (!strcmp(argv[1], subcmds[i].name))
				return subcmds[i].fn(argc - 1, argv + 1);
	}
	return cmd_live(argc, argv);
}

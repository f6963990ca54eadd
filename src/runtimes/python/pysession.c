// SPDX-License-Identifier: MIT
/*
 * CPython support for one run (src/runtimes/python/pysession.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capfile/capfile.h"
#include "capture/capture.h"
#include "capture/ring_thread.h"
#include "runtimes/python/pynames.h"
#include "runtimes/python/pyprocs.h"
#include "runtimes/python/pyreader.h"
#include "model/procmaps.h"
#include "runtimes/python/pysession.h"
#include "util.h"

struct pysession {
	struct pyprocs *procs;	/* live only */
	struct pyreader *reader; /* live only */
	struct pynames *names;
	struct capture *cap;
	struct capfile_writer *w;
	uint64_t written, write_errors, reader_errors;
	/* the prefetch thread: drains py_new */
	struct ring_thread thread;
	atomic_ullong prefetched, prefetch_failed;
	/* processes that exited: their names go at pysession__reap */
	struct py_exited {
		uint32_t pid;
		uint64_t ts;
	} *exited;
	size_t nexited, capexited;
	uint64_t names_reaped;
	/* pysession__started learned it after its exec: the exec's sideband
	 * record, which comes later, is not a new image (0: none) */
	uint32_t started_pid;
};

/* pid's pending exit, if any, dropped: a new process has the pid. */
static void unexit(struct pysession *ps, uint32_t pid)
{
	for (size_t i = 0; i < ps->nexited; i++)
		if (ps->exited[i].pid == pid)
			ps->exited[i--] = ps->exited[--ps->nexited];
}

/* A code object a process ran for the first time: read it now. */
static int on_new_code(void *ctx, void *data, size_t len)
{
	struct pysession *ps = ctx;
	const struct sfprof_py_code *k = data;

	if (len < sizeof(*k))
		return 0;
	if (pynames__prefetch(ps->names, k->tgid, k->code))
		ps->prefetch_failed++;
	else
		ps->prefetched++;
	return 0;
}

static int set_bpf(void *ctx, uint32_t tgid, const struct sfprof_py_proc *p)
{
	struct pysession *ps = ctx;

	return ps->cap ? capture__set_runtime_proc(ps->cap, SFPROF_RT_PYTHON, "py_procs", tgid, p,
						 sizeof(*p)) : 0;
}

/* record: a frame named for the first time goes into the capture */
static void on_name(void *ctx, uint32_t pid, uint64_t code, int32_t instr, uint32_t line,
		    uint32_t firstlineno, const char *qualname, const char *file)
{
	struct pysession *ps = ctx;

	if (!ps->w)
		return;
	if (capfile_writer__pyframe(ps->w, pid, code, instr, line, firstlineno, qualname, file))
		ps->write_errors++;
	else
		ps->written++;
}

struct pysession *pysession__new(int live)
{
	struct pysession *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return NULL;
	if (live && (!(ps->procs = pyprocs__new(set_bpf, ps)) ||
		     !(ps->reader = pyreader__new(0, 0))))
		goto err;
	if (!(ps->names = pynames__new(ps->reader)))
		goto err;
	pynames__set_observer(ps->names, on_name, ps);
	return ps;
err:
	pysession__free(ps);
	errno = ENOMEM;
	return NULL;
}

void pysession__free(struct pysession *ps)
{
	if (!ps)
		return;
	ring_thread__close(&ps->thread);
	pynames__free(ps->names);
	pyreader__free(ps->reader);
	pyprocs__free(ps->procs);
	free(ps->exited);
	free(ps);
}

void pysession__set_capture(struct pysession *ps, struct capture *c)
{
	int fd;

	ring_thread__close(&ps->thread);
	ps->cap = c;
	if (c && ps->procs && (fd = capture__runtime_map(c, SFPROF_RT_PYTHON, "py_new")) >= 0)
		ring_thread__open(&ps->thread, fd, on_new_code, ps);
}

void pysession__set_writer(struct pysession *ps, struct capfile_writer *w)
{
	ps->w = w;
}

pyname_fn pysession__namer(struct pysession *ps, void **ctx)
{
	*ctx = ps->names;
	return pynames__name;
}

/* A supported CPython process: the reader learns it. */
static void learn(struct pysession *ps, uint32_t pid, const struct pyproc_info *pi)
{
	struct pyreader_target t = {
		.offsets = pi->v.offsets,
		.code_type = pi->v.code_type_addr ? pi->v.code_type_addr + (uint64_t)pi->bias : 0,
		.unicode_type = pi->v.unicode_type_addr ? pi->v.unicode_type_addr + (uint64_t)pi->bias : 0,
		.bytes_type = pi->v.bytes_type_addr ? pi->v.bytes_type_addr + (uint64_t)pi->bias : 0,
	};

	pynames__lock(ps->names);
	if (pyreader__add_target(ps->reader, pid, &t))
		ps->reader_errors++;
	pynames__unlock(ps->names);
}

/* Whether pid is done loading what it maps at start and runs no Python:
 * its executable is not python-named and the dynamic loader has mapped
 * libc (it maps every library the program needs before running it). */
static int started_other(uint32_t pid)
{
	struct procmaps *m = NULL;
	int libc = 0, py = 0;

	if (procmaps__read(pid, &m))
		return 1; /* gone */
	for (size_t i = 0; i < m->nr; i++) {
		const char *base = strrchr(m->entries[i].path, '/');

		base = base ? base + 1 : m->entries[i].path;
		py |= pyversion_name_is_python(m->entries[i].path);
		libc |= !strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5) ||
			!strncmp(base, "ld-musl", 7);
	}
	procmaps__free(m);
	return libc && !py;
}

/* file as execvp() finds it (PATH searched when it has no '/'), made a
 * real path; 0 or -1. */
static int find_program(const char *file, char *out)
{
	const char *path = getenv("PATH"), *p;
	char buf[PATH_MAX];

	if (strchr(file, '/'))
		return realpath(file, out) ? 0 : -1;
	for (p = path ? path : "/usr/local/bin:/usr/bin:/bin"; *p; p += *p == ':') {
		size_t n = strcspn(p, ":");

		if (snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? p : ".", file) <
			    (int)sizeof(buf) && !access(buf, X_OK) && realpath(buf, out))
			return 0;
		p += n;
	}
	return -1;
}

/* A script's interpreter from its "#!" line ("#!/usr/bin/env python3"
 * too), made a real path; 0 or -1. */
static int script_interpreter(const char *script, char *out)
{
	char line[256], *w, *arg;
	FILE *f = fopen(script, "re");
	size_t n;

	if (!f)
		return -1;
	n = fread(line, 1, sizeof(line) - 1, f);
	fclose(f);
	line[n] = 0;
	if (n < 3 || line[0] != '#' || line[1] != '!')
		return -1;
	line[strcspn(line, "\n")] = 0;
	w = line + 2 + strspn(line + 2, " \t");
	arg = w + strcspn(w, " \t");
	if (*arg)
		*arg++ = 0;
	arg += strspn(arg, " \t");
	arg[strcspn(arg, " \t")] = 0;
	if (!strcmp(strrchr(w, '/') ? strrchr(w, '/') + 1 : w, "env") && *arg)
		return find_program(arg, out);
	return realpath(w, out) ? 0 : -1;
}

void pysession__starting(struct pysession *ps, const char *file)
{
	char exe[PATH_MAX], interp[PATH_MAX];

	if (!ps->procs || !file || find_program(file, exe))
		return;
	if (pyversion_name_is_python(exe))
		pyprocs__prepare(ps->procs, exe);
	else if (!script_interpreter(exe, interp) && pyversion_name_is_python(interp))
		pyprocs__prepare(ps->procs, interp);
}

int pysession__started(struct pysession *ps, uint32_t pid)
{
	const uint64_t until = util__now_ns() + PYSESSION_START_WAIT_NS;
	const struct timespec nap = { 0, 200 * 1000 };
	const struct pyproc_info *pi;
	int rc;

	if (!ps->procs)
		return 0;
	for (;;) {
		rc = pyprocs__probe(ps->procs, pid, &pi);
		if (rc == 1) {
			learn(ps, pid, pi);
			ps->started_pid = pid;
			return 1;
		}
		if (rc < 0 || started_other(pid) || util__now_ns() >= until)
			return 0;
		nanosleep(&nap, NULL);
	}
}

void pysession__attach(struct pysession *ps, uint32_t pid)
{
	const struct pyproc_info *pi;

	if (ps->procs && !pyprocs__info(ps->procs, pid) && (pi = pyprocs__check(ps->procs, pid)))
		learn(ps, pid, pi);
}

void pysession__event(struct pysession *ps, const struct sfprof_event *e)
{
	const struct sfprof_py_section *sec;
	int bad = 0;

	if (!ps->procs || e->kind == SFPROF_EV_FORK || e->kind == SFPROF_EV_EXIT)
		return;
	pysession__attach(ps, e->pid);
	/* record: name the frames while the process lives, so that their
	 * PYFRAME records precede the event */
	if (!ps->w || !(sec = pymerge__section(e, &bad)))
		return;
	for (uint32_t i = 0; i < sec->nframes; i++) {
		const char *q, *f;
		uint32_t line, first;

		pynames__name(ps->names, e->pid, sec->frames[i].code, sec->frames[i].instr, &q, &f,
			      &line, &first);
	}
}

/* pid is a new process image (fork or exec): nothing known of the old
 * one stands. 0, or -1 when Python processes are not followed. */
static int renew(struct pysession *ps, uint32_t pid)
{
	unexit(ps, pid);
	pynames__forget_pid(ps->names, pid);
	if (!ps->procs)
		return -1;
	pynames__lock(ps->names);
	pyreader__forget_pid(ps->reader, pid);
	pynames__unlock(ps->names);
	return 0;
}

void pysession__fork(struct pysession *ps, uint32_t ppid, uint32_t pid)
{
	const struct pyproc_info *pi;

	if (renew(ps, pid))
		return;
	pyprocs__fork(ps->procs, ppid, pid);
	if ((pi = pyprocs__info(ps->procs, pid)))
		learn(ps, pid, pi);
}

void pysession__exec(struct pysession *ps, uint32_t pid)
{
	if (pid && pid == ps->started_pid) {
		ps->started_pid = 0;
		return;
	}
	if (!renew(ps, pid))
		pyprocs__exec(ps->procs, pid);
}

void pysession__exit(struct pysession *ps, uint32_t pid, uint64_t ts)
{
	if (ps->procs)
		pyprocs__exit(ps->procs, pid);
	/* the names stay until pysession__reap: events still in flight
	 * need them (a new process with this pid comes with a FORK or an
	 * exec first, which keeps them from going then) */
	unexit(ps, pid);
	if (ps->nexited == ps->capexited) {
		size_t c = ps->capexited ? 2 * ps->capexited : 64;
		struct py_exited *v = realloc(ps->exited, c * sizeof(*v));

		if (!v)
			return; /* kept, as before: memory only */
		ps->exited = v;
		ps->capexited = c;
	}
	ps->exited[ps->nexited++] = (struct py_exited){ pid, ts ? ts : 1 };
}

size_t pysession__reap(struct pysession *ps, uint64_t before)
{
	size_t n = 0;

	for (size_t i = 0; i < ps->nexited; i++) {
		if (ps->exited[i].ts > before)
			continue;
		pynames__forget_pid(ps->names, ps->exited[i].pid);
		if (ps->reader) {
			pynames__lock(ps->names);
			pyreader__forget_pid(ps->reader, ps->exited[i].pid);
			pynames__unlock(ps->names);
		}
		ps->exited[i--] = ps->exited[--ps->nexited];
		n++;
	}
	ps->names_reaped += n;
	return n;
}

size_t pysession__exited_pending(const struct pysession *ps)
{
	return ps->nexited;
}

int pysession__record(struct pysession *ps, const struct capfile_record *rec)
{
	if (rec->type != CAPFILE_REC_PYFRAME)
		return 0;
	return pynames__put(ps->names, rec->pyframe.pid, rec->pyframe.code, rec->pyframe.instr,
			    rec->pyframe.line, rec->pyframe.firstlineno, rec->pyframe.qualname,
			    rec->pyframe.file);
}

void pysession__print_stats(const struct pysession *ps, FILE *f)
{
	struct pyprocs_stats st;
	struct pyreader_stats rs;

	if (ps->procs) {
		pyprocs__stats(ps->procs, &st);
		if (!st.python && !st.unsupported)
			return;
		pyprocs_stats__print(&st, f);
		pynames__lock(ps->names);
		pyreader__stats(ps->reader, &rs);
		pynames__unlock(ps->names);
		fprintf(f, "python_code_lookups: %" PRIu64 "\n", rs.lookups);
		fprintf(f, "python_code_read_errors: %" PRIu64 "\n",
			rs.err_read + rs.err_type + rs.err_string + rs.err_nomem + rs.err_no_target);
		fprintf(f, "python_code_prefetched: %llu\n", (unsigned long long)ps->prefetched);
		fprintf(f, "python_code_prefetch_failed: %llu\n",
			(unsigned long long)ps->prefetch_failed);
	}
	fprintf(f, "python_names: %" PRIu64 "\n", pynames__count(ps->names));
	if (ps->names_reaped)
		fprintf(f, "python_names_procs_reaped: %" PRIu64 "\n", ps->names_reaped);
	if (ps->w)
		fprintf(f, "python_names_recorded: %" PRIu64 "\n", ps->written);
	if (ps->write_errors)
		fprintf(f, "python_names_write_errors: %" PRIu64 "\n", ps->write_errors);
}

// SPDX-License-Identifier: MIT
/*
 * CPython's interpreter session behind the runtime table (runtime.h's
 * per-run hooks): pysession.h's calls, as the report pipeline makes them.
 * Offline its session holds the capture's PYFRAME names, which Ruby's and
 * PHP's frames are named from too (their names_from).
 */
#include <errno.h>

#include "cli/options.h"
#include "runtimes/python/pymerge.h"
#include "runtimes/python/pysession.h"
#include "runtimes/runtime.h"
#include "sfprof_event.h"

static bool py_enabled(const struct sfprof_opts *o)
{
	return !o->no_python;
}

static int py_new(int live, void **out)
{
	*out = pysession__new(live);
	return *out ? 0 : -ENOMEM;
}

static void py_free(void *ss)
{
	pysession__free(ss);
}

static void py_set_capture(void *ss, struct capture *c)
{
	pysession__set_capture(ss, c);
}

static void py_set_writer(void *ss, struct capfile_writer *w)
{
	pysession__set_writer(ss, w);
}

static void py_attach(void *ss, uint32_t pid)
{
	pysession__attach(ss, pid);
}

static void py_event(void *ss, const struct sfprof_event *e)
{
	pysession__event(ss, e);
}

static void py_task(void *ss, const struct sfprof_event *e)
{
	if (e->kind == SFPROF_EV_FORK)
		pysession__fork(ss, e->fork.ppid, e->pid);
	else
		pysession__exit(ss, e->pid, e->ts_ns);
}

static void py_exec(void *ss, uint32_t pid)
{
	pysession__exec(ss, pid);
}

static void py_starting(void *ss, const char *file)
{
	pysession__starting(ss, file);
}

static void py_started(void *ss, uint32_t pid)
{
	pysession__started(ss, pid);
}

static void py_reap(void *ss, uint64_t before)
{
	pysession__reap(ss, before);
}

static void py_print_stats(const void *ss, FILE *f)
{
	pysession__print_stats(ss, f);
}

static int py_record(void *ss, const struct capfile_record *rec)
{
	return pysession__record(ss, rec);
}

static runtime_name_fn py_namer(void *ss, void **ctx)
{
	return pysession__namer(ss, ctx);
}

const struct runtime_ops python_runtime_ops = {
	.name = "python",
	.enabled = py_enabled,
	.capture_bit = SFPROF_RT_PYTHON,
	.session_new = py_new,
	.session_free = py_free,
	.session_set_capture = py_set_capture,
	.session_set_writer = py_set_writer,
	.session_attach = py_attach,
	.session_event = py_event,
	.session_task = py_task,
	.session_exec = py_exec,
	.session_starting = py_starting,
	.session_started = py_started,
	.session_reap = py_reap,
	.session_print_stats = py_print_stats,
	.session_record = py_record,
	.session_namer = py_namer,
	.is_eval = pymerge__is_eval,
};

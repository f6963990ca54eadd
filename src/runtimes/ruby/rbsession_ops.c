// SPDX-License-Identifier: MIT
/*
 * CRuby's interpreter session behind the runtime table (runtime.h's
 * per-run hooks): rbsession.h's calls. Live only: offline (report) its
 * frames are named from the capture's PYFRAME records, which CPython's
 * session keeps (names_from).
 */
#include <errno.h>

#include "rbmerge.h"
#include "options.h"
#include "rbsession.h"
#include "runtimes/runtime.h"

static bool rb_enabled(const struct sfprof_opts *o)
{
	return !o->no_ruby;
}

static int rb_new(int live, void **out)
{
	*out = NULL;
	if (!live)
		return 0;
	*out = rbsession__new();
	return *out ? 0 : -ENOMEM;
}

static void rb_free(void *ss)
{
	rbsession__free(ss);
}

static void rb_set_capture(void *ss, struct capture *c)
{
	rbsession__set_capture(ss, c);
}

static void rb_set_writer(void *ss, struct capfile_writer *w)
{
	rbsession__set_writer(ss, w);
}

static void rb_attach(void *ss, uint32_t pid)
{
	rbsession__attach(ss, pid);
}

static void rb_event(void *ss, const struct sfprof_event *e)
{
	rbsession__event(ss, e);
}

static void rb_task(void *ss, const struct sfprof_event *e)
{
	rbsession__task(ss, e);
}

static void rb_exec(void *ss, uint32_t pid)
{
	rbsession__exec(ss, pid);
}

static void rb_reap(void *ss, uint64_t before)
{
	rbsession__reap(ss, before);
}

static void rb_print_stats(const void *ss, FILE *f)
{
	rbsession__print_stats(ss, f);
}

static runtime_name_fn rb_namer(void *ss, void **ctx)
{
	return rbsession__namer(ss, ctx);
}

const struct runtime_ops ruby_runtime_ops = {
	.name = "ruby",
	.enabled = rb_enabled,
	.session_new = rb_new,
	.session_free = rb_free,
	.session_set_capture = rb_set_capture,
	.session_set_writer = rb_set_writer,
	.session_attach = rb_attach,
	.session_event = rb_event,
	.session_task = rb_task,
	.session_exec = rb_exec,
	.session_reap = rb_reap,
	.session_print_stats = rb_print_stats,
	.session_namer = rb_namer,
	.names_from = "python",
	.section_flag = SFPROF_PYS_RUBY,
	.is_eval = rbmerge__is_eval,
};

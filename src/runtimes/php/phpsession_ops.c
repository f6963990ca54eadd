// SPDX-License-Identifier: MIT
/*
 * PHP's interpreter session behind the runtime table (runtime.h's
 * per-run hooks): phpsession.h's calls. Live only: offline (report) its
 * frames are named from the capture's PYFRAME records, which CPython's
 * session keeps (names_from).
 */
#include <errno.h>

#include "phpreader.h"
#include "options.h"
#include "phpsession.h"
#include "runtimes/runtime.h"

static bool php_enabled(const struct sfprof_opts *o)
{
	return !o->no_php;
}

static int php_new(int live, void **out)
{
	*out = NULL;
	if (!live)
		return 0;
	*out = phpsession__new();
	return *out ? 0 : -ENOMEM;
}

static void php_free(void *ss)
{
	phpsession__free(ss);
}

static void php_set_capture(void *ss, struct capture *c)
{
	phpsession__set_capture(ss, c);
}

static void php_set_writer(void *ss, struct capfile_writer *w)
{
	phpsession__set_writer(ss, w);
}

static void php_attach(void *ss, uint32_t pid)
{
	phpsession__attach(ss, pid);
}

static void php_event(void *ss, const struct sfprof_event *e)
{
	phpsession__event(ss, e);
}

static void php_task(void *ss, const struct sfprof_event *e)
{
	phpsession__task(ss, e);
}

static void php_exec(void *ss, uint32_t pid)
{
	phpsession__exec(ss, pid);
}

static void php_reap(void *ss, uint64_t before)
{
	phpsession__reap(ss, before);
}

static void php_print_stats(const void *ss, FILE *f)
{
	phpsession__print_stats(ss, f);
}

static runtime_name_fn php_namer(void *ss, void **ctx)
{
	return phpsession__namer(ss, ctx);
}

const struct runtime_ops php_runtime_ops = {
	.name = "php",
	.enabled = php_enabled,
	.session_new = php_new,
	.session_free = php_free,
	.session_set_capture = php_set_capture,
	.session_set_writer = php_set_writer,
	.session_attach = php_attach,
	.session_event = php_event,
	.session_task = php_task,
	.session_exec = php_exec,
	.session_reap = php_reap,
	.session_print_stats = php_print_stats,
	.session_namer = php_namer,
	.names_from = "python",
	.section_flag = SFPROF_PYS_PHP,
	.is_eval = phpmerge__is_eval,
};

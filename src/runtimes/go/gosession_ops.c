// SPDX-License-Identifier: MIT
/*
 * Go's per-run session behind the runtime table (runtime.h's per-run
 * hooks): which live targets run Go, so BPF can walk past their stack
 * switches (gosession.h). Offline (report) there is no session: the
 * goroutine sections are in the capture's events already.
 */
#include <errno.h>

#include "runtimes/go/gosession.h"
#include "sfprof_event.h"
#include "runtimes/runtime.h"

static int go_new(int live, void **out)
{
	*out = NULL;
	if (!live)
		return 0;
	*out = gosession__new();
	return *out ? 0 : -ENOMEM;
}

static void go_free(void *ss)
{
	gosession__free(ss);
}

static void go_set_capture(void *ss, struct capture *c)
{
	gosession__set_capture(ss, c);
}

static void go_attach(void *ss, uint32_t pid)
{
	gosession__attach(ss, pid);
}

/* samples and FORK/EXIT records alike */
static void go_event(void *ss, const struct sfprof_event *e)
{
	gosession__event(ss, e);
}

static void go_exec(void *ss, uint32_t pid)
{
	gosession__exec(ss, pid);
}

static void go_print_stats(const void *ss, FILE *f)
{
	struct gosession_stats st;

	gosession__stats(ss, &st);
	gosession_stats__print(&st, f);
}

const struct runtime_ops gosession_runtime_ops = {
	.name = "go-session",
	.capture_bit = SFPROF_RT_GO,
	.session_new = go_new,
	.session_free = go_free,
	.session_set_capture = go_set_capture,
	.session_attach = go_attach,
	.session_event = go_event,
	.session_task = go_event,
	.session_exec = go_exec,
	.session_print_stats = go_print_stats,
};

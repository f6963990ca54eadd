// SPDX-License-Identifier: MIT
/*
 * CRuby's interpreter session behind the runtime table (runtime.h's
 * per-run hooks): an interp_session of rbsession_kind. Live only:
 * offline (report) its frames are named from the capture's PYFRAME
 * records, which CPython's session keeps (names_from).
 */
#include "cli/options.h"
#include "runtimes/ruby/rbmerge.h"
#include "runtimes/ruby/rbsession.h"
#include "runtimes/runtime.h"
#include "sfprof_event.h"

static bool rb_enabled(const struct sfprof_opts *o)
{
	return !o->no_ruby;
}

static int rb_new(int live, void **out)
{
	return interp__session_new(&rbsession_kind, live, out);
}

const struct runtime_ops ruby_runtime_ops = {
	.name = "ruby",
	.enabled = rb_enabled,
	.capture_bit = SFPROF_RT_RUBY,
	.session_new = rb_new,
	INTERP_SESSION_HOOKS,
	.names_from = "python",
	.section_flag = SFPROF_PYS_RUBY,
	.is_eval = rbmerge__is_eval,
};

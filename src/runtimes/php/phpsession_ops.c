// SPDX-License-Identifier: MIT
/*
 * PHP's interpreter session behind the runtime table (runtime.h's
 * per-run hooks): an interp_session of phpsession_kind. Live only:
 * offline (report) its frames are named from the capture's PYFRAME
 * records, which CPython's session keeps (names_from).
 */
#include "cli/options.h"
#include "runtimes/php/phpreader.h"
#include "runtimes/php/phpsession.h"
#include "runtimes/runtime.h"
#include "sfprof_event.h"

static bool php_enabled(const struct sfprof_opts *o)
{
	return !o->no_php;
}

static int php_new(int live, void **out)
{
	return interp__session_new(&phpsession_kind, live, out);
}

const struct runtime_ops php_runtime_ops = {
	.name = "php",
	.enabled = php_enabled,
	.capture_bit = SFPROF_RT_PHP,
	.session_new = php_new,
	INTERP_SESSION_HOOKS,
	.names_from = "python",
	.section_flag = SFPROF_PYS_PHP,
	.is_eval = phpmerge__is_eval,
};

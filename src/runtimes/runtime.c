// SPDX-License-Identifier: MIT
/* The runtimes the core calls through (runtime.h): one line each. */
#include "runtimes/runtime.h"

#include <errno.h>
#include <string.h>

extern const struct runtime_ops go_runtime_ops;	     /* runtimes/go/goruntime.c */
extern const struct runtime_ops pytramp_runtime_ops; /* runtimes/python/pytramp_ops.c */
extern const struct runtime_ops hotspot_runtime_ops; /* runtimes/hotspot/hsruntime.c */
extern const struct runtime_ops python_runtime_ops;  /* runtimes/python/pysession_ops.c */
extern const struct runtime_ops ruby_runtime_ops;    /* runtimes/ruby/rbsession_ops.c */
extern const struct runtime_ops php_runtime_ops;     /* runtimes/php/phpsession_ops.c */
extern const struct runtime_ops gosession_runtime_ops; /* runtimes/go/gosession_ops.c */
extern const struct runtime_ops v8_runtime_ops;	     /* runtimes/v8/v8runtime.c */

static const struct runtime_ops *const builtin[] = {
	&go_runtime_ops,
	&pytramp_runtime_ops,
	&hotspot_runtime_ops,
	&python_runtime_ops,
	&ruby_runtime_ops,
	&php_runtime_ops,
	&gosession_runtime_ops,
	&v8_runtime_ops,
};

#define NR_BUILTIN (sizeof(builtin) / sizeof(builtin[0]))
_Static_assert(NR_BUILTIN <= RUNTIME_MAX, "RUNTIME_MAX holds the built-in runtimes");

static const struct runtime_ops *extra[RUNTIME_MAX - NR_BUILTIN];
static size_t nr_extra;

size_t runtime__count(void)
{
	return NR_BUILTIN + nr_extra;
}

const struct runtime_ops *runtime__get(size_t i)
{
	if (i < NR_BUILTIN)
		return builtin[i];
	return i - NR_BUILTIN < nr_extra ? extra[i - NR_BUILTIN] : NULL;
}

int runtime__register(const struct runtime_ops *ops)
{
	for (size_t i = 0; i < runtime__count(); i++)
		if (runtime__get(i) == ops)
			return -EEXIST;
	if (nr_extra >= RUNTIME_MAX - NR_BUILTIN)
		return -ENOSPC;
	extra[nr_extra++] = ops;
	return (int)(NR_BUILTIN + nr_extra - 1);
}

void runtime__unregister_all(void)
{
	nr_extra = 0;
}

int runtime__find(const char *name)
{
	for (size_t i = 0; i < runtime__count(); i++)
		if (!strcmp(runtime__get(i)->name, name))
			return (int)i;
	return -ENOENT;
}

int runtime__section(uint32_t flags)
{
	int dflt = -ENOENT;

	for (size_t i = 0; i < runtime__count(); i++) {
		const struct runtime_ops *r = runtime__get(i);

		if (r->section_flag && (flags & r->section_flag))
			return (int)i;
		if (!r->section_flag && r->is_eval && dflt < 0)
			dflt = (int)i;
	}
	return dflt;
}

uint32_t runtime__capture_bits(const struct sfprof_opts *o)
{
	uint32_t bits = 0;

	for (size_t i = 0; i < runtime__count(); i++) {
		const struct runtime_ops *r = runtime__get(i);

		if (r->capture_bit && (!r->enabled || r->enabled(o)))
			bits |= r->capture_bit;
	}
	return bits;
}

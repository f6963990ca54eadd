// SPDX-License-Identifier: MIT
/* The runtimes the core calls through (runtime.h): one line each. */
#include "runtimes/runtime.h"

#include <errno.h>

extern const struct runtime_ops go_runtime_ops;	     /* runtimes/go/goruntime.c */
extern const struct runtime_ops pytramp_runtime_ops; /* runtimes/python/pytramp_ops.c */
extern const struct runtime_ops v8_runtime_ops;	     /* runtimes/v8/v8runtime.c */

static const struct runtime_ops *const builtin[] = {
	&go_runtime_ops,
	&pytramp_runtime_ops,
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

// SPDX-License-Identifier: MIT
/*
 * Which native frames run Ruby frames (src/runtimes/ruby/rbmerge.h).
 */
#include <string.h>

#include "runtimes/ruby/rbmerge.h"

int rbmerge__is_eval(const char *name)
{
	static const char *const evals[] = { "rb_vm_exec", "vm_exec" };

	if (!name)
		return 0;
	for (size_t i = 0; i < sizeof(evals) / sizeof(evals[0]); i++) {
		size_t n = strlen(evals[i]);

		/* and the parts a compiler split off: ".cold", ".isra.0"... */
		if (!strncmp(name, evals[i], n) && (!name[n] || name[n] == '.'))
			return 1;
	}
	return 0;
}

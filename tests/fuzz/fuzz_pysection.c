// SPDX-License-Identifier: MIT
/* libFuzzer target: an event record as a capture file holds it (its
 * lengths checked as the reader checks them), through the Python
 * section's parser, its split into groups and the merged frames, with the
 * invariants each accepted section must keep. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "runtimes/python/pymerge.h"

/* Names every code object with an even address; odd ones fail. */
static int name(void *ctx, uint32_t pid, uint64_t code, int32_t instr, const char **q,
		const char **file, uint32_t *line, uint32_t *first)
{
	(void)ctx;
	(void)pid;
	if (code & 1)
		return -EFAULT;
	*q = code & 2 ? "Worker.compute" : "<module>";
	*file = code & 4 ? "/a/b.py" : "";
	*line = (uint32_t)instr;
	*first = code & 8 ? 3 : 0;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t buf[(SFPROF_EVENT_HDR_SIZE + SFPROF_STACK_MAX + 4096) / 8 + 1];
	struct sfprof_event *e = (struct sfprof_event *)buf;
	const struct sfprof_py_section *sec;
	uint32_t starts[SFPROF_PY_FRAMES_MAX], ids[SFPROF_PY_FRAMES_MAX + 1];
	struct profile_meta meta = { .kind = PROFILE_CPU };
	struct pymerge_stats st = { 0 };
	struct profile *p;
	size_t ng, total = 0;
	int bad = 0;

	if (size < SFPROF_EVENT_HDR_SIZE || size > sizeof(buf))
		return 0;
	memcpy(buf, data, size);
	e->size = (uint32_t)size; /* the reader's checks: size, stack */
	if (e->stack_len > SFPROF_STACK_MAX || SFPROF_EVENT_HDR_SIZE + e->stack_len > size)
		return 0;
	sec = pymerge__section(e, &bad);
	if (!sec)
		return 0;
	if (bad || (const uint8_t *)sec + SFPROF_PY_SECTION_SIZE(sec->nframes) >
			   (const uint8_t *)e + size)
		abort();
	ng = pymerge__groups(sec, starts, SFPROF_PY_FRAMES_MAX);
	for (size_t g = 0; g < ng; g++) {
		uint32_t to = g + 1 < ng ? starts[g + 1] : sec->nframes;

		if (starts[g] >= to || (g == 0 && starts[0] != 0))
			abort();
		total += to - starts[g];
	}
	if (total != sec->nframes)
		abort();
	p = profile__new(&meta);
	if (!p)
		return 0;
	{
		struct pymerge_ctx c = { p, name, NULL, e->pid, &st };
		int n = pymerge__ids(&c, sec, 0, sec->nframes, !!(sec->flags & SFPROF_PYS_CUT), ids,
				     sizeof(ids) / sizeof(ids[0]));

		if (n < 0 || (uint32_t)n != sec->nframes + !!(sec->flags & SFPROF_PYS_CUT) ||
		    st.frames != sec->nframes)
			abort();
		if (n && profile__add_ids(p, "py", ids, (size_t)n, 1))
			abort();
	}
	profile__free(p);
	return 0;
}

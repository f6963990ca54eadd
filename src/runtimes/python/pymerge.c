// SPDX-License-Identifier: MIT
/*
 * Python frames into native stacks (src/runtimes/python/pymerge.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "runtimes/python/pymerge.h"

const struct sfprof_py_section *pymerge__section(const struct sfprof_event *e, int *bad)
{
	const struct sfprof_py_section *sec;
	uint64_t off, n;

	if (!(e->flags & SFPROF_EVF_PYTHON))
		return NULL;
	off = SFPROF_PY_SECTION_OFF((uint64_t)e->stack_len);
	if (e->stack_len > SFPROF_STACK_MAX || e->size < SFPROF_EVENT_HDR_SIZE ||
	    off + 8 > e->size || (off & 7)) {
		*bad = 1;
		return NULL;
	}
	sec = (const void *)((const uint8_t *)e + off);
	n = sec->nframes;
	if (n > SFPROF_PY_FRAMES_MAX || off + SFPROF_PY_SECTION_SIZE(n) > e->size) {
		*bad = 1;
		return NULL;
	}
	return sec;
}

size_t pymerge__groups(const struct sfprof_py_section *sec, uint32_t *starts, size_t max)
{
	size_t ng = 0;

	if (!max || !sec->nframes)
		return 0;
	starts[ng++] = 0;
	for (uint32_t i = 0; i + 1 < sec->nframes; i++)
		if ((sec->frames[i].flags & SFPROF_PYF_ENTRY) && ng < max)
			starts[ng++] = i + 1;
	return ng;
}

int pymerge__is_eval(const char *name)
{
	size_t n = sizeof(PYMERGE_EVAL_FRAME) - 1;

	/* and its parts a compiler split off: ".cold", ".lto_priv.0"... */
	return name && !strncmp(name, PYMERGE_EVAL_FRAME, n) && (!name[n] || name[n] == '.');
}

static int64_t marker(struct profile *prof, const char *name)
{
	struct profile_frame pf = { .name = name, .kind = PROFILE_FRAME_MARKER };

	return profile__frame_id(prof, &pf);
}

int pymerge__ids(const struct pymerge_ctx *c, const struct sfprof_py_section *sec, uint32_t from,
		 uint32_t to, int cut, uint32_t *out, size_t room)
{
	bool php = sec->flags & SFPROF_PYS_PHP, ruby = !php && (sec->flags & SFPROF_PYS_RUBY);
	const char *interp = php ? PYMERGE_DSO_PHP : ruby ? PYMERGE_DSO_RUBY : PYMERGE_DSO_PYTHON;
	const char *cut_name = php ? PYMERGE_CUT_PHP : ruby ? PYMERGE_CUT_RUBY : PYMERGE_CUT;
	const char *unreadable = php ? PYMERGE_UNREADABLE_PHP :
			       ruby ? PYMERGE_UNREADABLE_RUBY : PYMERGE_UNREADABLE;
	size_t np = 0;
	int64_t id;

	if (to > sec->nframes)
		to = sec->nframes;
	if (cut && np < room) {
		if ((id = marker(c->prof, cut_name)) < 0)
			return -ENOMEM;
		out[np++] = (uint32_t)id;
	}
	for (uint32_t i = to; i-- > from && np < room;) {
		const struct sfprof_py_frame *f = &sec->frames[i];
		/* the code object and its interpreter: pprof gives each
		 * (code object, line) a Location of its own (output/pprof.c) */
		struct profile_frame pf = { .kind = PROFILE_FRAME_PYTHON, .pid = c->pid,
					    .dso = interp, .addr = f->code };
		const char *q = NULL, *file = NULL;
		uint32_t line = 0, first = 0;

		c->st->frames++;
		if (!c->name ||
		    c->name(c->name_ctx, c->pid, f->code, f->instr, &q, &file, &line, &first) || !q) {
			c->st->frames_failed++;
			id = marker(c->prof, unreadable);
		} else {
			pf.name = q;
			pf.file = file;
			pf.line = line;
			pf.start_line = first;
			id = profile__frame_id(c->prof, &pf);
		}
		if (id < 0)
			return -ENOMEM;
		out[np++] = (uint32_t)id;
	}
	return (int)np;
}

void pymerge_stats__print(const struct pymerge_stats *st, FILE *f)
{
#define P(name, v) fprintf(f, "%s: %" PRIu64 "\n", name, (uint64_t)(v))
	P("python_stacks", st->sections);
	P("python_frames", st->frames);
	P("python_frames_failed", st->frames_failed);
	if (st->renamed)
		P("python_stacks_renamed", st->renamed);
	P("python_stacks_cut", st->cut);
	P("python_stacks_read_failed", st->read_failed);
	if (st->bad_sections)
		P("python_bad_sections", st->bad_sections);
	P("python_groups_unmatched", st->unmatched);
	P("python_stacks_without_eval", st->no_eval);
#undef P
}

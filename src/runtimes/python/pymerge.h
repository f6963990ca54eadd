/* SPDX-License-Identifier: MIT */
/*
 * Python frames into native stacks (the stacks pipeline's hook,
 * src/stacks/): each native _PyEval_EvalFrameDefault frame is replaced by
 * the Python frames it was running, in order. The record's Python section
 * (include/sfprof_event.h) lists frames innermost first; an entry-frame
 * marker ends the run of frames of one C-level eval call, so the section
 * splits into groups, group 0 the innermost call's. The innermost native
 * eval frame gets group 0, the next one group 1, and so on: a C extension
 * called from Python then sits above its Python caller, and Python called
 * back from C above that C code.
 *
 * Mismatches: groups left over when the native stack has fewer eval
 * frames (it was truncated) go with the outermost eval frame, older ones
 * first, or, with no eval frame at all, at the root of the stack; eval
 * frames left over (the section was cut at its depth bound, or a frame
 * could not be read) stay native. A cut or failed section puts the
 * marker PYMERGE_CUT at the old end of its last group, so it is visible.
 *
 * A Python frame is a profile frame of kind PROFILE_FRAME_PYTHON: name
 * its qualname, file its co_filename, line the line of its instruction,
 * start_line its co_firstlineno (the namer's answer, pyname_fn), addr the
 * code object and dso its interpreter (PYMERGE_DSO_*), so pprof gives each
 * (code object, line) of an interpreter a Location of its own. Functions inlined into the eval loop
 * at the frame's PC (C code it runs for the Python frame) stay, above the
 * group's frames, as for any other native frame.
 */
#ifndef SFPROF_PYMERGE_H
#define SFPROF_PYMERGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile/profile.h"
#include "sfprof_event.h"

#define PYMERGE_EVAL_FRAME "_PyEval_EvalFrameDefault"
/* the markers, each spelled with its interpreter's name: a walk cut at
 * its bound, and a frame whose name did not read */
#define PYMERGE_CUT "[python: more frames]"
#define PYMERGE_UNREADABLE "[python: unreadable frame]"
#define PYMERGE_CUT_RUBY "[ruby: more frames]"
#define PYMERGE_UNREADABLE_RUBY "[ruby: unreadable frame]"
#define PYMERGE_CUT_PHP "[php: more frames]"
#define PYMERGE_UNREADABLE_PHP "[php: unreadable frame]"
/* a frame's dso: its interpreter, pprof's synthetic mapping of it */
#define PYMERGE_DSO_PYTHON "[python]"
#define PYMERGE_DSO_RUBY "[ruby]"
#define PYMERGE_DSO_PHP "[php]"

/*
 * The name of code object `code` of process pid at instruction offset
 * instr: 0 with *qualname, *file (live until the namer's owner frees
 * them; the profile copies them), *line and *firstlineno (the code
 * object's co_firstlineno, 0 when unknown); or a negative errno (the
 * frame cannot be named).
 */
typedef int (*pyname_fn)(void *ctx, uint32_t pid, uint64_t code, int32_t instr,
			 const char **qualname, const char **file, uint32_t *line,
			 uint32_t *firstlineno);

struct pymerge_stats {
	uint64_t sections;	/* records with Python frames */
	uint64_t bad_sections;	/* malformed sections (ignored) */
	uint64_t frames;	/* Python frames put in stacks */
	uint64_t frames_failed; /* ... of them named PYMERGE_UNREADABLE */
	uint64_t renamed;	/* kept stacks with such a frame, named again at
				   the flush (stacks_agg.c) */
	uint64_t cut;		/* sections cut at the depth bound */
	uint64_t read_failed;	/* sections whose walk hit an unreadable frame */
	uint64_t unmatched;	/* groups with no native eval frame of their own */
	uint64_t no_eval;	/* sections of stacks without any eval frame */
};

/*
 * The section of e: NULL when e has none, or when it is malformed (does
 * not fit e->size, too many frames): then *bad is set. Never reads past
 * e->size bytes of e.
 */
const struct sfprof_py_section *pymerge__section(const struct sfprof_event *e, int *bad);

/*
 * Group starts of sec, innermost group first: group g is frames
 * [starts[g], starts[g + 1]), the last ending at sec->nframes. At most
 * max groups (the rest joins the last). Returns the number of groups.
 */
size_t pymerge__groups(const struct sfprof_py_section *sec, uint32_t *starts, size_t max);

/* Whether a native symbol is the eval loop (or a part of it the compiler
 * split off, "_PyEval_EvalFrameDefault.cold"). */
int pymerge__is_eval(const char *name);

struct pymerge_ctx {
	struct profile *prof;
	pyname_fn name;
	void *name_ctx;
	uint32_t pid;
	struct pymerge_stats *st;
};

/*
 * The profile frame ids of frames [from, to) of sec, outermost (to - 1)
 * first, into out (room for at most `room`), with PYMERGE_CUT first when
 * `cut`. Returns how many, or -ENOMEM.
 */
int pymerge__ids(const struct pymerge_ctx *c, const struct sfprof_py_section *sec, uint32_t from,
		 uint32_t to, int cut, uint32_t *out, size_t room);

void pymerge_stats__print(const struct pymerge_stats *st, FILE *f);

#endif

// SPDX-License-Identifier: MIT
/*
 * Unwind rows for CPython's perf trampolines (pytrampoline.h): a PC in a
 * JIT entry named "py::..." whose size is that of the process's template
 * gets the template's row at its offset in the entry.
 *
 * Which template a process has: from the capture's PYTRAMP record
 * (stacks__set_pytramp(), report), else found in the binaries it maps
 * (one named python* or libpython*, checked once per version of its
 * maps; offline those are the recorded binaries, build-id checked).
 * Record hands each process's template to the capture before its first
 * trampoline entry (stacks__record_jit()).
 *
 * The rows are never cached (row_entry, unwind memo): they come from the
 * JIT's map, which grows and may change at an address while the maps'
 * generation, the caches' key, stays the same. Only Python processes
 * pay for this: another process's PCs without rows are cached as before.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jitmap.h"
#include "pytrampoline.h"
#include "pyversion.h"
#include "stacks_int.h"

struct tramp_ent {
	uint32_t pid;
	uint8_t used;
	uint8_t found;	 /* t holds the process's template */
	uint8_t offline; /* from a capture: never re-detected */
	uint8_t written; /* record: handed to the capture */
	uint64_t gen;	 /* live: the maps' generation it was detected in */
	struct pytramp t;
};

struct stacks_pytramp {
	struct tramp_ent *e;
	size_t nr, size; /* open addressing by pid, power-of-two size */
	stacks_pytramp_fn write;
	void *write_ctx;
};

static size_t slot_of(const struct stacks_pytramp *pt, uint32_t pid)
{
	return (size_t)(((uint64_t)pid * HASH_K) >> 32) & (pt->size - 1);
}

/* pid's entry; with `add`, made (zeroed) if missing. NULL: none / ENOMEM. */
static struct tramp_ent *ent_get(struct stacks *s, uint32_t pid, bool add)
{
	struct stacks_pytramp *pt = s->pytramp;
	size_t i;

	if (!pt) {
		if (!add || !(pt = s->pytramp = calloc(1, sizeof(*pt))))
			return NULL;
	}
	if (pt->size) {
		for (i = slot_of(pt, pid); pt->e[i].used; i = (i + 1) & (pt->size - 1))
			if (pt->e[i].pid == pid)
				return &pt->e[i];
	}
	if (!add)
		return NULL;
	if ((pt->nr + 1) * 2 > pt->size) {
		size_t nsize = pt->size ? pt->size * 2 : 16;
		struct tramp_ent *n = calloc(nsize, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t j = 0; j < pt->size; j++) {
			if (!pt->e[j].used)
				continue;
			for (i = ((uint64_t)pt->e[j].pid * HASH_K >> 32) & (nsize - 1); n[i].used;
			     i = (i + 1) & (nsize - 1))
				;
			n[i] = pt->e[j];
		}
		free(pt->e);
		pt->e = n;
		pt->size = nsize;
	}
	for (i = slot_of(pt, pid); pt->e[i].used; i = (i + 1) & (pt->size - 1))
		;
	memset(&pt->e[i], 0, sizeof(pt->e[i]));
	pt->e[i].used = 1;
	pt->e[i].pid = pid;
	pt->nr++;
	return &pt->e[i];
}

static int detect_cb(void *ctx, struct dso *d)
{
	const char *name = dso__name(d);
	const struct elfread *e;

	/* (CPython is python3.X, or libpython3.X.so: other binaries are
	 * not searched for its symbols) */
	if (!pyversion_name_is_python(name))
		return 0;
	e = dso__elf(d);
	return e && !pytramp__from_elf(e, ctx);
}

/* The current process's template, or NULL. */
static const struct pytramp *cur_template(struct stacks *s)
{
	uint32_t pid = proc__pid(s->cur);
	uint64_t gen = proc__generation(s->cur);
	struct tramp_ent *te = ent_get(s, pid, false);

	if (te && (te->offline || te->gen == gen))
		return te->found ? &te->t : NULL;
	if (!te && !(te = ent_get(s, pid, true)))
		return NULL;
	te->gen = gen;
	te->found = proc__for_each_dso(s->cur, detect_cb, &te->t) == 1;
	if (te->found && !s->jit && (s->opts.perf_maps || s->opts.jit_record))
		s->jit = jitmaps__new();
	return te->found ? &te->t : NULL;
}

bool stacks_pytramp_proc(struct stacks *s)
{
	return s->cur && cur_template(s) != NULL;
}

int stacks_pytramp_row(struct stacks *s, uint64_t pc, struct sframe_row *row)
{
	const struct pytramp *t = cur_template(s);
	struct jitmap_hit hit;

	if (!t)
		return -ESRCH;
	if (!s->jit || jitmaps__lookup(s->jit, s->cur, proc__pid(s->cur), pc, 0, &hit) ||
	    strncmp(hit.name, PYTRAMP_NAME_PREFIX, strlen(PYTRAMP_NAME_PREFIX)) ||
	    hit.end - hit.start != t->len || pytramp__row(t, pc - hit.start, row))
		return -EAGAIN;
	s->st.pytramp_rows++;
	return 0;
}

int stacks_pytramp_written(struct stacks *s, uint32_t pid, const char *name, uint64_t size)
{
	struct tramp_ent *te = ent_get(s, pid, false);
	int err;

	if (!te || !te->found || te->written || !s->pytramp->write ||
	    strncmp(name, PYTRAMP_NAME_PREFIX, strlen(PYTRAMP_NAME_PREFIX)) || size != te->t.len)
		return 0;
	err = s->pytramp->write(s->pytramp->write_ctx, pid, te->t.code, te->t.len);
	if (!err)
		te->written = 1;
	return err;
}

int stacks__set_pytramp(struct stacks *s, uint32_t pid, const uint8_t *code, size_t len)
{
	struct pytramp t;
	struct tramp_ent *te;

	if (pytramp__match(code, len, &t))
		return -EINVAL;
	if (!(te = ent_get(s, pid, true)))
		return -ENOMEM;
	te->t = t;
	te->found = 1;
	te->offline = 1;
	return 0;
}

int stacks__set_pytramp_writer(struct stacks *s, stacks_pytramp_fn fn, void *ctx)
{
	if (!s->pytramp && !(s->pytramp = calloc(1, sizeof(*s->pytramp))))
		return -ENOMEM;
	s->pytramp->write = fn;
	s->pytramp->write_ctx = ctx;
	return 0;
}

void stacks_pytramp_free(struct stacks *s)
{
	if (!s->pytramp)
		return;
	free(s->pytramp->e);
	free(s->pytramp);
	s->pytramp = NULL;
}

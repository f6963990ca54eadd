// SPDX-License-Identifier: MIT
/*
 * CPython's perf trampolines behind the runtime interface
 * (runtimes/runtime.h): unwind rows for them (pytrampoline.h). A PC in a
 * JIT entry named "py::..." whose size is that of the process's template
 * gets the template's row at its offset in the entry.
 *
 * Which template a process has: from the capture's PYTRAMP record
 * (on_capture_record, report), else found in the binaries it maps (one
 * named python* or libpython*, checked once per version of its maps;
 * offline those are the recorded binaries, build-id checked). Record
 * hands each process's template to the capture before its first
 * trampoline entry (on_jit_record, from stacks__record_jit()).
 *
 * The rows are never cached (row_entry, unwind memo): they come from the
 * JIT's map, which grows and may change at an address while the maps'
 * generation, the caches' key, stays the same. Only Python processes
 * pay for this: another process's PCs without rows are cached as before.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/jit/jitmap.h"
#include "model/proc.h"
#include "runtimes/python/pytrampoline.h"
#include "runtimes/python/pyversion.h"
#include "runtimes/runtime.h"

#define HASH_K 0x9e3779b97f4a7c15ull

struct tramp_ent {
	uint32_t pid;
	uint8_t used;
	uint8_t found;	 /* t holds the process's template */
	uint8_t offline; /* from a capture: never re-detected */
	uint8_t written; /* record: handed to the capture */
	uint64_t gen;	 /* live: the maps' generation it was detected in */
	struct pytramp t;
};

/* One stacks instance's: open addressing by pid, power-of-two size. */
struct pytramps {
	struct tramp_ent *e;
	size_t nr, size;
};

static size_t slot_of(const struct pytramps *pt, uint32_t pid)
{
	return (size_t)(((uint64_t)pid * HASH_K) >> 32) & (pt->size - 1);
}

/* pid's entry; with `add`, made (zeroed) if missing. NULL: none / ENOMEM. */
static struct tramp_ent *ent_get(struct pytramps *pt, uint32_t pid, bool add)
{
	size_t i;

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
static const struct pytramp *cur_template(struct pytramps *pt, const struct runtime_proc *p)
{
	uint32_t pid = proc__pid(p->proc);
	uint64_t gen = proc__generation(p->proc);
	struct tramp_ent *te = ent_get(pt, pid, false);

	if (te && (te->offline || te->gen == gen))
		return te->found ? &te->t : NULL;
	if (!te && !(te = ent_get(pt, pid, true)))
		return NULL;
	te->gen = gen;
	te->found = proc__for_each_dso(p->proc, detect_cb, &te->t) == 1;
	/* its trampolines are named in its perf map */
	if (te->found)
		p->jitmaps(p->ctx, true);
	return te->found ? &te->t : NULL;
}

static void *pytramp_attach(void)
{
	return calloc(1, sizeof(struct pytramps));
}

static void pytramp_detach(void *state)
{
	struct pytramps *pt = state;

	if (!pt)
		return;
	free(pt->e);
	free(pt);
}

static bool pytramp_is_proc(void *state, const struct runtime_proc *p)
{
	return p->proc && cur_template(state, p) != NULL;
}

static int pytramp_proc_row(void *state, const struct runtime_proc *p, uint64_t pc,
			    struct sframe_row *row)
{
	const struct pytramp *t = cur_template(state, p);
	struct jitmaps *jit;
	struct jitmap_hit hit;

	if (!t)
		return -ESRCH;
	jit = p->jitmaps(p->ctx, false);
	if (!jit || jitmaps__lookup(jit, p->proc, proc__pid(p->proc), pc, 0, &hit) ||
	    strncmp(hit.name, PYTRAMP_NAME_PREFIX, strlen(PYTRAMP_NAME_PREFIX)) ||
	    hit.end - hit.start != t->len || pytramp__row(t, pc - hit.start, row))
		return -EAGAIN;
	(*p->rows)++;
	return 0;
}

static int pytramp_on_jit_record(void *state, const struct runtime_proc *p, uint32_t pid,
				 const char *name, uint64_t size)
{
	struct tramp_ent *te = ent_get(state, pid, false);
	int err;

	if (!te || !te->found || te->written || !p->write ||
	    strncmp(name, PYTRAMP_NAME_PREFIX, strlen(PYTRAMP_NAME_PREFIX)) || size != te->t.len)
		return 0;
	err = p->write(p->write_ctx, RUNTIME_REC_PYTRAMP, pid, te->t.code, te->t.len);
	if (!err)
		te->written = 1;
	return err;
}

static int pytramp_on_capture_record(void *state, unsigned type, uint32_t pid,
				     const uint8_t *code, size_t len)
{
	struct pytramp t;
	struct tramp_ent *te;

	if (type != RUNTIME_REC_PYTRAMP)
		return -ENOENT;
	if (pytramp__match(code, len, &t))
		return -EINVAL;
	if (!(te = ent_get(state, pid, true)))
		return -ENOMEM;
	te->t = t;
	te->found = 1;
	te->offline = 1;
	return 0;
}

const struct runtime_ops pytramp_runtime_ops = {
	.name = "python-perf-trampolines",
	.attach = pytramp_attach,
	.detach = pytramp_detach,
	.proc_row = pytramp_proc_row,
	.is_proc = pytramp_is_proc,
	.on_jit_record = pytramp_on_jit_record,
	.on_capture_record = pytramp_on_capture_record,
};

// SPDX-License-Identifier: MIT
/*
 * V8 behind the runtime table (runtimes/runtime.h): a node process (a
 * binary or libnode exporting the v8dbg_* constants) gets its JIT
 * frames named live from its JSFunctions (include/v8reader.h), with no
 * flag in the target: the frame's function slot from the sample's stack
 * snapshot, the objects by process_vm_readv.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "elfread.h"
#include "procmaps.h"
#include "proc.h"
#include "runtimes/runtime.h"
#include "v8reader.h"

#define V8_PROCS 64 /* processes classified at a time (the oldest goes) */

struct v8proc {
	uint32_t pid;
	const struct proc *proc; /* (with pid: a recycled pid is another) */
	uint64_t used;
	int node; /* 1: V8 with the layout, 0: not V8 */
	struct v8_layout l;
};

struct v8state {
	struct v8proc p[V8_PROCS];
	size_t nr;
	uint64_t clock;
};

static int is_node_name(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return !strncmp(b, "node", 4) || !strncmp(b, "libnode", 7);
}

static void classify(struct v8proc *vp)
{
	struct procmaps *m = NULL;

	vp->node = 0;
	if (procmaps__read(vp->pid, &m))
		return;
	for (size_t i = 0; i < m->nr && !vp->node; i++) {
		const struct procmaps_entry *me = &m->entries[i];
		struct elfread *e;
		char path[128];

		if (me->offset || !me->inode || me->pseudo || !is_node_name(me->path))
			continue;
		snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, vp->pid,
			 me->start, me->end);
		if (!(e = elfread__open(path)))
			continue;
		vp->node = !v8layout__from_elf(e, &vp->l);
		elfread__free(e);
	}
	procmaps__free(m);
}

static struct v8proc *proc_of(struct v8state *st, const struct proc *p)
{
	uint32_t pid = proc__pid(p);
	struct v8proc *vp = NULL;

	for (size_t i = 0; i < st->nr; i++)
		if (st->p[i].pid == pid && st->p[i].proc == p) {
			st->p[i].used = ++st->clock;
			return &st->p[i];
		}
	if (st->nr < V8_PROCS) {
		vp = &st->p[st->nr++];
	} else {
		vp = &st->p[0];
		for (size_t i = 1; i < st->nr; i++)
			if (st->p[i].used < vp->used)
				vp = &st->p[i];
	}
	memset(vp, 0, sizeof(*vp));
	vp->pid = pid;
	vp->proc = p;
	vp->used = ++st->clock;
	classify(vp);
	return vp;
}

/* v8_read_fn: the target's memory, a bounded read that must be whole. */
static int read_target(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const uint32_t *pid = ctx;
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };

	if (len > 4096)
		return -EINVAL;
	ssize_t n = process_vm_readv((pid_t)*pid, &l, 1, &r, 1, 0);
	return n == (ssize_t)len ? 0 : -EFAULT;
}

static int v8_frame_name(void *state, const struct runtime_proc *p,
			 const struct runtime_frame *f, char *buf, size_t size)
{
	struct v8proc *vp;
	uint64_t slot, fn, fp;
	uint32_t pid;

	if (!p->proc || !(vp = proc_of(state, p->proc)) || !vp->node)
		return -ESRCH;
	fp = f->frame_fp(f->walk, f->index);
	if (fp < 4096 || fp > UINT64_MAX - 4096)
		return -EINVAL;
	pid = vp->pid;
	slot = fp + (uint64_t)vp->l.fp_function;
	/* the sampled frame: its function slot must be pushed already (SP at
	 * or below it), and its frame pointer its own, not the caller's (not
	 * at push rbp / mov rbp,rsp of the prologue, nor at the ret) */
	if (f->leaf) {
		uint8_t code[3];

		if (f->stack_lo > slot || read_target(&pid, f->pc, code, sizeof(code)) ||
		    code[0] == 0x55 || code[0] == 0xc3 || code[0] == 0xc2 ||
		    (code[0] == 0x48 && code[1] == 0x89 && code[2] == 0xe5))
			return -EINVAL;
	}
	/* the slot as the sample saw it, when the snapshot has it */
	if (slot >= f->stack_lo && slot - f->stack_lo <= f->stack_len &&
	    f->stack_len - (slot - f->stack_lo) >= 8)
		memcpy(&fn, f->stack + (slot - f->stack_lo), 8);
	else if (read_target(&pid, slot, &fn, 8))
		return -EFAULT;
	return v8reader__function_name(&vp->l, read_target, &pid, fn, buf, size);
}

static void *v8_attach(void)
{
	return calloc(1, sizeof(struct v8state));
}

static void v8_detach(void *state)
{
	free(state);
}

const struct runtime_ops v8_runtime_ops = {
	.name = "v8",
	.attach = v8_attach,
	.detach = v8_detach,
	.frame_name = v8_frame_name,
};

// SPDX-License-Identifier: MIT
/*
 * V8 behind the runtime table (runtimes/runtime.h): a node process (a
 * binary or libnode exporting the v8dbg_* constants) gets its JIT
 * frames named live from its JSFunctions (src/runtimes/v8/v8reader.h), with no
 * flag in the target: the frame's function slot from the sample's stack
 * snapshot, the objects by process_vm_readv. In record, what report needs
 * to name the interpreted frames goes to the capture (v8replay.h); in
 * report, those frames are named from it and the event's snapshot alone.
 */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "model/elfread.h"
#include "cli/options.h"
#include "model/procmaps.h"
#include "model/proc.h"
#include "runtimes/runtime.h"
#include "symbols/symbolize.h"
#include "util.h"
#include "runtimes/v8/v8reader.h"
#include "runtimes/v8/v8replay.h"

#define V8_PROCS 64 /* processes classified at a time (the oldest goes) */
/* The target's memory read by aligned lines, kept for a frame's reads
 * and its sample's next frames (an object and its map's fields are a
 * line or two; the maps are shared): at most V8_LINE_NS old, never
 * across pages (a line is read whole or not at all). */
#define V8_LINE 256u
#define V8_LINES 64u
#define V8_LINE_NS 2000000ull /* 2 ms */

struct v8proc {
	uint32_t pid;
	const struct proc *proc; /* (with pid: a recycled pid is another) */
	uint64_t used;
	int node; /* 1: V8 with the layout, 0: not V8 */
	struct v8_layout l;
	struct v8_rec_state rec; /* record: what went to the capture */
};

struct v8line {
	uint64_t addr; /* of the line (V8_LINE-aligned), 0: empty */
	uint64_t ns;
	uint32_t pid;
	uint8_t data[V8_LINE];
};

/* A node binary read (by device and inode): processes of one binary share
 * its layout, read once. */
#define V8_BINS 8u
struct v8bin {
	uint64_t ino;
	uint32_t maj, min;
	int ok;
	struct v8_layout l;
};

struct v8state {
	struct v8bin bin[V8_BINS];
	unsigned nbin;
	struct v8proc p[V8_PROCS];
	size_t nr;
	uint64_t clock;
	struct v8line line[V8_LINES];
	uint64_t now; /* of the frame being named */
	uint32_t pid;
	struct v8_offline off; /* report: the capture's records */
};

static int is_node_name(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return !strncmp(b, "node", 4) || !strncmp(b, "libnode", 7);
}

static void classify(struct v8state *st, struct v8proc *vp)
{
	struct procmaps *m = NULL;

	vp->node = 0;
	if (procmaps__read(vp->pid, &m))
		return;
	for (size_t i = 0; i < m->nr && !vp->node; i++) {
		const struct procmaps_entry *me = &m->entries[i];
		struct v8bin *b = NULL;
		struct elfread *e;
		char path[128];

		if (me->offset || !me->inode || me->pseudo || !is_node_name(me->path))
			continue;
		for (unsigned k = 0; k < st->nbin && !b; k++)
			if (st->bin[k].ino == me->inode && st->bin[k].maj == me->dev_major &&
			    st->bin[k].min == me->dev_minor)
				b = &st->bin[k];
		if (!b) {
			snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64,
				 vp->pid, me->start, me->end);
			if (!(e = elfread__open(path)))
				continue;
			b = &st->bin[st->nbin < V8_BINS ? st->nbin++ : me->inode % V8_BINS];
			b->ino = me->inode;
			b->maj = me->dev_major;
			b->min = me->dev_minor;
			b->ok = !v8layout__from_elf(e, &b->l);
			elfread__free(e);
		}
		vp->node = b->ok;
		vp->l = b->l;
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
	v8_rec__free(&vp->rec);
	memset(vp, 0, sizeof(*vp));
	vp->pid = pid;
	vp->proc = p;
	vp->used = ++st->clock;
	classify(st, vp);
	return vp;
}

/* v8_read_fn: the target's memory, bounded reads served by lines. */
static int read_target(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct v8state *st = ctx;
	uint8_t *out = buf;

	if (len > 4096 || addr > UINT64_MAX - len)
		return -EINVAL;
	while (len) {
		uint64_t la = addr & ~(uint64_t)(V8_LINE - 1);
		struct v8line *l = &st->line[(la / V8_LINE) % V8_LINES];
		size_t off = (size_t)(addr - la), k = V8_LINE - off;

		if (l->addr != la || l->pid != st->pid || st->now - l->ns > V8_LINE_NS || !la) {
			struct iovec lv = { l->data, V8_LINE }, rv = { (void *)(uintptr_t)la, V8_LINE };

			l->addr = 0;
			if (!la || process_vm_readv((pid_t)st->pid, &lv, 1, &rv, 1, 0) !=
					   (ssize_t)V8_LINE)
				return -EFAULT;
			l->addr = la;
			l->pid = st->pid;
			l->ns = st->now;
		}
		if (k > len)
			k = len;
		memcpy(out, l->data + off, k);
		out += k;
		addr += k;
		len -= k;
	}
	return 0;
}

/* The interpreter's builtins an interpreted frame runs in (node's own
 * binary names them): a bytecode handler, the entry trampoline, the
 * re-entries from baseline code or a deoptimization. */
static bool is_handler(const char *sym)
{
	size_t n = strlen(sym);

	return !strncmp(sym, "Builtins_", 9) && n > 16 && !strcmp(sym + n - 7, "Handler");
}

static bool v8_names_native(const char *sym)
{
	return is_handler(sym) || !strcmp(sym, "Builtins_InterpreterEntryTrampoline") ||
	       !strcmp(sym, "Builtins_InterpreterEnterAtBytecode") ||
	       !strcmp(sym, "Builtins_InterpreterEnterAtNextBytecode");
}

/* v8_read_fn: the sample's stack snapshot where it holds the bytes (a
 * frame's slots as they were then: the thread has moved on), else the
 * target's memory. */
struct snap_read {
	struct v8state *st;
	const struct runtime_frame *f;
};

static int read_snap(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct snap_read *r = ctx;
	const struct runtime_frame *f = r->f;

	if (addr >= f->stack_lo && addr - f->stack_lo <= f->stack_len &&
	    len <= f->stack_len - (addr - f->stack_lo)) {
		memcpy(buf, f->stack + (addr - f->stack_lo), len);
		return 0;
	}
	return read_target(r->st, addr, buf, len);
}

/*
 * An interpreted frame (pc in an interpreter builtin, fp the frame the
 * interpreter built): named by its JSFunction as a compiled one is. A
 * bytecode handler runs in its function's frame (it builds none of its
 * own, or one whose marker fails the check), so a leaf there is that
 * function's, unless the walk gives that frame next as well; a leaf in
 * the entry trampoline may not have built its frame yet (fp still its
 * caller's): it stays the builtin's. In record, the function, its
 * BytecodeArray and name go to the capture (its PC is every function's:
 * no JIT entry can name it); in report (p->offline) the frame is named
 * from those records and the snapshot's slots.
 */
static int interp_name(struct v8state *st, const struct runtime_proc *p,
		       const struct runtime_frame *f, char *buf, size_t size)
{
	struct snap_read r = { st, f };
	struct v8_interp in;
	struct v8proc *vp = NULL;
	uint64_t fp = f->frame_fp(f->walk, f->index);
	int err;

	if (p->offline && !v8_off__proc(&st->off, proc__pid(p->proc)))
		return -ESRCH;
	if (!p->offline && (!(vp = proc_of(st, p->proc)) || !vp->node))
		return -ESRCH;
	if (fp < 4096 || fp > UINT64_MAX - 4096)
		return -EINVAL;
	if (f->leaf && !is_handler(f->sym))
		return -EINVAL;
	/* the next frame the same one (its call in the entry trampoline,
	 * found by the handler's CFI): that one is named, this one stays the
	 * handler running in it */
	if (f->frame_fp(f->walk, f->index + 1) == fp)
		return -EINVAL;
	if (p->offline)
		return v8_off__interp_name(&st->off, proc__pid(p->proc), f, fp, buf, size);
	st->pid = vp->pid;
	st->now = util__now_ns();
	if ((err = v8reader__interp(&vp->l, read_snap, &r, fp, &in)) ||
	    (err = v8reader__function_name(&vp->l, read_target, st, in.fn, buf, size)))
		return err;
	/* (record: report names it from the snapshot's slots and this; one
	 * not written leaves it the builtin there, never another's name) */
	if (p->write)
		(void)v8_rec__func(&vp->rec, p, vp->pid, &vp->l, in.fn, in.bytecode, in.length,
				   buf);
	if (f->carried)
		*f->carried = true;
	return 0;
}

static int v8_frame_name(void *state, const struct runtime_proc *p,
			 const struct runtime_frame *f, char *buf, size_t size)
{
	struct v8state *st = state;
	struct v8proc *vp;
	uint64_t slot, fn, fp;

	if (!p->proc)
		return -ESRCH;
	if (f->sym)
		return interp_name(st, p, f, buf, size);
	/* (report: compiled code is named by the capture's JIT entries) */
	if (p->offline || !(vp = proc_of(state, p->proc)) || !vp->node)
		return -ESRCH;
	fp = f->frame_fp(f->walk, f->index);
	if (fp < 4096 || fp > UINT64_MAX - 4096)
		return -EINVAL;
	st->pid = vp->pid;
	st->now = util__now_ns();
	slot = fp + (uint64_t)vp->l.fp_function;
	/*
	 * The sampled frame may not have its own frame yet or any more: at
	 * its entry (the deoptimization check, push rbp), [sp] is the return
	 * address into its caller; in its prologue and epilogue (mov rbp,rsp,
	 * pop rbp, dropping the arguments, ret) either its function slot is
	 * not pushed (SP above it) or the code at pc says so. Each leaves
	 * the frame unnamed, not named after its caller.
	 */
	if (f->leaf) {
		uint8_t c[3];
		uint64_t top;
		struct sym_result sr;

		/* (one a signal interrupted: its SP is not the snapshot's) */
		if (f->index || f->stack_lo > slot || f->stack_len < 8 || read_target(st, f->pc, c, sizeof(c)))
			return -EINVAL;
		if (c[0] == 0x55 || c[0] == 0x5d || c[0] == 0x51 || c[0] == 0x59 || c[0] == 0xc3 ||
		    c[0] == 0xc2 ||
		    (c[0] == 0x48 && ((c[1] == 0x89 && (c[2] == 0xe5 || c[2] == 0xec)) ||
				      ((c[1] == 0x83 || c[1] == 0x81) && c[2] == 0xc4) ||
				      (c[1] == 0x8d && (c[2] == 0x24 || c[2] == 0x64)))))
			return -EINVAL;
		memcpy(&top, f->stack, 8);
		memset(&sr, 0, sizeof(sr));
		if (!proc__symbolize(p->proc, top, &sr) && sr.is_exec)
			return -EINVAL;
	}
	/* the slot as the sample saw it, when the snapshot has it */
	if (slot >= f->stack_lo && slot - f->stack_lo <= f->stack_len &&
	    f->stack_len - (slot - f->stack_lo) >= 8)
		memcpy(&fn, f->stack + (slot - f->stack_lo), 8);
	else if (read_target(st, slot, &fn, 8))
		return -EFAULT;
	return v8reader__function_name(&vp->l, read_target, st, fn, buf, size);
}

static void *v8_attach(void)
{
	return calloc(1, sizeof(struct v8state));
}

static void v8_detach(void *state)
{
	struct v8state *st = state;

	for (size_t i = 0; i < st->nr; i++)
		v8_rec__free(&st->p[i].rec);
	v8_off__free(&st->off);
	free(st);
}

/* Report: a V8 record of the capture (v8record.h). */
static int v8_on_capture_record(void *state, unsigned type, uint32_t pid, const uint8_t *data,
				size_t len)
{
	struct v8state *st = state;
	int err;

	if (type != RUNTIME_REC_V8)
		return -ENOENT;
	err = v8_off__record(&st->off, pid, data, len);
	return err == -ENOTSUP ? -EINVAL : err;
}

/* --no-v8: node's frames from its perf map only */
static bool v8_enabled(const struct sfprof_opts *o)
{
	return !o->no_v8;
}

const struct runtime_ops v8_runtime_ops = {
	.name = "v8",
	.enabled = v8_enabled,
	.attach = v8_attach,
	.detach = v8_detach,
	.frame_name = v8_frame_name,
	.names_native = v8_names_native,
	.frames_offline = true,
	.on_capture_record = v8_on_capture_record,
};

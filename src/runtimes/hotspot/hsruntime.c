// SPDX-License-Identifier: MIT
/*
 * HotSpot behind the runtime table (runtimes/runtime.h): for a PC of
 * anonymous code of a JVM, live at its sample, the code that holds it is
 * read from the VM's memory (hotspot.h) and its name given to the
 * process's JIT maps as an entry, as a perf map line would be: the
 * stacks name it from there, record carries it (CAPFILE_REC_JIT), report
 * names from the capture. The newest entry wins: code the VM frees and
 * reuses gets the new name once it runs there, and a PC that cannot be
 * read stays [jit].
 *
 * In record, what report needs besides (the blobs' frame sizes, compiled
 * callers' frames, interpreted frames' Methods) goes to the capture as
 * HotSpot records, and report steps and names a JVM's frames from those
 * (hsreplay.h), never from a process of that pid.
 *
 * A process is a JVM when it maps a libjvm.so whose .dynsym exports the
 * vmstructs tables (asked again when its mappings change: the launcher
 * loads libjvm.so after its start); the layout is read once per process
 * (again later while the VM has not filled its tables yet).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "model/elfread.h"
#include "runtimes/hotspot/hotspot.h"
#include "runtimes/hotspot/hsreplay.h"
#include "runtimes/jit/jitmap.h"
#include "cli/options.h"
#include "model/proc.h"
#include "runtimes/runtime.h"
#include "unwind/sframe.h"
#include "util.h"

#define HS_PROCS 1024 /* processes known, by pid: a JVM's state is apart */
#define HS_RETRY_NS 200000000ull /* a VM not ready yet: asked again */
#define HS_SEEN 1024		/* blobs named, per process */
#define HS_RECENT 32		/* blobs read, per process */
#define HS_RECENT_NS 10000000ull /* a blob read is trusted this long (10 ms) */

#define DWARF_RBP 6
#define DWARF_RSP 7

enum hs_state { HS_UNKNOWN, HS_READY, HS_NOT_JVM, HS_LATER };

struct hs_proc {
	uint32_t pid;
	uint64_t birth, gen;
	enum hs_state state;
	struct hs_jvm *jvm; /* HS_READY, HS_LATER */
};

struct hs_jvm {
	uint32_t pid;
	uint64_t retry_ns;
	struct hotspot_syms syms;
	bool have_syms;
	struct hotspot_layout l;
	struct hs_seen {
		uint64_t start, end, hash;
	} seen[HS_SEEN];
	/* the blobs read last: a walk asks for the same ones for its row
	 * and its name, and the next samples do too (the VM may free and
	 * reuse code: they are read again after HS_RECENT_NS, as the perf
	 * map's hits are) */
	struct hs_recent {
		uint64_t t;
		bool named;
		struct hotspot_code c;
	} recent[HS_RECENT];
	unsigned recent_next;
	struct hs_rec_state rec; /* record: what went to the capture */
};

struct hs_state_all {
	struct hs_proc procs[HS_PROCS];
	struct hs_offline off; /* report: the capture's records */
};

static int hs_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	uint32_t pid = *(const uint32_t *)ctx;
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (!len)
		return 0;
	if (addr + len < addr)
		return -EFAULT;
	n = process_vm_readv((pid_t)pid, &l, 1, &r, 1, 0);
	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EFAULT;
}

/*
 * hs_read() for the reads that name one frame (a Method's name, class,
 * source and line; an nmethod's scopes): they are many small fields close
 * together, one process_vm_readv each (12-20 a frame). A frame's naming
 * reads the HS_RBLK-aligned block of each field once and serves the next
 * fields in it from there; the blocks live as long as that naming (its
 * stack), so no byte is older than the frame's name. An aligned block
 * lies in one page, readable whenever the field is; a field across two
 * blocks, and a block that does not read, go to hs_read() as before.
 */
#define HS_RBLK 256
#define HS_RBLKS 8

struct hs_rcache {
	uint32_t pid;
	unsigned next;
	struct {
		uint64_t base;
		bool ok;
		uint8_t b[HS_RBLK];
	} blk[HS_RBLKS];
};

static void hs_rcache_init(struct hs_rcache *rc, uint32_t pid)
{
	rc->pid = pid;
	rc->next = 0;
	for (unsigned i = 0; i < HS_RBLKS; i++)
		rc->blk[i].ok = false;
}

static int hs_cread(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct hs_rcache *rc = ctx;
	uint64_t base = addr & ~(uint64_t)(HS_RBLK - 1);
	unsigned i;

	if (!len || addr + len < addr || addr - base + len > HS_RBLK)
		return hs_read(&rc->pid, addr, buf, len);
	for (i = 0; i < HS_RBLKS; i++)
		if (rc->blk[i].ok && rc->blk[i].base == base)
			break;
	if (i == HS_RBLKS) {
		i = rc->next++ % HS_RBLKS;
		rc->blk[i].ok = !hs_read(&rc->pid, base, rc->blk[i].b, HS_RBLK);
		rc->blk[i].base = base;
		if (!rc->blk[i].ok)
			return hs_read(&rc->pid, addr, buf, len);
	}
	memcpy(buf, rc->blk[i].b + (addr - base), len);
	return 0;
}

struct sym_ctx {
	struct hotspot_syms *s;
	int64_t bias;
	unsigned found;
};

static const struct {
	const char *name;
	size_t at;
} hs_names[] = {
#define S(n, f) { n, offsetof(struct hotspot_syms, f) }
	S("gHotSpotVMStructs", structs),
	S("gHotSpotVMTypes", types),
	S("gHotSpotVMStructEntryTypeNameOffset", s_type),
	S("gHotSpotVMStructEntryFieldNameOffset", s_field),
	S("gHotSpotVMStructEntryIsStaticOffset", s_static),
	S("gHotSpotVMStructEntryOffsetOffset", s_offset),
	S("gHotSpotVMStructEntryAddressOffset", s_address),
	S("gHotSpotVMStructEntryArrayStride", s_stride),
	S("gHotSpotVMTypeEntryTypeNameOffset", t_type),
	S("gHotSpotVMTypeEntrySizeOffset", t_size),
	S("gHotSpotVMTypeEntryArrayStride", t_stride),
	/* (the int constants: for interpreted frames, not required) */
	S("gHotSpotVMIntConstants", ints),
	S("gHotSpotVMIntConstantEntryNameOffset", i_name),
	S("gHotSpotVMIntConstantEntryValueOffset", i_value),
	S("gHotSpotVMIntConstantEntryArrayStride", i_stride),
#undef S
};

#define NR_HS_NAMES (sizeof(hs_names) / sizeof(hs_names[0]))
#define NR_HS_REQUIRED 11u /* hs_names[0..11): required */
#define HS_INTS_MASK (((1u << NR_HS_NAMES) - 1) & ~((1u << NR_HS_REQUIRED) - 1))

static int sym_cb(void *ctx, const struct elfread_sym *sym)
{
	struct sym_ctx *c = ctx;
	size_t len = strcspn(sym->name, "@");

	if (len < 10 || strncmp(sym->name, "gHotSpotVM", 10) || !sym->shndx)
		return 0;
	for (size_t i = 0; i < NR_HS_NAMES; i++)
		if (strlen(hs_names[i].name) == len && !strncmp(sym->name, hs_names[i].name, len)) {
			uint64_t v = sym->value + (uint64_t)c->bias;

			memcpy((uint8_t *)c->s + hs_names[i].at, &v, sizeof(v));
			c->found |= 1u << i;
		}
	return 0;
}

/* pid's libjvm.so: its mapping at file offset 0 and its path. 0, or
 * -ENOENT (not a JVM). */
static int find_libjvm(uint32_t pid, uint64_t *start, char *path, size_t size)
{
	char line[4096], mpath[64];
	FILE *f;
	int rc = -ENOENT;

	snprintf(mpath, sizeof(mpath), "/proc/%u/maps", pid);
	f = fopen(mpath, "re");
	if (!f)
		return -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char *p = strchr(line, '/');
		size_t n;

		if (!p || sscanf(line, "%llx-%llx %*s %llx", &lo, &hi, &off) != 3 || off)
			continue;
		n = strcspn(p, "\n");
		p[n] = 0;
		if (n < 10 || strcmp(p + n - 10, "/libjvm.so") ||
		    (size_t)snprintf(path, size, "/proc/%u/root%s", pid, p) >= size)
			continue;
		*start = lo;
		rc = 0;
		break;
	}
	fclose(f);
	return rc;
}

static int load_syms(struct hs_jvm *hp)
{
	struct sym_ctx c = { .s = &hp->syms };
	char path[4200];
	struct elfread *e;
	uint64_t start;
	int rc;

	if (find_libjvm(hp->pid, &start, path, sizeof(path)))
		return -ENOENT;
	e = elfread__open(path);
	if (!e)
		return -ENOENT;
	rc = elfread__mapping_bias(e, start, 0, &c.bias);
	if (!rc)
		rc = elfread__for_each_symbol(e, SHT_DYNSYM, sym_cb, &c);
	elfread__free(e);
	if (rc || (c.found & ((1u << NR_HS_REQUIRED) - 1)) != (1u << NR_HS_REQUIRED) - 1)
		return -ENOENT;
	if ((c.found & HS_INTS_MASK) != HS_INTS_MASK)
		hp->syms.ints = 0; /* (no interpreted frames) */
	hp->have_syms = true;
	return 0;
}

static void jvm_free(struct hs_jvm *jvm)
{
	if (jvm)
		hs_rec__free(&jvm->rec);
	free(jvm);
}

/* The current process's JVM, or NULL. */
static struct hs_jvm *hs_proc_of(struct hs_state_all *st, const struct proc *p)
{
	uint32_t pid = proc__pid(p);
	uint64_t birth = proc__birth(p), gen = proc__generation(p);
	struct hs_proc *hp = &st->procs[(pid * 0x9e3779b1u) >> 22];
	struct hs_jvm *jvm;
	int rc;

	_Static_assert(HS_PROCS == 1u << 10, "the slot is the hash's top 10 bits");
	if (hp->pid != pid || hp->birth != birth) {
		jvm_free(hp->jvm);
		*hp = (struct hs_proc){ .pid = pid, .birth = birth };
	}
	if (hp->state == HS_NOT_JVM && hp->gen != gen)
		hp->state = HS_UNKNOWN; /* (it may have loaded libjvm.so since) */
	hp->gen = gen;
	if (hp->state == HS_READY)
		return hp->jvm;
	if (hp->state == HS_NOT_JVM ||
	    (hp->state == HS_LATER && util__now_ns() < hp->jvm->retry_ns))
		return NULL;
	if (!hp->jvm && !(hp->jvm = calloc(1, sizeof(*hp->jvm))))
		return NULL;
	jvm = hp->jvm;
	jvm->pid = pid;
	rc = jvm->have_syms ? 0 : load_syms(jvm);
	if (!rc)
		rc = hotspot__layout(&jvm->syms, hs_read, &jvm->pid, &jvm->l);
	/* (a JVM whose tables are not filled yet reads as bad ones) */
	hp->state = !rc ? HS_READY : jvm->have_syms ? HS_LATER : HS_NOT_JVM;
	jvm->retry_ns = util__now_ns() + HS_RETRY_NS;
	if (hp->state == HS_NOT_JVM) {
		jvm_free(jvm);
		hp->jvm = NULL;
	}
	return hp->state == HS_READY ? hp->jvm : NULL;
}

/* pc's code, read or recent (named when `name`): NULL when unknown. In
 * record, a blob read goes to the capture (once: hs_rec__code()). */
static const struct hotspot_code *hs_code(struct hs_jvm *hp, const struct runtime_proc *p,
					  uint64_t pc, bool name)
{
	uint64_t now = util__now_ns();
	struct hs_rcache rc;
	struct hs_recent *r;

	for (unsigned i = 0; i < HS_RECENT; i++) {
		r = &hp->recent[i];
		if (r->t && now - r->t < HS_RECENT_NS && pc >= r->c.start && pc < r->c.end &&
		    (r->named || !name))
			return &r->c;
	}
	/* (its fields through the blocks of this one lookup: hs_cread) */
	hs_rcache_init(&rc, hp->pid);
	r = &hp->recent[hp->recent_next++ % HS_RECENT];
	if (hotspot__code(&hp->l, hs_cread, &rc, pc, name, &r->c)) {
		r->t = 0;
		return NULL;
	}
	r->t = now;
	r->named = name;
	hs_rec__code(&hp->rec, p, hp->pid, &hp->l, &r->c);
	return &r->c;
}

static void *hs_attach(void)
{
	return calloc(1, sizeof(struct hs_state_all));
}

static void hs_detach(void *state)
{
	struct hs_state_all *st = state;

	if (!st)
		return;
	for (size_t i = 0; i < HS_PROCS; i++)
		jvm_free(st->procs[i].jvm);
	hs_offline__free(&st->off);
	free(st);
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h | 1;
}

static int hs_jit_name(void *state, const struct runtime_proc *p, uint64_t pc)
{
	const struct hotspot_code *c;
	struct hs_jvm *hp;
	struct jitmaps *j;
	struct hs_seen *sn;
	uint64_t h;
	int rc;

	if (p->offline || !p->proc || !(hp = hs_proc_of(state, p->proc)))
		return 0;
	c = hs_code(hp, p, pc, true);
	/* (an interpreted frame is named by its Method, frame_name(), when
	 * the VM gives its layout: the interpreter's code is every method's) */
	if (!c || c->kind == HOTSPOT_STUB || (c->kind == HOTSPOT_INTERPRETER && hp->l.has_interp))
		return 0;
	/* (the same code named the same: its entry is there already) */
	h = name_hash(c->name);
	sn = &hp->seen[(c->start >> 4) % HS_SEEN];
	if (sn->start == c->start && sn->end == c->end && sn->hash == h)
		return 0;
	j = p->jitmaps(p->ctx, true);
	if (!j)
		return 0;
	rc = jitmaps__add(j, hp->pid, c->start, c->end - c->start, c->name);
	if (rc)
		return rc == -ENOMEM ? rc : 0;
	*sn = (struct hs_seen){ c->start, c->end, h };
	return 1;
}

/*
 * A compiled frame's row: its size is the blob's (CodeBlob::_frame_size,
 * words from SP to the caller's SP, the return address the last of them,
 * the caller's rbp below it) once its prologue has built it; an
 * interpreted frame keeps rbp (CFA = rbp + 16). Other code (stubs, a
 * frame not built yet) is left to the frame-pointer walk.
 */
static int hs_proc_row(void *state, const struct runtime_proc *p, uint64_t pc,
		       struct sframe_row *row)
{
	struct hs_state_all *st = state;
	const struct hotspot_code *c;
	struct hotspot_code oc;
	struct hs_jvm *hp;

	if (!p->proc)
		return -ESRCH;
	if (p->offline) {
		/* (report: the blob from the capture's records) */
		if (!hs_offline__proc(&st->off, proc__pid(p->proc)))
			return -ESRCH;
		if (hs_off__code(&st->off, proc__pid(p->proc), pc, &oc))
			return -EAGAIN;
		c = &oc;
	} else if (!(hp = hs_proc_of(state, p->proc))) {
		return -ESRCH;
	} else if (!(c = hs_code(hp, p, pc, false))) {
		return -EAGAIN;
	}
	memset(row, 0, sizeof(*row));
	row->ra = sframe_rule__make(SFRAME_RULE_CFA_DEREF, 0, -8);
	row->fp = sframe_rule__make(SFRAME_RULE_CFA_DEREF, 0, -16);
	if (c->kind == HOTSPOT_NMETHOD && c->frame_size >= 2 && pc >= c->frame_complete)
		row->cfa = sframe_rule__make(SFRAME_RULE_REG, DWARF_RSP, (int32_t)c->frame_size * 8);
	else if (c->kind == HOTSPOT_INTERPRETER)
		row->cfa = sframe_rule__make(SFRAME_RULE_REG, DWARF_RBP, 16);
	else
		return -EAGAIN;
	(*p->rows)++;
	return 0;
}

/* hs_read() served from the sample's stack snapshot where it holds the
 * bytes (the frame's slots as they were when sampled: the thread has
 * moved on since), else from the process. */
struct frame_read {
	struct hs_rcache *rc;
	const struct runtime_frame *f;
};

static int frame_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct frame_read *r = ctx;
	const struct runtime_frame *f = r->f;

	if (addr >= f->stack_lo && addr - f->stack_lo <= f->stack_len &&
	    len <= f->stack_len - (addr - f->stack_lo)) {
		memcpy(buf, f->stack + (addr - f->stack_lo), len);
		return 0;
	}
	return hs_cread(r->rc, addr, buf, len);
}

/* A compiled caller's frame: its nmethod's own method at the call and
 * the methods inlined there (hotspot__caller_frame(), at its return
 * address); -ENOENT for the sampled frame (its name is the nmethod's
 * entry). */
static int nmethod_frame(struct hs_jvm *hp, struct hs_rcache *rc, const struct runtime_frame *f,
			 const struct hotspot_code *c, struct hotspot_method *m)
{
	if (f->leaf)
		return -ENOENT;
	return hotspot__caller_frame(&hp->l, hs_cread, rc, c, f->pc + 1, m, f->inl, f->inl_size);
}

/*
 * A frame's name where a JIT entry's is not enough. A compiled caller's:
 * its method and line at the call (nmethod_frame()). An interpreted
 * frame's: its Method* and bcp from the frame's fixed slots below its
 * frame pointer (hotspot__interp_frame() ties them together). One that
 * does not check out is the generic "[interpreter]", never a guess. In
 * record, the blob, the compiled caller's frame and the interpreted
 * frame's Method go to the capture (hsreplay.h) for report. The sampled
 * frame may be in a method's entry, its frame
 * not built yet and rbp still its caller's: then it reads as its caller
 * (whose frame the walk steps over from there), as a native prologue
 * does; a leaf's bcp slot is the one saved at its last call, not where
 * it runs now, so a leaf gets no line.
 */
static int hs_frame_name(void *state, const struct runtime_proc *p,
			 const struct runtime_frame *f, char *buf, size_t size)
{
	const struct hotspot_code *c;
	struct hotspot_method m;
	struct hs_rcache rc;
	struct frame_read r;
	struct hs_jvm *hp;
	uint64_t fp;
	int n, irc;

	if (!p->proc)
		return -ESRCH;
	if (p->offline)
		return hs_off__frame_name(&((struct hs_state_all *)state)->off, proc__pid(p->proc),
					  f, buf, size);
	if (!(hp = hs_proc_of(state, p->proc)))
		return -ESRCH;
	if (!(c = hs_code(hp, p, f->pc, false)))
		return -ENOENT;
	hs_rcache_init(&rc, hp->pid);
	if (c->kind == HOTSPOT_NMETHOD) {
		if (!(c = hs_code(hp, p, f->pc, true)) || nmethod_frame(hp, &rc, f, c, &m)) {
			/* (record: a name written at this pc before is void) */
			if (!f->leaf)
				hs_rec__frame(&hp->rec, p, hp->pid, &hp->l, f->pc, NULL, NULL, 0,
					      NULL);
			return -ENOENT;
		}
		hs_rec__frame(&hp->rec, p, hp->pid, &hp->l, f->pc, m.name, m.file, m.line,
			      f->inl);
		n = snprintf(buf, size, "%s", m.name);
	} else if (c->kind == HOTSPOT_INTERPRETER && hp->l.has_interp) {
		fp = f->frame_fp(f->walk, f->index);
		r = (struct frame_read){ &rc, f };
		irc = fp ? hotspot__interp_frame(&hp->l, frame_read, &r, fp, !f->leaf, &m) : -EINVAL;
		/* (record: its Method, so report names it from the snapshot) */
		if (!irc)
			hs_rec__method(&hp->rec, p, hp->pid, &hp->l, hs_read, &hp->pid, m.method,
				       m.name);
		/* (record: every method's return PCs in the interpreter's
		 * code are shared, a capture's entry by PC would name one
		 * only: report names the frame by its slots and Method) */
		if (f->carried)
			*f->carried = true;
		if (irc) {
			memset(&m, 0, sizeof(m));
			n = snprintf(buf, size, "[interpreter]");
		} else {
			n = snprintf(buf, size, "%s", m.name);
		}
	} else {
		return -ENOENT;
	}
	return hs_frame_out(f, &m, n, size);
}

static bool hs_is_proc(void *state, const struct runtime_proc *p)
{
	if (p->offline)
		return p->proc &&
		       hs_offline__proc(&((struct hs_state_all *)state)->off, proc__pid(p->proc));
	return p->proc && hs_proc_of(state, p->proc);
}

/* Report: a HotSpot record of the capture (hsrecord.h). */
static int hs_on_capture_record(void *state, unsigned type, uint32_t pid, const uint8_t *data,
				size_t len)
{
	struct hs_state_all *st = state;
	int err;

	if (type != RUNTIME_REC_HOTSPOT)
		return -ENOENT;
	err = hs_off__record(&st->off, pid, data, len);
	return err == -ENOTSUP ? -EINVAL : err;
}

/* --no-jvm: no VM read at all (a JVM's frames from its perf map, else
 * [jit], its JIT code walked by frame pointers) */
static bool hs_enabled(const struct sfprof_opts *o)
{
	return !o->no_jvm;
}

const struct runtime_ops hotspot_runtime_ops = {
	.name = "hotspot",
	.enabled = hs_enabled,
	.attach = hs_attach,
	.detach = hs_detach,
	.jit_name = hs_jit_name,
	.proc_row = hs_proc_row,
	.is_proc = hs_is_proc,
	.frame_name = hs_frame_name,
	.frame_sources = true,
	.frames_offline = true,
	.on_capture_record = hs_on_capture_record,
};

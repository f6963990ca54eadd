// SPDX-License-Identifier: MIT
/*
 * CPython processes and their BPF walk configuration (src/runtimes/python/pyprocs.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/elfread.h"
#include "model/procmaps.h"
#include "runtimes/python/pyoffsets.h"
#include "runtimes/python/pyprocs.h"

#define PYPROCS_BUCKETS 256

enum pyproc_state {
	PYPROC_OTHER = 1,	/* not CPython (or unreadable) */
	PYPROC_UNSUPPORTED = 2, /* CPython without offsets */
	PYPROC_PYTHON = 3,
};

struct pyproc {
	struct pyproc *next;
	uint32_t pid;
	uint32_t state;
	struct pyproc_info info;
};

/*
 * An interpreter image looked at, by its file's identity: opening and
 * searching CPython's symbols costs 15-30 ms (its .symtab read from
 * disk), so a process is classified from a copy made earlier (before
 * `-- COMMAND`'s exec, or by another process of the same binary). The
 * ELF stays open for the load bias of each process's mapping.
 */
#define PYPROCS_IMAGES 4

struct pyimage {
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	struct elfread *e; /* NULL unless rc is 0 or -EPROTONOSUPPORT */
	int rc;		   /* pyversion_detect()'s */
	int used;
	struct pyversion_info v;
};

struct pyprocs {
	struct pyproc *b[PYPROCS_BUCKETS];
	struct pyimage img[PYPROCS_IMAGES];
	unsigned next_img;
	pyprocs_set_fn set;
	void *ctx;
	struct pyprocs_stats st;
	/* versions said unsupported, as major * 100 + minor */
	uint32_t said[16];
	unsigned nr_said;
	/* the last images counted (python or unsupported), by pid and
	 * where: a sample of a new child read after its exec classifies the
	 * new image, and the EXEC event then has it classified again (seen
	 * in CI: 3 counted of 2 processes) */
	struct {
		uint32_t pid;
		uint64_t start, inode;
	} counted[32];
	unsigned next_counted;
};

struct pyprocs *pyprocs__new(pyprocs_set_fn set, void *ctx)
{
	struct pyprocs *pp = calloc(1, sizeof(*pp));

	if (!pp)
		return NULL;
	pp->set = set;
	pp->ctx = ctx;
	return pp;
}

void pyprocs__free(struct pyprocs *pp)
{
	if (!pp)
		return;
	for (unsigned i = 0; i < PYPROCS_BUCKETS; i++) {
		for (struct pyproc *p = pp->b[i], *n; p; p = n) {
			n = p->next;
			free(p);
		}
	}
	for (unsigned i = 0; i < PYPROCS_IMAGES; i++)
		elfread__free(pp->img[i].e);
	free(pp);
}

/* The image of the file at path (name: the path it is known by, for a
 * version told by its name), detected now or earlier; NULL when it
 * cannot be read. */
static struct pyimage *image_of(struct pyprocs *pp, const char *path, const char *name)
{
	struct pyimage *im;
	struct elfread *e;
	struct stat st;

	if (stat(path, &st))
		return NULL;
	for (unsigned i = 0; i < PYPROCS_IMAGES; i++) {
		im = &pp->img[i];
		if (im->used && im->dev == st.st_dev && im->ino == st.st_ino &&
		    im->mtime.tv_sec == st.st_mtim.tv_sec && im->mtime.tv_nsec == st.st_mtim.tv_nsec)
			return im;
	}
	if (!(e = elfread__open(path)))
		return NULL;
	im = &pp->img[pp->next_img++ % PYPROCS_IMAGES];
	elfread__free(im->e);
	memset(im, 0, sizeof(*im));
	im->used = 1;
	im->dev = st.st_dev;
	im->ino = st.st_ino;
	im->mtime = st.st_mtim;
	im->rc = pyversion_detect(e, name, &im->v);
	if (im->rc == 0 || im->rc == -EPROTONOSUPPORT) {
		im->e = e;
	} else {
		elfread__free(e);
	}
	return im;
}

int pyprocs__prepare(struct pyprocs *pp, const char *path)
{
	const struct pyimage *im = image_of(pp, path, path);

	return im && im->rc == 0;
}

static struct pyproc **slot(const struct pyprocs *pp, uint32_t pid)
{
	struct pyproc *const *s = &pp->b[(pid * 2654435761u) >> 24];

	while (*s && (*s)->pid != pid)
		s = &(*s)->next;
	return (struct pyproc **)s;
}

static void forget(struct pyprocs *pp, uint32_t pid)
{
	struct pyproc **s = slot(pp, pid), *p = *s;

	if (!p)
		return;
	if (p->state == PYPROC_PYTHON && pp->set)
		pp->set(pp->ctx, pid, NULL);
	*s = p->next;
	free(p);
}

void pyprocs__exec(struct pyprocs *pp, uint32_t pid)
{
	forget(pp, pid);
}

void pyprocs__exit(struct pyprocs *pp, uint32_t pid)
{
	forget(pp, pid);
}

static struct pyproc *add(struct pyprocs *pp, uint32_t pid)
{
	struct pyproc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = pid;
	p->state = PYPROC_OTHER;
	p->next = pp->b[(pid * 2654435761u) >> 24];
	pp->b[(pid * 2654435761u) >> 24] = p;
	return p;
}

static void publish(struct pyprocs *pp, struct pyproc *p)
{
	if (pp->set && pp->set(pp->ctx, p->pid, &p->info.bpf))
		pp->st.set_errors++;
}

void pyprocs__fork(struct pyprocs *pp, uint32_t ppid, uint32_t pid)
{
	struct pyproc *parent = *slot(pp, ppid), *p;

	forget(pp, pid);
	/* the child runs its parent's image until it execs */
	if (!parent || parent->state != PYPROC_PYTHON || !(p = add(pp, pid)))
		return;
	p->state = PYPROC_PYTHON;
	p->info = parent->info;
	publish(pp, p);
}

const struct pyproc_info *pyprocs__info(const struct pyprocs *pp, uint32_t pid)
{
	const struct pyproc *p = *slot(pp, pid);

	return p && p->state == PYPROC_PYTHON ? &p->info : NULL;
}

/* A window of SFPROF_PY_WIN bytes must hold every frame field the walk reads. */
int pyprocs__bpf_config(const struct pyoffsets *o, uint64_t runtime, struct sfprof_py_proc *out)
{
	uint32_t f[5] = { o->frame_code, o->frame_previous, o->frame_instr, o->frame_is_entry,
			  o->frame_owner };
	uint32_t lo = UINT32_MAX, hi = 0;

	memset(out, 0, sizeof(*out));
	if (o->rt_tss_initialized == PYOFF_NONE || o->rt_tss_key == PYOFF_NONE ||
	    o->rt_tss_key != o->rt_tss_initialized + 4 || o->ts_frame == PYOFF_NONE ||
	    o->frame_code == PYOFF_NONE || o->frame_previous == PYOFF_NONE ||
	    o->frame_instr == PYOFF_NONE || o->code_adaptive == PYOFF_NONE ||
	    o->glibc_key_data_size == 0 || o->glibc_key_data_size > 64)
		return -EPROTONOSUPPORT;
	/* 3.11 marks entry frames; 3.12+ has shim frames: one or the other */
	if ((o->frame_is_entry == PYOFF_NONE) ==
	    (o->frame_owner_cstack == PYOFF_NONE || o->frame_owner == PYOFF_NONE))
		return -EPROTONOSUPPORT;
	for (int i = 0; i < 5; i++) {
		if (f[i] == PYOFF_NONE)
			continue;
		lo = f[i] < lo ? f[i] : lo;
		hi = f[i] + (i < 3 ? 8 : 1) > hi ? f[i] + (i < 3 ? 8 : 1) : hi;
	}
	if (hi - lo > SFPROF_PY_WIN || lo > 0xfff0)
		return -EPROTONOSUPPORT;
	out->tss_addr = runtime + o->rt_tss_initialized;
	out->tss_key_off = o->rt_tss_key - o->rt_tss_initialized;
	out->specific = o->glibc_specific_1stblock + o->glibc_key_data_data;
	out->key_data_size = o->glibc_key_data_size;
	out->key_max = o->glibc_key_2ndlevel_size;
	out->ts_frame = o->ts_frame;
	out->cframe_current = (o->flags & PYOFF_F_CFRAME) ? o->cframe_current_frame : SFPROF_PY_NONE;
	out->code_adaptive = o->code_adaptive;
	out->win_base = (uint16_t)lo;
	out->win_len = (uint16_t)((hi - lo + 7) & ~7u);
	out->w_code = (uint16_t)(o->frame_code - lo);
	out->w_previous = (uint16_t)(o->frame_previous - lo);
	out->w_instr = (uint16_t)(o->frame_instr - lo);
	out->w_entry = o->frame_is_entry == PYOFF_NONE ? SFPROF_PY_NONE :
			(uint16_t)(o->frame_is_entry - lo);
	out->w_owner = o->frame_owner == PYOFF_NONE ? SFPROF_PY_NONE :
			(uint16_t)(o->frame_owner - lo);
	out->owner_cstack = o->frame_owner_cstack == PYOFF_NONE ? SFPROF_PY_NONE :
			     (uint16_t)o->frame_owner_cstack;
	return 0;
}

/* Whether pid's image at start (inode) was counted already (st.python or
 * st.unsupported);
 * counts it when not. ASLR places two execs of one binary apart, so a
 * new image is a new count. */
static int counted_before(struct pyprocs *pp, uint32_t pid, uint64_t start, uint64_t inode)
{
	unsigned n = sizeof(pp->counted) / sizeof(pp->counted[0]);

	for (unsigned i = 0; i < n; i++)
		if (pp->counted[i].pid == pid && pp->counted[i].start == start &&
		    pp->counted[i].inode == inode)
			return 1;
	pp->counted[pp->next_counted % n].pid = pid;
	pp->counted[pp->next_counted % n].start = start;
	pp->counted[pp->next_counted % n].inode = inode;
	pp->next_counted++;
	return 0;
}

static void say_unsupported(struct pyprocs *pp, uint32_t pid, const struct pyversion_info *v,
			    int rc, const struct procmaps_entry *me)
{
	uint32_t key = v->major * 100 + v->minor;
	char what[64];

	if (!counted_before(pp, pid, me->start, me->inode))
		pp->st.unsupported++;
	for (unsigned i = 0; i < pp->nr_said; i++)
		if (pp->said[i] == key)
			return;
	if (pp->nr_said < sizeof(pp->said) / sizeof(pp->said[0]))
		pp->said[pp->nr_said++] = key;
	pyversion_describe(v, rc, what, sizeof(what));
	fprintf(stderr,
		"sfprof: process %u runs %s, which sfprof cannot read Python frames of: "
		"its stacks stay native\n", pid, what);
}

/* Look at the python-named images pid maps; 1 when one is CPython. */
static int classify(struct pyprocs *pp, struct pyproc *p)
{
	struct procmaps *m = NULL;
	int found = 0;

	pp->st.classified++;
	if (procmaps__read(p->pid, &m))
		return 0;
	for (size_t i = 0; i < m->nr && !found; i++) {
		const struct procmaps_entry *me = &m->entries[i];
		const struct pyimage *im;
		struct pyversion_info v;
		char path[128];
		int64_t bias;
		int rc;

		/* each image once: its mapping at file offset 0 */
		if (me->offset || !me->inode || me->pseudo || !pyversion_name_is_python(me->path))
			continue;
		snprintf(path, sizeof(path), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, p->pid,
			 me->start, me->end);
		im = image_of(pp, path, me->path);
		if (!im)
			continue;
		rc = im->rc;
		v = im->v;
		if (rc == -EPROTONOSUPPORT) {
			p->state = PYPROC_UNSUPPORTED;
			say_unsupported(pp, p->pid, &v, rc, me);
			found = 1;
		} else if (rc == 0 && !elfread__mapping_bias(im->e, me->start, me->offset, &bias)) {
			p->info.v = v;
			p->info.bias = bias;
			p->info.runtime = v.runtime_addr + (uint64_t)bias;
			if (pyprocs__bpf_config(v.offsets, p->info.runtime, &p->info.bpf)) {
				p->state = PYPROC_UNSUPPORTED;
				say_unsupported(pp, p->pid, &v, -EPROTONOSUPPORT, me);
			} else {
				p->state = PYPROC_PYTHON;
				if (!counted_before(pp, p->pid, me->start, me->inode))
					pp->st.python++;
				publish(pp, p);
			}
			found = 1;
		}
	}
	procmaps__free(m);
	return found;
}

const struct pyproc_info *pyprocs__check(struct pyprocs *pp, uint32_t pid)
{
	struct pyproc *p = *slot(pp, pid);

	if (!p) {
		if (!(p = add(pp, pid)))
			return NULL;
		classify(pp, p);
	}
	return p->state == PYPROC_PYTHON ? &p->info : NULL;
}

int pyprocs__probe(struct pyprocs *pp, uint32_t pid, const struct pyproc_info **info)
{
	struct pyproc *p;

	*info = NULL;
	forget(pp, pid);
	if (!(p = add(pp, pid)))
		return -ENOMEM;
	classify(pp, p);
	if (p->state == PYPROC_PYTHON) {
		*info = &p->info;
		return 1;
	}
	if (p->state == PYPROC_UNSUPPORTED)
		return -EPROTONOSUPPORT; /* (said once; stays known) */
	forget(pp, pid); /* its next event classifies it again */
	return 0;
}

void pyprocs__stats(const struct pyprocs *pp, struct pyprocs_stats *out)
{
	*out = pp->st;
}

void pyprocs_stats__print(const struct pyprocs_stats *st, FILE *f)
{
	fprintf(f, "python_processes: %" PRIu64 "\n", st->python);
	fprintf(f, "python_processes_unsupported: %" PRIu64 "\n", st->unsupported);
	if (st->set_errors)
		fprintf(f, "python_config_errors: %" PRIu64 "\n", st->set_errors);
}

// SPDX-License-Identifier: MIT
/*
 * CRuby support for one live run (include/rbsession.h).
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "capfile.h"
#include "capture.h"
#include "rboffsets.h"
#include "rbprocs.h"
#include "rbreader.h"
#include "rbsession.h"

#define RBNAMES_BUCKETS 4096
#define RBNAMES_MAX (1u << 18) /* names held; then all go, and are read again */
#define RBSNAP_WIN 512	       /* bytes of an iseq body kept */
#define RBSNAP_TABLE_MAX (1u << 20) /* bytes of one line table kept */

/*
 * An iseq as read once from its process: its names, its body's first
 * bytes and its line tables (insns_info entries, and the succinct table
 * or positions[]), so that the line of any pc in it is found later, from
 * these bytes, when the process may be gone.
 */
struct rbsnap {
	struct rbsnap *next;
	uint64_t iseq;
	uint32_t pid;
	int err;
	char *label, *path;
	int32_t first;
	uint8_t body[RBSNAP_WIN];
	struct rbsnap_range {
		uint64_t addr;
		uint8_t *bytes;
		uint32_t len;
	} ent, tab;
};

struct rbname {
	struct rbname *next;
	uint64_t iseq;
	uint32_t pid;
	int32_t instr;
	int err;	/* the read failed: not read again */
	uint32_t line, first;
	char *label, *path;
};

struct rbsession {
	pthread_mutex_t lock; /* the caches: the prefetch thread fills them too */
	struct rbsnap *snaps[RBNAMES_BUCKETS];
	uint64_t nsnaps;
	/* the prefetch thread: drains rb_new (its own dup of the fd) */
	pthread_t thread;
	int thread_on, ring_fd;
	struct ring_buffer *rb;
	atomic_int stop;
	atomic_ullong prefetched;
	struct rbprocs *procs;
	struct capture *cap;
	struct capfile_writer *w;
	struct rbname *b[RBNAMES_BUCKETS];
	uint64_t nnames, flushes, reads, read_errors, written, write_errors, reaped;
	struct rb_exited {
		uint32_t pid;
		uint64_t ts;
	} *exited;
	size_t nexited, capexited;
};

static unsigned bucket(uint32_t pid, uint64_t iseq, int32_t instr)
{
	uint64_t h = (iseq ^ ((uint64_t)pid << 40) ^ ((uint64_t)(uint32_t)instr << 8)) *
		     0x9e3779b97f4a7c15ull;

	return (unsigned)(h >> 52) % RBNAMES_BUCKETS;
}

static void name_free(struct rbname *n)
{
	free(n->label);
	free(n->path);
	free(n);
}

static void snap_free(struct rbsnap *p)
{
	free(p->label);
	free(p->path);
	free(p->ent.bytes);
	free(p->tab.bytes);
	free(p);
}

/* Drop what is known of pid's iseqs (of every process: all set). */
static void names_drop(struct rbsession *rs, uint32_t pid, int all)
{
	for (unsigned i = 0; i < RBNAMES_BUCKETS; i++) {
		for (struct rbname **s = &rs->b[i], *n; (n = *s);) {
			if (all || n->pid == pid) {
				*s = n->next;
				name_free(n);
				rs->nnames--;
			} else {
				s = &n->next;
			}
		}
		for (struct rbsnap **s = &rs->snaps[i], *n; (n = *s);) {
			if (all || n->pid == pid) {
				*s = n->next;
				snap_free(n);
				rs->nsnaps--;
			} else {
				s = &n->next;
			}
		}
	}
}

static int set_bpf(void *ctx, uint32_t tgid, const struct sfprof_rb_proc *p)
{
	struct rbsession *rs = ctx;

	return rs->cap ? capture__set_ruby(rs->cap, tgid, p) : 0;
}

static int read_pid(void *ctx, uint64_t addr, void *buf, size_t len)
{
	uint32_t pid = *(const uint32_t *)ctx;
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv((pid_t)pid, &l, 1, &r, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* rbreader_read_fn over a snapshot's tables */
static int read_snap(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct rbsnap *p = ctx;
	const struct rbsnap_range *r[2] = { &p->ent, &p->tab };

	for (int i = 0; i < 2; i++) {
		if (r[i]->bytes && addr >= r[i]->addr && len <= r[i]->len &&
		    addr - r[i]->addr <= r[i]->len - len) {
			memcpy(buf, r[i]->bytes + (addr - r[i]->addr), len);
			return 0;
		}
	}
	return -EFAULT;
}

static uint64_t win64(const uint8_t *w, uint32_t off)
{
	uint64_t v;

	memcpy(&v, w + off, sizeof(v));
	return v;
}

static uint32_t win32(const uint8_t *w, uint32_t off)
{
	uint32_t v;

	memcpy(&v, w + off, sizeof(v));
	return v;
}

/* len bytes at addr of the process into r (nothing when len is 0). */
static int keep_range(struct rbreader_src *src, uint64_t addr, uint64_t len,
		      struct rbsnap_range *r)
{
	int err;

	if (!len)
		return 0;
	if (len > RBSNAP_TABLE_MAX || !addr)
		return -EINVAL;
	if (!(r->bytes = malloc(len)))
		return -ENOMEM;
	if ((err = src->read(src->ctx, addr, r->bytes, len))) {
		free(r->bytes);
		r->bytes = NULL;
		return err;
	}
	r->addr = addr;
	r->len = (uint32_t)len;
	return 0;
}

/* label qualified by the class of method entry me (0: none): malloc'd. */
static char *qualify(const struct rbproc_info *pi, uint32_t pid, uint64_t me, const char *label,
		     const char *base_label)
{
	struct rbreader_src src = { pi->o, read_pid, &pid };
	char cls[RBREADER_STR_MAX], out[2 * RBREADER_STR_MAX];
	int cut = 0, singleton = 0;

	if (!me || rbreader__class_path(&src, pi->symbols, me, cls, sizeof(cls), &singleton,
					&cut) < 0)
		cls[0] = 0;
	rbreader__full_label(label, base_label, cls, singleton, out, sizeof(out));
	return strdup(out);
}

/* A C method's entry me of pid into p: its name, with its class. */
static int snap_cfunc(const struct rbproc_info *pi, uint32_t pid, uint64_t me, struct rbsnap *p)
{
	struct rbreader_src src = { pi->o, read_pid, &pid };
	char buf[RBREADER_STR_MAX];
	int cut = 0, err = rbreader__cfunc(&src, pi->symbols, me, buf, sizeof(buf), &cut);

	if (err < 0)
		return err;
	if (!(p->label = qualify(pi, pid, me, buf, buf)) || !(p->path = strdup("")))
		return -ENOMEM;
	return 0;
}

/* Read iseq (or a C method's entry) of pid into p: names (qualified by
 * the class of method entry me, 0: none), body, line tables. */
static int snap_read(const struct rbproc_info *pi, uint32_t pid, uint64_t iseq, uint64_t me,
		     struct rbsnap *p)
{
	const struct rboffsets *o = pi->o;
	struct rbreader_src src = { o, read_pid, &pid };
	struct rbiseq_name *nm;
	uint64_t body, nent, iseq_size, tab = 0, flags;
	int err;

	if ((err = read_pid(&pid, iseq, &flags, sizeof(flags))))
		return err;
	if ((flags & o->t_mask) == o->t_imemo &&
	    ((flags >> o->fl_ushift) & o->imemo_mask) == o->imemo_ment)
		return snap_cfunc(pi, pid, iseq, p);
	if (!(nm = malloc(sizeof(*nm))))
		return -ENOMEM;
	err = rbreader__iseq(&src, iseq, -1, nm);
	if (!err && (!(p->label = qualify(pi, pid, me, nm->label, nm->base_label)) ||
		     !(p->path = strdup(nm->path))))
		err = -ENOMEM;
	p->first = nm->first_lineno;
	free(nm);
	if (err)
		return err;
	if (o->body_window > sizeof(p->body))
		return -EINVAL;
	if ((err = read_pid(&pid, iseq + o->iseq_body, &body, sizeof(body))) ||
	    (err = read_pid(&pid, body, p->body, o->body_window)))
		return err;
	nent = win32(p->body, o->insns_size);
	iseq_size = win32(p->body, o->body_iseq_size);
	if ((err = keep_range(&src, win64(p->body, o->insns_body), nent * o->entry_size, &p->ent)))
		return err;
	if (nent < 2)
		return 0;
	if (o->lines == RBOFF_LINES_SUCC && (tab = win64(p->body, o->insns_succ))) {
		uint64_t imm = o->succ_imm_size, len;

		if (iseq_size < imm)
			len = (iseq_size + 8) / 9 * 8;
		else
			len = o->succ_part + (iseq_size - imm + 511) / 512 * o->succ_block_size;
		return keep_range(&src, tab, len, &p->tab);
	}
	return keep_range(&src, win64(p->body, o->insns_positions), nent * 4, &p->tab);
}

/* The snapshot of (pid, iseq), read now unless known; NULL: no memory.
 * me: the method entry of its frame, as the BPF walk found it; ME_ASK:
 * ask the walk's seen-set. */
#define ME_ASK (~0ull)
static struct rbsnap *snap_get(struct rbsession *rs, uint32_t pid, uint64_t iseq, uint64_t me,
			       int may_flush)
{
	unsigned h = bucket(pid, iseq, 0);
	const struct rbproc_info *pi;
	struct rbsnap *p;

	for (p = rs->snaps[h]; p; p = p->next)
		if (p->pid == pid && p->iseq == iseq)
			return p;
	/* (only the consumer's thread frees: the namer's strings are its) */
	if (rs->nsnaps >= RBNAMES_MAX && !may_flush)
		return NULL;
	if (rs->nsnaps >= RBNAMES_MAX || rs->nnames >= RBNAMES_MAX) {
		names_drop(rs, 0, 1);
		rs->flushes++;
	}
	if (!(p = calloc(1, sizeof(*p))))
		return NULL;
	p->pid = pid;
	p->iseq = iseq;
	rs->reads++;
	pi = rbprocs__info(rs->procs, pid);
	if (me == ME_ASK && (!rs->cap || capture__ruby_iseq_me(rs->cap, pid, iseq, &me)))
		me = 0;
	p->err = pi ? snap_read(pi, pid, iseq, me, p) : -ESRCH;
	if (p->err) {
		rs->read_errors++;
		free(p->label);
		free(p->path);
		p->label = p->path = NULL;
	}
	p->next = rs->snaps[h];
	rs->snaps[h] = p;
	rs->nsnaps++;
	return p;
}

/* The name of (pid, iseq, instr), made from its snapshot and kept; NULL:
 * no memory. */
static struct rbname *lookup(struct rbsession *rs, uint32_t pid, uint64_t iseq, int32_t instr)
{
	unsigned h = bucket(pid, iseq, instr);
	const struct rbproc_info *pi;
	struct rbsnap *p;
	struct rbname *n;

	for (n = rs->b[h]; n; n = n->next)
		if (n->pid == pid && n->iseq == iseq && n->instr == instr)
			return n;
	if (!(p = snap_get(rs, pid, iseq, ME_ASK, 1)) || !(n = calloc(1, sizeof(*n))))
		return NULL;
	n->pid = pid;
	n->iseq = iseq;
	n->instr = instr;
	n->err = p->err;
	if (!n->err && (!(n->label = strdup(p->label)) || !(n->path = strdup(p->path)))) {
		name_free(n);
		return NULL;
	}
	if (!n->err) {
		n->first = (uint32_t)p->first;
		n->line = n->first;
		pi = rbprocs__info(rs->procs, pid);
		if (instr >= 0 && pi) {
			struct rbreader_src src = { pi->o, read_snap, p };
			int line = rbreader__line(&src, p->body, instr ? (uint32_t)instr - 1 : 0);

			n->line = line > 0 ? (uint32_t)line : 0;
		}
		if (rs->w && capfile_writer__pyframe(rs->w, pid, iseq, instr, n->line, n->first,
						     n->label, n->path))
			rs->write_errors++;
		else if (rs->w)
			rs->written++;
	}
	n->next = rs->b[h];
	rs->b[h] = n;
	rs->nnames++;
	return n;
}

static int rb_name(void *ctx, uint32_t pid, uint64_t code, int32_t instr, const char **qualname,
		   const char **file, uint32_t *line, uint32_t *firstlineno)
{
	struct rbsession *rs = ctx;
	struct rbname *n;
	int err = 0;

	pthread_mutex_lock(&rs->lock);
	if (!(n = lookup(rs, pid, code, instr)))
		err = -ENOMEM;
	else if (n->err)
		err = n->err;
	pthread_mutex_unlock(&rs->lock);
	if (err)
		return err;
	/* (the names stay until the pid is dropped, which only this thread does) */
	*qualname = n->label;
	*file = n->path;
	*line = n->line;
	*firstlineno = n->first;
	return 0;
}

/* An iseq a process ran for the first time: read it now. */
static int on_new_iseq(void *ctx, void *data, size_t len)
{
	struct rbsession *rs = ctx;
	const struct sfprof_rb_iseq *k = data;

	if (len < sizeof(*k))
		return 0;
	pthread_mutex_lock(&rs->lock);
	snap_get(rs, k->tgid, k->iseq, k->me, 0);
	pthread_mutex_unlock(&rs->lock);
	rs->prefetched++;
	return 0;
}

static void *prefetch_main(void *arg)
{
	struct rbsession *rs = arg;

	while (!rs->stop)
		if (ring_buffer__poll(rs->rb, 20) < 0 && errno != EINTR)
			break;
	return NULL;
}

static void prefetch_stop(struct rbsession *rs)
{
	if (rs->thread_on) {
		rs->stop = 1;
		pthread_join(rs->thread, NULL);
		rs->thread_on = 0;
	}
	ring_buffer__free(rs->rb);
	rs->rb = NULL;
	if (rs->ring_fd >= 0)
		close(rs->ring_fd);
	rs->ring_fd = -1;
}

struct rbsession *rbsession__new(void)
{
	struct rbsession *rs = calloc(1, sizeof(*rs));

	if (!rs)
		return NULL;
	rs->ring_fd = -1;
	pthread_mutex_init(&rs->lock, NULL);
	if (!(rs->procs = rbprocs__new(set_bpf, rs))) {
		free(rs);
		errno = ENOMEM;
		return NULL;
	}
	return rs;
}

void rbsession__free(struct rbsession *rs)
{
	if (!rs)
		return;
	prefetch_stop(rs);
	names_drop(rs, 0, 1);
	rbprocs__free(rs->procs);
	free(rs->exited);
	pthread_mutex_destroy(&rs->lock);
	free(rs);
}

void rbsession__set_capture(struct rbsession *rs, struct capture *c)
{
	if (!rs)
		return;
	int fd;

	prefetch_stop(rs);
	rs->cap = c;
	if (!c || (fd = capture__ruby_ring(c)) < 0)
		return;
	/* a dup: the ring stays valid for the thread whatever the capture does */
	rs->ring_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (rs->ring_fd < 0 || !(rs->rb = ring_buffer__new(rs->ring_fd, on_new_iseq, rs, NULL))) {
		prefetch_stop(rs);
		return;
	}
	rs->stop = 0;
	rs->thread_on = !pthread_create(&rs->thread, NULL, prefetch_main, rs);
	if (!rs->thread_on)
		prefetch_stop(rs);
}

void rbsession__set_writer(struct rbsession *rs, struct capfile_writer *w)
{
	if (!rs)
		return;
	rs->w = w;
}

pyname_fn rbsession__namer(struct rbsession *rs, void **ctx)
{
	*ctx = rs;
	return rb_name;
}

static void attach(struct rbsession *rs, uint32_t pid)
{
	if (!rbprocs__info(rs->procs, pid))
		rbprocs__check(rs->procs, pid);
}

void rbsession__attach(struct rbsession *rs, uint32_t pid)
{
	if (!rs)
		return;
	pthread_mutex_lock(&rs->lock);
	attach(rs, pid);
	pthread_mutex_unlock(&rs->lock);
}

void rbsession__event(struct rbsession *rs, const struct sfprof_event *e)
{
	if (!rs)
		return;
	const struct sfprof_py_section *sec;
	int bad = 0;

	if (e->kind == SFPROF_EV_FORK || e->kind == SFPROF_EV_EXIT)
		return;
	pthread_mutex_lock(&rs->lock);
	attach(rs, e->pid);
	/* name the frames while the process lives (and, recording, before
	 * the event is written) */
	if ((sec = pymerge__section(e, &bad)) && (sec->flags & SFPROF_PYS_RUBY))
		for (uint32_t i = 0; i < sec->nframes; i++)
			lookup(rs, e->pid, sec->frames[i].code, sec->frames[i].instr);
	pthread_mutex_unlock(&rs->lock);
}

static void unexit(struct rbsession *rs, uint32_t pid)
{
	for (size_t i = 0; i < rs->nexited; i++)
		if (rs->exited[i].pid == pid)
			rs->exited[i--] = rs->exited[--rs->nexited];
}

void rbsession__fork(struct rbsession *rs, uint32_t ppid, uint32_t pid)
{
	if (!rs)
		return;
	pthread_mutex_lock(&rs->lock);
	unexit(rs, pid);
	names_drop(rs, pid, 0);
	rbprocs__fork(rs->procs, ppid, pid);
	pthread_mutex_unlock(&rs->lock);
}

void rbsession__exec(struct rbsession *rs, uint32_t pid)
{
	if (!rs)
		return;
	pthread_mutex_lock(&rs->lock);
	unexit(rs, pid);
	names_drop(rs, pid, 0);
	rbprocs__exec(rs->procs, pid);
	pthread_mutex_unlock(&rs->lock);
}

void rbsession__exit(struct rbsession *rs, uint32_t pid, uint64_t ts)
{
	if (!rs)
		return;
	pthread_mutex_lock(&rs->lock);
	rbprocs__exit(rs->procs, pid);
	/* the names stay until rbsession__reap: events in flight need them */
	unexit(rs, pid);
	if (rs->nexited == rs->capexited) {
		size_t c = rs->capexited ? 2 * rs->capexited : 64;
		struct rb_exited *v = realloc(rs->exited, c * sizeof(*v));

		if (v) {
			rs->exited = v;
			rs->capexited = c;
		}
	}
	if (rs->nexited < rs->capexited)
		rs->exited[rs->nexited++] = (struct rb_exited){ pid, ts ? ts : 1 };
	pthread_mutex_unlock(&rs->lock);
}

size_t rbsession__reap(struct rbsession *rs, uint64_t before)
{
	if (!rs)
		return 0;
	size_t n = 0;

	pthread_mutex_lock(&rs->lock);
	for (size_t i = 0; i < rs->nexited; i++) {
		if (rs->exited[i].ts > before)
			continue;
		names_drop(rs, rs->exited[i].pid, 0);
		rs->exited[i--] = rs->exited[--rs->nexited];
		n++;
	}
	rs->reaped += n;
	pthread_mutex_unlock(&rs->lock);
	return n;
}

void rbsession__print_stats(const struct rbsession *rs, FILE *f)
{
	if (!rs)
		return;
	pthread_mutex_t *lock = (pthread_mutex_t *)&rs->lock;
	struct rbprocs_stats st;

	pthread_mutex_lock(lock);
	rbprocs__stats(rs->procs, &st);
	if (!st.ruby && !st.no_vm && !st.unsupported && !st.no_tls) {
		pthread_mutex_unlock(lock);
		return;
	}
#define P(name, v) fprintf(f, "%s: %" PRIu64 "\n", name, (uint64_t)(v))
	P("ruby_processes", st.ruby);
	P("ruby_processes_no_vm", st.no_vm);
	P("ruby_processes_unsupported", st.unsupported);
	P("ruby_processes_no_tls", st.no_tls);
	if (st.no_symbols)
		P("ruby_processes_no_symbols", st.no_symbols);
	if (st.set_errors)
		P("ruby_config_errors", st.set_errors);
	P("ruby_iseq_reads", rs->reads);
	P("ruby_iseq_prefetched", rs->prefetched);
	P("ruby_iseq_read_errors", rs->read_errors);
	P("ruby_names", rs->nnames);
	if (rs->flushes)
		P("ruby_names_flushed", rs->flushes);
	if (rs->w)
		P("ruby_names_recorded", rs->written);
	if (rs->write_errors)
		P("ruby_names_write_errors", rs->write_errors);
#undef P
	pthread_mutex_unlock(lock);
}

void rbsession__task(struct rbsession *rs, const struct sfprof_event *e)
{
	if (rs && e->kind == SFPROF_EV_FORK)
		rbsession__fork(rs, e->ppid, e->pid);
	else if (rs && e->kind == SFPROF_EV_EXIT)
		rbsession__exit(rs, e->pid, e->ts_ns);
}

// SPDX-License-Identifier: MIT
/*
 * CRuby's interp_kind: its processes, iseq snapshots and prefetch thread (src/runtimes/ruby/rbsession.h).
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "capfile/capfile.h"
#include "capture/capture.h"
#include "capture/ring_thread.h"
#include "runtimes/ruby/rboffsets.h"
#include "runtimes/ruby/rbprocs.h"
#include "runtimes/ruby/rbreader.h"
#include "runtimes/interp/interpsession.h"
#include "runtimes/ruby/rbsession.h"

#define RBSNAP_BUCKETS 4096
#define RBSNAP_MAX (1u << 18) /* snapshots held; then all go, and are read again */
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

/* CRuby's state in an interpreter session (interpsession.h); the
 * session's lock guards it, the prefetch thread takes it too. */
struct rbsession {
	struct interp_session *is;
	struct rbsnap *snaps[RBSNAP_BUCKETS];
	uint64_t nsnaps, snap_flushes, reads, read_errors;
	/* the prefetch thread: drains rb_new */
	struct ring_thread thread;
	atomic_ullong prefetched;
	struct rbprocs *procs;
};

static unsigned bucket(uint32_t pid, uint64_t iseq)
{
	uint64_t h = (iseq ^ ((uint64_t)pid << 40)) * 0x9e3779b97f4a7c15ull;

	return (unsigned)(h >> 52) % RBSNAP_BUCKETS;
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
static void snaps_drop(void *st, uint32_t pid, int all)
{
	struct rbsession *rs = st;

	/* (asked at every fork, exec and exit: none held, no pass) */
	for (unsigned i = 0; rs->nsnaps && i < RBSNAP_BUCKETS; i++) {
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
	struct capture *c = interp__capture(rs->is);

	return c ? capture__set_runtime_proc(c, SFPROF_RT_RUBY, "rb_procs", tgid, p, sizeof(*p)) : 0;
}

#define read_pid interp__read_pid

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

/* The method entry the BPF walk found for the frame of process pid's
 * iseq when it first saw it (rb_seen, bpf/ruby.bpf.h): 0 with *me (0:
 * none found), -ENOENT (not seen, or forgotten), -errno. */
static int seen_me(struct capture *c, uint32_t pid, uint64_t iseq, uint64_t *me)
{
	struct sfprof_py_code k = { .tgid = pid, .code = iseq };
	int fd = capture__runtime_map(c, SFPROF_RT_RUBY, "rb_seen");

	if (fd < 0)
		return fd;
	return bpf_map_lookup_elem(fd, &k, me) ? -errno : 0;
}

/* The snapshot of (pid, iseq), read now unless known; NULL: no memory.
 * me: the method entry of its frame, as the BPF walk found it; ME_ASK:
 * ask the walk's seen-set. */
#define ME_ASK (~0ull)
static struct rbsnap *snap_get(struct rbsession *rs, uint32_t pid, uint64_t iseq, uint64_t me,
			       int may_flush)
{
	unsigned h = bucket(pid, iseq);
	const struct rbproc_info *pi;
	struct capture *c = interp__capture(rs->is);
	struct rbsnap *p;

	for (p = rs->snaps[h]; p; p = p->next)
		if (p->pid == pid && p->iseq == iseq)
			return p;
	/* (only the consumer's thread flushes) */
	if (rs->nsnaps >= RBSNAP_MAX && !may_flush)
		return NULL;
	if (rs->nsnaps >= RBSNAP_MAX) {
		snaps_drop(rs, 0, 1);
		rs->snap_flushes++;
	}
	if (!(p = calloc(1, sizeof(*p))))
		return NULL;
	p->pid = pid;
	p->iseq = iseq;
	rs->reads++;
	pi = rbprocs__info(rs->procs, pid);
	if (me == ME_ASK && (!c || seen_me(c, pid, iseq, &me)))
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

/* interp_kind.read: the names of (pid, iseq, instr) from its snapshot. */
static int rb_read(void *st, uint32_t pid, uint64_t iseq, int32_t instr, struct interp_frame *out)
{
	struct rbsession *rs = st;
	const struct rbproc_info *pi;
	struct rbsnap *p;

	if (!(p = snap_get(rs, pid, iseq, ME_ASK, 1)))
		return -ENOMEM;
	if (p->err)
		return p->err;
	out->first = (uint32_t)p->first;
	out->line = out->first;
	pi = rbprocs__info(rs->procs, pid);
	if (instr >= 0 && pi) {
		struct rbreader_src src = { pi->o, read_snap, p };
		int line = rbreader__line(&src, p->body, instr ? (uint32_t)instr - 1 : 0);

		out->line = line > 0 ? (uint32_t)line : 0;
	}
	out->name = strdup(p->label);
	out->file = strdup(p->path);
	return 0;
}

/* An iseq a process ran for the first time: read it now. */
static int on_new_iseq(void *ctx, void *data, size_t len)
{
	struct rbsession *rs = ctx;
	const struct sfprof_rb_iseq *k = data;

	if (len < sizeof(*k))
		return 0;
	interp__lock(rs->is);
	snap_get(rs, k->tgid, k->iseq, k->me, 0);
	interp__unlock(rs->is);
	rs->prefetched++;
	return 0;
}

static void *rb_state_new(struct interp_session *is)
{
	struct rbsession *rs = calloc(1, sizeof(*rs));

	if (!rs)
		return NULL;
	rs->is = is;
	if (!(rs->procs = rbprocs__new(set_bpf, rs))) {
		free(rs);
		errno = ENOMEM;
		return NULL;
	}
	return rs;
}

static void rb_state_free(void *st)
{
	struct rbsession *rs = st;

	ring_thread__close(&rs->thread);
	snaps_drop(rs, 0, 1);
	rbprocs__free(rs->procs);
	free(rs);
}

/* The capture (NULL: gone): the prefetch thread drains its rb_new. */
static void rb_set_capture(void *st, struct capture *c)
{
	struct rbsession *rs = st;
	int fd;

	ring_thread__close(&rs->thread);
	if (c && (fd = capture__runtime_map(c, SFPROF_RT_RUBY, "rb_new")) >= 0)
		ring_thread__open(&rs->thread, fd, on_new_iseq, rs);
}

static void rb_attach(void *st, uint32_t pid)
{
	struct rbsession *rs = st;

	if (!rbprocs__info(rs->procs, pid))
		rbprocs__check(rs->procs, pid);
}

static void rb_fork(void *st, uint32_t ppid, uint32_t pid)
{
	rbprocs__fork(((struct rbsession *)st)->procs, ppid, pid);
}

static void rb_exec(void *st, uint32_t pid)
{
	rbprocs__exec(((struct rbsession *)st)->procs, pid);
}

static void rb_exit(void *st, uint32_t pid)
{
	rbprocs__exit(((struct rbsession *)st)->procs, pid);
}

static bool rb_seen(const void *st)
{
	struct rbprocs_stats ps;

	rbprocs__stats(((const struct rbsession *)st)->procs, &ps);
	return ps.ruby || ps.no_vm || ps.unsupported || ps.no_tls;
}

static void rb_print_stats(const void *st, FILE *f)
{
	const struct rbsession *rs = st;
	struct rbprocs_stats ps;

	rbprocs__stats(rs->procs, &ps);
#define P(name, v) fprintf(f, "%s: %" PRIu64 "\n", name, (uint64_t)(v))
	P("ruby_processes", ps.ruby);
	P("ruby_processes_no_vm", ps.no_vm);
	P("ruby_processes_unsupported", ps.unsupported);
	P("ruby_processes_no_tls", ps.no_tls);
	if (ps.no_symbols)
		P("ruby_processes_no_symbols", ps.no_symbols);
	if (ps.set_errors)
		P("ruby_config_errors", ps.set_errors);
	P("ruby_iseq_reads", rs->reads);
	P("ruby_iseq_prefetched", rs->prefetched);
	P("ruby_iseq_read_errors", rs->read_errors);
	if (rs->snap_flushes)
		P("ruby_iseqs_flushed", rs->snap_flushes);
#undef P
}

const struct interp_kind rbsession_kind = {
	.name = "ruby",
	.section_flag = SFPROF_PYS_RUBY,
	.state_new = rb_state_new,
	.state_free = rb_state_free,
	.set_capture = rb_set_capture,
	.attach = rb_attach,
	.fork = rb_fork,
	.exec = rb_exec,
	.exit = rb_exit,
	.drop = snaps_drop,
	.read = rb_read,
	.seen = rb_seen,
	.print_stats = rb_print_stats,
};

// SPDX-License-Identifier: MIT
/*
 * CRuby support for one live run (include/rbsession.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "capfile.h"
#include "capture.h"
#include "rboffsets.h"
#include "rbprocs.h"
#include "rbreader.h"
#include "rbsession.h"

#define RBNAMES_BUCKETS 4096
#define RBNAMES_MAX (1u << 18) /* names held; then all go, and are read again */

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

/* Drop the names of pid (all: pid 0 and all set). */
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
	}
}

static int set_bpf(void *ctx, uint32_t tgid, const struct sfprof_rb_proc *p)
{
	struct rbsession *rs = ctx;

	return rs->cap ? capture__set_ruby(rs->cap, tgid, p) : 0;
}

struct rbsession *rbsession__new(void)
{
	struct rbsession *rs = calloc(1, sizeof(*rs));

	if (!rs)
		return NULL;
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
	names_drop(rs, 0, 1);
	rbprocs__free(rs->procs);
	free(rs->exited);
	free(rs);
}

void rbsession__set_capture(struct rbsession *rs, struct capture *c)
{
	rs->cap = c;
}

void rbsession__set_writer(struct rbsession *rs, struct capfile_writer *w)
{
	rs->w = w;
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

/* The name of (pid, iseq, instr), read now and kept; NULL: no memory. */
static struct rbname *lookup(struct rbsession *rs, uint32_t pid, uint64_t iseq, int32_t instr)
{
	unsigned h = bucket(pid, iseq, instr);
	const struct rbproc_info *pi;
	struct rbiseq_name nm;
	struct rbname *n;

	for (n = rs->b[h]; n; n = n->next)
		if (n->pid == pid && n->iseq == iseq && n->instr == instr)
			return n;
	if (rs->nnames >= RBNAMES_MAX) {
		names_drop(rs, 0, 1);
		rs->flushes++;
	}
	if (!(n = calloc(1, sizeof(*n))))
		return NULL;
	n->pid = pid;
	n->iseq = iseq;
	n->instr = instr;
	rs->reads++;
	if (!(pi = rbprocs__info(rs->procs, pid))) {
		n->err = -ESRCH;
	} else {
		struct rbreader_src src = { pi->o, read_pid, &pid };

		n->err = rbreader__iseq(&src, iseq, instr, &nm);
	}
	if (!n->err && (!(n->label = strdup(nm.label)) || !(n->path = strdup(nm.path)))) {
		name_free(n);
		return NULL;
	}
	if (n->err) {
		rs->read_errors++;
	} else {
		n->line = (uint32_t)nm.line;
		n->first = (uint32_t)nm.first_lineno;
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
	struct rbname *n = lookup(ctx, pid, code, instr);

	if (!n)
		return -ENOMEM;
	if (n->err)
		return n->err;
	*qualname = n->label;
	*file = n->path;
	*line = n->line;
	*firstlineno = n->first;
	return 0;
}

pyname_fn rbsession__namer(struct rbsession *rs, void **ctx)
{
	*ctx = rs;
	return rb_name;
}

void rbsession__attach(struct rbsession *rs, uint32_t pid)
{
	if (!rbprocs__info(rs->procs, pid))
		rbprocs__check(rs->procs, pid);
}

void rbsession__event(struct rbsession *rs, const struct sfprof_event *e)
{
	const struct sfprof_py_section *sec;
	int bad = 0;

	if (e->kind == SFPROF_EV_FORK || e->kind == SFPROF_EV_EXIT)
		return;
	rbsession__attach(rs, e->pid);
	/* name the frames while the process lives (and, recording, before
	 * the event is written) */
	if (!(sec = pymerge__section(e, &bad)) || !(sec->flags & SFPROF_PYS_RUBY))
		return;
	for (uint32_t i = 0; i < sec->nframes; i++)
		lookup(rs, e->pid, sec->frames[i].code, sec->frames[i].instr);
}

static void unexit(struct rbsession *rs, uint32_t pid)
{
	for (size_t i = 0; i < rs->nexited; i++)
		if (rs->exited[i].pid == pid)
			rs->exited[i--] = rs->exited[--rs->nexited];
}

void rbsession__fork(struct rbsession *rs, uint32_t ppid, uint32_t pid)
{
	unexit(rs, pid);
	names_drop(rs, pid, 0);
	rbprocs__fork(rs->procs, ppid, pid);
}

void rbsession__exec(struct rbsession *rs, uint32_t pid)
{
	unexit(rs, pid);
	names_drop(rs, pid, 0);
	rbprocs__exec(rs->procs, pid);
}

void rbsession__exit(struct rbsession *rs, uint32_t pid, uint64_t ts)
{
	rbprocs__exit(rs->procs, pid);
	/* the names stay until rbsession__reap: events in flight need them */
	unexit(rs, pid);
	if (rs->nexited == rs->capexited) {
		size_t c = rs->capexited ? 2 * rs->capexited : 64;
		struct rb_exited *v = realloc(rs->exited, c * sizeof(*v));

		if (!v)
			return;
		rs->exited = v;
		rs->capexited = c;
	}
	rs->exited[rs->nexited++] = (struct rb_exited){ pid, ts ? ts : 1 };
}

size_t rbsession__reap(struct rbsession *rs, uint64_t before)
{
	size_t n = 0;

	for (size_t i = 0; i < rs->nexited; i++) {
		if (rs->exited[i].ts > before)
			continue;
		names_drop(rs, rs->exited[i].pid, 0);
		rs->exited[i--] = rs->exited[--rs->nexited];
		n++;
	}
	rs->reaped += n;
	return n;
}

void rbsession__print_stats(const struct rbsession *rs, FILE *f)
{
	struct rbprocs_stats st;

	rbprocs__stats(rs->procs, &st);
	if (!st.ruby && !st.no_vm && !st.unsupported && !st.no_tls)
		return;
#define P(name, v) fprintf(f, "%s: %" PRIu64 "\n", name, (uint64_t)(v))
	P("ruby_processes", st.ruby);
	P("ruby_processes_no_vm", st.no_vm);
	P("ruby_processes_unsupported", st.unsupported);
	P("ruby_processes_no_tls", st.no_tls);
	if (st.set_errors)
		P("ruby_config_errors", st.set_errors);
	P("ruby_iseq_reads", rs->reads);
	P("ruby_iseq_read_errors", rs->read_errors);
	P("ruby_names", rs->nnames);
	if (rs->flushes)
		P("ruby_names_flushed", rs->flushes);
	if (rs->w)
		P("ruby_names_recorded", rs->written);
	if (rs->write_errors)
		P("ruby_names_write_errors", rs->write_errors);
#undef P
}

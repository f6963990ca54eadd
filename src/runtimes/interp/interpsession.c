// SPDX-License-Identifier: MIT
/*
 * An interpreter's session for one live run (src/runtimes/interp/interpsession.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "capfile/capfile.h"
#include "runtimes/interp/interpsession.h"
#include "runtimes/python/pymerge.h"
#include "sfprof_event.h"
#include "util.h"

#define NAMES_BUCKETS 4096
#define NAMES_MAX (1u << 18) /* names held; then all go, and are read again */

struct iname {
	struct iname *next;
	uint64_t code;
	uint32_t pid;
	int32_t instr;
	int err; /* the read failed: read again from INAME_RETRY_NS after */
	int unrecorded; /* read by a prefetch thread: its record is not written yet */
	int err_prefetch; /* the failed read was a prefetch thread's */
	uint64_t read_ns; /* when it was read */
	struct interp_frame f;
};

struct interp_session {
	const struct interp_kind *k;
	void *st;
	pthread_mutex_t lock;
	struct capture *cap;
	struct capfile_writer *w;
	struct iname *b[NAMES_BUCKETS];
	uint64_t nnames, flushes, reads, read_errors, written, write_errors, reaped;
	uint64_t prefetched, prefetch_full;
	struct iexited {
		uint32_t pid;
		uint64_t ts;
	} *exited;
	size_t nexited, capexited;
};

int interp__read_pid(void *ctx, uint64_t addr, void *buf, size_t len)
{
	uint32_t pid = *(const uint32_t *)ctx;
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv((pid_t)pid, &l, 1, &r, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

static unsigned bucket(uint32_t pid, uint64_t code, int32_t instr)
{
	uint64_t h = (code ^ ((uint64_t)pid << 40) ^ ((uint64_t)(uint32_t)instr << 8)) *
		     0x9e3779b97f4a7c15ull;

	return (unsigned)(h >> 52) % NAMES_BUCKETS;
}

static void name_free(struct iname *n)
{
	free(n->f.name);
	free(n->f.file);
	free(n);
}

/* Drop the names of pid (of every process: all), the kind's caches too. */
static void names_drop(struct interp_session *s, uint32_t pid, int all)
{
	/* (every fork, exec and exit of the machine asks: with no names
	 * held, not a pass over the NAMES_BUCKETS buckets) */
	for (unsigned i = 0; s->nnames && i < NAMES_BUCKETS; i++) {
		for (struct iname **p = &s->b[i], *n; (n = *p);) {
			if (all || n->pid == pid) {
				*p = n->next;
				name_free(n);
				s->nnames--;
			} else {
				p = &n->next;
			}
		}
	}
	if (s->k->drop)
		s->k->drop(s->st, pid, all);
}

/*
 * A read that failed is tried again at a later sample, not kept for good:
 * it may have come at a bad moment (PHP-FPM frees a request's op_arrays at
 * its end and compiles the next request's where they were, so a late read
 * of {main} can fail while the next request runs the same code there).
 * Kept, one failure made every later sample of that frame unreadable: 43%
 * of a loaded php_fpm run's samples. At most one retry per frame per
 * INAME_RETRY_NS.
 */
#define INAME_RETRY_NS (20ull * 1000 * 1000)

/* n's PYFRAME record into the capture (the consumer's thread only). */
static void name_record(struct interp_session *s, struct iname *n)
{
	n->unrecorded = 0;
	if (capfile_writer__pyframe(s->w, n->pid, n->code, n->instr, n->f.line, n->f.first,
				    n->f.name, n->f.file))
		s->write_errors++;
	else
		s->written++;
}

/* Read n's name now, recording it in the capture when it reads (on the
 * consumer's thread: `prefetch` leaves the record to its next lookup). */
static void name_read(struct interp_session *s, struct iname *n, int prefetch)
{
	s->reads++;
	n->read_ns = util__now_ns();
	n->err = s->k->read(s->st, n->pid, n->code, n->instr, &n->f);
	if (!n->err && (!n->f.name || !n->f.file))
		n->err = -EINVAL; /* (a read with no name is a failure too) */
	n->err_prefetch = n->err && prefetch;
	if (n->err) {
		free(n->f.name);
		free(n->f.file);
		memset(&n->f, 0, sizeof(n->f));
		s->read_errors++;
	} else if (s->w) {
		if (prefetch)
			n->unrecorded = 1;
		else
			name_record(s, n);
	}
}

/*
 * The name of (pid, code, instr), read now unless known; NULL: no memory.
 * From a prefetch thread (`prefetch`), also NULL when the names are full:
 * only the consumer's thread frees names (the namer's strings stay valid).
 */
static struct iname *lookup(struct interp_session *s, uint32_t pid, uint64_t code, int32_t instr,
			    int prefetch)
{
	unsigned h = bucket(pid, code, instr);
	struct iname *n;

	for (n = s->b[h]; n; n = n->next)
		if (n->pid == pid && n->code == code && n->instr == instr) {
			/* (a prefetch's failure: the consumer reads it as if
			 * it were new, as it did before prefetches) */
			if (n->err && ((n->err_prefetch && !prefetch) ||
				       util__now_ns() - n->read_ns >= INAME_RETRY_NS))
				name_read(s, n, prefetch);
			if (n->unrecorded && !prefetch)
				name_record(s, n);
			return n;
		}
	if (s->nnames >= NAMES_MAX) {
		if (prefetch)
			return NULL;
		names_drop(s, 0, 1);
		s->flushes++;
	}
	if (!(n = calloc(1, sizeof(*n))))
		return NULL;
	n->pid = pid;
	n->code = code;
	n->instr = instr;
	name_read(s, n, prefetch);
	s->prefetched += !!prefetch;
	n->next = s->b[h];
	s->b[h] = n;
	s->nnames++;
	return n;
}

static int name_of(void *ctx, uint32_t pid, uint64_t code, int32_t instr, const char **qualname,
		   const char **file, uint32_t *line, uint32_t *firstlineno)
{
	struct interp_session *s = ctx;
	struct iname *n;
	int err = 0;

	pthread_mutex_lock(&s->lock);
	if (!(n = lookup(s, pid, code, instr, 0)))
		err = -ENOMEM;
	else if (n->err)
		err = n->err;
	pthread_mutex_unlock(&s->lock);
	if (err)
		return err;
	/* (the names stay until the pid is dropped, which only this thread does) */
	*qualname = n->f.name;
	*file = n->f.file;
	*line = n->f.line;
	*firstlineno = n->f.first;
	return 0;
}

struct interp_session *interp__new(const struct interp_kind *k)
{
	struct interp_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->k = k;
	pthread_mutex_init(&s->lock, NULL);
	if (!(s->st = k->state_new(s))) {
		int err = errno ? errno : ENOMEM;

		pthread_mutex_destroy(&s->lock);
		free(s);
		errno = err;
		return NULL;
	}
	return s;
}

void interp__free(void *ss)
{
	struct interp_session *s = ss;

	if (!s)
		return;
	if (s->k->set_capture)
		s->k->set_capture(s->st, NULL);
	names_drop(s, 0, 1);
	s->k->state_free(s->st);
	free(s->exited);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void *interp__state(const struct interp_session *s)
{
	return s->st;
}

struct capture *interp__capture(const struct interp_session *s)
{
	return s->cap;
}

void interp__lock(struct interp_session *s)
{
	pthread_mutex_lock(&s->lock);
}

void interp__unlock(struct interp_session *s)
{
	pthread_mutex_unlock(&s->lock);
}

void interp__set_capture(void *ss, struct capture *c)
{
	struct interp_session *s = ss;

	if (!s)
		return;
	/* (the kind's threads may wait for the lock: not held here) */
	if (s->k->set_capture && !c)
		s->k->set_capture(s->st, NULL);
	pthread_mutex_lock(&s->lock);
	s->cap = c;
	pthread_mutex_unlock(&s->lock);
	if (s->k->set_capture && c)
		s->k->set_capture(s->st, c);
}

void interp__set_writer(void *ss, struct capfile_writer *w)
{
	struct interp_session *s = ss;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->w = w;
	pthread_mutex_unlock(&s->lock);
}

void interp__attach(void *ss, uint32_t pid)
{
	struct interp_session *s = ss;

	if (!s || !s->k->attach)
		return;
	pthread_mutex_lock(&s->lock);
	s->k->attach(s->st, pid);
	pthread_mutex_unlock(&s->lock);
}

void interp__prefetch(struct interp_session *s, uint32_t pid, uint64_t code, int32_t instr)
{
	pthread_mutex_lock(&s->lock);
	if (!lookup(s, pid, code, instr, 1))
		s->prefetch_full++;
	pthread_mutex_unlock(&s->lock);
}

void interp__event(void *ss, const struct sfprof_event *e)
{
	struct interp_session *s = ss;
	const struct sfprof_py_section *sec;
	int bad = 0;

	if (!s || e->kind == SFPROF_EV_FORK || e->kind == SFPROF_EV_EXIT)
		return;
	pthread_mutex_lock(&s->lock);
	if (s->k->attach)
		s->k->attach(s->st, e->pid);
	/* name the frames while the process lives (and, recording, before
	 * the event is written) */
	if ((sec = pymerge__section(e, &bad)) && (sec->flags & s->k->section_flag))
		for (uint32_t i = 0; i < sec->nframes; i++)
			lookup(s, e->pid, sec->frames[i].code, sec->frames[i].instr, 0);
	pthread_mutex_unlock(&s->lock);
}

static void unexit(struct interp_session *s, uint32_t pid)
{
	for (size_t i = 0; i < s->nexited; i++)
		if (s->exited[i].pid == pid)
			s->exited[i--] = s->exited[--s->nexited];
}

/* A process starts anew (fork: its parent's image; exec: its own):
 * what was known of pid goes, then the kind hears of it. */
static void restart(struct interp_session *s, uint32_t ppid, uint32_t pid, int exec)
{
	pthread_mutex_lock(&s->lock);
	unexit(s, pid);
	names_drop(s, pid, 0);
	if (exec && s->k->exec)
		s->k->exec(s->st, pid);
	else if (!exec && s->k->fork)
		s->k->fork(s->st, ppid, pid);
	pthread_mutex_unlock(&s->lock);
}

void interp__fork(void *ss, uint32_t ppid, uint32_t pid)
{
	if (ss)
		restart(ss, ppid, pid, 0);
}

void interp__exec(void *ss, uint32_t pid)
{
	if (ss)
		restart(ss, 0, pid, 1);
}

void interp__exit(void *ss, uint32_t pid, uint64_t ts)
{
	struct interp_session *s = ss;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	if (s->k->exit)
		s->k->exit(s->st, pid);
	/* the names stay until interp__reap: events in flight need them */
	unexit(s, pid);
	if (s->nexited == s->capexited) {
		size_t c = s->capexited ? 2 * s->capexited : 64;
		struct iexited *v = realloc(s->exited, c * sizeof(*v));

		if (v) {
			s->exited = v;
			s->capexited = c;
		}
	}
	if (s->nexited < s->capexited)
		s->exited[s->nexited++] = (struct iexited){ pid, ts ? ts : 1 };
	pthread_mutex_unlock(&s->lock);
}

void interp__task(void *ss, const struct sfprof_event *e)
{
	struct interp_session *s = ss;

	if (s && e->kind == SFPROF_EV_FORK)
		interp__fork(s, e->fork.ppid, e->pid);
	else if (s && e->kind == SFPROF_EV_EXIT)
		interp__exit(s, e->pid, e->ts_ns);
}

void interp__reap(void *ss, uint64_t before)
{
	struct interp_session *s = ss;
	size_t n = 0;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->nexited; i++) {
		if (s->exited[i].ts > before)
			continue;
		names_drop(s, s->exited[i].pid, 0);
		s->exited[i--] = s->exited[--s->nexited];
		n++;
	}
	s->reaped += n;
	pthread_mutex_unlock(&s->lock);
}

void interp__print_stats(const void *ss, FILE *f)
{
	const struct interp_session *s = ss;
	const struct interp_kind *k;
	pthread_mutex_t *lock;

	if (!s)
		return;
	k = s->k;
	lock = (pthread_mutex_t *)&s->lock;
	pthread_mutex_lock(lock);
	if (k->seen && !k->seen(s->st)) {
		pthread_mutex_unlock(lock);
		return;
	}
	if (k->print_stats)
		k->print_stats(s->st, f);
#define PK(word, v) fprintf(f, "%s_%s: %" PRIu64 "\n", k->name, word, (uint64_t)(v))
	PK("frame_reads", s->reads);
	PK("frame_read_errors", s->read_errors);
	PK("names", s->nnames);
	if (s->prefetched)
		PK("names_prefetched", s->prefetched);
	if (s->prefetch_full)
		PK("names_prefetch_full", s->prefetch_full);
	if (s->flushes)
		PK("names_flushed", s->flushes);
	if (s->w)
		PK("names_recorded", s->written);
	if (s->write_errors)
		PK("names_write_errors", s->write_errors);
#undef PK
	pthread_mutex_unlock(lock);
}

runtime_name_fn interp__namer(void *ss, void **ctx)
{
	*ctx = ss;
	return name_of;
}

int interp__session_new(const struct interp_kind *k, int live, void **out)
{
	*out = NULL;
	if (!live)
		return 0;
	*out = interp__new(k);
	return *out ? 0 : -ENOMEM;
}


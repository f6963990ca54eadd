// SPDX-License-Identifier: MIT
/*
 * Names of Python frames (src/runtimes/python/pynames.h): an open-addressing table
 * by (pid, code, instr), grown at half full, its strings malloc()ed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/python/pynames.h"
#include "runtimes/python/pyreader.h"

struct pyname {
	uint64_t code;
	uint32_t pid;
	int32_t instr;
	uint32_t line;
	uint32_t firstlineno; /* 0 = unknown */
	uint32_t used;	/* 1: set; 0: empty */
	char *qualname; /* NULL: could not be named */
	char *file;
};

struct pynames {
	struct pyname *t;
	size_t cap, nr; /* cap a power of two */
	struct pyreader *r;
	pthread_mutex_t lock; /* the reader's: the prefetch thread uses it too */
	pynames_new_fn fn;
	void *fn_ctx;
};

struct pynames *pynames__new(struct pyreader *r)
{
	struct pynames *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->r = r;
	pthread_mutex_init(&n->lock, NULL);
	return n;
}

void pynames__lock(struct pynames *n)
{
	pthread_mutex_lock(&n->lock);
}

void pynames__unlock(struct pynames *n)
{
	pthread_mutex_unlock(&n->lock);
}

int pynames__prefetch(struct pynames *n, uint32_t pid, uint64_t code)
{
	struct pycode_frame f;
	int rc;

	if (!n->r)
		return -ENOENT;
	pthread_mutex_lock(&n->lock);
	rc = pycode_name(n->r, pid, code, 0, &f);
	pthread_mutex_unlock(&n->lock);
	return rc;
}

static void entry_free(struct pyname *e)
{
	free(e->qualname);
	free(e->file);
	memset(e, 0, sizeof(*e));
}

void pynames__free(struct pynames *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->cap; i++)
		if (n->t[i].used)
			entry_free(&n->t[i]);
	free(n->t);
	pthread_mutex_destroy(&n->lock);
	free(n);
}

void pynames__set_observer(struct pynames *n, pynames_new_fn fn, void *ctx)
{
	n->fn = fn;
	n->fn_ctx = ctx;
}

uint64_t pynames__count(const struct pynames *n)
{
	return n->nr;
}

static size_t hash(uint32_t pid, uint64_t code, int32_t instr)
{
	uint64_t h = (code ^ ((uint64_t)pid << 47) ^ ((uint64_t)(uint32_t)instr << 13)) *
		     0x9e3779b97f4a7c15ull;

	return (size_t)(h ^ (h >> 29));
}

static struct pyname *find(const struct pynames *n, uint32_t pid, uint64_t code, int32_t instr)
{
	if (!n->cap)
		return NULL;
	for (size_t j = hash(pid, code, instr) & (n->cap - 1);; j = (j + 1) & (n->cap - 1)) {
		struct pyname *e = &n->t[j];

		if (!e->used)
			return NULL;
		if (e->pid == pid && e->code == code && e->instr == instr)
			return e;
	}
}

static int grow(struct pynames *n)
{
	size_t cap = n->cap ? n->cap * 2 : 1024;
	struct pyname *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < n->cap; i++) {
		const struct pyname *e = &n->t[i];
		size_t j;

		if (!e->used)
			continue;
		for (j = hash(e->pid, e->code, e->instr) & (cap - 1); t[j].used; j = (j + 1) & (cap - 1))
			;
		t[j] = *e;
	}
	free(n->t);
	n->t = t;
	n->cap = cap;
	return 0;
}

static struct pyname *put(struct pynames *n, uint32_t pid, uint64_t code, int32_t instr,
			  uint32_t line, uint32_t first, const char *qualname, const char *file)
{
	struct pyname *e = find(n, pid, code, instr);
	char *q = NULL, *f = NULL;

	if (qualname && (!(q = strdup(qualname)) || !(f = strdup(file ? file : "")))) {
		free(q);
		return NULL;
	}
	if (!e) {
		if ((n->nr + 1) * 2 > n->cap && grow(n)) {
			free(q);
			free(f);
			return NULL;
		}
		size_t j = hash(pid, code, instr) & (n->cap - 1);

		while (n->t[j].used)
			j = (j + 1) & (n->cap - 1);
		e = &n->t[j];
		n->nr++;
	} else {
		free(e->qualname);
		free(e->file);
	}
	*e = (struct pyname){ code, pid, instr, line, first, 1, q, f };
	return e;
}

int pynames__put(struct pynames *n, uint32_t pid, uint64_t code, int32_t instr, uint32_t line,
		 uint32_t firstlineno, const char *qualname, const char *file)
{
	return put(n, pid, code, instr, line, firstlineno, qualname, file) ? 0 : -ENOMEM;
}

int pynames__name(void *ctx, uint32_t pid, uint64_t code, int32_t instr, const char **qualname,
		  const char **file, uint32_t *line, uint32_t *firstlineno)
{
	struct pynames *n = ctx;
	struct pyname *e = find(n, pid, code, instr);

	if (!e && n->r) {
		struct pycode_frame f;
		/* (a frame not started yet, -2 in 3.11: the reader answers
		 * co_firstlineno) */
		int rc;

		pthread_mutex_lock(&n->lock);
		rc = pycode_name(n->r, pid, code, (uint32_t)instr, &f);
		/* (the strings live in the reader until its next call: copied
		 * by put() before the lock is let go) */
		if (rc) {
			pthread_mutex_unlock(&n->lock);
		}
		e = put(n, pid, code, instr, rc ? 0 : (uint32_t)(f.line > 0 ? f.line : f.firstlineno),
			rc || f.firstlineno < 0 ? 0 : (uint32_t)f.firstlineno,
			rc ? NULL : f.qualname, rc ? NULL : f.filename);
		if (!rc)
			pthread_mutex_unlock(&n->lock);
		if (e && e->qualname && n->fn)
			n->fn(n->fn_ctx, pid, code, instr, e->line, e->firstlineno, e->qualname,
			      e->file);
	}
	if (!e || !e->qualname)
		return -ENOENT;
	*qualname = e->qualname;
	*file = e->file;
	*line = e->line;
	*firstlineno = e->firstlineno;
	return 0;
}

void pynames__forget_pid(struct pynames *n, uint32_t pid)
{
	size_t kept = 0;

	size_t gone = 0;

	if (!n->nr)
		return;
	/* rebuild without pid's entries; none to drop, none to rebuild (every
	 * fork, exec and reaped exit of the machine asks, under -a: 2,000 a
	 * minute rebuilt the whole table for processes with no names) */
	for (size_t i = 0; i < n->cap; i++) {
		if (n->t[i].used && n->t[i].pid == pid) {
			entry_free(&n->t[i]);
			n->nr--;
			gone++;
		}
	}
	if (!gone)
		return;
	struct pyname *old = n->t;
	size_t cap = n->cap;

	n->t = calloc(cap, sizeof(*n->t));
	if (!n->t) {
		/* no memory to rebuild: keep the old table, holes and all,
		 * found again by a linear scan is not possible: drop all */
		for (size_t i = 0; i < cap; i++)
			if (old[i].used)
				entry_free(&old[i]);
		free(old);
		n->cap = n->nr = 0;
		return;
	}
	for (size_t i = 0; i < cap; i++) {
		const struct pyname *e = &old[i];
		size_t j;

		if (!e->used)
			continue;
		for (j = hash(e->pid, e->code, e->instr) & (cap - 1); n->t[j].used;
		     j = (j + 1) & (cap - 1))
			;
		n->t[j] = *e;
		kept++;
	}
	free(old);
	n->nr = kept;
}

// SPDX-License-Identifier: MIT
/*
 * The folded text form of a profile (one "root;frame;...;leaf COUNT" line
 * per stack), written and read, and the names of the root frames
 * (comm-pid, comm-tid, lock) that folded and SVG output show.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "profile/profile_int.h"
#include "util.h"

/* A name for the terminal: comm and paths come from the target. */
static void put_name(const char *s, FILE *f, int esc)
{
	char buf[4096];

	fputs(esc ? util__escape(buf, sizeof(buf), s) : s, f);
}

static int write_folded(const struct profile *p, FILE *f, int esc)
{
	struct prof_named nm;
	int err;

	err = prof__named(p, &nm);
	if (err)
		return err;
	for (size_t i = 0; i < nm.nr; i++) {
		const struct prof_named_stack *s = &nm.stacks[i];
		uint64_t count = prof__folded_count(p, s->weight);

		if (!s->n)
			continue; /* no root and no frames: nothing to print */
		for (uint32_t k = 0; k < s->n; k++) {
			if (k)
				putc(';', f);
			put_name(prof__str(p, nm.ids[s->off + k]), f, esc);
		}
		fprintf(f, " %" PRIu64 "\n", count);
	}
	prof_named__release(&nm);
	if (fflush(f))
		return errno ? -errno : -EIO; /* ENOSPC, not a bare EIO */
	return ferror(f) ? -EIO : 0;
}

int profile__write_folded_escaped(const struct profile *p, FILE *f)
{
	return write_folded(p, f, 1);
}

int profile__write_folded(const struct profile *p, FILE *f)
{
	return write_folded(p, f, 0);
}

/*
 * getline() with a bound: a line of FOLDED_LINE_MAX bytes or more (an
 * endless file such as /dev/zero has no newline at all) is -E2BIG
 * instead of all of memory. The length, -1 at EOF, or -E2BIG/-ENOMEM.
 */
#define FOLDED_LINE_MAX (1u << 20)

static ssize_t getline_bounded(char **line, size_t *cap, FILE *f)
{
	size_t len = 0;
	int c;

	for (;;) {
		if (len + 1 >= *cap && util__grow((void **)line, cap, len + 2, 1))
			return -ENOMEM;
		c = getc_unlocked(f);
		if (c == EOF)
			break;
		(*line)[len++] = (char)c; /* NUL bytes too: the caller refuses them */
		if (c == '\n')
			break;
		if (len >= FOLDED_LINE_MAX)
			return -E2BIG;
	}
	if (!len)
		return -1;
	(*line)[len] = 0;
	return (ssize_t)len;
}

int profile__read_folded(struct profile *p, FILE *f, size_t *bad_line)
{
	struct profile_frame *frames = NULL;
	size_t cap_frames = 0, lineno = 0, cap = 0;
	char *line = NULL;
	ssize_t len;
	int err = 0;

	while ((len = getline_bounded(&line, &cap, f)) >= 0) {
		char *sp, *end, *field, *next;
		size_t n = 0;
		uint64_t count;
		const char *root;

		lineno++;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r' ||
			       line[len - 1] == ' ' || line[len - 1] == '\t'))
			line[--len] = 0;
		if (!len)
			continue;
		if ((size_t)len != strlen(line)) /* embedded NUL */
			goto bad;
		sp = strrchr(line, ' ');
		if (!sp || sp == line || sp[1] < '0' || sp[1] > '9')
			goto bad;
		errno = 0;
		count = strtoull(sp + 1, &end, 10);
		if (errno || *end)
			goto bad;
		*sp = 0;
		/*
		 * Weights saturate when stacks merge, and a saturated futex
		 * total prints as UINT64_MAX/1000 us: reading that back must
		 * saturate the same way, so the writer's output always parses.
		 */
		if (profile__meta(p)->kind != PROFILE_CPU && __builtin_mul_overflow(count, 1000, &count))
			count = UINT64_MAX;
		root = line;
		next = strchr(line, ';');
		if (next)
			*next++ = 0;
		for (field = next; field; field = next) {
			next = strchr(field, ';');
			if (next)
				*next++ = 0;
			if (!*field)
				goto bad;
			if ((err = util__grow((void **)&frames, &cap_frames, n + 1, sizeof(*frames))))
				goto out;
			frames[n++] = (struct profile_frame){ .name = field, .kind = PROFILE_FRAME_USER };
		}
		if ((err = profile__add(p, root, frames, n, count)))
			goto out;
	}
	if (len == -E2BIG) {
		lineno++;
		goto bad;
	}
	if (len == -ENOMEM)
		err = -ENOMEM;
	goto out;
bad:
	err = -EINVAL;
	if (bad_line)
		*bad_line = lineno;
out:
	free(line);
	free(frames);
	return err;
}

/* ---- root names ------------------------------------------------------- */

static int root_fmt_result(int n, size_t size)
{
	if (n < 0)
		return -EINVAL;
	return (size_t)n >= size ? -ENOSPC : n;
}

int profile_root__thread(char *buf, size_t size, const char *comm, uint32_t pid, uint32_t tid)
{
	if (!buf || !size)
		return -ENOSPC;
	return root_fmt_result(snprintf(buf, size, "%s-%" PRIu32 "/%" PRIu32,
					comm && *comm ? comm : "?", pid, tid), size);
}

int profile_root__process(char *buf, size_t size, const char *comm, uint32_t pid)
{
	if (!buf || !size)
		return -ENOSPC;
	return root_fmt_result(snprintf(buf, size, "%s-%" PRIu32, comm && *comm ? comm : "?", pid),
			       size);
}

int profile_root__lock(char *buf, size_t size, const char *symbol, uint64_t sym_off, uint64_t addr)
{
	int n;

	if (!buf || !size)
		return -ENOSPC;
	if (symbol && *symbol && sym_off)
		n = snprintf(buf, size, "lock:%s+0x%" PRIx64, symbol, sym_off);
	else if (symbol && *symbol)
		n = snprintf(buf, size, "lock:%s", symbol);
	else
		n = snprintf(buf, size, "lock:0x%" PRIx64, addr);
	return root_fmt_result(n, size);
}

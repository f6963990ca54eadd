// SPDX-License-Identifier: MIT
/*
 * Differential profiles (sfprof diff, src/cli/cmd_diff.c): a profile whose
 * render.diff_base is set writes folded as "stack BASE NEW" (flamegraph.pl's
 * difffolded.pl -n: BASE scaled to NEW's total), and pprof as NEW's samples
 * plus BASE's negated and labelled pprof::base=true, which is what
 * `pprof -diff_base BASE NEW` builds. The SVG is src/output/svg.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "profile/profile.h"
#include "profile/profile_int.h"

/* <0, 0, >0: stack i of a against stack j of b, by name element-wise */
static int stack_cmp(const struct profile *a, const struct prof_named *na, size_t i,
		     const struct profile *b, const struct prof_named *nb, size_t j)
{
	const struct prof_named_stack *x = &na->stacks[i], *y = &nb->stacks[j];
	uint32_t n = x->n < y->n ? x->n : y->n;

	for (uint32_t k = 0; k < n; k++) {
		int c = strcmp(prof__str(a, na->ids[x->off + k]), prof__str(b, nb->ids[y->off + k]));

		if (c)
			return c;
	}
	return x->n < y->n ? -1 : x->n > y->n;
}

static void put_stack(FILE *f, const struct profile *p, const struct prof_named *nm, size_t i)
{
	const struct prof_named_stack *s = &nm->stacks[i];

	for (uint32_t k = 0; k < s->n; k++) {
		if (k)
			putc(';', f);
		fputs(prof__str(p, nm->ids[s->off + k]), f);
	}
}

int profile__write_folded_diff(const struct profile *p, FILE *f)
{
	const struct profile *base = profile__render(p)->diff_base;
	struct prof_named nn, nb;
	uint64_t tn = 0, tb = 0;
	double scale = 1;
	size_t i = 0, j = 0;
	int err;

	err = prof__named(p, &nn);
	if (err)
		return err;
	err = prof__named(base, &nb);
	if (err) {
		prof_named__release(&nn);
		return err;
	}
	for (size_t k = 0; k < nn.nr; k++)
		tn += prof__folded_count(p, nn.stacks[k].weight);
	for (size_t k = 0; k < nb.nr; k++)
		tb += prof__folded_count(base, nb.stacks[k].weight);
	if (tb)
		scale = (double)tn / (double)tb;
	/* both lists are sorted by name: merge them */
	while (i < nn.nr || j < nb.nr) {
		int c = i == nn.nr ? 1 : j == nb.nr ? -1 : stack_cmp(p, &nn, i, base, &nb, j);
		uint64_t wn = 0, wb = 0;

		if (c <= 0) {
			wn = prof__folded_count(p, nn.stacks[i].weight);
			put_stack(f, p, &nn, i++);
		} else {
			put_stack(f, base, &nb, j);
		}
		if (c >= 0)
			wb = prof__folded_count(base, nb.stacks[j++].weight);
		fprintf(f, " %" PRIu64 " %" PRIu64 "\n", (uint64_t)(wb * scale + 0.5), wn);
	}
	prof_named__release(&nn);
	prof_named__release(&nb);
	if (fflush(f) || ferror(f))
		return -EIO;
	return 0;
}

/* Every stack of src into dst with root prefix + src's root. */
static int add_all(struct profile *dst, const struct profile *src, const char *prefix)
{
	const struct prof_frame *fr;
	const struct prof_stack *st;
	const uint32_t *ids = prof__ids(src);
	struct profile_frame *frames = NULL;
	size_t nst, cap = 0;
	uint32_t nfr;
	char *root = NULL;
	int err = 0;

	fr = prof__frames(src, &nfr);
	st = prof__stacks(src, &nst);
	for (size_t i = 0; i < nst && !err; i++) {
		const struct prof_stack *s = &st[i];

		if (s->n > cap) {
			struct profile_frame *nf = realloc(frames, s->n * sizeof(*frames));

			if (!nf) {
				err = -ENOMEM;
				break;
			}
			frames = nf;
			cap = s->n;
		}
		for (uint32_t k = 0; k < s->n; k++) {
			const struct prof_frame *x = &fr[ids[s->off + k]];

			frames[k] = (struct profile_frame){
				.name = x->name ? prof__str(src, x->name) : NULL,
				.sys_name = x->sys_name ? prof__str(src, x->sys_name) : NULL,
				.dso = x->dso ? prof__str(src, x->dso) : NULL,
				.build_id = x->build_id ? prof__str(src, x->build_id) : NULL,
				.rel_addr = x->rel_addr,
				.kind = x->kind,
				/* pprof: the real mappings and source lines */
				.line = x->line,
				.file = x->file ? prof__str(src, x->file) : NULL,
				.start_line = x->start_line,
				.pid = x->pid,
				.addr = x->addr,
				.map_start = x->map_start,
				.map_end = x->map_end,
				.map_offset = x->map_offset,
				.map_exec = x->map_exec,
				.vm_shared = x->vm_shared,
			};
		}
		free(root);
		if (asprintf(&root, "%s%s", prefix, prof__str(src, s->root)) < 0) {
			root = NULL;
			err = -ENOMEM;
			break;
		}
		err = profile__add(dst, root[0] ? root : NULL, frames, s->n, s->weight);
	}
	free(root);
	free(frames);
	return err;
}

struct profile *prof__diff_merged(const struct profile *p)
{
	const struct profile *base = profile__render(p)->diff_base;
	struct profile *m = profile__new(profile__meta(p));
	int err;

	if (!m)
		return NULL;
	err = add_all(m, p, "");
	if (!err)
		err = add_all(m, base, PROF_DIFF_BASE_MARK);
	if (err) {
		profile__free(m);
		errno = -err;
		return NULL;
	}
	return m;
}

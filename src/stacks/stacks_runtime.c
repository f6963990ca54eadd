// SPDX-License-Identifier: MIT
/*
 * The runtimes' per-process hooks (runtimes/runtime.h), called for the
 * process being walked through one loop each: rows for JIT code no binary
 * has (CPython's perf trampolines), what record writes before a JIT entry,
 * and the runtime records a capture gives back to report.
 */
#include <errno.h>

#include "runtimes/jit/jitmap.h"
#include "stacks/stacks_int.h"

/* runtime_proc.jitmaps: the stacks' JIT maps, made when `make` and the
 * options want them */
static struct jitmaps *rt_jitmaps(void *ctx, bool make)
{
	struct stacks *s = ctx;

	if (make && !s->jit && (s->opts.perf_maps || s->opts.jit_record))
		s->jit = jitmaps__new();
	return s->jit;
}

static struct runtime_proc rt_proc(struct stacks *s)
{
	return (struct runtime_proc){
		.proc = s->cur,
		.jitmaps = rt_jitmaps,
		.ctx = s,
		.rows = &s->st.pytramp_rows,
		.write = s->rt_write,
		.write_ctx = s->rt_write_ctx,
		.offline = s->jit_borrowed,
	};
}

_Static_assert(RUNTIME_MAX <= 32, "stacks_opts.runtimes_off holds a bit per runtime");

/* Runtime i is on for s (not turned off by the options: runtimes_off) */
static bool rt_on(const struct stacks *s, size_t i)
{
	return i < RUNTIME_MAX && !(s->opts.runtimes_off & (1u << i));
}

/* Runtime i's state in s (attached on first use), or NULL (off: never
 * attached, so none of its per-process hooks is asked). */
static void *rt_state(struct stacks *s, size_t i, const struct runtime_ops *ops)
{
	if (!rt_on(s, i) || !ops->attach)
		return NULL;
	if (!s->rt_attached[i]) {
		s->rt[i] = ops->attach();
		s->rt_attached[i] = s->rt[i] != NULL; /* ENOMEM: asked again */
	}
	return s->rt[i];
}

int stacks_runtime_row(struct stacks *s, uint64_t pc, struct sframe_row *row)
{
	struct runtime_proc p = rt_proc(s);
	int rc = -ESRCH;

	for (size_t i = 0; i < runtime__count() && rc == -ESRCH; i++) {
		const struct runtime_ops *ops = runtime__get(i);
		void *st;

		if (ops->proc_row && (st = rt_state(s, i, ops)))
			rc = ops->proc_row(st, &p, pc, row);
	}
	return rc;
}

int stacks_runtime_frame_name(struct stacks *s, const struct runtime_frame *f, char *buf,
			      size_t size, bool sources_only)
{
	struct runtime_proc p = rt_proc(s);
	int rc = -ESRCH;

	for (size_t i = 0; i < runtime__count() && rc == -ESRCH; i++) {
		const struct runtime_ops *ops = runtime__get(i);
		void *st;

		if (ops->frame_name && (!sources_only || ops->frame_sources) &&
		    (!p.offline || ops->frames_offline) && (st = rt_state(s, i, ops)))
			rc = ops->frame_name(st, &p, f, buf, size);
	}
	return rc;
}

bool stacks_runtime_names_native(const struct stacks *s, const char *sym, bool carried)
{
	for (size_t i = 0; i < runtime__count(); i++) {
		const struct runtime_ops *ops = runtime__get(i);

		if (rt_on(s, i) && ops->names_native && ops->frame_name &&
		    (!carried || ops->frames_offline) && ops->names_native(sym))
			return true;
	}
	return false;
}

bool stacks_runtime_names_frames(const struct stacks *s)
{
	for (size_t i = 0; i < runtime__count(); i++)
		if (rt_on(s, i) && runtime__get(i)->frame_name &&
		    (!s->jit_borrowed || runtime__get(i)->frames_offline))
			return true;
	return false;
}

bool stacks_runtime_proc(struct stacks *s)
{
	struct runtime_proc p = rt_proc(s);

	if (!s->cur)
		return false;
	for (size_t i = 0; i < runtime__count(); i++) {
		const struct runtime_ops *ops = runtime__get(i);
		void *st;

		if (ops->is_proc && (st = rt_state(s, i, ops)) && ops->is_proc(st, &p))
			return true;
	}
	return false;
}

int stacks_runtime_jit_written(struct stacks *s, uint32_t pid, const char *name, uint64_t size)
{
	struct runtime_proc p = rt_proc(s);

	for (size_t i = 0; i < runtime__count(); i++) {
		const struct runtime_ops *ops = runtime__get(i);
		void *st;
		int err;

		if (ops->on_jit_record && (st = rt_state(s, i, ops)) &&
		    (err = ops->on_jit_record(st, &p, pid, name, size)))
			return err;
	}
	return 0;
}

int stacks_runtime_jit_name(struct stacks *s, uint64_t pc)
{
	struct runtime_proc p = rt_proc(s);

	for (size_t i = 0; i < runtime__count(); i++) {
		const struct runtime_ops *ops = runtime__get(i);
		void *st;
		int rc;

		if (ops->jit_name && (st = rt_state(s, i, ops)) &&
		    (rc = ops->jit_name(st, &p, pc)))
			return rc;
	}
	return 0;
}

int stacks__runtime_record(struct stacks *s, unsigned type, uint32_t pid, const uint8_t *data,
			   size_t len)
{
	for (size_t i = 0; i < runtime__count(); i++) {
		const struct runtime_ops *ops = runtime__get(i);
		void *st;
		int err;

		if (!ops->on_capture_record || !rt_on(s, i))
			continue;
		if (!(st = rt_state(s, i, ops)))
			return -ENOMEM;
		err = ops->on_capture_record(st, type, pid, data, len);
		if (err != -ENOENT)
			return err;
	}
	return -ENOENT;
}

int stacks__set_pytramp(struct stacks *s, uint32_t pid, const uint8_t *code, size_t len)
{
	return stacks__runtime_record(s, RUNTIME_REC_PYTRAMP, pid, code, len);
}

int stacks__set_pytramp_writer(struct stacks *s, stacks_pytramp_fn fn, void *ctx)
{
	s->rt_write = fn;
	s->rt_write_ctx = ctx;
	return 0;
}

void stacks_runtime_free(struct stacks *s)
{
	for (size_t i = 0; i < RUNTIME_MAX; i++) {
		const struct runtime_ops *ops = runtime__get(i);

		if (s->rt_attached[i] && ops && ops->detach)
			ops->detach(s->rt[i]);
		s->rt[i] = NULL;
		s->rt_attached[i] = false;
	}
}

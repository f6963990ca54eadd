// SPDX-License-Identifier: MIT
/*
 * The table of event sources (source.h) and the loops the capture runs
 * over it: load, attach, detach, free, and the programs' costs.
 */
#include <errno.h>
#include <string.h>

#include <bpf/bpf.h>

#include "capture/capture_int.h"
#include "capture/source.h"

/* In load and attach order: the task's first, it makes the shared maps
 * and follows every process before any sample is taken. */
const struct capture_source *const capture_sources[] = {
	&capture_source_task,
	&capture_source_cpu,
	&capture_source_futex,
	&capture_source_offcpu,
};
const size_t capture_nr_sources = sizeof(capture_sources) / sizeof(capture_sources[0]);
_Static_assert(sizeof(capture_sources) / sizeof(capture_sources[0]) <= CAPTURE_SOURCES_MAX,
	       "CAPTURE_SOURCES_MAX: room for every source");

enum capture_kind capture_sources__kinds(void)
{
	unsigned k = 0;

	for (size_t i = 0; i < capture_nr_sources; i++)
		k |= capture_sources[i]->bit;
	return (enum capture_kind)k;
}

static bool selected(const struct capture_source *s, const struct capture_opts *o)
{
	return !s->bit || (o->kind & s->bit);
}

int capture_sources__load(struct capture *c, const struct capture_opts *o,
			  const struct sfprof_config *cfg, FILE *err)
{
	for (size_t i = 0; i < capture_nr_sources; i++) {
		const struct capture_source *s = capture_sources[i];
		int ret;

		if (!selected(s, o))
			continue;
		ret = s->load(c, &c->src[i], o, cfg, err);
		if (ret)
			return ret;
	}
	return 0;
}

static bool wanted(enum capture_when w, const struct capture_opts *o,
		   const struct sfprof_config *cfg)
{
	switch (w) {
	case CAPTURE_ALWAYS:
		return true;
	case CAPTURE_IF_KSTACK:
		return cfg->want_kstack;
	case CAPTURE_IF_WAKERS:
		return cfg->wakers;
	case CAPTURE_IF_WAIT_EXEC:
		return o->wait_exec;
	case CAPTURE_NEVER:
		break;
	}
	return false;
}

int capture_sources__attach(struct capture *c, const struct capture_opts *o, FILE *err)
{
	const struct sfprof_config *cfg = &c->task->rodata->cfg;

	for (size_t i = 0; i < capture_nr_sources; i++) {
		const struct capture_source *s = capture_sources[i];
		struct capture_loaded *l = &c->src[i];
		int ret = 0;

		if (!l->skel)
			continue;
		for (size_t k = 0; k < CAPTURE_SOURCE_PROGS && s->progs[k].name; k++) {
			const struct capture_prog *p = &s->progs[k];
			struct bpf_program *prog;

			if (!wanted(p->when, o, cfg))
				continue;
			prog = bpf_object__find_program_by_name(l->obj, p->name);
			if (!prog) {
				capture__say(err, "the %s object has no program %s", s->name, p->name);
				return -ENOENT;
			}
			l->links[k] = capture__attach_prog(prog, p->what, err, &ret);
			if (ret)
				return ret;
		}
		if (s->attach && (ret = s->attach(c, l, o, err)))
			return ret;
	}
	return 0;
}

static void unlink_source(struct capture *c, size_t i)
{
	struct capture_loaded *l = &c->src[i];

	if (!l->skel)
		return;
	if (capture_sources[i]->detach)
		capture_sources[i]->detach(c, l);
	for (size_t k = 0; k < CAPTURE_SOURCE_PROGS; k++) {
		bpf_link__destroy(l->links[k]);
		l->links[k] = NULL;
	}
}

void capture_sources__detach(struct capture *c)
{
	for (size_t i = capture_nr_sources; i-- > 0;)
		unlink_source(c, i);
}

void capture_sources__destroy(struct capture *c)
{
	for (size_t i = capture_nr_sources; i-- > 0;) {
		unlink_source(c, i);
		capture_sources[i]->destroy(&c->src[i]);
		memset(&c->src[i], 0, sizeof(c->src[i]));
	}
	c->task = NULL;
}

static void prog_cost(const struct bpf_program *prog, struct capture_prog_cost *out)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	int fd = prog ? bpf_program__fd(prog) : -1;

	memset(&info, 0, sizeof(info));
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return;
	out->run_ns = info.run_time_ns;
	out->run_cnt = info.run_cnt;
	out->misses = info.recursion_misses;
}

void capture_sources__cost(struct capture *c, struct capture_stats *st)
{
	memset(st->prog, 0, sizeof(st->prog));
	st->nr_prog = 0;
	for (size_t i = 0; i < capture_nr_sources; i++) {
		const struct capture_source *s = capture_sources[i];

		if (!c->src[i].skel)
			continue;
		for (size_t k = 0; k < CAPTURE_SOURCE_PROGS && s->progs[k].name; k++) {
			struct capture_prog_cost *pc = &st->prog[st->nr_prog];
			const char *name = s->progs[k].name;

			if (!s->progs[k].cost || st->nr_prog >= CAPTURE_PROG_COSTS)
				continue;
			pc->name = strncmp(name, "sfprof_", 7) ? name : name + 7;
			prog_cost(bpf_object__find_program_by_name(c->src[i].obj, name), pc);
			st->nr_prog++;
		}
	}
}
